// The build lock of an --out folder (.build.lock): one build at a time, across processes.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ROOT, ensureCompiled } from './helpers/cli.js';

/** Set by a test: the lock file to watch, and what another process saw when it tried to lock at the first moment the
 * file existed (the lock's own process frozen there, as a scheduler may leave it). */
const probe = vi.hoisted(() => ({ lockFile: '', outDir: '', seen: null as string | null }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  const { existsSync: exists } = await import('node:fs');
  const { spawnSync: run } = await import('node:child_process');
  const after =
    <A extends unknown[], R>(fn: (...a: A) => Promise<R>) =>
    async (...a: A): Promise<R> => {
      const r = await fn(...a);
      if (probe.lockFile && probe.seen === null && exists(probe.lockFile)) {
        // Synchronous: this process does nothing more until the other one has tried.
        const child = run(
          process.execPath,
          [
            '--input-type=module',
            '-e',
            `
        const { lockOutDir } = await import(${JSON.stringify(process.env.MODELPUB_PUBLISH_JS)});
        await lockOutDir(${JSON.stringify(probe.outDir)}).then(() => console.log('locked'), (e) => console.log('refused: ' + e.message));
      `,
          ],
          { encoding: 'utf8' },
        );
        probe.seen = (child.stdout + child.stderr).trim();
      }
      return r;
    };
  const wrapped = {
    ...fs,
    open: after(fs.open),
    link: after(fs.link),
    writeFile: after(fs.writeFile),
    rename: after(fs.rename),
    copyFile: after(fs.copyFile),
  };
  return { ...wrapped, default: wrapped };
});

const { clearStaleStaging, lockOutDir } = await import('../src/pipeline/publish.js');

beforeAll(() => {
  ensureCompiled();
  process.env.MODELPUB_PUBLISH_JS = pathToFileURL(path.join(ROOT, 'lib/pipeline/publish.js')).href;
});

const dirs: string[] = [];
const tempDir = async () => {
  const d = await mkdtemp(path.join(tmpdir(), 'modelpub-lock-'));
  dirs.push(d);
  return d;
};
afterEach(async () => {
  probe.lockFile = '';
  probe.seen = null;
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

describe('lockOutDir', () => {
  it('another process that tries to lock at the moment the lock file appears is refused (the file already names its holder)', async () => {
    const out = await tempDir();
    probe.outDir = out;
    probe.lockFile = path.join(out, '.build.lock');
    const unlock = await lockOutDir(out);
    expect(probe.seen).toMatch(/^refused: another build \(pid \d+\) is publishing/);
    expect(existsSync(probe.lockFile)).toBe(true);
    await unlock();
    expect(existsSync(probe.lockFile)).toBe(false);
  });

  it('a live holder in another process refuses; a dead one is taken over', async () => {
    const out = await tempDir();
    const holder = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `
      const { lockOutDir } = await import(${JSON.stringify(process.env.MODELPUB_PUBLISH_JS)});
      await lockOutDir(${JSON.stringify(out)}); console.log(process.pid);
    `,
      ],
      { encoding: 'utf8' },
    ); // exits holding the lock: a killed build
    expect(holder.status).toBe(0);
    const unlock = await lockOutDir(out);
    await expect(lockOutDir(out)).rejects.toThrow(/another build \(pid \d+\) is publishing/);
    await unlock();
  });

  it("the next build removes the lock file of its own that a build killed while locking left, not a live process's", async () => {
    const out = await tempDir();
    const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' }).stdout.trim();
    await writeFile(path.join(out, `.build.lock-${dead}`), dead);
    await writeFile(path.join(out, `.build.lock-${process.pid}`), String(process.pid));
    await clearStaleStaging(out);
    expect(await readdir(out)).toEqual([`.build.lock-${process.pid}`]);
  });

  it("a lock naming this process's own pid, which this process does not hold, is stale (a killed build that ran as PID 1 in a container, as the next one does)", async () => {
    const out = await tempDir();
    await writeFile(path.join(out, '.build.lock'), String(process.pid));
    const unlock = await lockOutDir(out);
    // Held now: a second build in this process is refused.
    await expect(lockOutDir(out)).rejects.toThrow(`another build (pid ${process.pid}) is publishing into ${out}`);
    // Also through a link to the folder (an --out may be one): the same lock, not a stale one to take over.
    const link = `${out}-link`;
    await symlink(out, link);
    dirs.push(link);
    await expect(lockOutDir(link)).rejects.toThrow(`another build (pid ${process.pid}) is publishing into ${link}`);
    await unlock();
    await (await lockOutDir(out))();
  });
});
