// What changed, for a person and for a client: the semantic diff of two fixtures (pipeline/diff.ts), the build that
// publishes nothing for unchanged data, the changes feed a build writes and the gateway serves (GET /api/v1/changes),
// and `modelpub diff`'s exit codes.
import { cp, mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../src/gateway/keys.js';
import type { Gateway } from '../src/gateway/server.js';
import { openStore } from '../src/gateway/stores/index.js';
import type { QuotaStore } from '../src/gateway/stores/types.js';
import { build, dataRevision, loadAndValidate, type BuildResult } from '../src/pipeline/build.js';
import { FEED_LENGTH, parseSnapshot } from '../src/pipeline/changes.js';
import { compute } from '../src/pipeline/compute/index.js';
import { diffSnapshots, renderDiff, summaryLine } from '../src/pipeline/diff.js';
import { snapshotBody, snapshotOf } from '../src/pipeline/snapshot.js';
import { type BodyParts, bodyBytes } from '../src/publication/assemble.js';
import { Snapshot } from '../src/schema/snapshot.js';
import type { ChangesResponse, SemanticDiff } from '../src/schema/api.js';
import { ensureCompiled, runCli } from './helpers/cli.js';
import { metric, model, prov, smallCatalog, withTemp, writeFixture, type FixtureSpec } from './helpers/fixture.js';
import { gatewayOver, request } from './helpers/request.js';
import { ajvErrors, compileCommitted } from './helpers/schemas.js';

/** The snapshot a build of `spec` would write (through a temporary source tree, as a build reads it). */
async function snapshotFor(spec: FixtureSpec) {
  return withTemp(async (dir) => {
    await writeFixture(dir, spec);
    const data = await loadAndValidate(dir);
    return snapshotOf(compute(data), dataRevision(data));
  });
}
const diffOf = async (before: FixtureSpec, after: FixtureSpec) =>
  diffSnapshots(await snapshotFor(before), await snapshotFor(after));

type Spec = ReturnType<typeof smallCatalog>;
const find = <T extends { slug?: string; model?: string }>(xs: T[], pred: (x: T) => boolean): T => xs.find(pred)!;
// biome-ignore lint/suspicious/noExplicitAny: fixture records are loosely typed on purpose (tests write bad ones too).
type Loose = Record<string, any>;

/** Every kind of change at once, on fields that do not touch each other. */
function everyKind(): Spec {
  const spec = smallCatalog();
  const m = (slug: string) => find(spec.models!, (x) => x.slug === slug) as Loose;
  m('alpha').description = { ...m('alpha').description, en: 'alpha, rewritten' }; // description
  m('alpha').context_window_tokens = 2000; // token limit
  m('gamma').name = 'Gamma'; // identity
  m('gamma').capabilities = { ...m('gamma').capabilities, reasoning: true }; // capability
  m('delta').documentation_url = 'https://example.org/delta'; // a link
  // speed: a verified run of alpha 50 -> 70 tok/s: verified mean 75 -> 85, all-lane mean (with the provisional 10)
  // 53.333 -> 60; the provisional lane keeps its one run
  const run = find(spec.speed! as Loose[], (r) => r.model === 'alpha' && r.tokens_per_second === 50);
  run.tokens_per_second = 70;
  const price = find(spec.prices! as Loose[], (p) => p.model === 'beta');
  price.input_per_million = 0.75; // price
  // benchmark value and rank: alpha's cost 3 -> 0.5 (lower is better) passes beta's 1
  const cost = find(spec.benchmarks! as Loose[], (b) => b.model === 'alpha' && b.metric === 'cost.usd');
  cost.value = 0.5;
  (spec.overrides![0] as Loose).name = 'Beta Max'; // display-only override
  // catalog: a new metric with one value (gamma's)
  spec.metrics!.push(metric('math.acc', { group: 'math', headline: false }));
  spec.benchmarks!.push({
    model: 'gamma',
    metric: 'math.acc',
    lane: 'verified',
    value: 42,
    stderr: null,
    confidence: 1,
    eval_date: '2025-01-12',
    provenance: prov(108),
  });
  return spec;
}

describe('semantic diff of two fixtures', () => {
  it('reports each kind of change exactly once, with its old and new value and the lanes it happened in', async () => {
    const d = await diffOf(smallCatalog(), everyKind());
    const both = ['verified', 'all'];
    expect(d).toEqual({
      models: [
        {
          slug: 'alpha',
          name: 'ALPHA',
          change: 'changed',
          fields: [
            { path: 'benchmarks.cost.usd.rank', old: 2, new: 1, lanes: both },
            { path: 'benchmarks.cost.usd.value', old: 3, new: 0.5, lanes: both },
            { path: 'context_window_tokens', old: 1000, new: 2000 },
            { path: 'description.en', old: 'alpha is a model.', new: 'alpha, rewritten' },
            { path: 'stats.average_tokens_per_second', old: 75, new: 85, lanes: ['verified'] },
            { path: 'stats.average_tokens_per_second', old: 50, new: 70, lanes: ['all'] }, // medians
          ],
        },
        {
          slug: 'beta',
          name: 'BETA',
          change: 'changed',
          fields: [
            { path: 'benchmarks.cost.usd.rank', old: 1, new: 2, lanes: both },
            { path: 'display.name', old: 'Beta Prime', new: 'Beta Max' },
            { path: 'pricing.input_price_per_million', old: 0.5, new: 0.75, lanes: both },
          ],
        },
        {
          slug: 'delta',
          name: 'DELTA',
          change: 'changed',
          fields: [{ path: 'documentation_url', old: null, new: 'https://example.org/delta' }],
        },
        {
          slug: 'gamma',
          name: 'Gamma',
          change: 'changed',
          fields: [
            {
              path: 'benchmarks.math.acc',
              new: { confidence: 1, eval_date: '2025-01-12T00:00:00.000Z', rank: 1, stderr: null, value: 42 },
              lanes: both,
            },
            { path: 'capabilities.reasoning', old: false, new: true },
            { path: 'name', old: 'GAMMA', new: 'Gamma' },
          ],
        },
      ],
      catalog: [
        { path: 'leaderboards.math.acc', new: { ranked_count: 1 }, lanes: both },
        {
          path: 'metrics.math.acc',
          new: {
            aggregate: false,
            benchmark: 'math',
            group: 'math',
            headline: false,
            higher_is_better: true,
            label: 'math.acc',
            unit: 'percent',
          },
        },
      ],
    });
    expect(summaryLine(d)).toBe(
      '4 models changed: alpha (benchmarks.cost.usd.rank, benchmarks.cost.usd.value, context_window_tokens, … 2 more), ' +
        'beta (benchmarks.cost.usd.rank, display.name, pricing.input_price_per_million), delta (documentation_url), ' +
        'gamma (benchmarks.math.acc, capabilities.reasoning, name); 2 catalog changes: leaderboards.math.acc, metrics.math.acc',
    );
  });

  it('an added and a removed model appear once each; the leaderboard sizes they change are catalog changes', async () => {
    const withEpsilon = smallCatalog();
    withEpsilon.models!.push(model('epsilon', 5));
    withEpsilon.benchmarks!.push({
      model: 'epsilon',
      metric: 'code.pass',
      lane: 'verified',
      value: 85,
      stderr: null,
      confidence: 1,
      eval_date: '2025-01-10',
      provenance: prov(109),
    });
    const added = await diffOf(smallCatalog(), withEpsilon);
    // verified: alpha 90, epsilon 85, beta and gamma 80 (2 -> 3); all: delta 95 first, so beta and gamma 3 -> 4
    const pushedDown = [
      { path: 'benchmarks.code.pass.rank', old: 2, new: 3, lanes: ['verified'] },
      { path: 'benchmarks.code.pass.rank', old: 3, new: 4, lanes: ['all'] },
    ];
    expect(added).toEqual({
      models: [
        { slug: 'beta', name: 'BETA', change: 'changed', fields: pushedDown },
        { slug: 'epsilon', name: 'EPSILON', change: 'added', fields: [] },
        { slug: 'gamma', name: 'GAMMA', change: 'changed', fields: pushedDown },
      ],
      catalog: [
        { path: 'leaderboards.code.pass.ranked_count', old: 3, new: 4, lanes: ['verified'] },
        { path: 'leaderboards.code.pass.ranked_count', old: 4, new: 5, lanes: ['all'] },
      ],
    });
    expect(summaryLine(added)).toBe(
      '1 model added: epsilon; 2 models changed: beta (benchmarks.code.pass.rank), gamma (benchmarks.code.pass.rank); ' +
        '2 catalog changes: leaderboards.code.pass.ranked_count',
    );

    const withoutGamma = smallCatalog();
    withoutGamma.models = withoutGamma.models!.filter((m) => m.slug !== 'gamma');
    withoutGamma.benchmarks = withoutGamma.benchmarks!.filter((b) => b.model !== 'gamma');
    expect(await diffOf(smallCatalog(), withoutGamma)).toEqual({
      models: [{ slug: 'gamma', name: 'GAMMA', change: 'removed', fields: [] }],
      catalog: [
        { path: 'leaderboards.code.pass.ranked_count', old: 3, new: 2, lanes: ['verified'] },
        { path: 'leaderboards.code.pass.ranked_count', old: 4, new: 3, lanes: ['all'] },
      ],
    });
  });

  it('a model that moves lanes is told once (`lanes`, `lane`), not as figures appearing in one lane and leaving another', async () => {
    const promoted = smallCatalog();
    (find(promoted.models!, (m) => m.slug === 'delta') as Loose).lane = 'verified';
    const d = await diffOf(smallCatalog(), promoted);
    const delta = d.models.find((m) => m.slug === 'delta')!;
    expect(delta.fields.filter((f) => !f.path.startsWith('benchmarks.'))).toEqual([
      { path: 'lane', old: 'provisional', new: 'verified' },
      { path: 'lanes', old: ['provisional', 'all'], new: ['verified', 'provisional', 'all'] },
    ]);
  });

  it('unchanged data gives an empty diff; data that differs only where no reader looks gives one too', async () => {
    expect(await diffOf(smallCatalog(), smallCatalog())).toEqual({ models: [], catalog: [] });
    const privateNote = smallCatalog();
    (privateNote.models![0] as Loose).private = { notes: 'checked by hand' };
    const [a, b] = [await snapshotFor(smallCatalog()), await snapshotFor(privateNote)];
    expect(diffSnapshots(a, b)).toEqual({ models: [], catalog: [] });
    expect(a.dataRevision).not.toBe(b.dataRevision); // a build would still publish a new revision: `diff` exits 1
    expect(summaryLine({ models: [], catalog: [] })).toBe('no changes');
  });

  it('renders for a person: the summary line first, then each model with its fields, then the catalog', async () => {
    const spec = smallCatalog();
    (spec.models![0] as Loose).context_window_tokens = 4000;
    (spec.models![0] as Loose).description.en =
      'A much longer description of alpha, which does not fit on one line with the old one.';
    expect(renderDiff(await diffOf(smallCatalog(), spec))).toBe(
      [
        '1 model changed: alpha (context_window_tokens, description.en)',
        '',
        'changed alpha (ALPHA)',
        '  context_window_tokens: 1000 → 4000',
        '  description.en',
        '    - "alpha is a model."',
        '    + "A much longer description of alpha, which does not fit on one line with the old one."',
        '',
      ].join('\n'),
    );
  });
});

describe("the live release's snapshot, read", () => {
  const fileOf = async () => {
    // Its bytes wait in a file of the folder given (removed as soon as it is open).
    const body = snapshotBody(await snapshotFor(everyKind()), tmpdir()) as BodyParts;
    return bodyBytes(body, 'r000000000001').toString();
  };
  it('is checked a hundred models at a time as the whole was: the same snapshot, the same errors', async () => {
    const text = await fileOf();
    expect(parseSnapshot(Buffer.from(text), 'snapshot.json')).toEqual(Snapshot.parse(JSON.parse(text)));
    const doc = JSON.parse(text);
    doc.models.beta.context_window_tokens = -1;
    expect(() => parseSnapshot(Buffer.from(JSON.stringify(doc)), 'snapshot.json')).toThrow(
      /^snapshot\.json: models\.beta\.context_window_tokens: /,
    );
    doc.models.beta.context_window_tokens = 1;
    doc.models['Not A Slug'] = doc.models.beta;
    expect(() => parseSnapshot(Buffer.from(JSON.stringify(doc)), 'snapshot.json')).toThrow(/^snapshot\.json: models/);
    delete doc.models['Not A Slug'];
    doc.dataRevision = 42;
    expect(() => parseSnapshot(Buffer.from(JSON.stringify(doc)), 'snapshot.json')).toThrow(
      /^snapshot\.json: dataRevision: /,
    );
    expect(() => parseSnapshot(Buffer.from('{"models":'), 'snapshot.json')).toThrow(/^snapshot\.json: not JSON/);
  });
});

describe('builds and the changes feed', () => {
  let tmp: string;
  let dataDir: string;
  let outDir: string;
  let r1: BuildResult;
  let r2: BuildResult;
  let r3: BuildResult;
  let store: QuotaStore;
  let key: string;
  let gw: Gateway;
  const feedFile = async (r: BuildResult, name: string) =>
    JSON.parse(await readFile(path.join(r.releaseDir, 'api/v1/changes', name), 'utf8')) as ChangesResponse;
  const rebuild = async (spec: FixtureSpec) => {
    await rm(dataDir, { recursive: true, force: true });
    await writeFixture(dataDir, spec);
    return build({ dataDir, outDir });
  };
  const secondEdit = () => {
    const spec = everyKind();
    (find(spec.prices! as Loose[], (p) => p.model === 'beta') as Loose).output_per_million = 2;
    return spec;
  };
  const get = (p: string, headers: Record<string, string> = {}) =>
    request(gw, p, { headers: { 'x-api-key': key, ...headers } });

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-changes-'));
    dataDir = path.join(tmp, 'data');
    outDir = path.join(tmp, 'out');
    r1 = await rebuild(smallCatalog());
    r2 = await rebuild(everyKind());
    r3 = await rebuild(secondEdit());
    store = await openStore('memory:');
    key = (await createKey(store, 'changes')).key;
    gw = await gatewayOver(outDir, { storeInstance: store, quota: 1000, cacheBytes: 1 << 20, pollMs: 50 });
  });
  afterAll(async () => {
    await gw?.close();
    await store?.close();
    await rm(tmp, { recursive: true, force: true });
  });

  it('each build prints what changed and records it in the feed: newest first, once each', async () => {
    expect(r1.semantic.summary).toBe('first publication: 4 models');
    expect(r2.semantic.diff).toEqual(await diffOf(smallCatalog(), everyKind()));
    expect(r3.semantic.summary).toBe('1 model changed: beta (pricing.output_price_per_million)');
    const feed = await feedFile(r3, 'index.json');
    expect(feed.publicationRevision).toBe(r3.revision);
    expect(feed.data.latest).toBe(r3.revision);
    expect(feed.data.oldest).toBe(r1.revision);
    expect(feed.data.publications).toEqual(
      [r3, r2].map((r, i) => ({
        publicationRevision: r.revision,
        previousRevision: [r2, r1][i]!.revision,
        publishedAt: r.publishedAt,
        summary: r.semantic.summary,
        ...(r.semantic.diff as SemanticDiff),
      })),
    );
    const v = compileCommitted();
    for (const name of await readdir(path.join(r3.releaseDir, 'api/v1/changes/since'))) {
      const body = await feedFile(r3, `since/${name}`);
      expect(v.ChangesResponse!(body), `${name}: ${ajvErrors(v.ChangesResponse!)}`).toBe(true);
    }
  });

  it('`since` answers exactly the publications after it, for every revision the feed reaches back to', async () => {
    const feed = (await feedFile(r3, 'index.json')).data.publications;
    expect((await readdir(path.join(r3.releaseDir, 'api/v1/changes/since'))).sort()).toEqual(
      [r1, r2, r3].map((r) => `${r.revision}.json`).sort(),
    );
    expect((await feedFile(r3, `since/${r1.revision}.json`)).data.publications).toEqual(feed);
    expect((await feedFile(r3, `since/${r2.revision}.json`)).data.publications).toEqual([feed[0]]);
    expect((await feedFile(r3, `since/${r3.revision}.json`)).data.publications).toEqual([]);
  });

  it('an unchanged rebuild publishes nothing: `current`, the feed and its answers stay as they are', async () => {
    const link = await readlink(path.join(outDir, 'current'));
    const again = await build({ dataDir, outDir });
    expect(again.semantic.unchanged).toBe(true);
    expect(again.releaseDir).toBe(r3.releaseDir);
    expect(await readlink(path.join(outDir, 'current'))).toBe(link);
    expect((await feedFile(again, 'index.json')).data.publications).toHaveLength(2);
  });

  it('GET /api/v1/changes and ?since= serve the prebuilt answers with the headers, validators and quota of the other operations', async () => {
    const all = await get('/api/v1/changes');
    expect(all.status).toBe(200);
    expect(all.headers.get('x-publication-revision')).toBe(r3.revision);
    expect(all.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(all.headers.get('cache-control')).toBe('private, max-age=300');
    expect(all.headers.get('access-control-allow-origin')).toBe('*');
    expect(all.headers.get('ratelimit')).toMatch(/^"daily";r=\d+;t=\d+$/);
    expect(Buffer.from(await all.arrayBuffer())).toEqual(
      await readFile(path.join(r3.releaseDir, 'api/v1/changes/index.json')),
    );
    const since = await get(`/api/v1/changes?since=${r2.revision}`);
    const body = (await since.json()) as ChangesResponse;
    expect(body.data.publications.map((p) => p.publicationRevision)).toEqual([r3.revision]);
    expect(body.data.publications[0]!.models).toEqual(r3.semantic.diff!.models);
    const etag = since.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{32}(-br|-gz)?"$/); // fetch accepts br and gzip: the representation's ETag
    const revalidated = await get(`/api/v1/changes?since=${r2.revision}`, { 'if-none-match': etag });
    expect(revalidated.status).toBe(304);
    const preflight = await request(gw, `/api/v1/changes?since=x`, { method: 'OPTIONS' });
    expect(preflight.status).toBe(204);
    expect((await request(gw, `/api/v1/changes`)).status).toBe(401);
  });

  it('an unknown or expired revision is a 410 telling the client to resync from the catalog; a malformed one a 400', async () => {
    const remaining = async () => Number(/r=(\d+)/.exec((await get('/api/v1/changes')).headers.get('ratelimit')!)![1]);
    const before = await remaining();
    const gone = await get('/api/v1/changes?since=r000000000000');
    expect(gone.status).toBe(410);
    expect(gone.headers.get('content-type')).toBe('application/problem+json');
    const problem = await gone.json();
    expect(problem).toMatchObject({ status: 410, code: 'resync_required' });
    expect(problem.detail).toContain('/api/v1/catalog');
    expect(gone.headers.get('ratelimit')).toMatch(/^"daily";r=\d+/); // counted, as a 404 for an unknown slug is
    const bad = await get('/api/v1/changes?since=../../etc');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'invalid_parameter', invalid_params: [{ name: 'since' }] });
    expect((await get('/api/v1/changes?since=a&since=b')).status).toBe(400);
    // the 410 and this read count; the two 400s do not
    expect(await remaining()).toBe(before - 2);
  });
});

