// The br and gzip representations of bodies: they decode to the identity bytes, they are deterministic, and the worker
// pool gives the same bytes as the single-thread function, in parallel, and closes cleanly.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import zlib from 'node:zlib';
import { Worker } from 'node:worker_threads';
import { describe, expect, it, vi } from 'vitest';
import {
  BUILD_LEVELS,
  compressBody,
  createCompressor,
  MOVE_BYTES,
  type Representation,
  type Representations,
  WORKER_NICE,
} from '../src/publication/compress.js';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A JSON body of about `models` × 200 bytes, different for each seed. */
function body(models: number, seed = 0): Buffer {
  const items = Array.from({ length: models }, (_, i) => ({
    slug: `model-${seed}-${i}`,
    name: `Model ${i} of ${seed}`,
    description: `A model number ${(i * 7919 + seed) % 1000} with a context window of ${(i * 31) % 128}k tokens.`,
    score: ((i * 37 + seed) % 1000) / 10,
  }));
  return Buffer.from(JSON.stringify({ schemaVersion: '1.0.0', models: items }));
}

function expectDecodesTo(reps: Representations, identity: Buffer): void {
  const check = (rep: Representation, decode: (b: Buffer) => Buffer) => {
    expect(decode(rep.bytes).equals(identity)).toBe(true);
    expect(rep.size).toBe(rep.bytes.length);
    expect(rep.sha256).toBe(sha256(rep.bytes));
  };
  check(reps.br, zlib.brotliDecompressSync);
  check(reps.gzip, zlib.gunzipSync);
  // Each owns its buffer (a kept representation does not keep zlib's 16 KiB output chunk, nor a batch's answer,
  // alive), or the two share one holding br then gzip and nothing else (a body compressed alone in the pool).
  const { br, gzip } = reps;
  if (br.bytes.buffer === gzip.bytes.buffer) {
    expect([br.bytes.byteOffset, gzip.bytes.byteOffset, br.bytes.buffer.byteLength]).toEqual([
      0,
      br.size,
      br.size + gzip.size,
    ]);
  } else {
    expect([br.bytes.buffer.byteLength, gzip.bytes.buffer.byteLength]).toEqual([br.size, gzip.size]);
  }
}

const SIZES = [0, 1, 20, 100, 1_000, 5_000]; // models: empty list to a 1 MB body

describe('compressBody', () => {
  it.each(SIZES)('representations of a body of %i models decode to it', (models) => {
    const identity = body(models);
    const reps = compressBody(identity, BUILD_LEVELS);
    expectDecodesTo(reps, identity);
    if (models >= 20) expect(reps.br.size).toBeLessThan(identity.length / 3);
  });

  it('decodes an empty body', () => {
    expectDecodesTo(compressBody(Buffer.alloc(0), BUILD_LEVELS), Buffer.alloc(0));
  });

  it('gives the same bytes for the same body, and different bytes at another level', () => {
    const identity = body(300);
    const a = compressBody(identity, BUILD_LEVELS);
    const b = compressBody(Buffer.from(identity), BUILD_LEVELS);
    expect(a.br.bytes.equals(b.br.bytes)).toBe(true);
    expect(a.gzip.bytes.equals(b.gzip.bytes)).toBe(true);
    const other = compressBody(identity, { brotliQuality: 1, gzipLevel: 1 });
    expect(other.br.sha256).not.toBe(a.br.sha256);
    expect(other.gzip.sha256).not.toBe(a.gzip.sha256);
  });

  it('writes a gzip header with modification time 0 and no file name', () => {
    const { gzip } = compressBody(body(10), BUILD_LEVELS);
    expect([...gzip.bytes.subarray(0, 3)]).toEqual([0x1f, 0x8b, 8]); // magic, deflate
    expect(gzip.bytes[3]).toBe(0); // FLG: no FNAME, FCOMMENT, FEXTRA, FHCRC
    expect(gzip.bytes.readUInt32LE(4)).toBe(0); // MTIME
  });

  it('refuses levels out of range', () => {
    expect(() => compressBody(body(1), { brotliQuality: 12, gzipLevel: 6 })).toThrow(/brotliQuality/);
    expect(() => compressBody(body(1), { brotliQuality: 5, gzipLevel: 0 })).toThrow(/gzipLevel/);
    expect(() => compressBody(body(1), { brotliQuality: 5.5, gzipLevel: 6 })).toThrow(/brotliQuality/);
  });
});

