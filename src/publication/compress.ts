// The br and gzip representations of a body: deterministic bytes (the same body and levels give the same bytes with
// the same Node), and a pool of worker threads that compresses many bodies in parallel for the build.
import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import zlib from 'node:zlib';
import { Budget } from './budget.js';

export interface CompressionLevels {
  /** Brotli quality, 0-11. */
  brotliQuality: number;
  /** gzip (deflate) level, 1-9. */
  gzipLevel: number;
}

/** Measured against build time: docs/publication.md "Compression". */
export const BUILD_LEVELS: Readonly<CompressionLevels> = { brotliQuality: 6, gzipLevel: 6 };

export interface Representation {
  /**
   * In a buffer of its own; from the pool, a body compressed alone has its br and gzip bytes end to end in one buffer
   * (br first), which both keep.
   */
  bytes: Buffer;
  /** Hex sha256 of `bytes`. */
  sha256: string;
  /** `bytes.length`. */
  size: number;
}

export interface Representations {
  br: Representation;
  gzip: Representation;
}

/**
 * The brotli options: the quality alone. Text mode and a size hint gave the same bytes' share of identity on the
 * default publication at qualities 5 and 6, so they are left at brotli's defaults.
 */
export function brotliOptions(quality: number): zlib.BrotliOptions {
  return { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: quality } };
}

/**
 * The gzip options. zlib writes a header without a file name and with modification time 0, so the bytes depend on the
 * body and level alone.
 */
export function gzipOptions(level: number): zlib.ZlibOptions {
  return { level };
}

export type ContentCoding = 'br' | 'gzip';

/** `body` in one coding at the given levels, on this thread, in a buffer of its own. */
export function encode(body: Buffer, coding: ContentCoding, levels: CompressionLevels): Buffer {
  checkLevels(levels);
  return exact(
    coding === 'br'
      ? zlib.brotliCompressSync(body, brotliOptions(levels.brotliQuality))
      : zlib.gzipSync(body, gzipOptions(levels.gzipLevel)),
  );
}

/** The two representations of `body`, on this thread. The pool gives byte-identical results. */
export function compressBody(body: Buffer, levels: CompressionLevels): Representations {
  return { br: representation(encode(body, 'br', levels)), gzip: representation(encode(body, 'gzip', levels)) };
}

function representation(bytes: Buffer): Representation {
  return { bytes, sha256: createHash('sha256').update(bytes).digest('hex'), size: bytes.length };
}

/** `bytes` in a buffer of their own: zlib answers with a slice of its 16 KiB output chunk, which a kept slice keeps. */
function exact(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) return bytes;
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(copy);
  return copy;
}

function checkLevels(levels: CompressionLevels): void {
  const { brotliQuality: q, gzipLevel: l } = levels;
  if (!Number.isInteger(q) || q < 0 || q > 11) throw new RangeError(`brotliQuality must be an integer 0-11, not ${q}`);
  if (!Number.isInteger(l) || l < 1 || l > 9) throw new RangeError(`gzipLevel must be an integer 1-9, not ${l}`);
}

export interface CompressorOptions extends Partial<CompressionLevels> {
  /** Worker threads; at most (and by default) os.availableParallelism(). */
  threads?: number;
}

export interface Compressor {
  /** The number of worker threads. */
  readonly threads: number;
  /**
   * The br and gzip representations of `body`. The body is copied when a worker takes it: the caller keeps it, and
   * must not change it before the promise settles. With `move`, a body of at least MOVE_BYTES is moved instead (its
   * ArrayBuffer is detached here, every view of it then empty): for a large body nothing else needs, a copy spared.
   * Only a body whose ArrayBuffer holds nothing else the caller still needs may be moved.
   */
  compress(body: Buffer, options?: { move?: boolean }): Promise<Representations>;
  /**
   * The br and gzip representations of a body of `size` bytes given in chunks (each copied as it is sent, so a chunk
   * may reuse the memory of the one before), byte-identical to compress()'s: a large body is never whole in memory.
   * The chunks are taken as the worker consumes them, a few ahead.
   */
  compressStream(size: number, chunks: Iterable<Buffer>): Promise<Representations>;
  /**
   * Finishes the work already asked for, then stops the threads; never rejects (a failed worker rejects the bodies it
   * had). compress() after close() rejects.
   */
  close(): Promise<void>;
}

interface Job {
  body: Buffer;
  /** Sent alone, its ArrayBuffer moved to the worker. */
  move: boolean;
  resolve: (r: Representations) => void;
  reject: (e: Error) => void;
}

/** A batch both ways: the bodies (or their representations, br then gzip for each body) end to end in one buffer. */
interface Packed {
  bytes: Uint8Array;
  sizes: number[];
}

