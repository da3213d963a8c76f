// Private fields never reach the publication (SPEC part 1: private snapshots, internal database identifiers, secrets and
// raw validator inputs are omitted). Every record kind carries canaries under `private`; none may appear in any byte
// of any file the build writes, and no published JSON key may even look like one.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { build, loadAndValidate } from '../src/pipeline/build.js';
import { DEFAULT_SOURCES, smallCatalog, withTemp, writeFixture, type FixtureSpec } from './helpers/fixture.js';
import { readAll } from './helpers/tree.js';

const canaries: string[] = [];
let nextId = 987654321123;
/** Unique canaries for one record: a string per field, a number for internal_id, and a key and a value inside validator_input. */
function privateOf(kind: string) {
  const tag = `CANARY-${kind}-${canaries.length}`;
  const id = nextId++;
  const p = {
    internal_id: id,
    validator_input: { [`${tag}-key`]: [`${tag}-raw-input`, { deep: `${tag}-deep` }], db_id: id + 1_000_000 },
    snapshot_ref: `s3://snapshots/${tag}-snapshot.tar`,
    notes: `${tag}-notes: do not publish`,
  };
  canaries.push(
    String(id),
    String(id + 1_000_000),
    `${tag}-key`,
    `${tag}-raw-input`,
    `${tag}-deep`,
    `${tag}-snapshot`,
    `${tag}-notes`,
  );
  return p;
}

function privateCatalog(): FixtureSpec {
  const spec = smallCatalog();
  const tag =
    <T extends Record<string, unknown>>(kind: string) =>
    (r: T): T => ({ ...r, private: privateOf(kind) });
  spec.models = spec.models!.map((m) => ({ ...m, private: privateOf(`model-${m.slug}`) }));
  spec.speed = spec.speed!.map(tag('speed'));
  spec.benchmarks = spec.benchmarks!.map(tag('benchmark'));
  spec.prices = [
    ...spec.prices!,
    {
      model: 'delta',
      lane: 'provisional',
      input_per_million: 9,
      output_per_million: 9,
      observed_at: '2025-01-03T00:00:00Z',
      provenance: { source: 'lab', evidence_sha256: '9'.repeat(64) },
    },
  ].map(tag('price'));
  spec.overrides = spec.overrides!.map(tag('override'));
  spec.sources = DEFAULT_SOURCES.map((s) => ({ ...s, private: privateOf(`source-${s.id}`) }));
  return spec;
}

/** Every key of every object in a JSON value. */
function* keysOf(v: unknown, at = '$'): Generator<[string, string]> {
  if (Array.isArray(v)) for (const [i, x] of v.entries()) yield* keysOf(x, `${at}[${i}]`);
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      yield [k, `${at}.${k}`];
      yield* keysOf(x, `${at}.${k}`);
    }
  }
}
// `exclude_snapshots` (a list filter, in the OpenAPI document) is a published name.
const SUSPICIOUS_KEY =
  /secret|password|credential|api_?key|private|internal|(?<!exclude_)snapshot|raw_?input|validator_?input|db_?id|^_/i;

describe('privacy', () => {
  it('no private canary appears in any byte of any file of the output folder, and no published key looks private', async () => {
    await withTemp(async (tmp) => {
      const dataDir = path.join(tmp, 'data');
      const outDir = path.join(tmp, 'out');
      await writeFixture(dataDir, privateCatalog());

      // The canaries are really in the data and really loaded: the test is not vacuous.
      const data = await loadAndValidate(dataDir);
      expect(data.models.every((m) => m.private?.notes?.startsWith('CANARY-model-'))).toBe(true);
      expect(
        [data.benchmarks, data.prices, data.overrides, data.sources].every(
          (rows) => rows.length > 0 && rows.every((r) => r.private?.internal_id),
        ),
      ).toBe(true);
      // Speed runs are loaded too, into columns that have no place for a private field (speed-runs.ts).
      expect(data.speed.length).toBeGreaterThan(0);
      expect(Object.keys(data.speed.value(0)).sort()).toEqual([
        'first_token_latency_ms',
        'lane',
        'measured_at',
        'model',
        'provenance',
        'tokens_per_second',
      ]);
      const dataText = (await Promise.all([...(await readAll(dataDir)).values()].map((b) => b.toString()))).join('\n');
      for (const c of canaries) expect(dataText, c).toContain(c);
      expect(canaries.length).toBe(7 * (4 + 3 + 7 + 5 + 1 + 2));

      // Build twice (the second an incremental build with one change) so that the folder holds two releases.
      await build({ dataDir, outDir, pageSizes: [1] });
      await writeFile(
        path.join(dataDir, 'models', 'alpha.yaml'),
        (await readFile(path.join(dataDir, 'models', 'alpha.yaml'), 'utf8')).replace('ALPHA', 'Alpha Two'),
      );
      await build({ dataDir, outDir, pageSizes: [1] });

      // everything: api/, artifacts/, manifest, changes, publication.json, the marker, the models' parts store
      const files = await readAll(outDir);
      expect([...files.keys()].filter((p) => !p.startsWith('releases/')).sort()).toEqual([
        '.build-lock',
        '.modelpub-parts',
        '.modelpub-publication',
      ]);
      expect(
        [...files.keys()].filter((p) => /^releases\/[^/]+\/(manifest|changes|publication)\.json$/.test(p)),
      ).toHaveLength(6);
      expect([...files.keys()].some((p) => p.includes('/artifacts/'))).toBe(true);
      const leaks: string[] = [];
      for (const [p, buf] of files) {
        for (const c of canaries) if (buf.includes(c)) leaks.push(`${p}: ${c}`);
        // the records' own private objects, in case a serializer renamed the key
        if (buf.includes('do not publish') || buf.includes('s3://snapshots/')) leaks.push(`${p}: private text`);
      }
      expect(leaks).toEqual([]);

      const badKeys: string[] = [];
      let keys = 0;
      for (const [p, buf] of files) {
        if (!p.endsWith('.json') && !p.endsWith('.modelpub-publication')) continue;
        for (const [k, at] of keysOf(JSON.parse(buf.toString()))) {
          keys++;
          if (SUSPICIOUS_KEY.test(k)) badKeys.push(`${p} ${at}`);
        }
      }
      expect(keys).toBeGreaterThan(10_000);
      expect(badKeys).toEqual([]);

      // Rights filter: a source that may not be redistributed is named nowhere.
      const closed = [...files]
        .filter(([, b]) => b.includes('example.org/closed') || b.includes('"closed"'))
        .map(([p]) => p);
      expect(closed).toEqual([]);
    });
  });
});
