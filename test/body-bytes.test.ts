// A large body is given by its pieces, never as one string: joined once into its bytes when it is small enough, or
// (past the writer's largeBodyBytes) made again in chunks for each use, never whole. Its file and its representations
// must be the bytes of a plain concatenation either way. A catalog's pieces wait in a file (CatalogPieces) and are read
// straight into its bytes.
import { statSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  type BodyParts,
  bodyBytes,
  bodyChunks,
  envelopeBytes,
  joinedBytes,
  type PiecesTail,
  type SizedPiece,
  withSections,
} from '../src/publication/assemble.js';
import { CatalogPieces } from '../src/pipeline/render-catalog.js';
import { PiecesFile } from '../src/publication/pieces-file.js';
import { INCLUDES } from '../src/schema/api.js';
import { LOCALES, type Locale } from '../src/schema/source.js';
import { BUILD_LEVELS, compressBody, createCompressor, MOVE_BYTES } from '../src/publication/compress.js';
import { timePolicy } from '../src/publication/times.js';
import { type PendingBody, writeBodies } from '../src/publication/writer.js';
import { withTemp } from './helpers/fixture.js';

/** `head + JSON(revision) + tail`, concatenated as plainly as can be. */
const plain = (b: BodyParts, revision: string) => {
  const { tail } = b;
  const text = typeof tail === 'string' || Buffer.isBuffer(tail) ? String(tail) : joinedBytes(tail.pieces).toString();
  return Buffer.from(b.head + JSON.stringify(revision) + text);
};

/** A catalog-like body of `n` models, its data given as pieces. */
const catalog = (n: number): BodyParts =>
  envelopeBytes('1.0.0', 'en', '{"required":true}', function* () {
    yield '{"models":[';
    for (let i = 0; i < n; i++) yield `${i ? ',' : ''}{"slug":"model-${i}","score":${(i * 37) % 1000}}`;
    yield `],"total":${n}}`;
  });

describe('bodyBytes and bodyChunks', () => {
  it('make the same bytes from a tail of pieces, whole or in chunks of any size, for any revision', () => {
    const parts = catalog(300) as BodyParts & { tail: PiecesTail };
    for (const revision of ['r1', 'a-much-longer-revision-id.2', 'x'.repeat(64)]) {
      const expected = plain(parts, revision);
      expect(bodyBytes(parts, revision).equals(expected), revision).toBe(true);
      for (const chunkBytes of [1, 7, 100, 4096, 1 << 20]) {
        const chunks = Array.from(bodyChunks(parts, revision, chunkBytes), (c) => Buffer.from(c)); // they share memory
        expect(Buffer.concat(chunks).equals(expected), `${revision} ${chunkBytes}`).toBe(true);
        // Each at most chunkBytes, but for the start and a piece larger than that (none here past 100 bytes).
        if (chunkBytes >= 100) for (const c of chunks.slice(1)) expect(c.length).toBeLessThanOrEqual(chunkBytes);
      }
    }
  });

  it('give bytes of their own for a text tail or a bytes tail', () => {
    for (const parts of [
      { head: '{"r":', tail: ',"a":1}' },
      { head: '{"r":', tail: Buffer.from(',"a":1}') },
    ]) {
      expect(bodyBytes(parts, 'r2').toString()).toBe('{"r":"r2","a":1}');
    }
  });

  it('refuse pieces that changed since the tail’s size was taken', () => {
    let n = 2;
    const parts = envelopeBytes('1.0.0', 'en', '{}', function* () {
      yield '['.padEnd(n++, ' ');
      yield ']';
    }) as BodyParts & { tail: PiecesTail };
    expect(() => [...bodyChunks(parts, 'r1', 4)]).toThrow(/changed between two passes/);
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
    const file = new PiecesFile(tmpdir(), 'catalog-pieces');
    const pieces = new CatalogPieces(file);
    const display = new CatalogPieces(file); // a variant of the same lane: one model its own, one the public one's
    const models = ['a', 'b'].map((slug, i) => ({
      slug,
      detail: Object.fromEntries(LOCALES.map((l) => [l, JSON.stringify({ slug, locale: l, name: `モデル ${i}` })])),
      sections: { benchmarks: `"benchmarks":[${i}]`, capabilities: '"capabilities":{}', pricing: '"pricing":null' },
    }));
    for (const m of models)
      pieces.at(m.slug, CatalogPieces.append(file, m.detail as Record<Locale, string>, m.sections));
    const shown = {
      ...models[1]!,
      detail: { ...models[1]!.detail, en: '{"slug":"b","name":"Bee"}' } as Record<string, string>,
    };
    display.alias('a', pieces);
    display.at('b', CatalogPieces.append(file, shown.detail as Record<Locale, string>, shown.sections));
    for (const [held, ms] of [
      [pieces, models],
      [display, [models[0]!, shown]],
    ] as const) {
      for (const m of [...ms].reverse()) {
        for (const l of LOCALES) {
          const expected = withSections(m.detail[l]!, m.sections, INCLUDES);
          expect(joinedBytes(() => held.detail(m.slug, l)).toString()).toBe(expected);
          expect(CatalogPieces.text(held.detail(m.slug, l))).toBe(expected);
        }
      }
    }
    expect(() => new CatalogPieces(new PiecesFile(tmpdir(), 'other')).alias('a', pieces)).toThrow('another file');
  });
});