/**
 * A streamed body's chunks go through this many slots of memory shared with its worker, each of this many bytes: the
 * slots are reused, where a chunk per message would be copied into new memory of the worker's, freed only when its
 * garbage is collected.
 */
const STREAM_SLOTS = 4;
const STREAM_SLOT_BYTES = 1024 * 1024;

// The worker runs this script (CommonJS, from a string so that it runs the same from src/ under vitest and from
// lib/). It compresses each body of a batch with the options it was started with (made by brotliOptions() and
// gzipOptions(), so it only applies them), and answers the batch in order. A batch travels as one buffer each way,
// moved rather than copied: a buffer per body and per representation cost twice the pool's overhead (about 30 µs of
// CPU per body against 15, over the default publication). It first lowers its own priority (workerData.nice): see
// WORKER_NICE. A streamed body (compressStream) comes as messages of its own: { stream, size, shared } opens it, then
// each { stream, slot, length } is a chunk in that slot of the shared memory, for a br and a gzip stream (brotli told
// the whole size, as a one-shot compression knows it, so the bytes are the same), answered { stream, ack } once both
// took it (the slot is then free again), and { stream, end } is answered by the two representations. zlib's streams
// compress on libuv's thread pool, which WORKER_NICE does not lower.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const zlib = require('node:zlib');
const { createHash } = require('node:crypto');
if (workerData.nice !== null) {
  try {
    require('node:os').setPriority(workerData.nice);
  } catch {}
}
const streams = new Map();
function streamed({ stream, size, shared, slot, length, end }) {
  if (shared) {
    const hint = { [zlib.constants.BROTLI_PARAM_SIZE_HINT]: size };
    const brotli = { ...workerData.brotli, params: { ...workerData.brotli.params, ...hint } };
    const codings = [zlib.createBrotliCompress(brotli), zlib.createGzip(workerData.gzip)];
    const s = { shared, codings, outputs: [[], []] };
    codings.forEach((c, i) => c.on('data', (d) => s.outputs[i].push(d)));
    s.done = Promise.all(codings.map((c) => new Promise((resolve, reject) => c.on('end', resolve).on('error', reject))));
    streams.set(stream, s);
    return;
  }
  const s = streams.get(stream);
  if (!end) {
    const chunk = Buffer.from(s.shared, slot * ${STREAM_SLOT_BYTES}, length);
    let left = s.codings.length;
    for (const c of s.codings) c.write(chunk, () => --left === 0 && parentPort.postMessage({ stream, ack: true }));
    return;
  }
  for (const c of s.codings) c.end();
  s.done.then(
    () => {
      streams.delete(stream);
      const outputs = s.outputs.map((o) => Buffer.concat(o));
      const bytes = new Uint8Array(outputs[0].length + outputs[1].length);
      bytes.set(outputs[0], 0);
      bytes.set(outputs[1], outputs[0].length);
      const sha256 = outputs.map((o) => createHash('sha256').update(o).digest('hex'));
      parentPort.postMessage({ stream, bytes, sizes: outputs.map((o) => o.length), sha256 }, [bytes.buffer]);
    },
    (e) => {
      streams.delete(stream);
      parentPort.postMessage({ stream, error: String(e && e.message) });
    },
  );
}
parentPort.on('message', (message) => {
  if (message.stream !== undefined) return streamed(message);
  const { bytes, sizes } = message;
  const outputs = [];
  let offset = 0;
  for (const size of sizes) {
    const body = bytes.subarray(offset, (offset += size));
    outputs.push(zlib.brotliCompressSync(body, workerData.brotli), zlib.gzipSync(body, workerData.gzip));
  }
  const answer = { bytes: new Uint8Array(outputs.reduce((n, o) => n + o.length, 0)), sizes: [], sha256: [] };
  offset = 0;
  for (const output of outputs) {
    answer.bytes.set(output, offset);
    offset += output.length;
    answer.sizes.push(output.length);
    answer.sha256.push(createHash('sha256').update(output).digest('hex'));
  }
  parentPort.postMessage(answer, [answer.bytes.buffer]);
});
`;

/**
 * The nice value of each compression thread, set on Linux only (where it is the thread's own; elsewhere it would be
 * the whole process's). The main thread renders and writes, the build's critical path: two compression threads at
 * its priority on two cores left it about two thirds of a core whenever both were busy. At a lower priority the pool
 * still gets every cycle the main thread leaves, on every core.
 */
export const WORKER_NICE = process.platform === 'linux' ? 10 : null;

/** Bodies sent to a worker in one message: up to this many, or this many bytes, to spread the cost of a message. */
const BATCH_JOBS = 64;
const BATCH_BYTES = 256 * 1024;
/** A body asked to move is moved from this size: a smaller one costs little to copy into its batch. */
export const MOVE_BYTES = BATCH_BYTES;
/** Batches a worker may hold: the second waits in its queue while the main thread is busy with the first's answer. */
const BATCHES_PER_WORKER = 2;

interface Slot {
  worker: Worker;
  inFlight: Job[][];
  /** Streamed bodies under way on the worker. */
  streams: number;
}

interface StreamJob {
  slot: Slot;
  /** The shared memory's slots holding a chunk the worker has not acked yet. */
  slotsTaken: Budget;
  resolve: (r: Representations) => void;
  reject: (e: Error) => void;
}

type StreamAnswer = { stream: number } & ({ ack: true } | { error: string } | (Packed & { sha256: string[] }));

/** A pool of worker threads that compresses bodies at the given levels (BUILD_LEVELS by default). */
export function createCompressor(options: CompressorOptions = {}): Compressor {
  const levels: CompressionLevels = {
    brotliQuality: options.brotliQuality ?? BUILD_LEVELS.brotliQuality,
    gzipLevel: options.gzipLevel ?? BUILD_LEVELS.gzipLevel,
  };
  checkLevels(levels);
  const zlibOptions = { brotli: brotliOptions(levels.brotliQuality), gzip: gzipOptions(levels.gzipLevel) };
  const cores = availableParallelism();
  const threads = options.threads ?? cores;
  if (!Number.isInteger(threads) || threads < 1 || threads > cores) {
    throw new RangeError(`threads must be an integer 1-${cores} (os.availableParallelism()), not ${threads}`);
  }

  const queue: Job[] = [];
  let failure: Error | undefined;
  let closing = false;
  let flushScheduled = false;
  let drained: (() => void) | undefined;
  let closed: Promise<void> | undefined;

  const streams = new Map<number, StreamJob>();
  let nextStream = 0;
  const slots: Slot[] = [];
  for (let i = 0; i < threads; i++) {
    const workerData = { ...zlibOptions, nice: WORKER_NICE };
    const slot: Slot = { worker: new Worker(WORKER_SOURCE, { eval: true, workerData }), inFlight: [], streams: 0 };
    slot.worker.unref(); // an idle pool does not keep the process alive; a busy one is ref'd in dispatch()
    slot.worker.on('message', (answer: (Packed & { sha256: string[] }) | StreamAnswer) => {
      if ('stream' in answer) {
        streamAnswer(answer);
        return;
      }
      const batch = slot.inFlight.shift();
      if (!batch) return; // sent before the pool failed and rejected it
      let offset = 0;
      // A batch of one body: its two representations are the whole answer, and keep it without a copy (a large body's
      // are megabytes). Otherwise each is copied to a buffer of its own, so a kept one keeps only itself.
      const own = batch.length > 1;
      const next = (k: number): Representation => {
        const size = answer.sizes[k]!;
        const view = Buffer.from(answer.bytes.buffer, answer.bytes.byteOffset + offset, size);
        offset += size;
        const bytes = own ? Buffer.allocUnsafeSlow(size) : view;
        if (own) bytes.set(view);
        return { bytes, sha256: answer.sha256[k]!, size };
      };
      batch.forEach((job, i) => {
        const br = next(2 * i);
        job.resolve({ br, gzip: next(2 * i + 1) });
      });
      idle(slot);
      dispatch();
    });
    slot.worker.on('error', (error) => fail(error));
    slot.worker.on('exit', (code) => {
      if (!closing || slot.inFlight.length > 0) fail(new Error(`a compression worker exited with code ${code}`));
    });
    slots.push(slot);
  }

  /** A worker that fails leaves the pool unusable: every body waiting or in flight is rejected, and so are later ones. */
  function fail(error: Error): void {
    failure ??= error;
    for (const slot of slots) {
      for (const batch of slot.inFlight.splice(0)) for (const job of batch) job.reject(failure);
    }
    for (const job of queue.splice(0)) job.reject(failure);
    for (const job of streams.values()) {
      job.reject(failure);
      job.slotsTaken.give(1); // wakes the sender if it waits for a slot: it then sees the failure
    }
    streams.clear();
    for (const slot of slots) void slot.worker.terminate();
    checkDrained();
  }

  function dispatch(): void {
    flushScheduled = false;
    for (const slot of slots) {
      while (queue.length > 0 && slot.inFlight.length < BATCHES_PER_WORKER) {
        const batch: Job[] = [];
        let bytes = 0;
        // A body to move leaves alone, as it is; the others are packed into one buffer.
        while (queue.length > 0 && batch.length < BATCH_JOBS && (batch.length === 0 || bytes < BATCH_BYTES)) {
          if (batch.length > 0 && queue[0]!.move) break;
          const job = queue.shift()!;
          batch.push(job);
          bytes += job.body.length;
          if (job.move) break;
        }
        slot.inFlight.push(batch);
        slot.worker.ref();
        const packed = batch[0]!.move ? { bytes: batch[0]!.body, sizes: [bytes] } : pack(batch, bytes);
        slot.worker.postMessage(packed, [packed.bytes.buffer as ArrayBuffer]);
      }
    }
    checkDrained();
  }

  function checkDrained(): void {
    if (drained && queue.length === 0 && streams.size === 0 && slots.every((s) => s.inFlight.length === 0)) drained();
  }

  function idle(slot: Slot): void {
    if (slot.inFlight.length === 0 && slot.streams === 0) slot.worker.unref();
  }

  function streamAnswer(answer: StreamAnswer): void {
    const job = streams.get(answer.stream);
    if (!job) return; // the pool failed, or the body's chunks did
    if ('ack' in answer) {
      job.slotsTaken.give(1);
      return;
    }
    streams.delete(answer.stream);
    job.slot.streams--;
    idle(job.slot);
    if ('error' in answer) job.reject(new Error(`a streamed compression failed: ${answer.error}`));
    else {
      const [br, gzip] = answer.sizes as [number, number];
      const { buffer, byteOffset } = answer.bytes;
      job.resolve({
        br: { bytes: Buffer.from(buffer, byteOffset, br), sha256: answer.sha256[0]!, size: br },
        gzip: { bytes: Buffer.from(buffer, byteOffset + br, gzip), sha256: answer.sha256[1]!, size: gzip },
      });
    }
    checkDrained();
  }

  return {
    threads,
    compress(body: Buffer, options: { move?: boolean } = {}): Promise<Representations> {
      if (failure) return Promise.reject(failure);
      if (closing) return Promise.reject(new Error('the compressor is closed'));
      if (!Buffer.isBuffer(body)) return Promise.reject(new TypeError('compress() takes a Buffer'));
      const move = options.move === true && body.length >= MOVE_BYTES;
      return new Promise((resolve, reject) => {
        queue.push({ body, move, resolve, reject });
        // Bodies asked for in one go leave in batches: dispatch once the caller yields.
        if (!flushScheduled) {
          flushScheduled = true;
          queueMicrotask(dispatch);
        }
      });
    },
    async compressStream(size: number, chunks: Iterable<Buffer>): Promise<Representations> {
      if (failure) throw failure;
      if (closing) throw new Error('the compressor is closed');
      // The worker with the fewest streamed bodies: each holds a br and a gzip stream, and their outputs until the end.
      const slot = slots.reduce((a, b) => (b.streams < a.streams ? b : a));
      const stream = nextStream++;
      const done = new Promise<Representations>((resolve, reject) => {
        streams.set(stream, { slot, slotsTaken: new Budget(STREAM_SLOTS), resolve, reject });
      });
      done.catch(() => {}); // a failure while the chunks are sent is thrown when they are

      const job = streams.get(stream)!;
      slot.streams++;
      slot.worker.ref();
      const shared = new SharedArrayBuffer(STREAM_SLOTS * STREAM_SLOT_BYTES);
      slot.worker.postMessage({ stream, size, shared });
      let sent = 0;
      try {
        for (const chunk of chunks) {
          for (let at = 0; at < chunk.length && !failure; at += STREAM_SLOT_BYTES) {
            // The slot of the chunk STREAM_SLOTS before, which the worker has taken once it is acked (in order).
            await job.slotsTaken.take(1);
            if (failure) break;
            const k = sent++ % STREAM_SLOTS;
            const length = chunk.copy(new Uint8Array(shared, k * STREAM_SLOT_BYTES, STREAM_SLOT_BYTES), 0, at);
            slot.worker.postMessage({ stream, slot: k, length });
          }
        }
      } catch (e) {
        // The body could not be made: its worker drops what it compressed, and no answer is awaited.
        streams.delete(stream);
        slot.streams--;
        slot.worker.postMessage({ stream, end: true });
        idle(slot);
        checkDrained();
        throw e;
      }
      if (!failure) slot.worker.postMessage({ stream, end: true });
      return done;
    },
    close(): Promise<void> {
      closing = true;
      closed ??= new Promise<void>((resolve) => {
        drained = resolve;
        checkDrained();
      }).then(async () => {
        await Promise.all(slots.map((s) => s.worker.terminate()));
      });
      return closed;
    },
  };
}

/** The bodies of `batch` (`bytes` in all) end to end in a new buffer, which can move to a worker. */
function pack(batch: Job[], bytes: number): Packed {
  const packed: Packed = { bytes: new Uint8Array(bytes), sizes: [] };
  let offset = 0;
  for (const { body } of batch) {
    packed.bytes.set(body, offset);
    offset += body.length;
    packed.sizes.push(body.length);
  }
  return packed;
}