describe('the feed over many publications', () => {
  it(`keeps the last ${FEED_LENGTH}: \`since\` reaches back to the one before the oldest kept, no further`, async () => {
    await withTemp(async (tmp) => {
      const dataDir = path.join(tmp, 'data');
      const outDir = path.join(tmp, 'out');
      const one = (n: number): FixtureSpec => ({
        models: [model('solo', 1, { context_window_tokens: 1000 + n })],
      });
      const revisions: string[] = [];
      // The progress total counts the feed's bodies too (a bar drawn past its end would throw on a terminal).
      const totals = new Map<string, number>();
      let phase = '';
      let done = 0;
      const progress = {
        phase: (name: string, total = 0) => void totals.set((phase = name), total),
        tick: (n: number) => void (phase === 'render + write' && (done = n)),
        end: () => {},
      };
      let last: BuildResult | undefined;
      for (let n = 0; n <= FEED_LENGTH + 1; n++) {
        await rm(dataDir, { recursive: true, force: true });
        await writeFixture(dataDir, one(n));
        last = await build({ dataDir, outDir, progress });
        revisions.push(last.revision);
      }
      expect(done).toBe(last!.files);
      expect(totals.get('render + write')).toBe(last!.files);
      const release = path.resolve(outDir, await readlink(path.join(outDir, 'current')));
      const index = JSON.parse(await readFile(path.join(release, 'api/v1/changes/index.json'), 'utf8'));
      expect(index.data.publications).toHaveLength(FEED_LENGTH);
      expect(index.data.publications[0].summary).toBe('1 model changed: solo (context_window_tokens)');
      // 32 publications: the newest 30 are kept, the first one's successor is the oldest `since`
      expect(index.data.oldest).toBe(revisions[1]);
      expect((await readdir(path.join(release, 'api/v1/changes/since'))).sort()).toEqual(
        revisions
          .slice(1)
          .map((r) => `${r}.json`)
          .sort(),
      );
    });
  });
});

