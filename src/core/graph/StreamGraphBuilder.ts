// cuda.core's GraphBuilder: a graph built by capturing the work queued on a stream, with its states
// checked in JS (building, ended, split off and to be joined) before CUDA sees a call it would refuse
// or, worse, accept in the wrong state.
import * as cudart from '../../runtime';
import { claimCapturedHostFns, releaseHostFns } from '../../ffi/host-callbacks';
import { describe, lookupName } from '../../ffi/checks';
import { check } from '../base/errors';
import { Resource, holdOpen } from '../base/lifetime';
import { Stream } from '../device/Stream';
import { Graph, instantiateGraph, type GraphExec, type InstantiateOptions } from './Graph';
import { CAPTURE_MODES, type CaptureOptions } from './GraphBuilder';

/** Where a builder is: made, capturing, or done (ended, or joined into another). */
type BuildState = 'new' | 'building' | 'ended' | 'joined';

/**
 * What the builders of one capture share: the streams split off (closed once it ends), how many are
 * not joined back, and the holds on every stream of the capture (see beginBuilding), let go once it ends.
 */
interface CaptureGroup {
  unjoined: number;
  streams: Stream[];
  holds: (() => void)[];
}

/**
 * A builder's state, apart from the builder: its free (the finalizer's, too) reads it, and a free that
 * referred to the builder would keep it reachable, so an unclosed one would never be collected.
 */
interface BuilderLife {
  state: BuildState;
  captured: Graph | null;
}

/** Once a capture has ended: closes the streams split off, then lets go of the capture's streams (a stream closed meanwhile is destroyed now). */
function captureEnded(group: CaptureGroup): void {
  for (const s of group.streams) s.close();
  for (const letGo of group.holds.splice(0)) letGo();
}

/**
 * A graph built by capturing the work queued on a stream, as cuda.core's `GraphBuilder` builds it:
 * `device.createGraphBuilder()` or `stream.createGraphBuilder()`, then `beginBuilding()`, the work on
 * `builder.stream`, `endBuilding()`, `complete()`. `split(n)` forks the capture into builders on
 * streams of their own (work on them may overlap), and `StreamGraphBuilder.join(...)` merges them
 * back; every split-off builder must be joined before the first one ends. (core's
 * {@link GraphBuilder} builds a graph node by node instead.)
 *
 * The states are checked before CUDA is asked: beginning twice, resuming after the end, ending what
 * is not building, completing before the end, ending with builders still split off, and split/join
 * counts below 2 throw Error (RangeError for counts). Lifetime: close() abandons a capture still
 * running, destroys the graph and the streams the builder made. The streams of a capture are held
 * open while it runs: a stream closed meanwhile (its `close()`, by whoever has it) reports closed at
 * once, and `beginBuilding()`, `split()` and `join()` refuse it with Error, but it is destroyed only
 * once the capture has ended (`endBuilding()`, which still ends it and makes the graph, or the
 * builder's `close()`), so CUDA never sees the handle of a destroyed stream and no stream is left
 * capturing.
 *
 * @example
 * ```ts
 * using b = dev.createGraphBuilder().beginBuilding();
 * const [left, right] = b.split(2);
 * k1.launch({ grid, block, stream: left.stream }, x);
 * k2.launch({ grid, block, stream: right.stream }, y);
 * StreamGraphBuilder.join(left, right).endBuilding();
 * using exec = b.complete({ autoFreeOnLaunch: true });
 * exec.launch(stream);
 * ```
 */
export class StreamGraphBuilder extends Resource {
  private constructor(
    /** The stream whose work the builder captures: queue the graph's work on it while building. */
    readonly stream: Stream,
    /** Whether it was split off another builder: then it must be joined back (StreamGraphBuilder.join), never ended itself. */
    readonly isJoinRequired: boolean,
    private group: CaptureGroup,
    ownsStream: boolean,
    private readonly life: BuilderLife = { state: 'new', captured: null },
  ) {
    // The free reads `life`, never `this` (see BuilderLife).
    super(() => {
      if (life.state === 'building' && !isJoinRequired) {
        const [err, g] = cudart.cudaStreamEndCapture(stream.handle);
        if (err === cudart.cudaError_t.cudaSuccess && g !== null) cudart.cudaGraphDestroy(g);
        releaseHostFns(claimCapturedHostFns(stream.handle));
        captureEnded(group);
      }
      life.captured?.close();
      // A capture still running was ended above: the stream device.createGraphBuilder() made goes in every state.
      if (ownsStream) stream.close();
    }, [stream]);
  }

