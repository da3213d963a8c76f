// Publishes that meet on one remote (issue 33, points 5 and 9): real `modelpub publish` processes over a file://
// folder and over s3rver, one of them held between planning and uploading by MODELPUB_TEST_PAUSE_AFTER_PLAN (it waits
// on a FIFO the test opens when it chooses), so every interleaving here is set by the test, never by the clock.
import { execFileSync, spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { mkdir, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_FORMAT } from '../src/publication/lock.js';
import { LOCK_KEY, objectKey, objectsOf, POINTER_KEY, pointerBytes, TMP_FOLDER } from '../src/publication/remote.js';
import { remoteLayout } from '../src/publication/remote-source.js';
import { fileTarget } from '../src/publication/targets/file.js';
import { openTarget } from '../src/publication/targets/index.js';
import type { RemoteTarget } from '../src/publication/targets/types.js';
import { publish } from '../src/publish/publish.js';
import { type CliResult, ensureCompiled, runCli, spawnCli } from './helpers/cli.js';
import { type Built, buildReleases } from './helpers/releases.js';
import { S3_ENV, type S3Server, startS3 } from './helpers/s3rver.js';
import { readAll, sha256 } from './helpers/tree.js';

let tmp: string;
/** Three releases of one small catalog, each one English description apart from the one before. */
let releases: Record<'A' | 'B' | 'C', Built>;

beforeAll(async () => {
  ensureCompiled();
  tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-race-'));
  releases = await buildReleases(tmp, [
    ['A', null],
    ['B', 'alpha', 'alpha is a model, described again for B.'],
    ['C', 'alpha', 'alpha is a model, described again for C.'],
  ]);
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** Every file under a folder with the sha256 of its bytes: two equal snapshots mean nothing was written or deleted. */
async function snapshot(dir: string): Promise<string[]> {
  return [...(await readAll(dir))].map(([p, b]) => `${p} ${sha256(b)}`).sort();
}

let n = 0;
const freshRemote = async () => {
  const root = path.join(tmp, `remote-${++n}`);
  return { root, url: pathToFileURL(root).href };
};

describe('publish --dry-run and temp files (point 9)', () => {
  it('a dry run changes nothing on the remote, while another publish has files being written there', async () => {
    const { root, url } = await freshRemote();
    expect((await runCli(['publish', '--from', releases.A.dir, '--to', url, '--quiet'])).code).toBe(0);
    // Another publish's file being written, as the file:// target names them.
    const other = path.join(root, TMP_FOLDER, '999999-0123456789ab');
    await mkdir(other, { recursive: true });
    await writeFile(path.join(other, '0'), 'half an object');
    const before = await snapshot(root);
    const dry = await runCli(['publish', '--from', releases.B.dir, '--to', url, '--dry-run', '--keep', '1']);
    expect([dry.code, dry.stderr]).toEqual([0, '']);
    expect(dry.stdout).toContain('dry run: nothing was uploaded, written or deleted');
    expect(await snapshot(root)).toEqual(before);
    // A real publish beside it removes its own temp files only.
    const real = await runCli(['publish', '--from', releases.B.dir, '--to', url, '--quiet']);
    expect([real.code, real.stderr]).toEqual([0, '']);
    expect(await readFile(path.join(other, '0'), 'utf8')).toBe('half an object');
    expect((await snapshot(root)).filter((l) => l.startsWith(`${TMP_FOLDER}/`))).toEqual([
      `${TMP_FOLDER}/999999-0123456789ab/0 ${sha256('half an object')}`,
    ]);
  });

  it('--to a folder that holds no publication but other files is refused, file:/// too', async () => {
    const { root, url } = await freshRemote();
    await mkdir(root, { recursive: true });
    await writeFile(path.join(root, 'notes.txt'), 'mine');
    const before = await snapshot(root);
    for (const args of [[], ['--dry-run']]) {
      const r = await runCli(['publish', '--from', releases.A.dir, '--to', url, ...args]);
      expect([r.code, r.stderr]).toEqual([
        2,
        `modelpub: --to ${url} holds no publication but files that modelpub did not write (notes.txt): ` +
          'choose an empty or new folder\n',
      ]);
    }
    expect(await snapshot(root)).toEqual(before);
    const slash = await runCli(['publish', '--from', releases.A.dir, '--to', 'file:///']);
    expect(slash.code).toBe(2);
    expect(slash.stderr).toMatch(
      /^modelpub: --to file:\/\/\/ holds no publication but files that modelpub did not write/,
    );
  });
});

/**
 * A publish held after its plan: it has said so on stderr (`paused`), and goes on when `resume()` opens the FIFO and
 * closes it. If it ends first, the FIFO is opened for reading too, so that `resume()` never waits for a reader.
 */
function pausedPublish(args: string[], env: NodeJS.ProcessEnv = {}) {
  const fifo = path.join(tmp, `pause-${++n}`);
  execFileSync('mkfifo', [fifo]);
  const child = spawnCli(['publish', ...args], { ...env, MODELPUB_TEST_PAUSE_AFTER_PLAN: fifo });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  const done = new Promise<CliResult>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  const paused = new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (d) => {
      stderr += d;
      if (stderr.includes('paused after planning')) resolve();
    });
    void done.then((r) => reject(new Error(`the publish ended before its pause (${r.code}): ${r.stderr}`)));
  });
  void done.then(async () => (await open(fifo, constants.O_RDONLY | constants.O_NONBLOCK)).close());
  return {
    pid: child.pid!,
    paused,
    done,
    resume: async () => (await open(fifo, 'w')).close(),
  };
}

