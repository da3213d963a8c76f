// `modelpub build --previous URL` on a fresh runner (an empty --out): the live publication is read from where
// `modelpub publish` wrote it, so the build gives the same bodies, revisions, Last-Modified, change list and changes
// feed as a build over the kept dist/. Compared on a small catalog: unchanged, then one English description changed.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { build, type BuildResult } from '../src/pipeline/build.js';
import type { ChangeList, Manifest } from '../src/publication/files.js';
import { publish } from '../src/publish/publish.js';
import { objectKey } from '../src/publication/remote.js';
import { fileTarget } from '../src/publication/targets/file.js';
import { ensureCompiled, runCli } from './helpers/cli.js';
import { faultyHost } from './helpers/faulty-host.js';
import { smallCatalog, writeFixture } from './helpers/fixture.js';
import { readAll } from './helpers/tree.js';

let tmp: string;
let data: string;
let remote: string;
let host: Server;
let hostUrl: string;
let fresh = 0;
/** Paths the static host was asked for. */
const asked: string[] = [];

const kept = () => path.join(tmp, 'dist');
/** A new, empty --out: what a CI runner starts with. */
const freshOut = () => path.join(tmp, `fresh-${++fresh}`);
const releaseFiles = async (r: BuildResult) => ({
  manifest: JSON.parse(await readFile(path.join(r.releaseDir, 'manifest.json'), 'utf8')) as Manifest,
  meta: await readFile(path.join(r.releaseDir, 'publication.json'), 'utf8'),
  changes: JSON.parse(await readFile(path.join(r.releaseDir, 'changes.json'), 'utf8')) as ChangeList,
});
const publishFrom = (out: string) =>
  publish({ from: out, target: fileTarget(remote), keep: 3, concurrency: 4, say: () => {}, progress: null });

