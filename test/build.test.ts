// Whole builds of small fixtures into temporary folders: what is published, that it is deterministic, incremental
// and atomic, and that the output folder is guarded.
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../src/errors.js';
import { build, type BuildOptions, type BuildResult } from '../src/pipeline/build.js';
import { parseRequest, type ApiRequest } from '../src/schema/requests.js';
import { detailFile, fileFor, listFile, packedRepresentations, type StoredBytes } from '../src/publication/layout.js';
import type { ChangeList, Manifest } from '../src/publication/files.js';
import { BIN, ROOT, ensureCompiled } from './helpers/cli.js';
import { metric, model, prov, smallCatalog, withTemp, writeFixture, type FixtureSpec } from './helpers/fixture.js';
import { ajvErrors, compileCommitted } from './helpers/schemas.js';
import { fingerprint, readAll, readTree, sha256 } from './helpers/tree.js';
import { tracked } from './helpers/children.js';

/** Parsed JSON; `any` by default because the tests walk published bodies freely (their shape is checked by ajv). */
// biome-ignore lint/suspicious/noExplicitAny: see above.
const json = <T = any>(b: Buffer | string): T => JSON.parse(b.toString());
const currentDir = async (out: string) => path.resolve(out, await readlink(path.join(out, 'current')));
/** What a finished build leaves at the top of its --out, sorted. */
const BUILT = ['.build-lock', '.modelpub-parts', '.modelpub-publication', 'current', 'releases'];
// biome-ignore lint/suspicious/noExplicitAny: as above.
const readJson = async <T = any>(p: string): Promise<T> => json<T>(await readFile(p));

/** Build a fixture in <tmp>/<name>/data into <tmp>/<name>/out (or a given out). */
async function buildFixture(tmp: string, name: string, spec: FixtureSpec, o: Partial<BuildOptions> = {}) {
  const dataDir = path.join(tmp, name, 'data');
  await writeFixture(dataDir, spec);
  return build({ dataDir, outDir: o.outDir ?? path.join(tmp, name, 'out'), ...o });
}

