// A rebuild costs what changed, and gives what a full build gives. For each kind of change (description, price,
// benchmark value, a new model, a removed model): build A, change the data, rebuild over the kept dist/ and, on a
// fresh --out, with --previous at a publish of A; every file of both releases must be the bytes of a full build of
// the changed data into an empty --out (its representations' bytes too, wherever their pack). All three builds name one --revision, so that a body kept from A and the same
// body made anew are the same bytes; the rebuilds give a later --published-at than A, as a changed body needs.
import { appendFile, copyFile, lstat, readFile, rm, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { build, type BuildResult } from '../src/pipeline/build.js';
import { PARTS_FILE } from '../src/pipeline/parts-store.js';
import type { Manifest, ManifestEntry } from '../src/publication/files.js';
import { packedRepresentations } from '../src/publication/layout.js';
import { objectKey } from '../src/publication/remote.js';
import { fileTarget } from '../src/publication/targets/file.js';
import { publish } from '../src/publish/publish.js';
import { model, prov, smallCatalog, withTemp, writeFixture, type FixtureSpec } from './helpers/fixture.js';
import { readAll } from './helpers/tree.js';
import { ensureCompiled, runCli } from './helpers/cli.js';
import { faultyHost } from './helpers/faulty-host.js';

const REVISION = 'v1';
const BEFORE = '2026-01-01T00:00:00.000Z';
const AFTER = '2026-01-02T00:00:00.000Z';
const RELEASE_FILES = ['manifest.json', 'publication.json', 'changes.json'];

const manifestOf = async (r: BuildResult): Promise<Manifest> =>
  JSON.parse(await readFile(path.join(r.releaseDir, 'manifest.json'), 'utf8')) as Manifest;

type Change = (spec: FixtureSpec) => FixtureSpec;
const CHANGES: Array<[string, Change]> = [
  [
    'a description',
    (s) => ({
      ...s,
      models: s.models!.map((m) =>
        m.slug === 'alpha' ? { ...m, description: { ...(m.description as object), en: 'alpha, described anew.' } } : m,
      ),
    }),
  ],
  [
    'a price',
    (s) => ({ ...s, prices: s.prices!.map((p) => (p.model === 'beta' ? { ...p, input_per_million: 0.75 } : p)) }),
  ],
  [
    'a benchmark value',
    (s) => ({
      ...s,
      benchmarks: s.benchmarks!.map((b) => (b.model === 'beta' && b.metric === 'code.pass' ? { ...b, value: 85 } : b)),
    }),
  ],
  [
    // A name shows in the nearby models of the models beside it on a board: their parts change with it.
    'a name',
    (s) => ({ ...s, models: s.models!.map((m) => (m.slug === 'beta' ? { ...m, name: 'Beta Two' } : m)) }),
  ],
  [
    'a display override',
    (s) => ({
      ...s,
      overrides: [{ model: 'beta', reason: 'as marketed', name: 'Beta Marketed', provenance: prov(400) }],
    }),
  ],
  ['a speed run', (s) => ({ ...s, speed: s.speed!.map((r, i) => (i === 0 ? { ...r, tokens_per_second: 120 } : r)) })],
  [
    'a new model',
    (s) => ({
      ...s,
      models: [...s.models!, model('epsilon', 5)],
      benchmarks: [
        ...s.benchmarks!,
        {
          model: 'epsilon',
          metric: 'code.pass',
          lane: 'verified',
          value: 85,
          stderr: null,
          confidence: 1,
          eval_date: '2025-01-12',
          provenance: prov(108),
        },
      ],
    }),
  ],
  [
    'a removed model',
    (s) => ({
      ...s,
      models: s.models!.filter((m) => m.slug !== 'gamma'),
      benchmarks: s.benchmarks!.filter((b) => b.model !== 'gamma'),
    }),
  ],
];

/**
 * `rebuilt` holds the bytes of `full` in every body, and the same bytes for each representation; its manifest is
 * full's but that the bodies it kept from A keep A's Last-Modified (a full build has no earlier time to keep), and
 * that its representations may be in other packs (a rebuild over a kept dist/ links A's pack and writes its own).
 */
async function expectSameAsFull(rebuilt: BuildResult, full: BuildResult, a: Manifest): Promise<void> {
  const [x, y] = [await readAll(rebuilt.releaseDir), await readAll(full.releaseDir)];
  const bodies = (m: Map<string, Buffer>) => [...m.keys()].filter((p) => !p.endsWith('.pack')).sort();
  expect(bodies(x)).toEqual(bodies(y));
  for (const [p, bytes] of y)
    if (!RELEASE_FILES.includes(p) && !p.endsWith('.pack')) expect(x.get(p)!.equals(bytes), p).toBe(true);
  const [mx, my] = [await manifestOf(rebuilt), await manifestOf(full)];
  const before = new Map(a.files.map((f) => [f.path, f]));
  const made = new Set([...rebuilt.changes.added, ...rebuilt.changes.changed]);
  const expected: ManifestEntry[] = my.files.map((f) =>
    made.has(f.path) ? f : { ...f, last_modified: before.get(f.path)!.last_modified },
  );
  const unplaced = (m: Manifest) => {
    const { packs: _, ...rest } = m;
    const reps = Object.entries(m.representations!).map(([h, { br, gzip }]) => [h, { br, gzip }]);
    return { ...rest, representations: Object.fromEntries(reps) };
  };
  expect(unplaced(mx)).toEqual(unplaced({ ...my, files: expected }));
  const bytesOf = (files: Map<string, Buffer>, m: Manifest) =>
    new Map(
      [...packedRepresentations(m.representations!, m.packs)].map((p) => {
        const pack = files.get(p.br.path)!;
        return [p.identity, pack.subarray(p.br.offset, p.gzip.offset + p.gzip.bytes)];
      }),
    );
  const [rx, ry] = [bytesOf(x, mx), bytesOf(y, my)];
  for (const [h, bytes] of ry) expect(rx.get(h)!.equals(bytes), h).toBe(true);
  const meta = async (r: BuildResult) => {
    const { manifestSha256: _, ...rest } = JSON.parse(
      await readFile(path.join(r.releaseDir, 'publication.json'), 'utf8'),
    );
    return rest;
  };
  expect(await meta(rebuilt)).toEqual(await meta(full));
}

it.each(CHANGES)(
  'after %s: a rebuild (kept dist/, --previous URL) is byte for byte a full build, and made only what changed',
  async (_, change) => {
    await withTemp(async (tmp) => {
      const data = path.join(tmp, 'data');
      const kept = path.join(tmp, 'kept');
      const remote = pathToFileURL(path.join(tmp, 'remote')).href;
      await writeFixture(data, smallCatalog());
      const a = await build({ dataDir: data, outDir: kept, revision: REVISION, publishedAt: BEFORE });
      expect(a.stats.skipped).toBe(0);
      const aManifest = await manifestOf(a);
      await publish({ from: kept, target: fileTarget(remote), keep: 3, concurrency: 4, say: () => {}, progress: null });

      await writeFixture(data, change(smallCatalog()));
      const again = { dataDir: data, revision: REVISION, publishedAt: AFTER };
      const full = await build({ ...again, outDir: path.join(tmp, 'full') });
      const overKept = await build({ ...again, outDir: kept });
      const onRunner = await build({ ...again, outDir: path.join(tmp, 'runner'), previousUrl: remote });
      expect(overKept.changes.added.length + overKept.changes.changed.length).toBeGreaterThan(0);
      await expectSameAsFull(overKept, full, aManifest);
      await expectSameAsFull(onRunner, full, aManifest);

      // Over the kept dist/, exactly the bodies whose bytes changed (or that are new) were made, or linked to a twin
      // made before them (a new model's display variant); every other one was carried over by its inputs digest,
      // without being made.
      const made = overKept.changes.added.length + overKept.changes.changed.length;
      expect(overKept.stats.rendered + overKept.stats.twins).toBe(made);
      expect(overKept.stats.skipped).toBe(overKept.files - made);
      expect(overKept.stats.skipped).toBeGreaterThan(0);
      // On the runner the same bodies are carried by their digest: made with A's revision and written, not hashed;
      // their representations downloaded into A's packs (made again on the disk), not compressed: so the runner
      // compressed what the kept dist/ did, and its release is that one's, its packs and manifest included.
      expect(onRunner.stats.rewritten).toBe(overKept.stats.skipped);
      expect(onRunner.stats.rendered + onRunner.stats.twins).toBe(onRunner.files);
      expect(onRunner.stats.encodedReused).toBeGreaterThan(0);
      expect([onRunner.stats.encodedNew, onRunner.stats.encodedReused]).toEqual([
        overKept.stats.encodedNew,
        overKept.stats.encodedReused,
      ]);
      expect(onRunner.stats.previousUnread).toBe(0);
      expect(await manifestOf(onRunner)).toEqual(await manifestOf(overKept));
    });
  },
);

it('a description change makes that model’s details in its locale, the lists and artifacts that show it, and no other body', async () => {
  await withTemp(async (tmp) => {
    const data = path.join(tmp, 'data');
    const out = path.join(tmp, 'out');
    await writeFixture(data, smallCatalog());
    const first = await build({ dataDir: data, outDir: out });
    await writeFixture(data, CHANGES[0]![1](smallCatalog()));
    const r = await build({ dataDir: data, outDir: out });
    const made = [...r.changes.added, ...r.changes.changed];
    expect(r.stats.rendered).toBe(made.length);
    // alpha's parts alone were rendered: in its 3 lanes, and in the display variants of the 2 where beta's override
    // name shows beside it on a board. Every other model's were taken from the last build's store.
    expect(first.parts.reused).toBe(0);
    expect(r.parts).toEqual({ rendered: 5, reused: first.parts.rendered - 5 });
    const shows = (p: string) =>
      p.startsWith('api/v1/models/alpha/en.') ||
      p.startsWith('api/v1/list/en.') ||
      p.startsWith('api/v1/catalog/en.') ||
      p.startsWith('api/v1/changes/') ||
      p.startsWith('artifacts/') ||
      p === 'api/v1/openapi.json'; // its examples show alpha
    expect(made.filter((p) => !shows(p))).toEqual([]);
    // 48 details (3 lanes x public/display x 8 include subsets), 192 list pages, 6 catalogs, 6 list artifacts
    expect(made.filter((p) => p.startsWith('api/v1/models/'))).toHaveLength(48);
    expect(made.filter((p) => p.startsWith('api/v1/list/'))).toHaveLength(192);
  });
});

it('a parts store cut short is not read: the rebuild renders every model, and gives a full build’s bytes', async () => {
  await withTemp(async (tmp) => {
    const data = path.join(tmp, 'data');
    const out = path.join(tmp, 'out');
    await writeFixture(data, smallCatalog());
    const first = await build({ dataDir: data, outDir: out, revision: REVISION, publishedAt: BEFORE });
    const store = path.join(out, PARTS_FILE);
    const bytes = await readFile(store);
    await writeFixture(data, CHANGES[0]![1](smallCatalog()));
    const full = await build({ dataDir: data, outDir: path.join(tmp, 'full'), revision: REVISION, publishedAt: AFTER });
    // Cut short: its index is gone, and nothing of it is read.
    await truncate(store, bytes.length - 5);
    const cut = await build({ dataDir: data, outDir: out, revision: REVISION, publishedAt: AFTER });
    expect(cut.parts).toEqual({ reused: 0, rendered: first.parts.rendered });
    await expectSameAsFull(cut, full, await manifestOf(first));
  });
});

it('the parts store: a rebuild appends what it renders, reads no record past the index, and writes the store anew once its unlisted records outweigh the listed', async () => {
  await withTemp(async (tmp) => {
    const data = path.join(tmp, 'data');
    const out = path.join(tmp, 'out');
    const store = path.join(out, PARTS_FILE);
    const inode = async () => (await stat(store)).ino;
    const rebuild = async (spec: FixtureSpec, revision: string) => {
      await writeFixture(data, spec);
      return build({ dataDir: data, outDir: out, revision });
    };
    // Every model's description, long: its records outweigh those of smallCatalog().
    const long = (s: FixtureSpec) => ({
      ...s,
      models: s.models!.map((m) => ({ ...m, description: { ...(m.description as object), en: 'x'.repeat(4000) } })),
    });
    const a = await rebuild(smallCatalog(), 'a');
    const all = a.parts.rendered;
    const [storeA, first] = [await readFile(store), await inode()];
    const indexA = Number(storeA.readBigUInt64BE(0)); // the header: where the index starts
    await appendFile(store, Buffer.alloc(4096, 7)); // what a killed build leaves: records past the index
    // Every model rendered again, appended after the records kept.
    expect((await rebuild(long(smallCatalog()), 'b')).parts).toEqual({ rendered: all, reused: 0 });
    expect(await inode()).toBe(first);
    expect((await readFile(store)).subarray(16, indexA)).toEqual(storeA.subarray(16, indexA));
    // One model rendered, appended; the others taken from the last build.
    expect((await rebuild(CHANGES[0]![1](long(smallCatalog())), 'c')).parts).toEqual({ rendered: 5, reused: all - 5 });
    expect(await inode()).toBe(first);
    // smallCatalog() again: its records are listed by no index any more; appended anew.
    expect((await rebuild(smallCatalog(), 'a2')).parts).toEqual({ rendered: all, reused: 0 });
    expect(await inode()).toBe(first);
    // Now the records no index lists outweigh the listed: a new store, the listed records copied into it.
    const e = await rebuild(CHANGES[0]![1](smallCatalog()), 'e');
    expect(e.parts).toEqual({ rendered: 5, reused: all - 5 });
    expect(await inode()).not.toBe(first);
    // It is the store a first build of the same data writes.
    const full = await build({ dataDir: data, outDir: path.join(tmp, 'full'), revision: 'e' });
    expect(full.parts).toEqual({ rendered: all, reused: 0 });
    expect(await readFile(store)).toEqual(await readFile(path.join(tmp, 'full', PARTS_FILE)));
  });
});

it('a parts store that is a symbolic link is not read, and what it names is not written to', async () => {
  await withTemp(async (tmp) => {
    const data = path.join(tmp, 'data');
    const out = path.join(tmp, 'out');
    const store = path.join(out, PARTS_FILE);
    const elsewhere = path.join(tmp, 'elsewhere');
    await writeFixture(data, smallCatalog());
    const a = await build({ dataDir: data, outDir: out, revision: REVISION, publishedAt: BEFORE });
    await copyFile(store, elsewhere);
    await rm(store);
    await symlink(elsewhere, store);
    const bytes = await readFile(elsewhere);
    await writeFixture(data, CHANGES[0]![1](smallCatalog()));
    const b = await build({ dataDir: data, outDir: out, revision: REVISION, publishedAt: AFTER });
    expect(b.parts).toEqual({ rendered: a.parts.rendered, reused: 0 });
    expect(await readFile(elsewhere)).toEqual(bytes);
    expect((await lstat(store)).isFile()).toBe(true); // the build's own store in its place
  });
});

it('--previous URL whose representations are damaged (cut short, other bytes, missing): made again, the same bytes', async () => {
  ensureCompiled();
  await withTemp(async (tmp) => {
    const data = path.join(tmp, 'data');
    const kept = path.join(tmp, 'kept');
    const root = path.join(tmp, 'remote');
    const remote = pathToFileURL(root).href;
    await writeFixture(data, smallCatalog());
    const a = await build({ dataDir: data, outDir: kept, revision: REVISION, publishedAt: BEFORE });
    const aManifest = await manifestOf(a);
    await publish({ from: kept, target: fileTarget(remote), keep: 3, concurrency: 4, say: () => {}, progress: null });
    // Three bodies no change below touches (gamma's details): a br object cut short, a gzip object of other bytes of
    // the same size, a br object gone.
    const gamma = aManifest.files.filter((f) => f.path.startsWith('api/v1/models/gamma/en.')).map((f) => f.sha256);
    const [x, y, z] = [...new Set(gamma)];
    const object = (sha: string) => path.join(root, objectKey(sha));
    const reps = aManifest.representations!;
    expect(z).toBeDefined();
    await truncate(object(reps[x!]!.br.sha256), 3);
    await writeFile(object(reps[y!]!.gzip.sha256), Buffer.alloc(reps[y!]!.gzip.bytes, 1));
    await writeFile(object(reps[z!]!.br.sha256), '');
    await truncate(object(reps[z!]!.br.sha256), 0);

    await writeFixture(data, CHANGES[0]![1](smallCatalog()));
    const again = { dataDir: data, revision: REVISION, publishedAt: AFTER };
    const full = await build({ ...again, outDir: path.join(tmp, 'full') });
    const overKept = await build({ ...again, outDir: kept });
    const onRunner = await build({ ...again, outDir: path.join(tmp, 'runner'), previousUrl: remote });
    await expectSameAsFull(onRunner, full, aManifest);
    expect(onRunner.stats.previousUnread).toBe(3);
    expect(onRunner.stats.previousUnreadWhy).toContain(`${remote}/objects/sha256/`);
    expect(onRunner.stats.encodedNew).toBe(overKept.stats.encodedNew + 3);
    expect(onRunner.stats.encodedReused).toBe(overKept.stats.encodedReused - 3);

    // The same over http (a static host over that folder), through the command: it says so, and builds the same.
    const host = await faultyHost(root);
    try {
      const out = path.join(tmp, 'runner-http');
      const r = await runCli(
        ['build', '--data', data, '--out', out, '--previous', host.url, '--quiet'].concat([
          '--revision',
          REVISION,
          '--published-at',
          AFTER,
        ]),
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(
        /warning: 3 representations of the previous publication could not be read and were compressed again/,
      );
      expect(r.stdout).toContain(
        `${onRunner.stats.encodedNew} bodies compressed, ${onRunner.stats.encodedReused} kept`,
      );
      // All but the inputs digests, which fold in the source of the code that assembles bodies: compiled, it differs.
      const [m1, m2] = await Promise.all(
        [onRunner.releaseDir, path.join(out, 'current')].map(async (d) => {
          const m = JSON.parse(await readFile(path.join(d, 'manifest.json'), 'utf8')) as Manifest;
          return { ...m, files: m.files.map(({ inputs: _, ...f }) => f) };
        }),
      );
      expect(m2).toEqual(m1);
      // Every representation read, two objects each, but never more than 64 requests at once (REMOTE_ROWS_AT_ONCE).
      const objects = [...host.seen.keys()].filter((p) => p.startsWith('/objects/')).length;
      expect(objects).toBeGreaterThan(64);
      expect(host.mostAtOnce).toBeLessThanOrEqual(64);
    } finally {
      await host.close();
    }
  });
});

it('a benchmark value that moves no rank renders only the models whose row or nearby rows it changes, and gives a full build’s bytes', async () => {
  await withTemp(async (tmp) => {
    // Nine models on one board, 90 down to 82: m9 is last, and the models that show it nearby are m7 and m8.
    const slugs = Array.from({ length: 9 }, (_, i) => `m${i + 1}`);
    const board = (last: number): FixtureSpec => ({
      ...smallCatalog(),
      models: slugs.map((s, i) => model(s, i + 1)),
      prices: [],
      speed: [],
      overrides: [],
      benchmarks: slugs.map((s, i) => ({
        model: s,
        metric: 'code.pass',
        lane: 'verified',
        value: i === 8 ? last : 90 - i,
        stderr: null,
        confidence: 1,
        eval_date: '2025-01-10',
        provenance: prov(200 + i),
      })),
    });
    const data = path.join(tmp, 'data');
    const out = path.join(tmp, 'out');
    const again = { dataDir: data, revision: REVISION, publishedAt: '2026-01-03T00:00:00.000Z' };
    await writeFixture(data, board(82));
    const first = await build({ ...again, outDir: out, publishedAt: BEFORE });
    // One model's description: its parts alone, once per lane it is in (no display override reaches it).
    const described = board(82);
    described.models![8]!.description = { en: 'm9, described anew.', zh: 'm9', ru: 'm9' };
    await writeFixture(data, described);
    const before = await build({ ...again, outDir: out, publishedAt: AFTER });
    const perModel = before.parts.rendered;
    expect(perModel).toBeGreaterThan(0);
    // m9's value, still last: m9, m8 and m7 (whose nearby rows show it) are rendered; the six above them are not.
    const moved = board(81.5);
    moved.models![8]!.description = described.models![8]!.description;
    await writeFixture(data, moved);
    const r = await build({ ...again, outDir: out });
    expect(r.parts).toEqual({ rendered: 3 * perModel, reused: first.parts.rendered - 3 * perModel });
    const full = await build({ ...again, outDir: path.join(tmp, 'full') });
    await expectSameAsFull(r, full, await manifestOf(before));
  });
});