describe('modelpub diff and build on the command line', () => {
  let tmp: string;
  let out: string;
  let same: string;
  let edited: string;
  beforeAll(async () => {
    ensureCompiled();
    tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-diffcli-'));
    same = path.join(tmp, 'same');
    edited = path.join(tmp, 'edited');
    out = path.join(tmp, 'out');
    await writeFixture(same, smallCatalog());
    const spec = smallCatalog();
    (spec.models![0] as Loose).description.en = 'alpha, rewritten';
    await writeFixture(edited, spec);
    const first = await runCli(['build', '--data', same, '--out', out, '--quiet']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.split('\n')[0]).toBe('first publication: 4 models');
  });
  afterAll(() => rm(tmp, { recursive: true, force: true }));

  it('exits 0 when nothing would change, 1 when something would (text and --json)', async () => {
    const none = await runCli(['diff', '--data', same, '--against', out]);
    expect([none.code, none.stdout], none.stderr).toEqual([0, 'no changes\n']);
    const viaUrl = await runCli(['diff', '--data', same, '--against', pathToFileURL(out).href]);
    expect(viaUrl.code, viaUrl.stderr).toBe(0);
    const changed = await runCli(['diff', '--data', edited, '--against', out]);
    expect(changed.code, changed.stderr).toBe(1);
    expect(changed.stdout.split('\n').slice(0, 4)).toEqual([
      '1 model changed: alpha (description.en)',
      '',
      'changed alpha (ALPHA)',
      '  description.en: "alpha is a model." → "alpha, rewritten"',
    ]);
    const json = await runCli(['diff', '--data', edited, '--against', out, '--json']);
    expect(json.code, json.stderr).toBe(1);
    const parsed = JSON.parse(json.stdout);
    expect(parsed.summary).toBe('1 model changed: alpha (description.en)');
    expect(parsed.models).toEqual([
      {
        slug: 'alpha',
        name: 'ALPHA',
        change: 'changed',
        fields: [{ path: 'description.en', old: 'alpha is a model.', new: 'alpha, rewritten' }],
      },
    ]);
    expect(parsed.catalog).toEqual([]);
  });

  it('exits 2 on any error, options the parser rejects included', async () => {
    // a release whose snapshot is gone: nothing to compare with
    const legacy = path.join(tmp, 'legacy');
    await cp(path.resolve(out, await readlink(path.join(out, 'current'))), legacy, { recursive: true });
    await rm(path.join(legacy, 'artifacts/snapshot.json'));
    const cases: [string[], RegExp][] = [
      [['diff', '--data', same, '--against', out, '--bogus'], /error: unknown option '--bogus'/],
      [['diff', '--data', same], /error: required option '--against <dir\|url>' not specified/],
      [['diff', '--data', same, '--against', path.join(tmp, 'nowhere')], /holds no publication/],
      [['diff', '--data', path.join(tmp, 'no-data'), '--against', out], /^modelpub: /],
      [['diff', '--data', same, '--against', 'ftp://static.example/p'], /ftp:\/\/static\.example\/p: write https:/],
      [
        ['diff', '--data', same, '--against', legacy],
        /cannot read artifacts\/snapshot\.json of \S+ at \S*legacy: \S*legacy\/artifacts\/snapshot\.json is missing/,
      ],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
    }
    const help = await runCli(['diff', '--help']);
    expect(help.code).toBe(0);
    // elsewhere, the parser's refusals keep exit code 1
    expect((await runCli(['validate', '--bogus'])).code).toBe(1);
  });

  it('data that does not validate is an error of diff (2), not a change (1)', async () => {
    const broken = path.join(tmp, 'broken');
    await cp(same, broken, { recursive: true });
    await writeFixture(broken, { ...smallCatalog(), models: [{ slug: 'alpha', id: 'one' }] });
    const r = await runCli(['diff', '--data', broken, '--against', out]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/problems? in the source data/);
  });

  it('build says when it publishes nothing, and exits 0', async () => {
    const r = await runCli(['build', '--data', same, '--out', out, '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^no changes\nnothing to publish: the data is that of the live revision r[0-9a-f]{12} /);
  });
});