/**
 * The live publication at a remote, each object its manifest names looked for with its size: the pointer must never
 * name a publication with a missing object.
 */
async function liveWhole(target: RemoteTarget) {
  const remote = remoteLayout(target);
  const pointer = (await remote.pointer())!;
  const { manifest } = await remote.manifest({
    revision: pointer.live.publication.publicationRevision,
    sha256: pointer.live.manifest.sha256,
    bytes: pointer.live.manifest.bytes,
  });
  const objects = [...objectsOf(manifest).values()];
  const sizes = await target.sizes(objects.map((o) => objectKey(o.sha256)));
  return {
    revision: pointer.live.publication.publicationRevision,
    kept: pointer.previous.map((p) => p.publication.publicationRevision),
    missing: objects.filter((o) => sizes.get(objectKey(o.sha256)) !== o.bytes).length,
    lock: (await target.getTagged(LOCK_KEY)) !== null,
  };
}

const lockBody = (o: { host: string; pid: number; expiresAt: string }) =>
  `${JSON.stringify({
    format: LOCK_FORMAT,
    token: 'someone-else',
    owner: { host: o.host, pid: o.pid, action: 'publish r-other' },
    acquiredAt: '2026-01-01T00:00:00.000Z',
    expiresAt: o.expiresAt,
  })}\n`;