describe('createCompressor', () => {
  it('compresses many bodies in parallel to the bytes compressBody gives, each to its own', async () => {
    const compressor = createCompressor({ threads: 2 });
    try {
      expect(compressor.threads).toBe(2);
      const bodies = Array.from({ length: 300 }, (_, i) => body(SIZES[i % SIZES.length]! + (i % 7), i));
      const results = await Promise.all(bodies.map((b) => compressor.compress(b)));
      results.forEach((reps, i) => {
        expectDecodesTo(reps, bodies[i]!);
      });
      // The same bytes as on this thread, for a sample of sizes (determinism across threads).
      for (const i of [0, 1, 4, 5, 299]) {
        const local = compressBody(bodies[i]!, BUILD_LEVELS);
        expect(results[i]!.br.bytes.equals(local.br.bytes)).toBe(true);
        expect(results[i]!.gzip.bytes.equals(local.gzip.bytes)).toBe(true);
      }
    } finally {
      await compressor.close();
    }
  });

  it('uses the levels it is given', async () => {
    const compressor = createCompressor({ threads: 1, brotliQuality: 2, gzipLevel: 3 });
    try {
      const identity = body(200);
      const reps = await compressor.compress(identity);
      const local = compressBody(identity, { brotliQuality: 2, gzipLevel: 3 });
      expect(reps.br.sha256).toBe(local.br.sha256);
      expect(reps.gzip.sha256).toBe(local.gzip.sha256);
      expect(reps.br.sha256).not.toBe(compressBody(identity, BUILD_LEVELS).br.sha256);
    } finally {
      await compressor.close();
    }
  });

  it('sends a body that is a slice of a larger buffer as its own bytes, and leaves the caller its body', async () => {
    const compressor = createCompressor({ threads: 1 });
    try {
      const whole = Buffer.concat([body(50, 1), body(60, 2), body(70, 3)]);
      const middle = whole.subarray(body(50, 1).length, body(50, 1).length + body(60, 2).length);
      const reps = await compressor.compress(middle);
      expectDecodesTo(reps, body(60, 2));
      expect(middle.equals(body(60, 2))).toBe(true); // still readable: copied, not transferred
      await expect(compressor.compress('{}' as unknown as Buffer)).rejects.toThrow(/takes a Buffer/);
      expectDecodesTo(await compressor.compress(body(5)), body(5)); // and the pool goes on
    } finally {
      await compressor.close();
    }
  });

  it('moves a large body asked to move, uncopied, and copies the others; each decodes to its own', async () => {
    const compressor = createCompressor({ threads: 1 });
    try {
      const large = () => body(4_000, 7); // about 600 KB
      expect(large().length).toBeGreaterThanOrEqual(MOVE_BYTES);
      const [small, moved, kept, after] = [body(10, 1), large(), large(), body(20, 2)];
      const sent = moved.buffer;
      // Asked for in one go: the moved body leaves alone, between batches of the others.
      const results = await Promise.all([
        compressor.compress(small, { move: true }), // too small to move: copied
        compressor.compress(moved, { move: true }),
        compressor.compress(kept),
        compressor.compress(after, { move: true }),
      ]);
      expectDecodesTo(results[0]!, body(10, 1));
      expectDecodesTo(results[1]!, large());
      expectDecodesTo(results[2]!, large());
      expectDecodesTo(results[3]!, body(20, 2));
      expect([sent.byteLength, moved.length]).toEqual([0, 0]); // moved: detached here
      expect(kept.equals(large())).toBe(true); // not asked to move: the caller's still
      expect(small.equals(body(10, 1))).toBe(true);
      expect(results[1]!.br.bytes.equals(compressBody(large(), BUILD_LEVELS).br.bytes)).toBe(true);
    } finally {
      await compressor.close();
    }
  });

  it('compresses a body given in chunks to the bytes compressBody gives, whatever the chunks', async () => {
    const compressor = createCompressor({ threads: 2 });
    /** `b` in chunks of `n` bytes, in one buffer reused, as bodyChunks gives them. */
    function* chunks(b: Buffer, n: number): Generator<Buffer> {
      const shared = Buffer.alloc(n);
      for (let at = 0; at < b.length; at += n) yield shared.subarray(0, b.copy(shared, 0, at, at + n));
    }
    try {
      const bodies = [body(0), body(5_000, 1), body(5_000, 2), body(20_000, 3)];
      const results = await Promise.all(
        bodies.map((b, i) => compressor.compressStream(b.length, chunks(b, [1, 1000, 65_536, 1 << 20][i]!))),
      );
      // Small bodies in batches meanwhile: answers of both kinds share the workers.
      const small = await Promise.all([1, 2, 3].map((seed) => compressor.compress(body(10, seed))));
      small.forEach((reps, i) => {
        expectDecodesTo(reps, body(10, i + 1));
      });
      results.forEach((reps, i) => {
        expectDecodesTo(reps, bodies[i]!);
        const local = compressBody(bodies[i]!, BUILD_LEVELS);
        expect(reps.br.bytes.equals(local.br.bytes), `br ${i}`).toBe(true);
        expect(reps.gzip.bytes.equals(local.gzip.bytes), `gzip ${i}`).toBe(true);
      });
    } finally {
      await compressor.close();
    }
  });

  it('rejects a body whose chunks fail, and goes on with the others', async () => {
    const compressor = createCompressor({ threads: 1 });
    function* failing(): Generator<Buffer> {
      yield Buffer.from('{"a":');
      throw new Error('the pieces changed');
    }
    try {
      await expect(compressor.compressStream(10, failing())).rejects.toThrow(/the pieces changed/);
      const b = body(100);
      expectDecodesTo(await compressor.compressStream(b.length, [b.subarray(0, 10), b.subarray(10)]), b);
    } finally {
      await compressor.close();
    }
  });

  it('close() finishes the bodies already asked for, then refuses more', async () => {
    const compressor = createCompressor({ threads: 2 });
    const bodies = Array.from({ length: 50 }, (_, i) => body(500, i));
    const pending = bodies.map((b) => compressor.compress(b));
    const closing = compressor.close();
    expect(compressor.close()).toBe(closing); // a second close() waits for the same end
    const results = await Promise.all(pending);
    results.forEach((reps, i) => {
      expectDecodesTo(reps, bodies[i]!);
    });
    await closing;
    await expect(compressor.compress(body(1))).rejects.toThrow(/closed/);
  });

  it('closes an idle pool at once', async () => {
    const compressor = createCompressor({ threads: 1 });
    await compressor.close();
    await expect(compressor.compress(body(1))).rejects.toThrow(/closed/);
  });

  it('rejects the bodies of a worker that fails, and every later one; close() still ends', async () => {
    const compressor = createCompressor({ threads: 1 });
    // The first batch reaches the worker malformed, so its script throws as a crashed worker would.
    const post = Worker.prototype.postMessage;
    const spy = vi.spyOn(Worker.prototype, 'postMessage').mockImplementationOnce(function (this: Worker) {
      post.call(this, { bytes: null, sizes: [1] });
    });
    try {
      const pending = [compressor.compress(body(1)), compressor.compress(body(2))];
      for (const p of pending) await expect(p).rejects.toThrow(/null/); // the worker's own error
      await expect(compressor.compress(body(3))).rejects.toThrow(/null/);
    } finally {
      spy.mockRestore();
    }
    await compressor.close();
  });

  it.runIf(process.platform === 'linux')(
    'runs its threads at WORKER_NICE, and leaves the calling thread at its own priority',
    async () => {
      // The nice value of each thread of this process (field 19 of /proc/self/task/TID/stat, after the comm in parens).
      const niceOf = (stat: string) => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
      const threadNices = () =>
        readdirSync('/proc/self/task').flatMap((tid) => {
          try {
            return [niceOf(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8'))];
          } catch {
            return []; // a thread that ended meanwhile
          }
        });
      const own = niceOf(readFileSync('/proc/thread-self/stat', 'utf8'));
      expect(WORKER_NICE).toBeGreaterThan(own);
      const before = threadNices().filter((n) => n === WORKER_NICE).length;
      const compressor = createCompressor({ threads: 2 });
      try {
        // Four bodies over BATCH_BYTES each: a batch each, two per thread, so both threads have run their script (and
        // set their priority) once all four are answered.
        await Promise.all([1, 2, 3, 4].map((seed) => compressor.compress(body(9_000, seed))));
        expect(threadNices().filter((n) => n === WORKER_NICE).length - before).toBe(2);
        expect(niceOf(readFileSync('/proc/thread-self/stat', 'utf8'))).toBe(own);
      } finally {
        await compressor.close();
      }
    },
  );

  it('refuses a thread count outside 1 to the available cores, and bad levels', () => {
    expect(() => createCompressor({ threads: 0 })).toThrow(/threads must be/);
    expect(() => createCompressor({ threads: 10_000 })).toThrow(/threads must be/);
    expect(() => createCompressor({ threads: 1.5 })).toThrow(/threads must be/);
    expect(() => createCompressor({ gzipLevel: 10 })).toThrow(/gzipLevel/);
  });
});
