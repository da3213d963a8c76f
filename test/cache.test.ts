// The gateway's resident structures: ByteCache, the second-chance byte budget behind the body, composed-page and
// search caches; BodyCache's shared reads; ManifestIndex, the compact manifest; SendBuffers, the pool composed pages are joined into.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ManifestIndex } from '../src/gateway/manifest-index.js';
import { BodyCache, ByteCache, Doorkeeper } from '../src/gateway/caches.js';
import { SendBuffers } from '../src/gateway/send-buffers.js';

const cache = (max: number) => new ByteCache<string>(max, (v) => v.length);

describe('ByteCache', () => {
  it('keeps the bytes within the budget and evicts the oldest entry not hit since the last eviction', () => {
    const c = cache(30);
    c.set('a', 'x'.repeat(10));
    c.set('b', 'x'.repeat(10));
    c.set('c', 'x'.repeat(10));
    c.set('d', 'x'.repeat(10)); // none hit since inserted: every entry has its first chance, so the oldest goes after a walk
    expect(c.size).toBe(30);
    expect(['a', 'b', 'c', 'd'].filter((k) => c.get(k) !== undefined)).toHaveLength(3);
    expect(c.get('d')).toBeDefined();
  });

  it('keeps a new entry when every older one was hit (it is not evicted on arrival)', () => {
    const c = cache(30);
    for (const k of ['a', 'b', 'c']) c.set(k, 'x'.repeat(10));
    for (const k of ['a', 'b', 'c']) c.get(k);
    c.set('d', 'x'.repeat(10));
    expect(c.get('d')).toBe('x'.repeat(10));
    expect(c.size).toBe(30);
    expect(['a', 'b', 'c'].filter((k) => c.get(k) !== undefined)).toEqual(['b', 'c']);
  });

  it('prefers to keep what is read: a hot entry survives a stream of one-off entries', () => {
    const c = cache(100);
    c.set('hot', 'h'.repeat(10));
    for (let i = 0; i < 1000; i++) {
      expect(c.get('hot')).toBeDefined();
      c.set(`cold-${i}`, 'c'.repeat(10));
      expect(c.size).toBeLessThanOrEqual(100);
    }
  });

  it('counts the key when told to, and refuses a value larger than the budget', () => {
    const c = new ByteCache<string>(50, (v, key) => v.length + key.length);
    c.set('k'.repeat(45), 'v'.repeat(10));
    expect(c.size).toBe(0);
    c.set('key', 'v'.repeat(10));
    expect(c.size).toBe(13);
  });
});

describe('BodyCache', () => {
  const later = <T>(v: () => T) =>
    new Promise<T>((resolve, reject) =>
      setTimeout(() => {
        try {
          resolve(v());
        } catch (e) {
          reject(e);
        }
      }, 5),
    );

  it('gives concurrent misses on one body one read, and caches it', async () => {
    const bodies = new BodyCache(1000);
    let reads = 0;
    const read = () =>
      later(() => {
        reads++;
        return Buffer.from('body');
      });
    const got = await Promise.all(Array.from({ length: 20 }, () => bodies.load('sha-a', read)));
    expect(got.every((b) => b.toString() === 'body')).toBe(true);
    expect(reads).toBe(1);
    expect((await bodies.load('sha-a', read)).toString()).toBe('body');
    expect(reads).toBe(1);
    await bodies.load('sha-b', read); // another body: a read of its own
    expect(reads).toBe(2);
  });

  it('lets a request that joined a failed read (another path with the same bytes) read for itself', async () => {
    const bodies = new BodyCache(1000);
    let ownReads = 0;
    // The first request's path was switched on the host (its check fails); the others ask for paths that still hold
    // these bytes.
    const first = bodies.load('sha-a', () =>
      later(() => {
        throw new Error('origin returned other bytes for p1');
      }),
    );
    const others = Array.from({ length: 5 }, () =>
      bodies.load('sha-a', () =>
        later(() => {
          ownReads++;
          return Buffer.from('body');
        }),
      ),
    );
    await expect(first).rejects.toThrow('p1');
    expect((await Promise.all(others)).map(String)).toEqual(Array(5).fill('body'));
    expect(ownReads).toBe(5);
    // Not cached while failing, cached once read.
    expect(bodies.get('sha-a')?.toString()).toBe('body');
  });

  it('does not cache a failure: the next miss reads again', async () => {
    const bodies = new BodyCache(1000);
    let reads = 0;
    const failing = () =>
      later(() => {
        reads++;
        throw new Error('origin down');
      });
    await expect(bodies.load('sha-a', failing)).rejects.toThrow('origin down');
    expect(bodies.get('sha-a')).toBeUndefined();
    expect((await bodies.load('sha-a', () => later(() => Buffer.from('body')))).toString()).toBe('body');
    expect(reads).toBe(1);
  });
});