/** A small catalog (models in two variants, sharing their pieces) written with the given options and a pool. */
async function writeCatalog(dir: string, n: number, options: { largeBodyBytes?: number } = {}) {
  const pool = createCompressor({ threads: Math.min(2, availableParallelism()) });
  const bodies: PendingBody[] = [
    ...['en', 'ru'].map((locale) => ({
      path: `api/v1/catalog/${locale}.json`,
      inputs: `digest-${locale}`,
      render: () => catalog(n),
    })),
    { path: 'api/v1/catalog/given.json', ...catalog(n + 1) },
    { path: 'api/v1/small.json', head: '{"r":', tail: '}' },
  ];
  try {
    const written = await writeBodies(bodies, {
      stagingDir: dir,
      revision: 'r1',
      times: timePolicy(undefined, '2025-01-01T00:00:00.000Z', null, 'r1'),
      previous: null,
      compressor: { pool, levels: BUILD_LEVELS, memoryBytes: 0 },
      ...options,
    });
    return written;
  } finally {
    await pool.close();
  }
}

describe('writeBodies', () => {
  it('writes a large body whole or streamed to the same file and representations: its plain bytes', async () => {
    await withTemp(async (dir) => {
      const files = ['api/v1/catalog/en.json', 'api/v1/catalog/ru.json', 'api/v1/catalog/given.json'];
      const results = [];
      // Whole (the threshold far above), then streamed in chunks (every body of pieces past the threshold).
      for (const largeBodyBytes of [1 << 30, 1000]) {
        const staging = path.join(dir, String(largeBodyBytes));
        const { representations, stats, entries } = await writeCatalog(staging, 20_000, { largeBodyBytes });
        expect(stats.encodedNew).toBe(3); // en and ru are the same bytes
        const listed = [...new Map(representations!).values()];
        const out = new Map<string, unknown>();
        for (const file of files) {
          const expected = plain(catalog(file.endsWith('given.json') ? 20_001 : 20_000), 'r1');
          expect(expected.length).toBeGreaterThanOrEqual(MOVE_BYTES);
          expect((await readFile(path.join(staging, file))).equals(expected), file).toBe(true);
          const local = compressBody(expected, BUILD_LEVELS);
          const reps = listed.find((r) => r.br.sha256 === local.br.sha256);
          expect(reps, file).toMatchObject({
            br: { sha256: local.br.sha256, bytes: local.br.size },
            gzip: { sha256: local.gzip.sha256, bytes: local.gzip.size },
          });
          out.set(file, reps);
        }
        // The pack holds them at the places listed: decompressed, each is the body.
        const pack = await readFile(path.join(staging, representations!.packs![0]!.path));
        const bodies = await Promise.all([...files, 'api/v1/small.json'].map((f) => readFile(path.join(staging, f))));
        for (const r of listed) {
          const at = r.offset!;
          const body = brotliDecompressSync(pack.subarray(at, at + r.br.bytes));
          expect(gunzipSync(pack.subarray(at + r.br.bytes, at + r.br.bytes + r.gzip.bytes)).equals(body)).toBe(true);
          expect(bodies.some((b) => b.equals(body))).toBe(true);
        }
        await entries.remove();
        results.push(out);
      }
      expect(results[1]).toEqual(results[0]);
    });
  });

  it('twins that come together are made once: 40 inputs, each at 3 paths in a row, 32 bodies under way', async () => {
    await withTemp(async (dir) => {
      let made = 0;
      const bodies = Array.from({ length: 120 }, (_, i): PendingBody => {
        const inputs = `inputs-${Math.floor(i / 3)}`;
        return {
          path: `api/v1/models/m${i}/en.json`,
          inputs,
          render: () => {
            made++;
            return { head: '{"r":', tail: `,"inputs":${JSON.stringify(inputs)}}` };
          },
        };
      });
      const written = await writeBodies(bodies, {
        stagingDir: dir,
        revision: 'r1',
        times: timePolicy(undefined, '2025-01-01T00:00:00.000Z', null, 'r1'),
        previous: null,
        concurrency: 32,
      });
      expect(made).toBe(40);
      expect(written.stats).toMatchObject({ files: 120, rendered: 40, twins: 80, uniqueBodies: 40 });
      await written.entries.remove(); // its log's file handle, which writeReleaseFiles closes in a build
    });
  });

  it('links a body at a new path to the one made before it (or under way) from the same inputs: made once', async () => {
    await withTemp(async (dir) => {
      const made: string[] = [];
      const body = (file: string, inputs: string, contentType?: string): PendingBody => ({
        path: file,
        inputs,
        ...(contentType && { contentType }),
        render: () => {
          made.push(file);
          return { head: '{"r":', tail: `,"inputs":${JSON.stringify(inputs)}}` };
        },
      });
      const pool = createCompressor({ threads: 1 });
      const written = await writeBodies(
        [
          body('api/v1/models/a/en.public.json', 'same'),
          body('api/v1/models/a/en.display.json', 'same'), // its twin
          body('api/v1/models/b/en.public.json', 'other'),
          body('llms.txt', 'same', 'text/plain'), // the same inputs, another content type
          body('artifacts/a.json', 'same'), // an artifact, which has no representations
        ],
        {
          stagingDir: dir,
          revision: 'r1',
          times: timePolicy(undefined, '2025-01-01T00:00:00.000Z', null, 'r1'),
          previous: null,
          compressor: { pool, levels: BUILD_LEVELS },
          concurrency: 32, // the twin comes while the first is made: it waits for it, and is not made
        },
      ).finally(() => pool.close());
      expect(made).toEqual([
        'api/v1/models/a/en.public.json',
        'api/v1/models/b/en.public.json',
        'llms.txt',
        'artifacts/a.json',
      ]);
      expect(written.stats).toMatchObject({ files: 5, rendered: 4, twins: 1, newlyModified: 5, encodedNew: 2 });
      const [a, twin] = await Promise.all(
        ['a/en.public.json', 'a/en.display.json'].map((f) => stat(path.join(dir, 'api/v1/models', f))),
      );
      expect(twin!.ino).toBe(a!.ino);
      const entries = new Map<string, Record<string, unknown>>();
      for await (const json of written.entries.json()) {
        const e = JSON.parse(json.toString()) as Record<string, unknown>;
        entries.set(e.path as string, e);
      }
      expect(entries.get('api/v1/models/a/en.display.json')).toEqual({
        ...entries.get('api/v1/models/a/en.public.json'),
        path: 'api/v1/models/a/en.display.json',
      });
      expect(entries.get('llms.txt')!.content_type).toBe('text/plain');
      expect(written.representations!.size).toBe(2);
      await written.entries.remove();
    });
  });

  it('a body that fails: nothing more is read, and the bodies under way are written before the error is thrown', async () => {
    await withTemp(async (dir) => {
      const made = new Map<string, string>(); // path -> its bytes
      let read = 0;
      let unwritten: string[] | null = null;
      function* bodies(): Generator<PendingBody> {
        for (let i = 0; i < 1000; i++) {
          read++;
          const file = `api/v1/models/m${i}/en.json`;
          yield {
            path: file,
            inputs: `inputs-${i}`,
            render: () => {
              if (i === 40) throw new Error('body 40 cannot be made');
              const parts = { head: '{"r":', tail: `,"i":${i},"text":"${'x'.repeat(2_000_000)}"}` };
              made.set(file, `${parts.head}"r1"${parts.tail}`);
              return parts;
            },
          };
        }
      }
      const failed = await writeBodies(bodies(), {
        stagingDir: dir,
        revision: 'r1',
        times: timePolicy(undefined, '2025-01-01T00:00:00.000Z', null, 'r1'),
        previous: null,
      }).catch((e: Error) => {
        // Looked at synchronously as the error comes out, before a read could queue behind a write still under way.
        const size = (file: string) => statSync(path.join(dir, file), { throwIfNoEntry: false })?.size;
        unwritten = [...made].filter(([file, text]) => size(file) !== Buffer.byteLength(text)).map(([file]) => file);
        return e;
      });
      expect(unwritten).toEqual([]);
      expect(failed).toBeInstanceOf(Error);
      expect((failed as Error).message).toBe('body 40 cannot be made');
      expect(read).toBeLessThan(1000);
      // Each body made was written whole by then (unwritten above): nothing writes to the folder once the error is out.
      expect(made.size).toBe(40);
      for (const [file, text] of made) expect(await readFile(path.join(dir, file), 'utf8')).toBe(text);
    });
  });
});
