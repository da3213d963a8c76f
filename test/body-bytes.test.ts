// A large body is made once: its tail is joined with room before it, where bodyBytes puts the head and revision, and
// the writer, once the body is written, moves it to the compression pool rather than copying it. Its file and its
// representations must be the bytes of a plain concatenation. A catalog's pieces wait in a file (CatalogPieces) and
// are read straight into its bytes.
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type BodyParts,
  bodyBytes,
  envelopeBytes,
  joinedBytes,
  type SizedPiece,
  withSections,
} from '../src/publication/assemble.js';
import { CatalogPieces } from '../src/pipeline/render-catalog.js';
import { INCLUDES } from '../src/schema/api.js';
import { LOCALES, type Locale } from '../src/schema/source.js';
import { BUILD_LEVELS, compressBody, createCompressor, MOVE_BYTES } from '../src/publication/compress.js';
import { timePolicy } from '../src/publication/times.js';
import { type PendingBody, writeBodies } from '../src/publication/writer.js';
import { withTemp } from './helpers/fixture.js';

/** `head + JSON(revision) + tail`, concatenated as plainly as can be. */
const plain = (b: BodyParts, revision: string) =>
  Buffer.from(b.head + JSON.stringify(revision) + (typeof b.tail === 'string' ? b.tail : b.tail.toString()));

/** A catalog-like body of `n` models, its data given as pieces. */
const catalog = (n: number): BodyParts =>
  envelopeBytes('1.0.0', 'en', '{"required":true}', function* () {
    yield '{"models":[';
    for (let i = 0; i < n; i++) yield `${i ? ',' : ''}{"slug":"model-${i}","score":${(i * 37) % 1000}}`;
    yield `],"total":${n}}`;
  });

describe('bodyBytes', () => {
  it('puts head and revision in the room before a joined tail, in the tail’s memory, for any revision', () => {
    const parts = catalog(3);
    const tail = Buffer.from(parts.tail as Buffer); // a copy, to compare with
    for (const revision of ['r1', 'a-much-longer-revision-id.2', 'x'.repeat(64), 'r1']) {
      const bytes = bodyBytes(parts, revision);
      expect(bytes.equals(plain(parts, revision)), revision).toBe(true);
      expect(bytes.buffer).toBe((parts.tail as Buffer).buffer); // no copy of the tail
      expect(parts.tail).toEqual(tail); // the tail itself untouched
    }
  });

  it('gives bytes of their own for a text tail, a tail without room, or a part of a joined one', () => {
    const joined = joinedBytes(() => ['{"a":', '1}'], 40);
    for (const parts of [
      { head: '{"r":', tail: ',"a":1}' },
      { head: '{"r":', tail: Buffer.from(',"a":1}') },
      { head: '{"r":', tail: joined.subarray(4) },
      { head: 'h'.repeat(100), tail: joined }, // a head longer than the room
    ]) {
      const bytes = bodyBytes(parts, 'r2');
      expect(bytes.equals(plain(parts, 'r2'))).toBe(true);
      expect(bytes.buffer).not.toBe(joined.buffer); // the joined tail's room is not used
    }
    expect(joined.toString()).toBe('{"a":1}');
  });
});

describe('joinedBytes', () => {
  it('joins text, bytes and pieces that copy themselves, and refuses pieces that change between its two passes', () => {
    const sized = (text: string): SizedPiece => ({
      size: Buffer.byteLength(text),
      copyTo: (out, at) => void out.write(text, at),
    });
    const joined = joinedBytes(() => ['{"a":', Buffer.from('"é",'), sized('"b":"日本"'), '}']);
    expect(joined.toString()).toBe('{"a":"é","b":"日本"}');
    for (const second of ['"bb"', '']) {
      let pass = 0;
      const changing = () => ['[', pass++ === 0 ? sized('"b"') : sized(second), ']'];
      expect(() => joinedBytes(changing)).toThrow(/changed between two passes/);
    }
  });
});

describe('CatalogPieces', () => {
  it('gives back each model’s detail with every include, per locale, as withSections makes it', () => {
    const pieces = new CatalogPieces(tmpdir());
    const models = ['a', 'b'].map((slug, i) => ({
      slug,
      detail: Object.fromEntries(LOCALES.map((l) => [l, JSON.stringify({ slug, locale: l, name: `モデル ${i}` })])),
      sections: { benchmarks: `"benchmarks":[${i}]`, capabilities: '"capabilities":{}', pricing: '"pricing":null' },
    }));
    for (const m of models) pieces.add(m.slug, m.detail as Record<Locale, string>, m.sections);
    for (const m of [...models].reverse()) {
      for (const l of LOCALES) {
        const expected = withSections(m.detail[l]!, m.sections, INCLUDES);
        expect(joinedBytes(() => pieces.detail(m.slug, l)).toString()).toBe(expected);
        expect(CatalogPieces.text(pieces.detail(m.slug, l))).toBe(expected);
      }
    }
  });
});

describe('writeBodies', () => {
  it('writes a large rendered body, then moves it to the pool: its file and representations are its plain bytes', async () => {
    await withTemp(async (dir) => {
      const pool = createCompressor({ threads: 1 });
      const made: BodyParts[] = [];
      const given = catalog(20_001); // handed as parts: the caller's, so never moved
      const bodies: PendingBody[] = [
        {
          path: 'api/v1/catalog/en.json',
          inputs: 'digest-1',
          render: () => {
            made.push(catalog(20_000));
            return made.at(-1)!;
          },
        },
        { path: 'api/v1/catalog/given.json', ...given },
        { path: 'api/v1/small.json', head: '{"r":', tail: '}' },
      ];
      try {
        const { representations, stats } = await writeBodies(bodies, {
          stagingDir: dir,
          revision: 'r1',
          times: timePolicy(undefined, '2025-01-01T00:00:00.000Z', null, 'r1'),
          previous: null,
          compressor: { pool, levels: BUILD_LEVELS },
        });
        expect(stats.encodedNew).toBe(3);
        const listed = new Map(representations!);
        for (const [file, parts] of [
          ['api/v1/catalog/en.json', catalog(20_000)],
          ['api/v1/catalog/given.json', given],
        ] as const) {
          const expected = plain(parts, 'r1');
          expect(expected.length).toBeGreaterThanOrEqual(MOVE_BYTES);
          expect((await readFile(path.join(dir, file))).equals(expected), file).toBe(true);
          const local = compressBody(expected, BUILD_LEVELS);
          const reps = [...listed.values()].find((r) => r.br.sha256 === local.br.sha256);
          expect(reps, file).toMatchObject({
            br: { sha256: local.br.sha256, bytes: local.br.size },
            gzip: { sha256: local.gzip.sha256, bytes: local.gzip.size },
          });
        }
        // The rendered body went to the pool uncopied (its memory is gone from here); the given one is intact.
        expect((made[0]!.tail as Buffer).length).toBe(0);
        expect(plain(given, 'r1').equals(plain(catalog(20_001), 'r1'))).toBe(true);
      } finally {
        await pool.close();
      }
    });
  });
});