beforeAll(async () => {
  ensureCompiled();
  tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-previous-'));
  data = path.join(tmp, 'data');
  remote = pathToFileURL(path.join(tmp, 'remote')).href;
  await writeFixture(data, smallCatalog());
  await build({ dataDir: data, outDir: kept() });
  await publishFrom(kept());
  // A static host over the remote folder, as nginx or a CDN would serve it.
  host = createServer(async (req, res) => {
    const pathname = decodeURIComponent(new URL(req.url!, 'http://h').pathname);
    asked.push(pathname);
    const file = path.join(tmp, 'remote', pathname);
    try {
      const body = await readFile(file);
      res.writeHead(200).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
  hostUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  await new Promise((r) => host?.close(r));
  await rm(tmp, { recursive: true, force: true });
});

/** The --out a build wrote its release into (<out>/releases/<n>-<revision>). */
const outOf = (r: BuildResult) => path.dirname(path.dirname(r.releaseDir));
const liveFiles = async (out: string) => {
  const dir = path.join(out, 'current');
  return {
    manifest: await readFile(path.join(dir, 'manifest.json'), 'utf8'),
    meta: await readFile(path.join(dir, 'publication.json'), 'utf8'),
  };
};

it('unchanged data into an empty --out: the live release again, byte for byte (0 added, 0 changed, 0 removed)', async () => {
  const live = await liveFiles(kept());
  asked.length = 0;
  const r = await build({ dataDir: data, outDir: freshOut(), previousUrl: hostUrl });
  // Written (publish runs from it, and then uploads nothing), not skipped as "nothing to publish".
  expect(r.semantic.unchanged).toBe(false);
  expect([r.changes.added, r.changes.changed, r.changes.removed]).toEqual([[], [], []]);
  const built = await releaseFiles(r);
  expect(JSON.stringify(built.manifest)).toBe(live.manifest);
  expect(built.meta).toBe(live.meta);
  // Read from the host: the pointer, the manifest, two bodies (the semantic snapshot and the changes feed), and each
  // representation once (its pack is made again on the runner, not compressed again); no other body.
  expect(asked.filter((p) => !p.startsWith('/objects/'))).toEqual([
    '/current.json',
    expect.stringMatching(/^\/revisions\/r[0-9a-f]{12}\/manifest-[0-9a-f]{64}\.json\.gz$/),
  ]);
  const reps = Object.values(built.manifest.representations!).flatMap((x) => [x.br.sha256, x.gzip.sha256]);
  const repKeys = new Set(reps.map((sha) => `/${objectKey(sha)}`));
  const objects = asked.filter((p) => p.startsWith('/objects/'));
  expect(objects.filter((p) => !repKeys.has(p))).toHaveLength(2);
  expect(objects.filter((p) => repKeys.has(p)).sort()).toEqual([...repKeys].sort());
  expect([r.stats.encodedNew, r.stats.encodedReused]).toEqual([0, repKeys.size / 2]);
  const again = await publishFrom(outOf(r));
  expect(again.uploaded.objects).toBe(0);
});

it('unchanged data, its large bodies made in chunks (a low largeBodyBytes): the live release again, byte for byte', async () => {
  const r = await build({ dataDir: data, outDir: freshOut(), previousUrl: hostUrl, largeBodyBytes: 1 });
  expect(r.stats.streamed).toBeGreaterThan(0); // the catalog bodies and list artifacts, named with the live revision
  expect(r.stats.rewritten).toBeGreaterThan(0);
  expect(JSON.stringify((await releaseFiles(r)).manifest)).toBe((await liveFiles(kept())).manifest);
  const live = await readAll(path.join(kept(), 'current'));
  const built = await readAll(r.releaseDir);
  for (const [file, bytes] of live)
    if (/^(api|artifacts)\//.test(file)) expect(built.get(file)?.equals(bytes), file).toBe(true);
});

it('after one description change: the same manifest, change list and changes feed as a build over the kept dist/', async () => {
  const spec = smallCatalog();
  await writeFixture(data, {
    ...spec,
    models: spec.models!.map((m) =>
      m.slug === 'beta' ? { ...m, description: { ...(m.description as object), en: 'beta, described again.' } } : m,
    ),
  });
  const onRunner = await build({ dataDir: data, outDir: freshOut(), previousUrl: remote });
  const overKept = await build({ dataDir: data, outDir: kept() });
  const a = await releaseFiles(onRunner);
  const b = await releaseFiles(overKept);
  expect(a.changes.changed.length).toBeGreaterThan(0);
  expect(a.changes.changed).toContain('api/v1/models/beta/en.verified.public.base.json');
  expect(a.changes).toEqual(b.changes);
  // Paths, hashes, revisions, Last-Modified, representations and where they are; the feed and snapshot included:
  // the runner made the previous pack again from the remote's representations and linked it, as the kept dist/ did.
  expect(a.manifest).toEqual(b.manifest);
  expect(a.manifest.packs).toHaveLength(2);
  expect(a.meta).toBe(b.meta);
  expect(onRunner.semantic.summary).toBe(overKept.semantic.summary);
  expect(onRunner.semantic.summary).toContain('beta');
  // Unchanged bodies kept the first revision; the fresh runner wrote them (no release to link from).
  const kept0 = a.manifest.files.filter((f) => f.revision !== onRunner.revision);
  expect(kept0.length).toBeGreaterThan(a.changes.changed.length);
  expect(onRunner.stats.linkedFromPrevious).toBe(0);
  // Published from the runner, the remote's feed is what a kept-dist build gives; a diff against it sees nothing.
  await publishFrom(outOf(onRunner));
  const diff = await runCli(['diff', '--data', data, '--against', hostUrl]);
  expect([diff.code, diff.stdout.trim()]).toEqual([0, 'no changes']);
  expect(diff.stderr).toContain(`(compared with revision ${onRunner.revision} at ${hostUrl})`);
  // --out's live release is the published one: it is continued from (linked), and a build of it is "nothing to do".
  const same = await build({ dataDir: data, outDir: outOf(onRunner), previousUrl: remote });
  expect(same.semantic.unchanged).toBe(true);
});

it('a --previous with nothing published builds a first publication, and says so; bad options are usage errors', async () => {
  const empty = pathToFileURL(path.join(tmp, 'empty-remote')).href;
  const r = await runCli(['build', '--data', data, '--out', freshOut(), '--previous', empty, '--quiet']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain(
    `--previous ${empty} has nothing published yet (no current.json): built as a first publication`,
  );
  expect(r.stdout).toMatch(/^first publication: \d+ models$/m);
  const bad = await runCli(['build', '--data', data, '--out', freshOut(), '--previous', 'ftp://x/y']);
  expect([bad.code, bad.stderr]).toEqual([
    1,
    expect.stringContaining("option '--previous <url>' argument 'ftp://x/y' is invalid"),
  ]);
  const endpoint = await runCli(['build', '--data', data, '--previous', remote, '--endpoint', 'http://127.0.0.1:9']);
  expect([endpoint.code, endpoint.stderr.trim()]).toEqual([
    2,
    `modelpub: --endpoint is for an s3:// --previous, not ${remote}`,
  ]);
});

it('build --previous and diff --against a host that never answers fail by the read bounds, its password masked', async () => {
  const silent = await faultyHost(path.join(tmp, 'remote'));
  silent.fault.set('*', 'silent');
  silent.auth = 'user:s3cr3t-t0ken';
  const url = silent.url.replace('http://', 'http://user:s3cr3t-t0ken@');
  const shown = `GET ${silent.url.replace('http://', 'http://user:***@')}current.json`;
  try {
    // The defaults: nothing in the first 10 s is below the minimum rate (bounds.ts), and past the pointer's deadline.
    for (const args of [
      ['build', '--data', data, '--out', freshOut(), '--previous', url, '--quiet'],
      ['diff', '--data', data, '--against', url],
    ]) {
      const r = await runCli(args);
      expect(r.code, r.stderr).not.toBe(0);
      expect(r.stderr).toContain(`${shown}: `);
      expect(r.stderr).toMatch(/current\.json: (slower than the minimum rate|no complete answer within 10000 ms)/);
      expect(`${r.stdout}${r.stderr}`).not.toContain('s3cr3t-t0ken');
    }
  } finally {
    await silent.close();
  }
});