describe('two publishes at once, over file:// (point 5)', () => {
  it('a publish that finds the lock held refuses (exit 75, naming its holder); the holder goes live whole', async () => {
    const { root, url } = await freshRemote();
    expect((await runCli(['publish', '--from', releases.A.dir, '--to', url, '--quiet'])).code).toBe(0);
    const d = pausedPublish(['--from', releases.B.dir, '--to', url, '--quiet', '--keep', '1']);
    await d.paused;
    const before = await snapshot(root);
    const e = await runCli(['publish', '--from', releases.C.dir, '--to', url, '--quiet', '--keep', '1']);
    expect(e.code).toBe(75);
    expect(e.stderr).toContain(
      `modelpub: another publish holds the lock on ${url}: publish ${releases.B.revision} by pid ${d.pid} on ${hostname()}`,
    );
    expect(e.stdout).not.toContain('live');
    expect(await snapshot(root)).toEqual(before);
    await d.resume();
    const dr = await d.done;
    expect([dr.code, dr.stdout]).toEqual([0, expect.stringContaining(`live: ${releases.B.revision} at ${url}`)]);
    const t = fileTarget(url);
    expect(await liveWhole(t)).toEqual({ revision: releases.B.revision, kept: [], missing: 0, lock: false });
    // Once it is done, the refused one goes through.
    expect((await runCli(['publish', '--from', releases.C.dir, '--to', url, '--quiet', '--keep', '1'])).code).toBe(0);
    expect(await liveWhole(t)).toEqual({ revision: releases.C.revision, kept: [], missing: 0, lock: false });
  });

  it('a pointer moved since the plan (by a process that took no lock) is not overwritten', async () => {
    const { url } = await freshRemote();
    const target = fileTarget(url);
    const say = () => {};
    await publish({ from: releases.A.dir, target, keep: 3, concurrency: 4, say, progress: null });
    await publish({ from: releases.C.dir, target, keep: 3, concurrency: 4, say, progress: null });
    const layout = remoteLayout(target);
    const planned = (await layout.pointer())!;
    // An older modelpub (no lock) rolls back to A while this publish is between its plan and its uploads.
    const rolledBack = { ...planned, live: planned.previous[0]!, previous: [planned.live] };
    const moveIt = async () =>
      target.put(POINTER_KEY, pointerBytes(rolledBack), { contentType: 'application/json', cacheControl: 'x' });
    await expect(
      publish({ from: releases.B.dir, target, keep: 3, concurrency: 4, say, progress: null, afterPlan: moveIt }),
    ).rejects.toThrow(
      `the pointer of ${url} changed since this publish planned (live then: ${releases.C.revision}, now: ` +
        `${releases.A.revision}): another publish or rollback moved it; the pointer was not moved: run again`,
    );
    expect(await layout.pointer()).toEqual(rolledBack);
    expect(await liveWhole(target)).toMatchObject({ revision: releases.A.revision, missing: 0, lock: false });
  });

  it('a stale lock is taken over (expired, or its process gone from this host); a live or unreadable one is not', async () => {
    const { root, url } = await freshRemote();
    expect((await runCli(['publish', '--from', releases.A.dir, '--to', url, '--quiet'])).code).toBe(0);
    const lock = path.join(root, LOCK_KEY);
    const future = '2999-01-01T00:00:00.000Z';
    // A live lock of another host: refused, and left as it was.
    await writeFile(lock, lockBody({ host: 'ci-runner-7', pid: 4242, expiresAt: future }));
    const live = await runCli(['publish', '--from', releases.B.dir, '--to', url]);
    expect([live.code, live.stderr]).toEqual([
      75,
      `modelpub: another publish holds the lock on ${url}: publish r-other by pid 4242 on ci-runner-7, since ` +
        `2026-01-01T00:00:00.000Z, until ${future}; nothing was changed. Run again once it is done; if that process ` +
        `is gone, delete ${url}/${LOCK_KEY}\n`,
    ]);
    expect(await readFile(lock, 'utf8')).toBe(lockBody({ host: 'ci-runner-7', pid: 4242, expiresAt: future }));
    // Unreadable: never taken over (who holds it is not known).
    await writeFile(lock, '{"half');
    const torn = await runCli(['publish', '--from', releases.B.dir, '--to', url]);
    expect([torn.code, torn.stderr]).toEqual([75, expect.stringContaining(`${url}/${LOCK_KEY} is there but not JSON`)]);
    // Expired: taken over, said, and released at the end.
    await writeFile(lock, lockBody({ host: 'ci-runner-7', pid: 4242, expiresAt: '2026-01-01T00:30:00.000Z' }));
    const expired = await runCli(['publish', '--from', releases.B.dir, '--to', url, '--quiet']);
    expect([expired.code, expired.stderr]).toEqual([0, '']);
    expect(expired.stdout).toContain(
      `took over the publish lock of ${url}: it expired at 2026-01-01T00:30:00.000Z (publish r-other by pid 4242`,
    );
    // This host, a process that has ended.
    const gone = spawn(process.execPath, ['-e', '']);
    const pid = gone.pid!;
    await new Promise((r) => gone.once('exit', r));
    await writeFile(lock, lockBody({ host: hostname(), pid, expiresAt: future }));
    const dead = await runCli(['publish', '--from', releases.C.dir, '--to', url, '--quiet']);
    expect([dead.code, dead.stderr]).toEqual([0, '']);
    expect(dead.stdout).toContain(`took over the publish lock of ${url}: its process is gone from this host`);
    expect(await liveWhole(fileTarget(url))).toMatchObject({ revision: releases.C.revision, missing: 0, lock: false });
  });
});