describe('published files', () => {
  let files: Map<string, Buffer>;
  let r: BuildResult;
  let out: string;
  beforeAll(async () => {
    const tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-test-'));
    r = await buildFixture(tmp, 'a', smallCatalog(), { pageSizes: [2] });
    out = path.join(tmp, 'a', 'out');
    files = await readAll(r.releaseDir);
    return () => rm(tmp, { recursive: true, force: true });
  });

  it('are exactly the expected set: details, list pages per page size, artifacts and three publication files', () => {
    const count = (re: RegExp) => [...files.keys()].filter((p) => re.test(p)).length;
    // details: (3 verified + 2 provisional + 4 all models) x 3 locales x 8 include subsets x public/display
    expect(count(/^api\/v1\/models\//)).toBe(9 * 3 * 8 * 2);
    // list pages: 3 locales x 8 subsets x 4 sorts x 2 (public/display) x pages (size 2 and size 50): verified 2+1, provisional 1+1, all 2+1
    expect(count(/^api\/v1\/list\//)).toBe(3 * 8 * 4 * 2 * (3 + 2 + 3));
    // the catalog per locale x lane x public/display, the metrics per locale, the OpenAPI document
    expect(count(/^api\/v1\/catalog\/(en|zh|ru)\.(verified|provisional|all)\.(public|display)\.json$/)).toBe(18);
    expect(count(/^api\/v1\/metrics\/(en|zh|ru)\.json$/)).toBe(3);
    expect(files.has('api/v1/openapi.json')).toBe(true);
    expect([...files.keys()].filter((p) => !p.startsWith('api/')).sort()).toEqual([
      'artifacts/all.display.json',
      'artifacts/all.public.json',
      'artifacts/prices.json',
      'artifacts/provisional.display.json',
      'artifacts/provisional.public.json',
      'artifacts/snapshot.json',
      'artifacts/verified.display.json',
      'artifacts/verified.public.json',
      'changes.json',
      'llms.txt',
      'manifest.json',
      'publication.json',
      `representations-${r.revision}.pack`,
    ]);
    // the changes feed of a first publication: nothing yet, and `since` its own revision
    expect([...files.keys()].filter((p) => p.startsWith('api/v1/changes/')).sort()).toEqual([
      'api/v1/changes/index.json',
      `api/v1/changes/since/${r.revision}.json`,
    ]);
    // llms.txt is the + 1 after the 3 metrics, the prices artifact the next; the br and gzip representations of every
    // distinct body are in one file: the build's pack
    expect(files.size).toBe(1974 + 22 + 3 + 1 + 1 + 3 + 1);
    expect(r.files).toBe(1974 + 22 + 3 + 1 + 1);
  });

  it('`current` is a relative link to releases/0001-<revision>', async () => {
    expect(await readlink(path.join(out, 'current'))).toBe(`releases/0001-${r.revision}`);
    expect(r.releaseDir).toBe(path.join(out, 'releases', `0001-${r.revision}`));
    expect((await readdir(out)).sort()).toEqual(BUILT);
  });

  it('publication.json names its manifest by SHA-256', async () => {
    const meta = JSON.parse(await readFile(path.join(r.releaseDir, 'publication.json'), 'utf8'));
    expect(meta.manifestSha256).toBe(sha256(await readFile(path.join(r.releaseDir, 'manifest.json'))));
  });

  it('every file validates with ajv (2020) against the generated schemas', () => {
    const v = compileCommitted();
    const schemaOf = (p: string) =>
      p.startsWith('api/v1/catalog/')
        ? 'CatalogResponse'
        : p.startsWith('api/v1/metrics/')
          ? 'MetricsResponse'
          : p.startsWith('api/v1/list/')
            ? 'ListResponse'
            : /^api\/v1\/models\/[^/]+\/prices\.json$/.test(p)
              ? 'ModelPricesResponse'
              : p.startsWith('api/v1/models/')
                ? 'DetailResponse'
                : p.startsWith('api/v1/changes/')
                  ? 'ChangesResponse'
                  : p === 'artifacts/snapshot.json'
                    ? 'Snapshot'
                    : p === 'artifacts/prices.json'
                      ? 'PricesArtifact'
                      : p.startsWith('artifacts/')
                        ? 'ListArtifact'
                        : p === 'manifest.json'
                          ? 'Manifest'
                          : p === 'changes.json'
                            ? 'ChangeList'
                            : p === 'publication.json'
                              ? 'PublicationMeta'
                              : null;
    const checked: Record<string, number> = {};
    for (const [p, buf] of files) {
      if (p === 'api/v1/openapi.json') continue; // an OpenAPI document: test/openapi.test.ts lints it
      if (p === 'llms.txt') continue; // text: test/mcp.test.ts reads it
      if (p.endsWith('.pack')) continue; // compressed bodies: checked against their identity bytes below
      const name = schemaOf(p);
      expect(name, `unexpected file ${p}`).not.toBeNull();
      const validate = v[name!]!;
      const ok = validate(json(buf));
      expect(ok, `${p} vs ${name}: ${ajvErrors(validate)}`).toBe(true);
      checked[name!] = (checked[name!] ?? 0) + 1;
    }
    expect(checked).toEqual({
      PublicationMeta: 1,
      DetailResponse: 432,
      ListResponse: 1536,
      ListArtifact: 6,
      PricesArtifact: 1,
      Manifest: 1,
      ChangeList: 1,
      ChangesResponse: 2,
      Snapshot: 1,
      CatalogResponse: 18,
      MetricsResponse: 3,
    });
  });

  it('every envelope names the locale of its path and the revision that wrote it', () => {
    for (const [p, buf] of files) {
      if (!p.startsWith('api/')) continue;
      const body = json(buf);
      if (p === 'api/v1/openapi.json') {
        expect(body['x-publication-revision']).toBe(r.revision); // as every body names the revision that wrote it
        continue;
      }
      // the changes feed is in no locale: its old and new descriptions name theirs in their paths
      const locale = /^api\/v1\/(?:models\/[^/]+|list|catalog|metrics)\/(en|zh|ru)\./.exec(p)?.[1];
      expect(body.locale, p).toBe(p.startsWith('api/v1/changes/') ? undefined : locale);
      expect(body.publicationRevision, p).toBe(r.revision);
      expect(body.schemaVersion, p).toBe('1.0.0');
      expect(body.attribution, p).toEqual({
        required: true,
        name: 'modelpub',
        url: 'https://modelpub.example',
        text: 'Source: modelpub (https://modelpub.example)',
      });
    }
  });

  it('every manifest file exists with the stated sha256 and bytes; nothing else is in the release', () => {
    const manifest = json<Manifest>(files.get('manifest.json')!);
    expect(manifest).toMatchObject({
      schemaVersion: '1.0.0',
      publicationRevision: r.revision,
      publishedAt: '2025-02-01T00:00:00.000Z',
    });
    const paths = manifest.files.map((f) => f.path);
    expect(paths).toEqual([...paths].sort());
    expect(new Set(paths)).toEqual(
      new Set(
        [...files.keys()].filter(
          (p) => !['manifest.json', 'changes.json', 'publication.json'].includes(p) && !p.endsWith('.pack'),
        ),
      ),
    );
    for (const f of manifest.files) {
      const buf = files.get(f.path)!;
      expect(sha256(buf), f.path).toBe(f.sha256);
      expect(buf.length, f.path).toBe(f.bytes);
      expect(f).toMatchObject({
        content_type: f.path === 'llms.txt' ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8',
        revision: r.revision,
        last_modified: '2025-02-01T00:00:00.000Z',
      });
    }
    const changes = json<ChangeList>(files.get('changes.json')!);
    expect(changes).toEqual({
      publicationRevision: r.revision,
      previousRevision: null,
      added: paths,
      changed: [],
      removed: [],
    });
    expect(r.changes).toEqual(changes);
    expect(json(files.get('publication.json')!)).toMatchObject({
      schemaVersion: '1.0.0',
      publicationRevision: r.revision,
      publishedAt: '2025-02-01T00:00:00.000Z',
      pageSizes: [2, 50],
    });
  });

  it('every distinct body the API serves has a br and a gzip representation that decompresses to it, listed once by its sha256; artifacts have none', () => {
    const manifest = json<Manifest>(files.get('manifest.json')!);
    const reps = manifest.representations!;
    expect(manifest.compression).toEqual({ brotliQuality: 6, gzipLevel: 6 });
    const served = new Map(manifest.files.filter((f) => !f.path.startsWith('artifacts/')).map((f) => [f.sha256, f]));
    expect(new Set(Object.keys(reps))).toEqual(new Set(served.keys()));
    expect(Object.keys(reps)).toEqual(Object.keys(reps).sort());
    // A full build writes one pack, named after its revision; it holds them end to end, nothing else: its size is the
    // sum of theirs.
    const pack = files.get(`representations-${r.revision}.pack`)!;
    const total = (k: 'br' | 'gzip') => Object.values(reps).reduce((n, r) => n + r[k].bytes, 0);
    expect(pack.length).toBe(total('br') + total('gzip'));
    expect(manifest.packs).toEqual([{ path: `representations-${r.revision}.pack`, bytes: pack.length }]);
    const places = new Map([...packedRepresentations(reps, manifest.packs)].map((p) => [p.identity, p]));
    const bytesAt = (r: StoredBytes) => pack.subarray(r.offset, r.offset! + r.bytes);
    for (const [hash, f] of served) {
      const identity = files.get(f.path)!;
      const br = bytesAt(places.get(hash)!.br);
      const gz = bytesAt(places.get(hash)!.gzip);
      expect([sha256(br), br.length], f.path).toEqual([reps[hash]!.br.sha256, reps[hash]!.br.bytes]);
      expect([sha256(gz), gz.length], f.path).toEqual([reps[hash]!.gzip.sha256, reps[hash]!.gzip.bytes]);
      expect(brotliDecompressSync(br).equals(identity), f.path).toBe(true);
      expect(gunzipSync(gz).equals(identity), f.path).toBe(true);
    }
    // list pages compress well: the whole release's br bytes are a small share of identity
    const identityBytes = [...served.values()].reduce((n, f) => n + f.bytes, 0);
    expect(total('br') / identityBytes).toBeLessThan(0.4);
    expect(total('br')).toBeLessThan(total('gzip'));
  });

  it('list pages are cut by page size, with exact pagination', () => {
    const page = (p: string) => json(files.get(p)!).data;
    const at = (pageSize: number, n: number) =>
      page(
        listFile({
          locale: 'en',
          lane: 'verified',
          displayOnly: false,
          include: [],
          sort: 'popular',
          page: n,
          pageSize,
        }),
      );
    expect(at(2, 1).models.map((m: { slug: string }) => m.slug)).toEqual(['alpha', 'beta']);
    expect(at(2, 1).pagination).toEqual({ page: 1, page_size: 2, total: 3, total_pages: 2 });
    expect(at(2, 2).models.map((m: { slug: string }) => m.slug)).toEqual(['gamma']);
    expect(at(2, 2).pagination).toEqual({ page: 2, page_size: 2, total: 3, total_pages: 2 });
    expect(at(50, 1).models.map((m: { slug: string }) => m.slug)).toEqual(['alpha', 'beta', 'gamma']);
    expect(files.has('api/v1/list/en.verified.public.base/popular-2-3.json')).toBe(false);
  });

  it('the file for include=pricing,benchmarks is the canonical one: base detail + benchmarks section + pricing section, in that order', () => {
    const parsed = parseRequest('/api/v1/models/alpha', new URLSearchParams('include=pricing,benchmarks'));
    expect(parsed.ok).toBe(true);
    const p = fileFor((parsed as Extract<typeof parsed, { ok: true }>).request as ApiRequest, {
      pageSizes: [2, 50],
      pages: () => 1,
    })!;
    expect(p).toBe(
      detailFile({
        slug: 'alpha',
        locale: 'en',
        lane: 'verified',
        displayOnly: false,
        include: ['benchmarks', 'pricing'],
      }),
    );
    expect(p).toBe('api/v1/models/alpha/en.verified.public.benchmarks+pricing.json');
    const d = (include: ('benchmarks' | 'capabilities' | 'pricing')[]) =>
      json(files.get(detailFile({ slug: 'alpha', locale: 'en', lane: 'verified', displayOnly: false, include }))!).data;
    const both = d(['benchmarks', 'pricing']);
    const base = d([]);
    expect(Object.keys(both)).toEqual([
      ...Object.keys(base),
      'benchmarks',
      'benchmark_groups',
      'category_performance',
      'pricing',
    ]);
    const bench = d(['benchmarks']);
    expect(both).toEqual({
      ...base,
      benchmarks: bench.benchmarks,
      benchmark_groups: bench.benchmark_groups,
      category_performance: bench.category_performance,
      pricing: d(['pricing']).pricing,
    });
    expect(both.pricing).toEqual({
      input_price_per_million: 3,
      output_price_per_million: 8,
      blended_price_per_million: 4.25,
      updated_at: '2025-02-01T00:00:00.000Z',
      currency: 'USD',
      blended_weighting: '3:1 input:output',
      observations: 2,
      sources: ['lab'],
      price_since: null,
      // The observations name no offer (and the model has none): no headline offer, an empty card.
      headline_offer: null,
      cache_read_price_per_million: null,
      cache_write_price_per_million: null,
      reasoning_price_per_million: null,
      input_audio_price_per_million: null,
      output_audio_price_per_million: null,
      tiers: [],
      modes: {},
      offer_count: 0,
      offers: [],
    });
    expect(base.pricing_summary).toEqual({
      input_price_per_million: 3,
      output_price_per_million: 8,
      blended_price_per_million: 4.25,
      updated_at: '2025-02-01T00:00:00.000Z',
    });
    // List items get the same groups, category scores and pricing, but not the full metric list with nearby
    // models (that stays on the detail, so a page of 50 stays small).
    const item = json(
      files.get(
        listFile({
          locale: 'en',
          lane: 'verified',
          displayOnly: false,
          include: ['benchmarks', 'pricing'],
          sort: 'popular',
          page: 1,
          pageSize: 50,
        }),
      )!,
    ).data.models[0];
    expect(item.slug).toBe('alpha');
    expect(item.benchmarks).toBeUndefined();
    expect(item.benchmark_groups).toEqual(both.benchmark_groups);
    expect(item.category_performance).toEqual(both.category_performance);
    // The card without the offers, which stay on the detail.
    const { offers: _offers, ...card } = both.pricing;
    expect(item.pricing).toEqual(card);
  });

  it('numbers are identical across locales: zh and ru files equal the en file but for descriptions and locale', () => {
    let compared = 0;
    for (const [p, buf] of files) {
      if (!p.startsWith('api/') || !p.includes('/en.')) continue;
      const strip = (b: Buffer) => {
        const body = json(b);
        delete body.locale;
        for (const m of body.data.models ?? [body.data]) delete m.description;
        return body;
      };
      const en = strip(buf);
      for (const l of ['zh', 'ru']) {
        const other = files.get(p.replace('/en.', `/${l}.`));
        expect(other, p.replace('/en.', `/${l}.`)).toBeDefined();
        expect(strip(other!), p).toEqual(en);
        compared++;
      }
    }
    expect(compared).toBe(2 * (144 + 512 + 6 + 1)); // details, list pages, catalogs, metrics
    const desc = (l: string) => json(files.get(`api/v1/models/alpha/${l}.verified.public.base.json`)!).data.description;
    expect([desc('en'), desc('zh'), desc('ru')]).toEqual([
      'alpha is a model.',
      'alpha 是一个模型。',
      'alpha — это модель.',
    ]);
  });

  it('display-only overrides appear only in display variants', () => {
    // The snapshot records what each override sets (a later diff tells an override's change); nothing serves it.
    const marked = [...files]
      .filter(
        ([p, b]) => p !== 'artifacts/snapshot.json' && (b.includes('Beta Prime') || b.includes('Beta, as marketed.')),
      )
      .map(([p]) => p);
    expect(marked.length).toBeGreaterThan(0);
    for (const p of marked) expect(p, p).toMatch(/\.display[./]/);
    const detail = (displayOnly: boolean, locale: 'en' | 'zh' = 'en') =>
      json(files.get(detailFile({ slug: 'beta', locale, lane: 'verified', displayOnly, include: [] }))!).data;
    expect([detail(false).name, detail(false).description]).toEqual(['BETA', 'beta is a model.']);
    expect([detail(true).name, detail(true).description]).toEqual(['Beta Prime', 'Beta, as marketed.']);
    expect([detail(true, 'zh').name, detail(true, 'zh').description]).toEqual(['Beta Prime', 'beta 是一个模型。']); // no zh override
    // every display variant that shows beta carries the override (lists, details, and other models' nearby names)
    for (const [p, buf] of files) {
      const body = buf.toString();
      if (!p.includes('.display') || !body.includes('"slug":"beta"')) continue;
      expect(body.includes('"name":"BETA"'), p).toBe(false);
      expect(body.includes('Beta Prime'), p).toBe(true);
    }
    const alpha = json(
      files.get(
        detailFile({ slug: 'alpha', locale: 'en', lane: 'verified', displayOnly: true, include: ['benchmarks'] }),
      )!,
    ).data;
    expect(alpha.benchmarks[0].nearby_models.map((n: { slug: string; name: string }) => [n.slug, n.name])).toEqual([
      ['alpha', 'ALPHA'],
      ['beta', 'Beta Prime'],
      ['gamma', 'GAMMA'],
    ]);
    // the override's reason is not published anywhere
    expect([...files].filter(([, b]) => b.includes('launch name')).map(([p]) => p)).toEqual([]);
  });
});

describe('determinism', () => {
  it('two builds of the same fixture into two empty folders give byte-identical trees', async () => {
    await withTemp(async (tmp) => {
      const a = await buildFixture(tmp, 'a', smallCatalog(), { pageSizes: [2] });
      const b = await buildFixture(tmp, 'b', smallCatalog(), { pageSizes: [2] });
      expect(b.revision).toBe(a.revision);
      const ta = fingerprint(await readTree(path.join(tmp, 'a', 'out')));
      const tb = fingerprint(await readTree(path.join(tmp, 'b', 'out')));
      expect(ta.links).toEqual([`current -> releases/0001-${a.revision}`]);
      // the bodies, the release's three files, its pack, the folder's marker, lock and parts store
      expect(ta.files).toHaveLength(1974 + 22 + 3 + 1 + 1 + 3 + 1 + 2 + 1);
      expect(tb).toEqual(ta);
    });
  });
});

describe('incremental builds', () => {
  const NEW_TEXT = 'alpha now reads long contracts quickly';
  const edited = (): FixtureSpec => {
    const spec = smallCatalog();
    const alpha = spec.models![0]!;
    alpha.description = { ...(alpha.description as object), en: NEW_TEXT };
    return spec;
  };

  it('a changed description changes exactly the files whose bodies hold it; every other file keeps hash, revision, time and inode', async () => {
    await withTemp(async (tmp) => {
      const dataDir = path.join(tmp, 'data');
      const outDir = path.join(tmp, 'out');
      await writeFixture(dataDir, smallCatalog());
      const r1 = await build({ dataDir, outDir });
      const m1 = await readJson<Manifest>(path.join(r1.releaseDir, 'manifest.json'));
      const t1 = await readTree(r1.releaseDir);

      await writeFixture(dataDir, edited());
      const r2 = await build({ dataDir, outDir });
      expect(r2.revision).not.toBe(r1.revision);
      // The edit adds no newer date, yet the changed bodies' Last-Modified moves (one second, as HTTP dates count):
      // with the old time, If-Modified-Since would answer 304 for a body that changed.
      expect(r2.publishedAt).toBe(new Date(Date.parse(r1.publishedAt) + 1000).toISOString());
      expect(await currentDir(outDir)).toBe(r2.releaseDir);
      const files2 = await readAll(r2.releaseDir);
      const m2 = await readJson<Manifest>(path.join(r2.releaseDir, 'manifest.json'));
      const t2 = await readTree(r2.releaseDir);

      const holding = [...files2]
        .filter(([p, b]) => m2.files.some((f) => f.path === p) && b.includes(NEW_TEXT))
        .map(([p]) => p)
        .sort();
      // alpha is in every lane (verified record, provisional speed run): its en details (3 lanes x 2 x 8 subsets),
      // every en list page (3 lanes x 2 x 8 subsets x 4 sorts) and the six artifacts.
      expect(holding.filter((p) => p.startsWith('api/v1/models/'))).toHaveLength(48);
      expect(
        holding.every(
          (p) =>
            p.startsWith('api/v1/models/alpha/en.') ||
            p.startsWith('api/v1/list/en.') ||
            p.startsWith('api/v1/changes/') ||
            p.startsWith('artifacts/') ||
            p.startsWith('api/v1/catalog/en.') ||
            p === 'api/v1/openapi.json', // its examples show alpha
        ),
      ).toBe(true);
      expect(holding.filter((p) => p.startsWith('api/v1/catalog/'))).toHaveLength(6);
      expect(holding.filter((p) => p.startsWith('api/v1/list/'))).toHaveLength(192);
      expect(holding.filter((p) => p.startsWith('artifacts/'))).toHaveLength(6 + 1); // the list artifacts, the snapshot
      // The changes feed: its entry for this edit is in every answer that reaches back before it.
      expect(holding.filter((p) => p.startsWith('api/v1/changes/'))).toEqual([
        'api/v1/changes/index.json',
        `api/v1/changes/since/${r1.revision}.json`,
      ]);
      expect(r2.semantic.summary).toBe('1 model changed: alpha (description.en)');

      const changes = await readJson<ChangeList>(path.join(r2.releaseDir, 'changes.json'));
      expect(changes).toEqual({
        publicationRevision: r2.revision,
        previousRevision: r1.revision,
        added: [`api/v1/changes/since/${r2.revision}.json`],
        changed: holding,
        removed: [],
      });
      expect(r2.changes).toEqual(changes);

      const before = new Map(m1.files.map((f) => [f.path, f]));
      for (const f of m2.files) {
        const old = before.get(f.path);
        if (!old) {
          expect(changes.added, f.path).toContain(f.path);
          continue;
        }
        if (holding.includes(f.path)) {
          expect(f.sha256, f.path).not.toBe(old.sha256);
          expect([f.revision, f.last_modified], f.path).toEqual([r2.revision, r2.publishedAt]);
          expect(t2.files.get(f.path)!.ino, f.path).not.toBe(t1.files.get(f.path)!.ino);
        } else {
          expect(f, f.path).toEqual(old); // sha256, bytes, revision and last_modified all kept
          expect(t2.files.get(f.path)!.ino, `${f.path} is a hard link to the previous release's file`).toBe(
            t1.files.get(f.path)!.ino,
          );
        }
      }
      // Unchanged bodies still name the revision that wrote them, so their bytes (and ETag) stay put.
      expect(json(files2.get('api/v1/models/beta/en.verified.public.base.json')!).publicationRevision).toBe(
        r1.revision,
      );
      expect(json(files2.get('api/v1/models/alpha/en.verified.public.base.json')!).publicationRevision).toBe(
        r2.revision,
      );
      expect(r2.stats.linkedFromPrevious).toBeGreaterThan(0);
      expect(r2.stats.files).toBe(m2.files.length);

      // Representations: those of unchanged bodies are the previous release's bytes, listed alike; only the bodies new
      // to this release were compressed.
      const reps1 = m1.representations!;
      const reps2 = m2.representations!;
      const fresh = Object.keys(reps2).filter((h) => !(h in reps1));
      const kept = Object.keys(reps2).filter((h) => h in reps1);
      expect(kept.length).toBeGreaterThan(0);
      expect(r2.stats.encodedNew).toBe(fresh.length);
      expect(r2.stats.encodedReused).toBe(kept.length);
      const packed = async (dir: string, m: Manifest) => {
        const packs = new Map<string, Buffer>();
        for (const p of m.packs!) packs.set(p.path, await readFile(path.join(dir, p.path)));
        const at = (r: StoredBytes) => packs.get(r.path)!.subarray(r.offset, r.offset! + r.bytes);
        return new Map(
          [...packedRepresentations(m.representations!, m.packs)].map((p) => [p.identity, [at(p.br), at(p.gzip)]]),
        );
      };
      const bytes1 = await packed(r1.releaseDir, m1);
      const bytes2 = await packed(r2.releaseDir, m2);
      for (const h of kept) {
        const { br, gzip } = reps2[h]!;
        expect({ br, gzip }, h).toEqual({ br: reps1[h]!.br, gzip: reps1[h]!.gzip });
        expect(bytes2.get(h), h).toEqual(bytes1.get(h));
      }
      for (const h of fresh)
        expect(brotliDecompressSync(bytes2.get(h)![0]!).length, h).toBe(m2.files.find((f) => f.sha256 === h)!.bytes);
      const changedHashes = new Set(m2.files.filter((f) => holding.includes(f.path)).map((f) => f.sha256));
      for (const h of changedHashes) if (h in reps2) expect(fresh, h).toContain(h);
      expect(
        fresh.every(
          (h) => changedHashes.has(h) || m2.files.some((f) => f.sha256 === h && changes.added.includes(f.path)),
        ),
      ).toBe(true);
    });
  });

  it('representations that spill to a file (no memory for them) give the same pack and manifest, full and incremental', async () => {
    await withTemp(async (tmp) => {
      const packs = async (memory: number | undefined) => {
        const dataDir = path.join(tmp, `data-${memory}`);
        const outDir = path.join(tmp, `out-${memory}`);
        await writeFixture(dataDir, smallCatalog());
        const r1 = await build({ dataDir, outDir, representationsMemoryBytes: memory });
        await writeFixture(dataDir, edited());
        const r2 = await build({ dataDir, outDir, representationsMemoryBytes: memory });
        expect(r2.stats.encodedReused).toBeGreaterThan(0);
        const files = async (r: BuildResult) => {
          const m = await readJson<Manifest>(path.join(r.releaseDir, 'manifest.json'));
          const names = ['manifest.json', ...m.packs!.map((p) => p.path)];
          return Promise.all(names.map((f) => readFile(path.join(r.releaseDir, f))));
        };
        expect((await readdir(r2.releaseDir)).filter((f) => f.startsWith('.'))).toEqual([]); // no spill file left
        return { full: await files(r1), incremental: await files(r2), stats: r2.stats };
      };
      const spilled = await packs(0);
      const held = await packs(undefined);
      expect(spilled.full).toEqual(held.full);
      expect(spilled.incremental).toEqual(held.incremental);
      expect(spilled.stats.encodedReused).toBe(held.stats.encodedReused);
    });
  });

  it('bodies made in chunks (a low largeBodyBytes) give the same release as bodies made whole, full and incremental', async () => {
    await withTemp(async (tmp) => {
      const releases = async (largeBodyBytes: number | undefined) => {
        const dataDir = path.join(tmp, `data-${largeBodyBytes}`);
        const outDir = path.join(tmp, `out-${largeBodyBytes}`);
        await writeFixture(dataDir, smallCatalog());
        const r1 = await build({ dataDir, outDir, largeBodyBytes });
        const full = await readAll(r1.releaseDir);
        await writeFixture(dataDir, edited());
        const r2 = await build({ dataDir, outDir, largeBodyBytes });
        return { full, incremental: await readAll(r2.releaseDir), streamed: [r1.stats.streamed, r2.stats.streamed] };
      };
      const streamed = await releases(1); // every catalog body and list artifact
      const whole = await releases(undefined);
      expect(whole.streamed).toEqual([0, 0]);
      expect(streamed.streamed[0]).toBeGreaterThan(0);
      expect(streamed.streamed[1]).toBeGreaterThan(0); // the edit changed catalog bodies
      // Every file: bodies, manifest, packs (so the representations) byte for byte.
      for (const kind of ['full', 'incremental'] as const) {
        expect([...streamed[kind].keys()].sort(), kind).toEqual([...whole[kind].keys()].sort());
        for (const [file, bytes] of whole[kind])
          expect(streamed[kind].get(file)?.equals(bytes), `${kind} ${file}`).toBe(true);
      }
    });
  });

  it('a forced --published-at: never before the previous publication; with changed bodies, only in a later second than every Last-Modified before', async () => {
    await withTemp(async (tmp) => {
      const dataDir = path.join(tmp, 'data');
      const outDir = path.join(tmp, 'out');
      await writeFixture(dataDir, smallCatalog());
      const early = await build({ dataDir, outDir, publishedAt: '2025-01-31T23:59:59.000Z' }).catch((e: unknown) => e);
      expect(early).toBeInstanceOf(UsageError);
      expect(String(early)).toContain('is before the newest date in the data, 2025-02-01T00:00:00.000Z');
      expect(await readdir(tmp)).toEqual(['data']); // refused before --out was made: nothing to clean up
      const t = '2026-03-01T12:00:00.000Z';
      const r1 = await build({ dataDir, outDir, publishedAt: t });
      await writeFixture(dataDir, edited());
      const err = await build({ dataDir, outDir, publishedAt: '2026-03-01T11:59:59.000Z' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UsageError);
      expect(String(err)).toContain("is before the previous publication's time 2026-03-01T12:00:00.000Z");
      // The same time (or the same second) for changed bodies: If-Modified-Since: T would answer 304 for them.
      for (const same of [t, '2026-03-01T12:00:00.900Z']) {
        const again = await build({ dataDir, outDir, publishedAt: same }).catch((e: unknown) => e);
        expect(again, same).toBeInstanceOf(UsageError);
        expect(String(again), same).toMatch(
          new RegExp(
            `--published-at ${same.replace(/\./g, '\\.')} is not in a later second than ${t.replace(/\./g, '\\.')}, the latest Last-Modified of the previous publication, and \\S+ changed or is new .*Give --published-at 2026-03-01T12:00:01\\.000Z or later, or leave it out\\.$`,
          ),
        );
      }
      expect(await currentDir(outDir)).toBe(r1.releaseDir);
      expect((await readdir(outDir)).sort()).toEqual(BUILT); // no staging left

      const t2 = '2026-03-01T12:00:01.000Z';
      const r2 = await build({ dataDir, outDir, publishedAt: t2 });
      expect(r2.publishedAt).toBe(t2);
      const times = async (r: BuildResult) =>
        [
          ...new Set(
            (await readJson<Manifest>(path.join(r.releaseDir, 'manifest.json'))).files.map(
              (f) => `${f.revision} ${f.last_modified}`,
            ),
          ),
        ].sort();
      expect(await times(r2)).toEqual([`${r1.revision} ${t}`, `${r2.revision} ${t2}`].sort());
      // The same data again at the same time (a release beside it, same revision): every body keeps its time.
      const r3 = await build({ dataDir, outDir, publishedAt: t2 });
      expect(r3.revision).toBe(r2.revision);
      expect(await times(r3)).toEqual(await times(r2));
    });
  });

  it('a path removed and later back with other bytes gets a Last-Modified later than any it had (forced times and default ones)', async () => {
    const without = (spec: FixtureSpec): FixtureSpec => ({
      ...spec,
      models: spec.models!.filter((m) => m.slug !== 'gamma'),
      benchmarks: spec.benchmarks!.filter((b) => b.model !== 'gamma'),
    });
    const gammaEn = detailFile({ slug: 'gamma', locale: 'en', lane: 'verified', displayOnly: false, include: [] });
    const changedGamma = (): FixtureSpec => {
      const spec = smallCatalog();
      const gamma = spec.models!.find((m) => m.slug === 'gamma')!;
      gamma.description = { ...(gamma.description as object), en: 'gamma, back with a new description' };
      return spec;
    };
    const entry = async (r: BuildResult, p: string) =>
      (await readJson<Manifest>(path.join(r.releaseDir, 'manifest.json'))).files.find((f) => f.path === p);
    const allTimes = async (r: BuildResult) =>
      (await readJson<Manifest>(path.join(r.releaseDir, 'manifest.json'))).files.map((f) => f.last_modified);
    await withTemp(async (tmp) => {
      const dataDir = path.join(tmp, 'data');
      const outDir = path.join(tmp, 'out');
      const rebuild = async (spec: FixtureSpec, publishedAt?: string) => {
        await rm(dataDir, { recursive: true, force: true });
        await writeFixture(dataDir, spec);
        return build({ dataDir, outDir, publishedAt });
      };
      // All at one forced time, the second build (gamma removed) is refused: it changes list pages and artifacts.
      // Before, it went through; gamma came back with new bytes and its old Last-Modified, and a client asking
      // If-Modified-Since with that time got 304 for the new bytes.
      const T = '2026-01-01T00:00:00.000Z';
      const a = await rebuild(smallCatalog(), T);
      const before = await entry(a, gammaEn);
      expect(before!.last_modified).toBe(T);
      await expect(rebuild(without(smallCatalog()), T)).rejects.toThrow(
        /is not in a later second than 2026-01-01T00:00:00\.000Z/,
      );
      const b = await rebuild(without(smallCatalog()), '2026-01-01T00:00:01.000Z');
      expect(await entry(b, gammaEn)).toBeUndefined();
      // Bringing gamma back at the same time is refused too (the message names the first body, in build order, that
      // needs a new time: here alpha's detail, whose ranks now count gamma).
      await expect(rebuild(changedGamma(), '2026-01-01T00:00:01.000Z')).rejects.toThrow(
        /and api\/v1\/models\/alpha\/en\.all\.public\.base\.json changed or is new/,
      );
      const c = await rebuild(changedGamma(), '2026-01-01T00:00:02.000Z');
      const after = await entry(c, gammaEn);
      expect(after!.sha256).not.toBe(before!.sha256);
      expect(after!.last_modified).toBe('2026-01-01T00:00:02.000Z');

      // Default times, into a fresh folder: the same sequence. Every time the path could have had is behind.
      const out2 = path.join(tmp, 'out2');
      const seen: string[] = [];
      for (const spec of [smallCatalog(), without(smallCatalog()), changedGamma()]) {
        await rm(dataDir, { recursive: true, force: true });
        await writeFixture(dataDir, spec);
        const r = await build({ dataDir, outDir: out2 });
        const e = await entry(r, gammaEn);
        if (spec.models!.some((m) => m.slug === 'gamma') && seen.length) {
          for (const t of seen)
            expect(Math.floor(Date.parse(e!.last_modified) / 1000), `${e!.last_modified} vs ${t}`).toBeGreaterThan(
              Math.floor(Date.parse(t) / 1000),
            );
        }
        seen.push(...(await allTimes(r)), r.publishedAt);
        // No body is later than its publication: what lets the next build bound the times of removed paths.
        expect((await allTimes(r)).every((t) => t <= r.publishedAt)).toBe(true);
      }
    });
  });

  it('a page size dropped: the artifacts its pages are now composed from get a later Last-Modified than those pages had', async () => {
    // Were the composed page_size=2 pages to take the artifact's older time, If-Modified-Since with the time of the
    // prebuilt page would answer 304 for other bytes (another publicationRevision).
    await withTemp(async (tmp) => {
      const dataDir = path.join(tmp, 'data');
      const outDir = path.join(tmp, 'out');
      await writeFixture(dataDir, smallCatalog());
      const files = async (r: BuildResult) =>
        (await readJson<Manifest>(path.join(r.releaseDir, 'manifest.json'))).files;
      const a = await build({ dataDir, outDir, pageSizes: [2] });
      const pageTimes = (await files(a)).filter((f) => /-2-\d+\.json$/.test(f.path)).map((f) => f.last_modified);
      expect(pageTimes.length).toBeGreaterThan(0);
      const b = await build({ dataDir, outDir, revision: a.revision }); // the same data and revision, page size 2 dropped
      expect((await files(b)).some((f) => /-2-\d+\.json$/.test(f.path))).toBe(false);
      const artifacts = (await files(b)).filter((f) => /^artifacts\/\w+\.(public|display)\.json$/.test(f.path));
      expect(artifacts.length).toBe(6);
      for (const f of artifacts) {
        for (const t of pageTimes)
          expect(Math.floor(Date.parse(f.last_modified) / 1000), f.path).toBeGreaterThan(
            Math.floor(Date.parse(t) / 1000),
          );
      }
    });
  });

  it('the CLI takes --published-at only as ISO 8601 with a zone (or a bare date)', async () => {
    ensureCompiled();
    for (const bad of ['March 7, 2020', '2026-03-01T12:00:00', '1700000000000']) {
      const r = spawnSync(
        process.execPath,
        [BIN, 'build', '--data', 'nowhere', '--out', 'nowhere', '--published-at', bad],
        { cwd: ROOT, encoding: 'utf8' },
      );
      expect(r.status, bad).toBe(1);
      expect(r.stderr, bad).toContain(
        `option '--published-at <iso>' argument '${bad}' is invalid. an ISO 8601 date or timestamp with a zone`,
      );
    }
  });

  it('a live release this build cannot read (a revision id now refused) stops the build with the file and what to do', async () => {
    await withTemp(async (tmp) => {
      const r = await buildFixture(tmp, 'legacy', smallCatalog());
      const outDir = path.join(tmp, 'legacy', 'out');
      const file = path.join(r.releaseDir, 'manifest.json');
      await writeFile(
        file,
        (await readFile(file, 'utf8')).replace(
          `"publicationRevision":"${r.revision}"`,
          '"publicationRevision":"nightly 2026"',
        ),
      );
      const err = await build({ dataDir: path.join(tmp, 'legacy', 'data'), outDir }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UsageError);
      expect(String(err)).toContain(
        `the live release of --out ${outDir} cannot be read: ${file}: publicationRevision: 1 to 64 ASCII letters`,
      );
      expect(String(err)).toContain('Build into a new --out.');
    });
  });

  it('a --revision that is not one path segment of safe characters is refused before anything is written', async () => {
    await withTemp(async (tmp) => {
      for (const revision of ['../../etc', '', '.hidden', 'a/b', 'a\\b', 'rév 1', 'x'.repeat(65)]) {
        const outDir = path.join(tmp, 'out');
        const err = await buildFixture(tmp, 'r', smallCatalog(), { outDir, revision }).catch((e: unknown) => e);
        expect(err, revision).toBeInstanceOf(UsageError);
        expect(String(err), revision).toContain(`--revision ${JSON.stringify(revision)} is not a revision id`);
        expect(await readdir(tmp), revision).toEqual(['r']); // no out folder, nothing next to it
      }
      const ok = await buildFixture(tmp, 'r', smallCatalog(), { revision: 'v2026.11-rc_1' });
      expect(path.basename(ok.releaseDir)).toBe('0001-v2026.11-rc_1');
    });
  });

  it('a removed model: its files are listed in `removed` and are gone; only the two newest releases are kept', async () => {
    await withTemp(async (tmp) => {
      const dataDir = path.join(tmp, 'data');
      const outDir = path.join(tmp, 'out');
      await writeFixture(dataDir, smallCatalog());
      const r1 = await build({ dataDir, outDir });
      await writeFixture(dataDir, edited());
      const r2 = await build({ dataDir, outDir });
      const m2 = await readJson<Manifest>(path.join(r2.releaseDir, 'manifest.json'));

      const spec = edited();
      spec.models = spec.models!.filter((m) => m.slug !== 'gamma');
      spec.benchmarks = spec.benchmarks!.filter((b) => b.model !== 'gamma');
      await rm(dataDir, { recursive: true });
      await writeFixture(dataDir, spec);
      const r3 = await build({ dataDir, outDir });
      const gammaFiles = m2.files.map((f) => f.path).filter((p) => p.startsWith('api/v1/models/gamma/'));
      expect(gammaFiles).toHaveLength(2 * 2 * 3 * 8); // verified and all lanes, public and display, 3 locales, 8 subsets
      expect(r3.changes.removed).toEqual(gammaFiles);
      expect(r3.changes.added).toEqual([`api/v1/changes/since/${r3.revision}.json`]);
      expect(r3.changes.previousRevision).toBe(r2.revision);
      await expect(stat(path.join(r3.releaseDir, 'api/v1/models/gamma'))).rejects.toThrow();
      expect((await readdir(path.join(outDir, 'releases'))).sort()).toEqual([
        `0002-${r2.revision}`,
        `0003-${r3.revision}`,
      ]);
      expect(r1.revision).not.toBe(r3.revision);
    });
  });

  it('never names two releases alike: a revision built again after its release was pruned gets a new folder', async () => {
    await withTemp(async (tmp) => {
      const dataDir = path.join(tmp, 'data');
      const outDir = path.join(tmp, 'out');
      await writeFixture(dataDir, smallCatalog());
      const dirs: string[] = [];
      for (const revision of ['v1', 'v2', 'v3', 'v1'])
        dirs.push((await build({ dataDir, outDir, revision })).releaseDir);
      expect(dirs.map((d) => path.basename(d))).toEqual(['0001-v1', '0002-v2', '0003-v3', '0004-v1']);
      expect((await readdir(path.join(outDir, 'releases'))).sort()).toEqual(['0003-v3', '0004-v1']);
    });
  });

  it('rebuilding unchanged data publishes nothing: `current` and its release stay as they are', async () => {
    await withTemp(async (tmp) => {
      const dataDir = path.join(tmp, 'data');
      const outDir = path.join(tmp, 'out');
      await writeFixture(dataDir, smallCatalog());
      const r1 = await build({ dataDir, outDir });
      const tree = async () => {
        const t = await readTree(outDir);
        return { ...fingerprint(t), inodes: [...t.files].map(([p, f]) => `${p} ${f.ino}`).sort() };
      };
      const before = await tree();
      const r2 = await build({ dataDir, outDir });
      expect(r2.semantic).toEqual({ summary: 'no changes', diff: { models: [], catalog: [] }, unchanged: true });
      expect([r2.revision, r2.releaseDir, r2.publishedAt, r2.files]).toEqual([
        r1.revision,
        r1.releaseDir,
        r1.publishedAt,
        r1.files,
      ]);
      expect(r2.changes).toEqual({
        publicationRevision: r1.revision,
        previousRevision: r1.revision,
        added: [],
        changed: [],
        removed: [],
      });
      expect(r2.stats.bytesWritten).toBe(0);
      // Not a byte, link or folder of the output changed (the build's lock and marker are gone or as they were).
      expect(await tree()).toEqual(before);
      expect(await readdir(path.join(outDir, 'releases'))).toEqual([`0001-${r1.revision}`]);
    });
  });

  it('the same data is built again when the build would differ: other page sizes, another --revision or time', async () => {
    await withTemp(async (tmp) => {
      const dataDir = path.join(tmp, 'data');
      const outDir = path.join(tmp, 'out');
      await writeFixture(dataDir, smallCatalog());
      const r1 = await build({ dataDir, outDir });
      const sizes = await build({ dataDir, outDir, pageSizes: [2] });
      expect(sizes.semantic.unchanged).toBe(false);
      expect(sizes.semantic.summary).toBe('no changes');
      expect(path.basename(sizes.releaseDir)).toBe(`0002-${r1.revision}`);
      const renamed = await build({ dataDir, outDir, pageSizes: [2], revision: 'v2' });
      expect(path.basename(renamed.releaseDir)).toBe('0003-v2');
      const later = await build({ dataDir, outDir, pageSizes: [2], revision: 'v2', publishedAt: '2030-01-01' });
      expect(path.basename(later.releaseDir)).toBe('0004-v2');
      const again = await build({ dataDir, outDir, pageSizes: [2], revision: 'v2', publishedAt: '2030-01-01' });
      expect(again.semantic.unchanged).toBe(true);
      expect(again.releaseDir).toBe(later.releaseDir);
    });
  });
  it('a damaged file in the previous release (a body, a pack) is written again, never hard-linked into the next one', async () => {
    await withTemp(async (tmp) => {
      const dataDir = path.join(tmp, 'data');
      const outDir = path.join(tmp, 'out');
      await writeFixture(dataDir, smallCatalog());
      const r1 = await build({ dataDir, outDir });
      const rel = detailFile({ slug: 'alpha', locale: 'en', lane: 'verified', displayOnly: false, include: [] });
      const damaged = path.join(r1.releaseDir, rel);
      const intact = await readFile(damaged);
      await writeFile(damaged, intact.subarray(0, 20));
      // and its pack damaged: a byte more than the manifest lists (a pack is checked by its size, as a carried body)
      const m1 = await readJson<Manifest>(path.join(r1.releaseDir, 'manifest.json'));
      const packFile = path.join(r1.releaseDir, m1.packs![0]!.path);
      const pack1 = await readFile(packFile);
      await writeFile(packFile, Buffer.concat([pack1, Buffer.from([0])]));
      const beta = path.join(dataDir, 'models', 'beta.yaml');
      await writeFile(beta, (await readFile(beta, 'utf8')).replace(/beta (is|was) [^\n']*/, 'beta was edited'));
      const r2 = await build({ dataDir, outDir });
      const manifest = await readJson<Manifest>(path.join(r2.releaseDir, 'manifest.json'));
      const entry = manifest.files.find((f) => f.path === rel)!;
      expect(entry.revision).toBe(r1.revision); // unchanged content keeps its revision...
      const now = await readFile(path.join(r2.releaseDir, rel));
      expect(sha256(now)).toBe(entry.sha256); // ...and the next release holds the manifest's bytes again
      expect(now.equals(intact)).toBe(true);
      const [s1, s2] = [await stat(damaged), await stat(path.join(r2.releaseDir, rel))];
      expect(s2.ino).not.toBe(s1.ino);
      // the damaged pack is not linked: every representation is compressed again, into the build's own pack, with
      // the bytes the previous pack had for the bodies that did not change
      expect(manifest.packs!.map((p) => p.path)).toEqual([`representations-${r2.revision}.pack`]);
      expect((await readdir(r2.releaseDir)).filter((f) => f.endsWith('.pack'))).toEqual([manifest.packs![0]!.path]);
      expect(r2.stats.packsLinked).toBe(0);
      expect(r2.stats.encodedReused).toBe(0);
      expect(r2.stats.encodedNew).toBe(Object.keys(manifest.representations!).length);
      const pack2 = await readFile(path.join(r2.releaseDir, manifest.packs![0]!.path));
      const place = (m: Manifest) => [...packedRepresentations(m.representations!, m.packs)];
      const before = new Map(place(m1).map((p) => [p.identity, p]));
      let compared = 0;
      for (const p of place(manifest)) {
        const old = before.get(p.identity);
        if (!old) continue;
        const range = (b: Buffer, r: StoredBytes) => b.subarray(r.offset, r.offset! + r.bytes);
        expect(range(pack2, p.br).equals(range(pack1, old.br)), p.identity).toBe(true);
        expect(range(pack2, p.gzip).equals(range(pack1, old.gzip)), p.identity).toBe(true);
        compared++;
      }
      expect(compared).toBeGreaterThan(0);
    });
  });
});

describe('atomic switch', () => {
  it('a build that fails after staging (beforeSwitch throws) leaves the previous release live and intact, and no staging folder', async () => {
    await withTemp(async (tmp) => {
      const dataDir = path.join(tmp, 'data');
      const outDir = path.join(tmp, 'out');
      await writeFixture(dataDir, smallCatalog());
      const r1 = await build({ dataDir, outDir });
      const tree = async () => {
        const t = await readTree(outDir);
        // The marker is rewritten (its record listed the staging folder while it was there): its bytes are compared.
        const inodes = [...t.files].filter(([p]) => p !== '.modelpub-publication').map(([p, f]) => `${p} ${f.ino}`);
        return { ...fingerprint(t), inodes: inodes.sort() };
      };
      const before = await tree();
      const spec = smallCatalog();
      spec.models![0]!.name = 'Alpha Renamed';
      await writeFixture(dataDir, spec);
      let staged: string[] = [];
      await expect(
        build({
          dataDir,
          outDir,
          beforeSwitch: async () => {
            staged = (await readdir(outDir)).filter((n) => n.startsWith('.staging-'));
            throw new Error('disk full (simulated)');
          },
        }),
      ).rejects.toThrow('disk full (simulated)');
      expect(staged).toHaveLength(1); // the hook ran with a complete staging folder present
      expect(await currentDir(outDir)).toBe(r1.releaseDir);
      expect(await tree()).toEqual(before); // no staging, no lock, no new release, nothing changed
      await assertIntact(outDir);
    });
  });

  it('a build that fails after it started removing the releases older than the live one keeps the live one', async () => {
    await withTemp(async (tmp) => {
      const dataDir = path.join(tmp, 'data');
      const outDir = path.join(tmp, 'out');
      await writeFixture(dataDir, smallCatalog());
      await build({ dataDir, outDir, revision: 'v1' });
      const live = (await build({ dataDir, outDir, revision: 'v2' })).releaseDir;
      const releases = () => readdir(path.join(outDir, 'releases')).then((n) => n.sort());
      const listed = async () =>
        (await readJson<{ releases: string[] }>(path.join(outDir, '.modelpub-publication'))).releases;
      let during: string[] = [];
      await expect(
        build({
          dataDir,
          outDir,
          revision: 'v3',
          beforeSwitch: async () => {
            during = await releases();
            throw new Error('disk full (simulated)');
          },
        }),
      ).rejects.toThrow('disk full (simulated)');
      // How far the removal got by the switch depends on the machine's load; only the live one is sure to be there.
      expect(during).toContain('0002-v2');
      expect(await currentDir(outDir)).toBe(live);
      expect(await releases()).toEqual(['0002-v2']);
      await assertIntact(outDir);
      expect(await listed()).toEqual(['0001-v1', '0002-v2']); // the record is the prune's, after a switch
      await build({ dataDir, outDir, revision: 'v4' });
      expect(await releases()).toEqual(['0002-v2', '0003-v4']);
      expect(await listed()).toEqual(['0002-v2', '0003-v4']);
    });
  });

  it('a build killed (SIGKILL) mid-write leaves the previous release live; the next build clears its leftovers', async () => {
    ensureCompiled();
    await withTemp(async (tmp) => {
      const small = path.join(tmp, 'small');
      const big = path.join(tmp, 'big');
      const outDir = path.join(tmp, 'out');
      await writeFixture(small, smallCatalog());
      await writeFixture(big, bigCatalog(300));
      const r1 = await build({ dataDir: small, outDir });
      const before = fingerprint(await readTree(outDir));

      const child = tracked(
        spawn(process.execPath, [BIN, 'build', '--data', big, '--out', outDir, '--quiet'], {
          cwd: ROOT,
          stdio: ['ignore', 'ignore', 'pipe'],
        }),
      );
      let stderr = '';
      child.stderr!.on('data', (d) => {
        stderr += d;
      });
      const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
        child.on('exit', (code, signal) => resolve([code, signal])),
      );
      let staging: string | undefined;
      // Wait until the child is writing bodies: a staging folder with files in it.
      while (child.exitCode === null) {
        staging = (await readdir(outDir)).find((n) => n.startsWith('.staging-'));
        if (staging && (await readdir(path.join(outDir, staging), { recursive: true }).catch(() => [])).length > 200)
          break;
        await new Promise((res) => setTimeout(res, 10));
      }
      expect(child.exitCode, `the build ended before it could be killed: ${stderr}`).toBeNull();
      child.kill('SIGKILL');
      expect(await exited).toEqual([null, 'SIGKILL']);

      // The kill landed mid-write: a staging folder without a manifest, the lock of a dead process, the old release live.
      const left = (await readdir(outDir)).sort();
      expect(left).toEqual([...BUILT, '.build-lock.pid', staging!].sort());
      await expect(stat(path.join(outDir, staging!, 'manifest.json'))).rejects.toThrow();
      expect(Number(await readFile(path.join(outDir, '.build-lock.pid'), 'utf8'))).toBe(child.pid);
      expect(await currentDir(outDir)).toBe(r1.releaseDir);
      const after = fingerprint(await readTree(outDir));
      // The folder's record (its marker) lists the staging folder, so that the next build may remove it.
      const notStaging = (xs: string[]) =>
        xs.filter((x) => !/^(\.staging-|\.build-lock\.pid|\.modelpub-publication )/.test(x));
      expect({ files: notStaging(after.files), links: after.links, dirs: notStaging(after.dirs) }).toEqual({
        ...before,
        files: notStaging(before.files),
      });
      expect(JSON.parse(await readFile(path.join(outDir, '.modelpub-publication'), 'utf8')).staging).toEqual([staging]);
      await assertIntact(outDir);

      // The next build takes the lock the kernel released, removes the stale staging folder and publishes
      // (small data again, edited so that it is a new revision: a second 300-model build would only cost time).
      const spec = smallCatalog();
      spec.models![1]!.name = 'Beta Renamed';
      await writeFixture(small, spec);
      const r2 = await build({ dataDir: small, outDir });
      expect(r2.revision).not.toBe(r1.revision);
      expect(await currentDir(outDir)).toBe(r2.releaseDir);
      expect((await readdir(outDir)).sort()).toEqual(BUILT);
      expect(JSON.parse(await readFile(path.join(outDir, '.modelpub-publication'), 'utf8')).staging).toEqual([]);
      await assertIntact(outDir);
      expect(r2.changes.previousRevision).toBe(r1.revision);
    });
  });
});

describe('the output folder', () => {
  it('an --out that is a file is refused with a UsageError, and nothing is written', async () => {
    await withTemp(async (tmp) => {
      const dataDir = path.join(tmp, 'data');
      await writeFixture(dataDir, smallCatalog());
      const outFile = path.join(tmp, 'out.json');
      await writeFile(outFile, '{"mine":true}\n');
      const before = fingerprint(await readTree(tmp));
      const err = await build({ dataDir, outDir: outFile }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UsageError);
      expect((err as Error).message).toBe(`--out ${outFile} is not a folder: refusing to overwrite it`);
      expect(fingerprint(await readTree(tmp))).toEqual(before);
      // A path through that file: refused before the data is read (it failed in mkdir, after loading, with ENOTDIR).
      await expect(
        build({ dataDir: path.join(tmp, 'no-such-data'), outDir: path.join(outFile, 'dist') }),
      ).rejects.toThrow(
        new UsageError(
          `--out ${path.join(outFile, 'dist')} goes through a file: a part of that path before its last is not a folder`,
        ),
      );
      expect(fingerprint(await readTree(tmp))).toEqual(before);
    });
  });

  it("a build touches only the names it makes in a marked --out: a user's folders stay, a `current` that is not its link is refused", async () => {
    await withTemp(async (tmp) => {
      const dataDir = path.join(tmp, 'data');
      const outDir = path.join(tmp, 'out');
      const spec = smallCatalog();
      await writeFixture(dataDir, spec);
      await build({ dataDir, outDir });
      // A process that has ended: a staging folder named for it looks like a dead build's.
      const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' }).stdout.trim();
      const mine = [
        ['releases/my-backups/2024.tar', 'backup'],
        ['releases/0007-notes.txt', 'named like a release, but a file'],
        // Folders named exactly as a build names its own: the folder's record does not list them.
        ['releases/0001-userstuff/notes.txt', 'looks like a release'],
        ['releases/0002-userstuff/api/v1/metrics/en.json', '{}'],
        [`.staging-userstuff-${dead}/notes.txt`, "looks like a dead build's staging"],
        ['.staging-photos/cat.jpg', 'a cat'],
        ['.current-notes', 'not a link'],
      ];
      for (const [p, text] of mine) {
        await mkdir(path.dirname(path.join(outDir, p!)), { recursive: true });
        await writeFile(path.join(outDir, p!), text!);
      }
      // Two more builds: the first release is pruned, and stale staging is cleared, twice.
      for (const name of ['Alpha Two', 'Alpha Three']) {
        spec.models![0]!.name = name;
        await writeFixture(dataDir, spec);
        await build({ dataDir, outDir });
      }
      expect((await readdir(path.join(outDir, 'releases'))).filter((n) => !/^\d{4}-r/.test(n)).sort()).toEqual([
        '0001-userstuff',
        '0002-userstuff',
        '0007-notes.txt',
        'my-backups',
      ]);
      // The builds' own releases were pruned all the same: the live one and the one it replaced are left.
      expect((await readdir(path.join(outDir, 'releases'))).filter((n) => /^\d{4}-r/.test(n))).toHaveLength(2);
      for (const [p, text] of mine) expect(await readFile(path.join(outDir, p!), 'utf8')).toBe(text);

      // A `current` someone replaced: a file, a folder, a link elsewhere. Each is refused, and left as it was.
      const current = path.join(outDir, 'current');
      const cases: [string, () => Promise<void>][] = [
        ['a file', () => writeFile(current, 'my notes')],
        ['a folder', () => mkdir(current)],
        ['a link to "/tmp"', () => symlink('/tmp', current)],
      ];
      for (const [what, make] of cases) {
        await rm(current, { recursive: true, force: true });
        await make();
        spec.models![0]!.name = `Alpha ${what}`;
        await writeFixture(dataDir, spec);
        const err = await build({ dataDir, outDir }).catch((e: unknown) => e);
        expect(err, what).toBeInstanceOf(UsageError);
        expect((err as Error).message).toBe(
          `--out ${outDir}: its \`current\` is ${what}, not the link a build makes (current -> releases/<n>-<revision>); a build does not replace it: move it away, or choose another --out`,
        );
      }
      expect(await readlink(current)).toBe('/tmp');
    });
  });

  it('a folder holding a file modelpub did not write is refused, and that file is untouched', async () => {
    await withTemp(async (tmp) => {
      const dataDir = path.join(tmp, 'data');
      await writeFixture(dataDir, smallCatalog());
      const outDir = path.join(tmp, 'out');
      await mkdir(outDir);
      await writeFile(path.join(outDir, 'thesis.docx'), 'four years of work');
      const before = fingerprint(await readTree(tmp));
      const err = await build({ dataDir, outDir }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UsageError);
      expect((err as Error).message).toBe(
        `--out ${outDir} holds files that modelpub did not write (thesis.docx): choose an empty or new folder`,
      );
      expect(fingerprint(await readTree(tmp))).toEqual(before);
      expect(await readFile(path.join(outDir, 'thesis.docx'), 'utf8')).toBe('four years of work');
      // Checked before the data is read: a mistyped --out is told at once, not after a minute of loading.
      await expect(build({ dataDir: path.join(tmp, 'no-such-data'), outDir })).rejects.toThrow(
        /^--out .* holds files that modelpub did not write/,
      );
    });
  });

  it('a symbolic link to a folder is that folder; a link to nothing or to a file is refused', async () => {
    await withTemp(async (tmp) => {
      const dataDir = path.join(tmp, 'data');
      await writeFixture(dataDir, smallCatalog());
      await mkdir(path.join(tmp, 'elsewhere'));
      await symlink(path.join(tmp, 'elsewhere'), path.join(tmp, 'out'));
      const first = await build({ dataDir, outDir: path.join(tmp, 'out') });
      const second = await build({ dataDir, outDir: path.join(tmp, 'out'), revision: 'again' }); // a previous publication, through the link
      expect(await currentDir(path.join(tmp, 'elsewhere'))).toBe(
        path.join(tmp, 'elsewhere', path.relative(path.join(tmp, 'out'), second.releaseDir)),
      );
      expect(first.stats.linkedFromPrevious).toBe(0);
      expect(second.stats.linkedFromPrevious).toBeGreaterThan(0);
      await symlink(path.join(tmp, 'nothing'), path.join(tmp, 'dangling'));
      await expect(build({ dataDir, outDir: path.join(tmp, 'dangling') })).rejects.toThrow(
        `--out ${path.join(tmp, 'dangling')} is a symbolic link to nothing`,
      );
      await writeFile(path.join(tmp, 'file'), 'x');
      await symlink(path.join(tmp, 'file'), path.join(tmp, 'to-file'));
      await expect(build({ dataDir, outDir: path.join(tmp, 'to-file') })).rejects.toThrow(
        `--out ${path.join(tmp, 'to-file')} is not a folder`,
      );
    });
  });

  it('an empty folder and a missing one are accepted', async () => {
    await withTemp(async (tmp) => {
      const dataDir = path.join(tmp, 'data');
      await writeFixture(dataDir, smallCatalog());
      await mkdir(path.join(tmp, 'empty'));
      for (const outDir of [path.join(tmp, 'empty'), path.join(tmp, 'new', 'nested')]) {
        const r = await build({ dataDir, outDir });
        expect(await currentDir(outDir)).toBe(r.releaseDir);
        expect((await readdir(outDir)).sort()).toEqual(BUILT);
      }
    });
  });
});

/** The live release's manifest files all exist with their sha256 and size. */
async function assertIntact(outDir: string): Promise<void> {
  const dir = await currentDir(outDir);
  const m = await readJson<Manifest>(path.join(dir, 'manifest.json'));
  expect(m.files.length).toBeGreaterThan(0);
  const tree = await readTree(dir);
  for (const f of m.files) {
    const got = tree.files.get(f.path);
    expect(got, f.path).toBeDefined();
    expect([got!.sha256, got!.bytes], f.path).toEqual([f.sha256, f.bytes]);
  }
}

/** n verified models with benchmark results and speed runs: about 100 files per model, enough for a build of seconds. */
function bigCatalog(n: number): FixtureSpec {
  const slugs = Array.from({ length: n }, (_, i) => `model-${String(i + 1).padStart(4, '0')}`);
  return {
    models: slugs.map((s, i) => model(s, i + 1, { served_by: Array.from({ length: i % 5 }, (_, k) => `p${k}`) })),
    metrics: [metric('code.pass'), metric('math.score', { group: 'math' })],
    benchmarks: slugs.flatMap((s, i) => [
      {
        model: s,
        metric: 'code.pass',
        lane: 'verified',
        value: (i * 37) % 100,
        stderr: null,
        confidence: 1,
        eval_date: '2025-01-10',
        provenance: prov(10_000 + i),
      },
      {
        model: s,
        metric: 'math.score',
        lane: 'verified',
        value: (i * 53) % 100,
        stderr: 0.5,
        confidence: 1,
        eval_date: '2025-01-10',
        provenance: prov(20_000 + i),
      },
    ]),
    speed: slugs.map((s, i) => ({
      model: s,
      lane: 'verified',
      tokens_per_second: 10 + i,
      first_token_latency_ms: 100 + i,
      measured_at: '2025-01-05T10:00:00Z',
      provenance: prov(30_000 + i),
    })),
  };
}
