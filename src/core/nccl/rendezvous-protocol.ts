// The bytes of the rendezvous (see rendezvous.ts), kept apart from the sockets. Every message has a
// fixed size, so a reader never holds more than one message, and both sides prove that they hold the
// shared secret without sending it: a key is derived from the secret and two fresh nonces (HKDF), the
// claim of a rank carries an HMAC under it, and rank 0's answer is the id sealed with AES-256-GCM under
// it, which only a holder of the secret could have written. The rank then acknowledges the id with an
// HMAC over it (only a rank that opened the grant can write one), and rank 0 counts the rank as served
// only then, answering with a receipt: a rank that dies before the id reaches it can come back.
// Without a secret (loopback only) the key comes from an empty secret: ranks are still checked, but
// anyone on the host could join.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Opens rank 0's hello and every rank's claim: not an NCCL rendezvous of this package otherwise. Its
 * digit is the protocol's version (3: with the acknowledgement), so that ranks of another version
 * part at the first message instead of waiting for an answer that never comes.
 */
export const MAGIC = Buffer.from('cudabnd3');
const NONCE = 32;
const MAC = 32;
const IV = 12;
const TAG = 16;
/** Rank 0's hello: the magic and its nonce. */
export const HELLO_BYTES = MAGIC.length + NONCE;
/** A rank's claim: the magic, its rank, the world size, its nonce and the HMAC of the three. */
export const CLAIM_BYTES = MAGIC.length + 4 + 4 + NONCE + MAC;
/** Rank 0's refusal: one status byte. */
export const REFUSAL_BYTES = 1;
/** A rank's acknowledgement of the id: an HMAC over it. */
export const ACK_BYTES = MAC;
/** Rank 0's receipt of an acknowledgement: one zero byte, after which it closes the connection. */
export const RECEIPT = Buffer.from([0]);

/**
 * Why rank 0 refused a claim: the status byte it answers with instead of the id. `inProgress`: the id
 * is on its way to another connection of that rank, not yet acknowledged (a rank that restarted while
 * rank 0 has not yet seen its old connection close); the rank asks again.
 */
export const Refusal = { badSecret: 1, badRank: 2, alreadyServed: 3, worldSize: 4, inProgress: 5 } as const;

/** The keys of one connection: an HMAC key for the claim and an AES key for the id. */
export interface SessionKeys {
  mac: Buffer;
  seal: Buffer;
}

/** Derives the connection's keys from the secret and both nonces. */
export function sessionKeys(secret: Buffer, serverNonce: Buffer, clientNonce: Buffer): SessionKeys {
  const okm = Buffer.from(hkdfSync('sha256', secret, Buffer.concat([serverNonce, clientNonce]), 'cuda-bindings rendezvous 3', 64));
  return { mac: okm.subarray(0, 32), seal: okm.subarray(32) };
}

/** Rank 0's hello and the nonce in it. */
export function hello(): { bytes: Buffer; nonce: Buffer } {
  const nonce = randomBytes(NONCE);
  return { bytes: Buffer.concat([MAGIC, nonce]), nonce };
}

/** The nonce of a hello, or undefined when the bytes are not one. */
export function readHello(b: Buffer): Buffer | undefined {
  return b.length === HELLO_BYTES && b.subarray(0, MAGIC.length).equals(MAGIC) ? b.subarray(MAGIC.length) : undefined;
}

/** What a rank says of itself, authenticated by `mac`. */
function claimBody(rank: number, nranks: number, nonce: Buffer): Buffer {
  const b = Buffer.alloc(MAGIC.length + 8 + NONCE);
  MAGIC.copy(b);
  b.writeUInt32LE(rank, MAGIC.length);
  b.writeUInt32LE(nranks, MAGIC.length + 4);
  nonce.copy(b, MAGIC.length + 8);
  return b;
}

/** A rank's claim after rank 0's hello, and the keys of the connection. */
export function claim(secret: Buffer, serverNonce: Buffer, rank: number, nranks: number): { bytes: Buffer; keys: SessionKeys } {
  const nonce = randomBytes(NONCE);
  const keys = sessionKeys(secret, serverNonce, nonce);
  const body = claimBody(rank, nranks, nonce);
  return { bytes: Buffer.concat([body, createHmac('sha256', keys.mac).update(body).digest()]), keys };
}