describe('two publishes at once, over s3rver (point 5)', () => {
  let s3: S3Server;
  let to: string;
  const savedEnv = { ...process.env };
  const args = () => ['--to', to, '--endpoint', s3.endpoint, '--region', 'us-east-1', '--quiet'];
  const target = () => openTarget(to, { endpoint: s3.endpoint, region: 'us-east-1' });
  beforeAll(async () => {
    Object.assign(process.env, S3_ENV);
    s3 = await startS3();
  });
  afterAll(async () => {
    await s3?.stop();
    process.env = savedEnv;
  });

  it('conditional PUT (If-None-Match: *) keeps the second out (exit 75); the first goes live whole', async () => {
    to = `s3://${s3.bucket}/locked`;
    expect((await runCli(['publish', '--from', releases.A.dir, ...args()], S3_ENV)).code).toBe(0);
    const lockPut = s3.requests.find((q) => q.method === 'PUT' && q.key === `locked/${LOCK_KEY}`);
    expect(lockPut?.condition).toBe('If-None-Match: *');
    const d = pausedPublish(['--from', releases.B.dir, ...args(), '--keep', '1'], S3_ENV);
    await d.paused;
    const e = await runCli(['publish', '--from', releases.C.dir, ...args(), '--keep', '1'], S3_ENV);
    expect([e.code, e.stderr]).toEqual([
      75,
      expect.stringContaining(
        `another publish holds the lock on s3://${s3.bucket}/locked: publish ${releases.B.revision} by pid ${d.pid}`,
      ),
    ]);
    await d.resume();
    const dr = await d.done;
    expect([dr.code, dr.stdout]).toEqual([0, expect.stringContaining(`live: ${releases.B.revision}`)]);
    const t = await target();
    try {
      expect(await liveWhole(t)).toEqual({ revision: releases.B.revision, kept: [], missing: 0, lock: false });
    } finally {
      await t.close();
    }
  });

  it('on a host that ignores the condition (s3rver as it is), the late publish still refuses to switch', async () => {
    to = `s3://${s3.bucket}/unlocked`;
    s3.conditional = false;
    try {
      expect((await runCli(['publish', '--from', releases.A.dir, ...args()], S3_ENV)).code).toBe(0);
      // D plans against A and waits; E replaces D's lock unseen, publishes C and prunes A (--keep 1).
      const d = pausedPublish(['--from', releases.B.dir, ...args(), '--keep', '1'], S3_ENV);
      await d.paused;
      const e = await runCli(['publish', '--from', releases.C.dir, ...args(), '--keep', '1'], S3_ENV);
      expect([e.code, e.stdout]).toEqual([0, expect.stringContaining(`live: ${releases.C.revision}`)]);
      expect(e.stdout).toMatch(/deleted \d+ objects/);
      await d.resume();
      const dr = await d.done;
      // D does not say "live": the objects it counted on from A are gone, or its lock is not its own.
      expect(dr.code).not.toBe(0);
      expect(dr.stdout).not.toContain('live:');
      expect(dr.stderr).toMatch(/not on s3:\/\/\S+ whole|no longer this publish's|changed since this publish planned/);
      const t = await target();
      try {
        expect(await liveWhole(t)).toEqual({ revision: releases.C.revision, kept: [], missing: 0, lock: false });
      } finally {
        await t.close();
      }
      // Publishing D again uploads what is missing and goes live whole.
      const again = await runCli(['publish', '--from', releases.B.dir, ...args(), '--keep', '1'], S3_ENV);
      expect(again.code).toBe(0);
      const t2 = await target();
      try {
        expect(await liveWhole(t2)).toEqual({ revision: releases.B.revision, kept: [], missing: 0, lock: false });
      } finally {
        await t2.close();
      }
    } finally {
      s3.conditional = true;
    }
  });
});
