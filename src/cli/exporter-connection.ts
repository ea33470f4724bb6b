// One TCP connection of the exporter, as its node:http server sees it. node:http parses all of a read
// (up to 64 KiB: some 2,400 pipelined requests) before it answers the first, and makes a request and a
// response object for each, held until the connection's close is processed; a client that pipelines
// without reading, on many connections at once, made the server hold gigabytes. Here the bytes reach
// the parser in slices of 1 KiB, and none once the connection is closed, so closing a connection for
// too many waiting requests stops its parse within a slice. node:http takes any Duplex this way
// (`server.emit('connection', duplex)`).
import { Duplex } from 'node:stream';
import type { Socket } from 'node:net';

/** The most bytes handed to the parser at once (a request of Prometheus's is about 300). */
const SLICE_BYTES = 1024;
/** Connections served at once unless told otherwise: a few Prometheus servers, and room for 100 scrapes at once. */
export const DEFAULT_MAX_CONNECTIONS = 128;
/**
 * Requests one connection may have waiting for their answers; a connection that sends more is closed.
 * A client that pipelined thousands and never read had as many pages queued for it (about 12 MB a
 * connection with 8 GPUs). Prometheus sends one request at a time.
 */
export const MAX_PIPELINED = 8;
/** How long a request's headers may take to arrive, from the connection's start or the last answer. */
export const REQUEST_WAIT_MS = 10_000;
/** How long a connection may go without traffic either way: one that stopped reading holds its page no longer. */
export const IDLE_TIMEOUT_MS = 30_000;

/** A connection handed to node:http in slices; it counts its waiting requests and bounds the wait for the next. */
export class ExporterConnection extends Duplex {
  /** Requests read whose answers have not been sent yet. */
  waiting = 0;
  private deadline: NodeJS.Timeout | undefined;

  constructor(private readonly raw: Socket) {
    super({ allowHalfOpen: true });
    raw.on('data', (d: Buffer) => {
      for (let at = 0; at < d.length && !this.destroyed; at += SLICE_BYTES) if (!this.push(d.subarray(at, at + SLICE_BYTES))) raw.pause();
    });
    raw.on('end', () => this.push(null));
    raw.on('timeout', () => this.emit('timeout'));
    raw.on('error', (e) => this.destroy(e));
    raw.on('close', () => this.destroy());
  }

  /** The client's address. */
  get remoteAddress(): string | undefined {
    return this.raw.remoteAddress;
  }

  /** As net.Socket's: 'timeout' after `ms` without traffic (node:http sets its idle and keep-alive timeouts with it). */
  setTimeout(ms: number, callback?: () => void): this {
    this.raw.setTimeout(ms);
    if (callback) this.once('timeout', callback);
    return this;
  }

  /** Closes the connection unless a request arrives (requestArrived) within `ms`. */
  awaitRequest(ms: number): void {
    clearTimeout(this.deadline);
    if (!this.destroyed) this.deadline = setTimeout(() => this.destroy(), ms);
  }

  /** A request arrived: the wait of awaitRequest is over. */
  requestArrived(): void {
    clearTimeout(this.deadline);
  }

  override _read(): void {
    this.raw.resume();
  }

  override _write(chunk: Buffer, encoding: BufferEncoding, done: (e?: Error | null) => void): void {
    this.raw.write(chunk, encoding, done);
  }

  /** A response's head and body, corked by node:http, leave in one write. */
  override _writev(chunks: { chunk: Buffer; encoding: BufferEncoding }[], done: (e?: Error | null) => void): void {
    this.raw.cork();
    chunks.forEach(({ chunk, encoding }, i) => this.raw.write(chunk, encoding, i === chunks.length - 1 ? done : undefined));
    this.raw.uncork();
  }

  override _final(done: (e?: Error | null) => void): void {
    this.raw.end(done);
  }

  override _destroy(e: Error | null, done: (e?: Error | null) => void): void {
    clearTimeout(this.deadline);
    this.raw.destroy();
    done(e);
  }
}
