// The build lock of an --out folder (.build-lock): one build at a time, across processes, with real processes.
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clearStaleStaging, lockOutDir, MARKER } from '../src/publication/folder.js';
import { ROOT, ensureCompiled } from './helpers/cli.js';
import { tracked } from './helpers/children.js';

let folderJs: string;
beforeAll(() => {
  ensureCompiled();
  folderJs = pathToFileURL(path.join(ROOT, 'lib/publication/folder.js')).href;
});

const dirs: string[] = [];
const tempDir = async () => {
  const d = await mkdtemp(path.join(tmpdir(), 'modelpub-lock-'));
  dirs.push(d);
  return d;
};
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

/** A node process running `code` (an ES module) with lockOutDir imported; resolves with its stdout once it exits. */
function run(code: string): { child: ReturnType<typeof spawn>; output: Promise<string> } {
  const child = tracked(
    spawn(
      process.execPath,
      ['--input-type=module', '-e', `const { lockOutDir } = await import(${JSON.stringify(folderJs)});\n${code}`],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    ),
  );
  let text = '';
  child.stdout!.on('data', (d: Buffer) => (text += d));
  child.stderr!.on('data', (d: Buffer) => (text += d));
  return { child, output: new Promise((resolve) => child.once('close', () => resolve(text.trim()))) };
}

/** A build killed while holding the lock (SIGKILL: no cleanup of any kind). */
async function killedHolder(out: string): Promise<void> {
  const holder = run(`await lockOutDir(${JSON.stringify(out)}); console.log('locked'); setInterval(() => {}, 1000);`);
  await new Promise<void>((resolve) =>
    holder.child.stdout!.on('data', (d: Buffer) => String(d).includes('locked') && resolve()),
  );
  holder.child.kill('SIGKILL');
  await holder.output;
}

describe('lockOutDir', () => {
  it('a live holder in another process refuses, naming its pid; once it is killed the lock is free at once', async () => {
    const out = await tempDir();
    const holder = run(`await lockOutDir(${JSON.stringify(out)}); console.log('locked'); setInterval(() => {}, 1000);`);
    await new Promise<void>((resolve) =>
      holder.child.stdout!.on('data', (d: Buffer) => String(d).includes('locked') && resolve()),
    );
    await expect(lockOutDir(out)).rejects.toThrow(`another build (pid ${holder.child.pid}) is publishing into ${out}`);
    holder.child.kill('SIGKILL');
    await holder.output;
    const unlock = await lockOutDir(out);
    await unlock();
  });

  it('builds started at the same instant after a killed build left its lock: never two holders at once', async () => {
    const out = await tempDir();
    for (let round = 0; round < 4; round++) {
      await killedHolder(out);
      const start = Date.now() + 700; // every process is loaded and spinning by then
      const racers = Array.from({ length: 8 }, () =>
        run(`
          const out = ${JSON.stringify(out)};
          while (Date.now() < ${start}) {}
          try {
            const unlock = await lockOutDir(out);
            const from = performance.timeOrigin + performance.now();
            await new Promise((r) => setTimeout(r, 150));
            const to = performance.timeOrigin + performance.now();
            await unlock();
            console.log(JSON.stringify({ from, to }));
          } catch (e) {
            console.log('refused: ' + e.message);
          }
        `),
      );
      const outputs = await Promise.all(racers.map((r) => r.output));
      const held = outputs.filter((o) => o.startsWith('{')).map((o) => JSON.parse(o) as { from: number; to: number });
      expect(
        held.length + outputs.filter((o) => o.startsWith('refused: another build')).length,
        outputs.join('\n'),
      ).toBe(8);
      expect(held.length).toBeGreaterThanOrEqual(1);
      held.sort((a, b) => a.from - b.from);
      for (let i = 1; i < held.length; i++)
        expect(held[i]!.from, `round ${round}`).toBeGreaterThanOrEqual(held[i - 1]!.to);
    }
  });

  it('a second build in this process is refused, also through a link to the folder; after unlock the lock is free', async () => {
    const out = await tempDir();
    const unlock = await lockOutDir(out);
    await expect(lockOutDir(out)).rejects.toThrow(`another build (pid ${process.pid}) is publishing into ${out}`);
    const link = `${out}-link`;
    await symlink(out, link);
    dirs.push(link);
    await expect(lockOutDir(link)).rejects.toThrow(`another build (pid ${process.pid}) is publishing into ${link}`);
    await unlock();
    await (await lockOutDir(link))();
  });
});

describe('clearStaleStaging', () => {
  it("removes only what dead builds left, as the folder's record lists it: never a live build's, never a user's", async () => {
    const out = await tempDir();
    const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' }).stdout.trim();
    const live = run('setInterval(() => {}, 1000);');
    try {
      const livePid = String(live.child.pid);
      const recorded = [`.staging-r1-${dead}`, `.staging-r1-${livePid}`, `.staging-r3-${dead}`];
      await writeFile(path.join(out, MARKER), JSON.stringify({ format: 1, releases: [], staging: recorded }));
      // `.staging-r2-<dead>`: named as a build names its staging, but the record does not list it (a user's).
      for (const d of [...recorded.slice(0, 2), `.staging-r2-${dead}`, '.staging-photos', `.current-${livePid}.d`])
        await mkdir(path.join(out, d, 'api'), { recursive: true });
      await writeFile(path.join(out, `.staging-notes-${dead}`), 'a file, not a staging folder');
      await symlink('releases/0001-r1', path.join(out, `.current-${dead}`));
      await symlink('releases/0001-r1', path.join(out, `.current-${livePid}`));
      await clearStaleStaging(out);
      expect((await readdir(out)).sort()).toEqual(
        [
          MARKER,
          `.current-${livePid}`,
          `.current-${livePid}.d`,
          `.staging-r2-${dead}`,
          '.staging-photos',
          `.staging-notes-${dead}`,
          `.staging-r1-${livePid}`,
        ].sort(),
      );
      // The entries of what is gone are dropped; the live build's stays.
      expect(JSON.parse(await readFile(path.join(out, MARKER), 'utf8')).staging).toEqual([`.staging-r1-${livePid}`]);
    } finally {
      live.child.kill('SIGKILL');
      await live.output;
    }
  });
});