  /** Where the builder is (kept in `life`: see BuilderLife). */
  private get state(): BuildState {
    return this.life.state;
  }

  private set state(state: BuildState) {
    this.life.state = state;
  }

  /** The graph endBuilding() made, or null (kept in `life`: see BuilderLife). */
  private get captured(): Graph | null {
    return this.life.captured;
  }

  private set captured(graph: Graph | null) {
    this.life.captured = graph;
  }

  /** @internal Use stream.createGraphBuilder() or device.createGraphBuilder(). */
  static create(stream: Stream, ownsStream: boolean): StreamGraphBuilder {
    return new StreamGraphBuilder(stream, false, { unjoined: 0, streams: [], holds: [] }, ownsStream);
  }

  /** Whether the builder is capturing now (between beginBuilding() and endBuilding(), or split off a capturing one). */
  get isBuilding(): boolean {
    return this.state === 'building' && !this.isClosed;
  }

  /** Throws Error `StreamGraphBuilder.<what>: …` unless the builder is open and in `state`. */
  private expect(what: string, state: BuildState): void {
    this.live(what);
    if (this.state === state) return;
    const now: Record<BuildState, string> = {
      new: 'building has not begun (call beginBuilding() first)',
      building: state === 'ended' ? 'building has not ended (call endBuilding() first)' : 'it is building already',
      ended: 'building has ended',
      joined: 'it was joined into another builder (use the one join() returned)',
    };
    throw new Error(`StreamGraphBuilder.${what}: ${now[this.state]}`);
  }

  /**
   * Throws Error `StreamGraphBuilder.<what>: <whose> stream is a Stream that was closed`: a closed
   * stream's handle is freed, or (closed while capturing) held only until the capture ends, taking no new work.
   */
  private expectOpenStream(what: string, whose: string): void {
    if (this.stream.isClosed) throw new Error(`StreamGraphBuilder.${what}: ${whose} stream is a Stream that was closed`);
  }

  /**
   * Starts capturing the work queued on `builder.stream` (cudaStreamBeginCapture) in `mode`:
   * `'global'` (default), `'threadLocal'` or `'relaxed'`, as {@link CaptureOptions}. A builder
   * cannot resume after building ended (make another). Returns the builder.
   */
  beginBuilding(mode: NonNullable<CaptureOptions['mode']> = 'global'): this {
    if (this.state === 'ended')
      throw new Error('StreamGraphBuilder.beginBuilding: building has ended, and a builder cannot resume; make another');
    this.expect('beginBuilding', 'new');
    this.expectOpenStream('beginBuilding', "the builder's");
    const m = lookupName(CAPTURE_MODES, mode, 'StreamGraphBuilder.beginBuilding', "parameter 'mode'");
    check(cudart.cudaStreamBeginCapture(this.stream.handle, m), 'StreamGraphBuilder.beginBuilding (cudaStreamBeginCapture)');
    // Until the capture ends (captureEnded), a close() of the stream only marks it closed.
    this.group.holds.push(this.stream[holdOpen]());
    this.state = 'building';
    return this;
  }

  /**
   * Ends the capture (cudaStreamEndCapture): the work queued since beginBuilding() is now the graph
   * ({@link StreamGraphBuilder.graph}). Throws Error for a builder split off another (join it back
   * instead), or while builders split off this capture are not joined yet. A stream of the capture
   * closed while building is destroyed once the capture has ended; the graph is made all the same.
   */
  endBuilding(): this {
    this.expect('endBuilding', 'building');
    if (this.isJoinRequired)
      throw new Error(
        'StreamGraphBuilder.endBuilding: this builder was split off another; join it back (StreamGraphBuilder.join) and end the one join() returns',
      );
    if (this.group.unjoined > 0)
      throw new Error(
        `StreamGraphBuilder.endBuilding: ${this.group.unjoined} builder${this.group.unjoined === 1 ? '' : 's'} split off this one ${this.group.unjoined === 1 ? 'is' : 'are'} not joined back yet (StreamGraphBuilder.join)`,
      );
    const [err, g] = cudart.cudaStreamEndCapture(this.stream.handle);
    const hostFns = [this.stream, ...this.group.streams].flatMap((s) => claimCapturedHostFns(s.handle));
    this.state = 'ended';
    captureEnded(this.group);
    if (err !== cudart.cudaError_t.cudaSuccess || g === null) {
      releaseHostFns(hostFns);
      check([err, g], 'StreamGraphBuilder.endBuilding (cudaStreamEndCapture)');
    }
    this.captured = new Graph(g!, this.stream.device, hostFns);
    return this;
  }

