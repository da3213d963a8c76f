// What `modelpub publish` checks on the remote before it relies on it, and what it repairs: a truncated or altered
// object (re-uploaded by the next publish of the same or a newer release), a damaged manifest (uploaded again, and
// never pointed at), the objects a damaged manifest named (not left orphaned), and a planted manifest whose hashes
// are paths (refused, and nothing outside the remote touched). Over file:// and the S3 API of s3rver.
import { mkdir, mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../src/publication/integrity.js';
import { LOCK_KEY, manifestKey, objectKey, POINTER_KEY } from '../src/publication/remote.js';
import { remoteLayout } from '../src/publication/remote-source.js';
import { openSource } from '../src/publication/source.js';
import { fileTarget } from '../src/publication/targets/file.js';
import { openTarget, type RemoteOptions } from '../src/publication/targets/index.js';
import { checkedKey } from '../src/publication/targets/keys.js';
import type { RemoteTarget } from '../src/publication/targets/types.js';
import { publish, rollback } from '../src/publish/publish.js';
import { ensureCompiled } from './helpers/cli.js';
import { type Built, buildReleases } from './helpers/releases.js';
import { S3_ENV, type S3Server, startS3, written } from './helpers/s3rver.js';

let tmp: string;
let builds: Record<'A' | 'B', Built>;

beforeAll(async () => {
  ensureCompiled();
  tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-publish-integrity-'));
  builds = await buildReleases(tmp, [
    ['A', null],
    ['B', 'alpha', 'alpha, described again for build B.'],
  ]);
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const run = async (from: Built, target: RemoteTarget, keep = 3) => {
  const said: string[] = [];
  const r = await publish({ from: from.dir, target, keep, concurrency: 4, say: (l) => said.push(l), progress: null });
  return { ...r, said: said.join('\n') };
};

const manifestKeyOfBuild = (b: Built) => manifestKey({ revision: b.revision, sha256: sha256Hex(b.manifestBytes) });

/** The live publication read back through `url`, every object checked against its sha256; its revision. */
async function readBackWhole(url: string, o: RemoteOptions = {}): Promise<string> {
  const source = await openSource(url, o);
  try {
    const live = (await source.live())!;
    const seen = new Set<string>();
    for (const f of live.manifest.files) if (!seen.has(f.sha256) && seen.add(f.sha256)) await live.read(f);
    for (const r of Object.values(live.manifest.representations ?? {}))
      for (const x of [r.br, r.gzip]) await live.read({ path: objectKey(x.sha256), ...x });
    return live.meta.publicationRevision;
  } finally {
    await source.close();
  }
}

/** Objects of A that B does not name, and objects both name: the first of each, sorted for a stable choice. */
const onlyA = () => [...builds.A.objects].filter((h) => !builds.B.objects.has(h)).sort();
const shared = () => [...builds.A.objects].filter((h) => builds.B.objects.has(h)).sort();

/** A target whose puts are recorded. */
function recording(t: RemoteTarget) {
  const puts: string[] = [];
  return {
    puts,
    target: {
      ...t,
      async put(key, body, o) {
        await t.put(key, body, o);
        puts.push(key);
      },
    } as RemoteTarget,
  };
}

describe('file://', () => {
  it('a truncated object of the live publication is uploaded again by the same release, and by the next', async () => {
    const root = path.join(tmp, 'objects');
    const url = pathToFileURL(root).href;
    await run(builds.A, fileTarget(url));
    // Truncated: the size tells.
    const [cut] = shared();
    await truncate(path.join(root, objectKey(cut!)), 3);
    const again = recording(fileTarget(url));
    const r = await run(builds.A, again.target);
    expect([r.alreadyLive, again.puts]).toEqual([true, [objectKey(cut!)]]);
    expect(r.said).toContain(`repair: 1 of them are on the remote damaged (first: ${objectKey(cut!)})`);
    expect(await readBackWhole(url)).toBe(builds.A.revision);
    // Altered in place, its size kept: only its hash tells, and a folder gives it by a read.
    const file = path.join(root, objectKey(cut!));
    const body = await readFile(file);
    body[0] = body[0]! ^ 1;
    await writeFile(file, body);
    const next = recording(fileTarget(url));
    const b = await run(builds.B, next.target);
    expect(next.puts).toContain(objectKey(cut!));
    expect(b.uploaded.objects).toBe([...builds.B.objects].filter((h) => !builds.A.objects.has(h)).length + 1);
    expect(sha256Hex(await readFile(file))).toBe(cut);
    expect(await readBackWhole(url)).toBe(builds.B.revision);
  });

  it('a live manifest damaged in place (its size kept) is uploaded again, and the pointer names it whole', async () => {
    const root = path.join(tmp, 'manifest');
    const url = pathToFileURL(root).href;
    await run(builds.A, fileTarget(url));
    const key = manifestKeyOfBuild(builds.A);
    const stored = await readFile(path.join(root, key));
    const size = stored.length;
    stored.fill(0x41, 20, 60);
    await writeFile(path.join(root, key), stored);
    const pointer = await readFile(path.join(root, POINTER_KEY));
    const r = await run(builds.A, fileTarget(url));
    expect(r.manifestUploaded).toBe(true);
    expect(r.said).toContain('repair: the manifest is on the remote damaged');
    expect(r.said).not.toContain('manifest: already there');
    expect((await readFile(path.join(root, key))).length).not.toBe(0);
    expect((await readFile(path.join(root, POINTER_KEY))).equals(pointer)).toBe(true);
    const { bytes } = await remoteLayout(fileTarget(url)).manifest({
      revision: builds.A.revision,
      sha256: sha256Hex(builds.A.manifestBytes),
    });
    expect(bytes.equals(builds.A.manifestBytes)).toBe(true);
    expect(size).toBeGreaterThan(60);
    expect(await readBackWhole(url)).toBe(builds.A.revision);
  });

  it('the manifest an interrupted publish left, damaged, is uploaded again before the pointer names it', async () => {
    const root = path.join(tmp, 'interrupted');
    const url = pathToFileURL(root).href;
    await run(builds.A, fileTarget(url));
    // B's manifest is there (a publish of B stopped after writing it), damaged at its full size.
    const key = manifestKeyOfBuild(builds.B);
    const good = gzipSync(builds.B.manifestBytes, { level: 9 });
    await mkdir(path.dirname(path.join(root, key)), { recursive: true });
    await writeFile(path.join(root, key), Buffer.alloc(good.length, 0x42));
    const rec = recording(fileTarget(url));
    const r = await run(builds.B, rec.target);
    expect(r.manifestUploaded).toBe(true);
    expect(rec.puts.indexOf(key)).toBeGreaterThanOrEqual(0);
    expect(rec.puts.indexOf(key)).toBeLessThan(rec.puts.indexOf(POINTER_KEY));
    expect(await readBackWhole(url)).toBe(builds.B.revision);
  });

  it('a rollback uploads its manifest again when the one there is damaged at its size', async () => {
    const root = path.join(tmp, 'rollback');
    const url = pathToFileURL(root).href;
    await run(builds.A, fileTarget(url));
    await run(builds.B, fileTarget(url));
    const said: string[] = [];
    await rollback({ target: fileTarget(url), revision: builds.A.revision, dryRun: true, say: (l) => said.push(l) });
    const [, key, bytes] = /^would upload (\S+) \((\d+) bytes/m.exec(said.join('\n'))!;
    await mkdir(path.dirname(path.join(root, key!)), { recursive: true });
    await writeFile(path.join(root, key!), Buffer.alloc(Number(bytes), 0x43));
    const r = await rollback({ target: fileTarget(url), revision: builds.A.revision, say: () => {} });
    expect(r.moved).toBe(true);
    expect(await readBackWhole(url)).toBe(builds.A.revision);
  });

  it('a truncated live manifest: the next publish deletes it with the objects no kept publication names', async () => {
    const root = path.join(tmp, 'orphans');
    const url = pathToFileURL(root).href;
    await run(builds.A, fileTarget(url));
    const key = manifestKeyOfBuild(builds.A);
    await truncate(path.join(root, key), 100);
    // A user's file in objects/ that is no object of the layout stays.
    await writeFile(path.join(root, 'objects/sha256/README'), 'mine');
    const r = await run(builds.B, fileTarget(url));
    const left = await fileTarget(url).list('objects/');
    expect(left.map((e) => e.key).sort()).toEqual(
      [...[...builds.B.objects].map(objectKey), 'objects/sha256/README'].sort(),
    );
    const gone = onlyA();
    expect(gone.length).toBeGreaterThan(0);
    expect(r.deleted).toEqual({ objects: gone.length, bytes: expect.any(Number), manifests: 1 });
    expect(r.said).toContain(`warning: kept publication ${builds.A.revision} cannot be read back`);
    expect(r.said).toContain(`warning: refused ${key}`);
    expect(await fileTarget(url).list('revisions/')).toEqual([
      { key: manifestKeyOfBuild(builds.B), bytes: expect.any(Number) },
    ]);
    expect(await readBackWhole(url)).toBe(builds.B.revision);
  });

  it('a planted manifest whose sha256 is a path is refused, naming its key; the file it names survives', async () => {
    const base = path.join(tmp, 'planted', 'a', 'b');
    const root = path.join(base, 'remote');
    const url = pathToFileURL(root).href;
    // objects/sha256/../../../../victim/secret.txt, from the root: two folders above it.
    const victim = path.join(tmp, 'planted', 'a', 'victim', 'secret.txt');
    await mkdir(path.dirname(victim), { recursive: true });
    await writeFile(victim, 'do not delete');
    await run(builds.A, fileTarget(url));
    const entry = builds.A.manifest.files[0]!;
    const evil = Buffer.from(
      JSON.stringify({
        schemaVersion: builds.A.manifest.schemaVersion,
        publicationRevision: 'evil',
        publishedAt: builds.A.manifest.publishedAt,
        files: [{ ...entry, sha256: '../../../victim/secret.txt', bytes: 13 }],
      }),
    );
    const key = manifestKey({ revision: 'evil', sha256: sha256Hex(evil) });
    await mkdir(path.dirname(path.join(root, key)), { recursive: true });
    await writeFile(path.join(root, key), gzipSync(evil));
    const r = await run(builds.B, fileTarget(url));
    expect(await readFile(victim, 'utf8').catch(() => 'deleted')).toBe('do not delete');
    expect(r.said).toContain(`warning: refused ${key}: ${url}/${key}: files.0.sha256: must be a sha256 hex digest`);
    expect(await readBackWhole(url)).toBe(builds.B.revision);
  });

  it('the folder target refuses any key that would leave its root', async () => {
    const root = path.join(tmp, 'keys', 'remote');
    const outside = path.join(tmp, 'keys', 'outside.txt');
    await mkdir(root, { recursive: true });
    await writeFile(outside, 'outside');
    const t = fileTarget(pathToFileURL(root).href);
    for (const key of ['../outside.txt', 'objects/../../outside.txt', '/etc/passwd', 'a//b', './x', '.modelpub-tmp/x'])
      expect(() => checkedKey(key, 'here')).toThrow(`here: refused the key ${JSON.stringify(key)}`);
    await expect(t.get('../outside.txt')).rejects.toThrow('refused the key "../outside.txt"');
    await expect(t.delete(['objects/sha256/../../../outside.txt'])).rejects.toThrow('refused the key');
    await expect(
      t.put('../outside.txt', Buffer.from('x'), { contentType: 'text/plain', cacheControl: 'no-store' }),
    ).rejects.toThrow('refused the key');
    await expect(t.sizes(['../outside.txt'])).rejects.toThrow('refused the key');
    expect(await readFile(outside, 'utf8')).toBe('outside');
    expect(checkedKey('objects/sha256/ab/', 'here')).toBe('objects/sha256/ab/');
  });
});

describe('s3:// against s3rver', () => {
  let s3: S3Server;
  let to: string;
  const savedEnv = { ...process.env };
  const opts = (): RemoteOptions => ({ endpoint: s3.endpoint, region: 'us-east-1' });
  beforeAll(async () => {
    Object.assign(process.env, S3_ENV);
    s3 = await startS3();
    to = `s3://${s3.bucket}/site`;
  });
  afterAll(async () => {
    await s3?.stop();
    process.env = savedEnv;
  });

  it('a truncated object and a damaged manifest are uploaded again; the pointer names only whole ones', async () => {
    const target = await openTarget(to, opts());
    try {
      await run(builds.A, target);
      const [cut] = shared();
      const put = (key: string, body: Buffer) => target.put(key, body, { contentType: 'x/y', cacheControl: 'no' });
      const full = (await target.get(objectKey(cut!)))!;
      await put(objectKey(cut!), full.subarray(0, 3));
      const mkey = manifestKeyOfBuild(builds.A);
      const stored = (await target.get(mkey))!;
      await put(mkey, Buffer.alloc(stored.length, 0x41));
      s3.requests.length = 0;
      const r = await run(builds.A, target);
      expect([r.manifestUploaded, r.uploaded.objects, r.pointerMoved]).toEqual([true, 1, false]);
      const puts = written(s3.requests).map((k) => k.slice('site/'.length));
      // (and the publish lock, taken and released)
      expect(puts.sort()).toEqual([LOCK_KEY, mkey, objectKey(cut!)].sort());
      expect(sha256Hex((await target.get(objectKey(cut!)))!)).toBe(cut);
      expect(await readBackWhole(to, opts())).toBe(builds.A.revision);
      // Truncated again: the next release repairs it too.
      await put(objectKey(cut!), full.subarray(0, 5));
      const b = await run(builds.B, target);
      expect(b.said).toContain(`first: ${objectKey(cut!)}`);
      expect(await readBackWhole(to, opts())).toBe(builds.B.revision);
    } finally {
      await target.close();
    }
  });
});