/** A claim as rank 0 reads it; `authentic` says whether its HMAC holds under the secret. */
export interface Claim {
  rank: number;
  nranks: number;
  authentic: boolean;
  keys: SessionKeys;
}

/** Reads a claim of CLAIM_BYTES; undefined when it does not start with the magic. */
export function readClaim(secret: Buffer, serverNonce: Buffer, b: Buffer): Claim | undefined {
  if (b.length !== CLAIM_BYTES || !b.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  const nonce = b.subarray(MAGIC.length + 8, MAGIC.length + 8 + NONCE);
  const keys = sessionKeys(secret, serverNonce, nonce);
  const body = b.subarray(0, CLAIM_BYTES - MAC);
  const want = createHmac('sha256', keys.mac).update(body).digest();
  return {
    rank: b.readUInt32LE(MAGIC.length),
    nranks: b.readUInt32LE(MAGIC.length + 4),
    authentic: timingSafeEqual(want, b.subarray(CLAIM_BYTES - MAC)),
    keys,
  };
}

/** The additional data sealed with the id: the rank and world size it was given to. */
function aad(rank: number, nranks: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeUInt32LE(rank);
  b.writeUInt32LE(nranks, 4);
  return b;
}

/** How many bytes rank 0's answer with an id of `idBytes` holds: a zero status byte, then the sealed id. */
export const grantBytes = (idBytes: number): number => 1 + IV + idBytes + TAG;

/** Rank 0's answer to an authentic claim: a zero status byte and the id sealed for that connection. */
export function grant(keys: SessionKeys, id: Buffer, rank: number, nranks: number): Buffer {
  const iv = randomBytes(IV);
  const c = createCipheriv('aes-256-gcm', keys.seal, iv).setAAD(aad(rank, nranks));
  const sealed = Buffer.concat([c.update(id), c.final()]);
  return Buffer.concat([Buffer.from([0]), iv, sealed, c.getAuthTag()]);
}

/** The id in a grant, or undefined when the seal does not hold (rank 0 lacks the secret, or the bytes were changed). */
export function openGrant(keys: SessionKeys, b: Buffer, rank: number, nranks: number): Buffer | undefined {
  const iv = b.subarray(1, 1 + IV);
  const sealed = b.subarray(1 + IV, b.length - TAG);
  try {
    const d = createDecipheriv('aes-256-gcm', keys.seal, iv)
      .setAAD(aad(rank, nranks))
      .setAuthTag(b.subarray(b.length - TAG));
    return Buffer.concat([d.update(sealed), d.final()]);
  } catch {
    return undefined;
  }
}

/** What a rank's acknowledgement authenticates: a label apart from the claim's magic, its rank and world size, and the id. */
function ackBody(id: Buffer, rank: number, nranks: number): Buffer {
  return Buffer.concat([Buffer.from('received'), aad(rank, nranks), id]);
}

/** A rank's acknowledgement of the id it opened from rank 0's grant. */
export function ack(keys: SessionKeys, id: Buffer, rank: number, nranks: number): Buffer {
  return createHmac('sha256', keys.mac)
    .update(ackBody(id, rank, nranks))
    .digest();
}

/** Whether `b` is the acknowledgement of `id` by `rank` on the connection of `keys`. */
export function readAck(keys: SessionKeys, id: Buffer, rank: number, nranks: number, b: Buffer): boolean {
  return b.length === ACK_BYTES && timingSafeEqual(ack(keys, id, rank, nranks), b);
}

/**
 * Collects a message of exactly `size` bytes from a stream's chunks, never holding more: push()
 * returns 'more' until the message is whole, then 'done'; a chunk that would go past it is 'overflow'.
 */
export class FixedReader {
  private readonly buf: Buffer;
  private filled = 0;
  constructor(size: number) {
    this.buf = Buffer.alloc(size);
  }
  /** Bytes received so far. */
  get received(): number {
    return this.filled;
  }
  /** Takes a chunk. */
  push(chunk: Buffer): 'more' | 'done' | 'overflow' {
    if (this.filled + chunk.length > this.buf.length) return 'overflow';
    chunk.copy(this.buf, this.filled);
    this.filled += chunk.length;
    return this.filled === this.buf.length ? 'done' : 'more';
  }
  /** The whole message (valid once push() said 'done'). */
  get bytes(): Buffer {
    return this.buf;
  }
}