  /** The graph built, once building ended: read its nodes, add it as a child, or instantiate it. Closed with the builder. */
  get graph(): Graph {
    this.expect('graph', 'ended');
    return this.captured!;
  }

  /**
   * The executable graph (cuda.core's `complete()`): `options` are the completion options, as
   * `graph.instantiate(options)` takes them — `autoFreeOnLaunch` frees what the graph's allocations
   * left at each launch, `upload: stream`, `deviceLaunch`, `useNodePriority`. Throws Error before
   * building has ended.
   */
  complete(options: InstantiateOptions = {}): GraphExec {
    this.expect('complete', 'ended');
    const g = this.captured!;
    return instantiateGraph(g, options, 'StreamGraphBuilder.complete', g.hostFns, []);
  }

  /**
   * Forks the capture into `count` builders (this one first, then `count - 1` on new streams of the
   * same device that wait for the work queued so far): work queued on their streams may overlap.
   * Each new one must be joined back before this capture ends. Throws RangeError unless `count` is an
   * integer of at least 2, Error unless this builder is building on an open stream.
   */
  split(count: number): StreamGraphBuilder[] {
    if (!Number.isInteger(count) || count < 2)
      throw new RangeError(`StreamGraphBuilder.split: parameter 'count' must be an integer of at least 2, got ${describe(count)}`);
    this.expect('split', 'building');
    this.expectOpenStream('split', "the builder's");
    const device = this.stream.device;
    device.makeCurrent();
    const fork = check(
      cudart.cudaEventCreateWithFlags(cudart.cudaEventDisableTiming),
      'StreamGraphBuilder.split (cudaEventCreateWithFlags)',
    );
    const out: StreamGraphBuilder[] = [this];
    try {
      check(cudart.cudaEventRecord(fork, this.stream.handle), 'StreamGraphBuilder.split (cudaEventRecord)');
      for (let i = 1; i < count; i++) {
        const s = device.createStream();
        this.group.streams.push(s);
        this.group.holds.push(s[holdOpen]());
        check(cudart.cudaStreamWaitEvent(s.handle, fork, 0), 'StreamGraphBuilder.split (cudaStreamWaitEvent)');
        const b = new StreamGraphBuilder(s, true, this.group, false);
        b.state = 'building';
        this.group.unjoined++;
        out.push(b);
      }
    } finally {
      cudart.cudaEventDestroy(fork);
    }
    return out;
  }

  /**
   * Merges builders of one capture (split() results) into one: the first that was not split off
   * (else the first), whose stream then waits for the work queued on the others; the others are done
   * (their streams are closed when the capture ends). Returns that builder. Throws TypeError for
   * anything but builders, RangeError for fewer than 2, Error for one that is not building, whose
   * stream was closed, or of another capture.
   */
  static join(...builders: StreamGraphBuilder[]): StreamGraphBuilder {
    builders.forEach((b, i) => {
      if (!(b instanceof StreamGraphBuilder))
        throw new TypeError(`StreamGraphBuilder.join: argument ${i} must be a StreamGraphBuilder, got ${describe(b)}`);
    });
    if (builders.length < 2) throw new RangeError(`StreamGraphBuilder.join: takes at least 2 builders, got ${builders.length}`);
    builders.forEach((b, i) => {
      b.expect('join', 'building');
      b.expectOpenStream('join', `argument ${i}'s`);
    });
    const root = builders.find((b) => !b.isJoinRequired) ?? builders[0];
    if (builders.some((b) => b.group !== root.group))
      throw new Error('StreamGraphBuilder.join: the builders are of different captures (join only what split() made of one)');
    const merge = check(
      cudart.cudaEventCreateWithFlags(cudart.cudaEventDisableTiming),
      'StreamGraphBuilder.join (cudaEventCreateWithFlags)',
    );
    try {
      for (const b of builders) {
        if (b === root) continue;
        check(cudart.cudaEventRecord(merge, b.stream.handle), 'StreamGraphBuilder.join (cudaEventRecord)');
        check(cudart.cudaStreamWaitEvent(root.stream.handle, merge, 0), 'StreamGraphBuilder.join (cudaStreamWaitEvent)');
        b.state = 'joined';
        if (b.isJoinRequired) root.group.unjoined--;
      }
    } finally {
      cudart.cudaEventDestroy(merge);
    }
    return root;
  }
}