describe('ManifestIndex', () => {
  it('gives back every entry exactly as listed, and nothing for other paths', () => {
    const files = Array.from({ length: 500 }, (_, i) => ({
      path: `api/v1/models/m-${i}/en.verified.public.base.json`,
      sha256: createHash('sha256').update(String(i)).digest('hex'),
      bytes: i * 977 + (i % 3 === 0 ? 2 ** 33 : 0), // beyond 32 bits too
      content_type: i % 50 === 0 ? 'application/problem+json' : 'application/json; charset=utf-8',
      revision: `r-${i % 7}`,
      last_modified: new Date(Date.UTC(2026, 0, 1 + (i % 11))).toISOString(),
    }));
    files.push(
      { ...files[0]!, path: 'odd-hash.json', sha256: 'NOT-HEX' },
      { ...files[1]!, path: 'upper.json', sha256: files[1]!.sha256.toUpperCase() },
    );
    const index = ManifestIndex.now(files);
    expect(index.size).toBe(files.length);
    for (const f of files) expect(index.get(f.path)).toEqual(f);
    expect(index.get('api/v1/models/m-0')).toBeUndefined();
    expect(index.get('')).toBeUndefined();
  });
});

describe('SendBuffers', () => {
  /** A response that holds what it was sent until told it finished, as node:http does while the socket writes. */
  const response = () => {
    const r = {
      sent: undefined as Buffer | undefined,
      finish: undefined as (() => void) | undefined,
      end(chunk: Buffer, cb: () => void) {
        r.sent = chunk;
        r.finish = cb;
      },
    };
    return r;
  };
  const pieces = (...texts: string[]) => texts.map((t) => Buffer.from(t));

  it('joins the pieces into one body of the declared length', () => {
    const res = response();
    new SendBuffers().end(res, pieces('{"models":[', '{"a":1}', ',{"b":2}', ']}'), 28);
    expect(res.sent!.toString()).toBe('{"models":[{"a":1},{"b":2}]}');
    expect(res.sent!.length).toBe(28);
  });

  it('lends a buffer out until its response finishes, then reuses it', () => {
    const pool = new SendBuffers();
    const [a, b] = [response(), response()];
    pool.end(a, pieces('x'.repeat(1000)), 1000);
    pool.end(b, pieces('y'.repeat(1000)), 1000); // a is still in flight: b must not get its buffer
    expect(a.sent!.toString()).toBe('x'.repeat(1000));
    expect(b.sent!.buffer).not.toBe(a.sent!.buffer);
    a.finish!();
    const c = response();
    pool.end(c, pieces('z'.repeat(500)), 500);
    expect(c.sent!.buffer).toBe(a.sent!.buffer); // the finished one came back
    expect(b.sent!.toString()).toBe('y'.repeat(1000));
  });

  it('sizes pooled buffers in powers of two and gives large answers a buffer of their own', () => {
    const pool = new SendBuffers(2, 1 << 16);
    expect(pool.take(1).length).toBe(16_384);
    expect(pool.take(16_385).length).toBe(32_768);
    const big = pool.take(100_000);
    expect(big.length).toBe(100_000);
    pool.give(big);
    expect(pool.take(100_000)).not.toBe(big);
    const kept = [pool.take(20_000), pool.take(20_000), pool.take(20_000)];
    for (const k of kept) pool.give(k);
    expect([pool.take(20_000), pool.take(20_000), pool.take(20_000)].filter((k) => kept.includes(k))).toHaveLength(2); // at most perSize spares
  });

  it('refuses pieces that do not add up to the declared length', () => {
    expect(() => new SendBuffers().end(response(), pieces('abc'), 4)).toThrow(/3 bytes.*declares 4/);
  });
});

describe('Doorkeeper', () => {
  it('says no to a key the first time and yes the second', () => {
    const d = new Doorkeeper(10);
    expect(d.offer('en.verified.false.base.popular.7.1.')).toBe(false);
    expect(d.offer('en.verified.false.base.popular.7.1.')).toBe(true);
    expect(d.offer('en.verified.false.base.popular.7.2.')).toBe(false);
  });

  it('remembers most of many keys in a table four times their number', () => {
    const d = new Doorkeeper(14);
    const keys = Array.from({ length: 4096 }, (_, i) => `zh.all.true.pricing.newest.20.${i}.q${i * 7919}`);
    expect(keys.filter((k) => d.offer(k))).toHaveLength(0);
    // A key loses its slot only to a later key: about 11% of them here (22% of the first ones, none of the last).
    const admitted = keys.filter((k) => d.offer(k)).length;
    expect(admitted).toBeGreaterThan(0.75 * keys.length);
  });
});
