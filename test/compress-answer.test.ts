// The gateway's fast compression of composed answers: each coding decodes to the body, deterministically.
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ANSWER_LEVELS, compressAnswer } from '../src/gateway/compress-answer.js';
import { encode } from '../src/publication/compress.js';

/** A list-page-like body of `models` items. */
function page(models: number): Buffer {
  const items = Array.from({ length: models }, (_, i) => ({
    slug: `model-${i}`,
    name: `Model ${i}`,
    description: `Model ${i}: ${'a capable model with tools and a long context window. '.repeat(1 + (i % 4))}`,
    stats: { total_tests: i * 3, average_first_token_latency: (i * 17) % 900 },
  }));
  return Buffer.from(JSON.stringify({ schemaVersion: '1.0.0', page: 1, total: models, models: items }));
}

const decode = { br: zlib.brotliDecompressSync, gzip: zlib.gunzipSync } as const;

describe('compressAnswer', () => {
  it.each([
    ['br', 0],
    ['br', 1],
    ['br', 100],
    ['br', 1000],
    ['gzip', 0],
    ['gzip', 1],
    ['gzip', 100],
    ['gzip', 1000],
  ] as const)('%s of a page of %i models decodes to the page, in a buffer of its own', (coding, models) => {
    const body = page(models);
    const bytes = compressAnswer(body, coding);
    expect(decode[coding](bytes).equals(body)).toBe(true);
    expect(bytes.buffer.byteLength).toBe(bytes.length); // a cache that counts bytes.length counts what it keeps
    if (models >= 100) expect(bytes.length).toBeLessThan(body.length / 5);
  });

  it('gives the same bytes for the same body, at the answer levels', () => {
    const body = page(100);
    for (const coding of ['br', 'gzip'] as const) {
      const bytes = compressAnswer(body, coding);
      expect(compressAnswer(Buffer.from(body), coding).equals(bytes)).toBe(true);
      expect(encode(body, coding, ANSWER_LEVELS).equals(bytes)).toBe(true);
    }
  });
});
