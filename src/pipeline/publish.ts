// Stage 6: the output folder (publication/folder.ts) claimed and locked, the previous release read back, and the
// atomic switch: `current` is replaced by rename(2), so readers see the old release or the new one, never a mix. A
// killed build leaves its staging folder behind, removed by the next build.
import { link, mkdir, readdir, readFile, realpath, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { UsageError } from '../errors.js';
import { makeDirs } from '../make-dirs.js';
import { CURRENT, currentRelease, MARKER, outDirState, RELEASES } from '../publication/folder.js';
import { readRelease } from '../publication/reader.js';
import type { PreviousRelease } from '../publication/writer.js';

const LOCK = '.build.lock';

/**
 * Refuse an --out that is a file or a folder holding anything modelpub did not write. Writes nothing: a build checks
 * this before it reads the data, so a mistyped --out is told at once, and again in claimOutDir. Returns whether the
 * folder exists.
 */
export async function checkOutDir(out: string): Promise<boolean> {
  const s = await outDirState(out);
  switch (s.kind) {
    case 'missing':
      return false;
    case 'ours':
      return true;
    // Told now, not after the data is loaded, when making the folder fails (README.md/dist: mkdir's ENOTDIR).
    case 'through-file':
      throw new UsageError(`--out ${out} goes through a file: a part of that path before its last is not a folder`);
    case 'unusable':
      throw new UsageError(`--out ${out} cannot be used: ${s.error.message}`);
    case 'dangling-link':
      throw new UsageError(
        `--out ${out} is a symbolic link to nothing: make the folder it names, or give another --out`,
      );
    case 'not-a-folder':
      throw new UsageError(`--out ${out} is not a folder: refusing to overwrite it`);
    case 'foreign':
      throw new UsageError(
        `--out ${out} holds files that modelpub did not write (${s.names.slice(0, 3).join(', ')}${s.names.length > 3 ? ', …' : ''}): choose an empty or new folder`,
      );
  }
}

/** checkOutDir, then create the folder if needed and mark it as modelpub's. */
export async function claimOutDir(out: string): Promise<void> {
  if (!(await checkOutDir(out))) makeDirs(out);
  await writeFile(
    path.join(out, MARKER),
    `${JSON.stringify({ format: 1, note: 'written by modelpub build; do not put other files here' })}\n`,
  );
}

/**
 * One build at a time per folder. A lock left by a killed build (its pid is gone) is taken over. The lock file appears
 * with the holder's pid already in it (written to a file of its own, then hard-linked into place): a file created
 * empty and filled after would be read as empty, so left by a killed build, by a build starting at that moment.
 */
export async function lockOutDir(out: string): Promise<() => Promise<void>> {
  const file = path.join(await realpath(out), LOCK); // one key per folder, however --out spells it (a link to it too)
  if (held.has(file))
    throw new UsageError(`another build (pid ${process.pid}) is publishing into ${out}; wait for it to finish`);
  held.add(file);
  try {
    const unlock = await takeLock(out, file);
    return () => unlock().finally(() => held.delete(file));
  } catch (e) {
    held.delete(file);
    throw e;
  }
}

/**
 * The lock files this process holds. A lock naming this process's pid that is not one of them was left by a killed
 * build that had the same pid: in a container each build runs as PID 1, and pid 1 is always alive.
 */
const held = new Set<string>();

async function takeLock(out: string, file: string): Promise<() => Promise<void>> {
  const mine = `${file}-${process.pid}`;
  await writeFile(mine, String(process.pid));
  try {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await link(mine, file);
        return () => rm(file, { force: true });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        const pid = Number(await readFile(file, 'utf8').catch(() => ''));
        if (pid && pid !== process.pid && pidAlive(pid))
          throw new UsageError(`another build (pid ${pid}) is publishing into ${out}; wait for it to finish`);
        await rm(file, { force: true });
      }
    }
  } finally {
    await rm(mine, { force: true });
  }
  throw new UsageError(`could not lock ${out}`);
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function readPrevious(out: string): Promise<PreviousRelease | null> {
  const dir = await currentRelease(out);
  if (!dir) return null;
  const { manifest, meta } = await readLive(out, dir);
  return {
    dir,
    revision: manifest.publicationRevision,
    publishedAt: meta.publishedAt,
    entries: new Map(manifest.files.map((f) => [f.path, f])),
    meta,
    representations: manifest.representations,
    compression: manifest.compression,
  };
}

/** The revision of the live release of a build's --out; null when it has none. */
export async function liveRevision(out: string): Promise<string | null> {
  const dir = await currentRelease(out);
  return dir && (await readLive(out, dir)).meta.publicationRevision;
}

async function readLive(out: string, dir: string) {
  try {
    return await readRelease(
      (file) => readFile(path.join(dir, file)),
      (file) => path.join(dir, file),
    );
  } catch (e) {
    // A release this build cannot read (e.g. a revision id an older modelpub allowed, now refused) cannot be continued.
    throw new UsageError(
      `the live release of --out ${out} cannot be read: ${(e as Error).message}. Build into a new --out.`,
    );
  }
}

/** Remove staging folders of builds that died; they are ours by name. */
export async function clearStaleStaging(out: string): Promise<void> {
  for (const name of await readdir(out)) {
    if (name.startsWith('.staging-') || name.startsWith('.current-'))
      await rm(path.join(out, name), { recursive: true, force: true });
    // A lock file of its own that a build killed while locking left behind (a live one is about to be linked).
    const locking = /^\.build\.lock-(\d+)$/.exec(name);
    if (locking && !pidAlive(Number(locking[1]))) await rm(path.join(out, name), { force: true });
  }
}

export const stagingDirFor = (out: string, revision: string) => path.join(out, `.staging-${revision}-${process.pid}`);

/** A release folder's number: the n of `<n>-<revision>`; 0 for names of older builds (`<revision>`, `<revision>.2`). */
const releaseNumber = (name: string) => Number(/^(\d{1,9})-/.exec(name)?.[1] ?? 0); // 9 digits: exact, whatever an old name holds

/**
 * Move a finished staging folder into releases/ and point `current` at it in one rename. Returns the release folder.
 * Its name is `<n>-<revision>`, n one more than any release's in the folder. The live release is always kept and has
 * the highest n, so no name is used twice in one --out: a gateway knows a local release by its folder, and a new build
 * under the name of a pruned one (the same revision again, after two others) would look like the release it already
 * serves, with other bytes.
 */
export async function switchTo(out: string, staging: string, revision: string): Promise<string> {
  await mkdir(path.join(out, RELEASES), { recursive: true });
  const n = 1 + Math.max(0, ...(await readdir(path.join(out, RELEASES))).map(releaseNumber));
  const name = `${String(n).padStart(4, '0')}-${revision}`;
  const release = path.join(out, RELEASES, name);
  await rename(staging, release);
  const tmp = path.join(out, `.current-${process.pid}`);
  await rm(tmp, { force: true });
  await symlink(path.join(RELEASES, name), tmp);
  await rename(tmp, path.join(out, CURRENT));
  return release;
}

/** Delete every release but the given ones (the new one and the one it replaced): all of releases/ is ours. */
export async function pruneReleases(out: string, keep: string[]): Promise<void> {
  const dir = path.join(out, RELEASES);
  const keepNames = new Set(keep.map((k) => path.basename(k)));
  for (const n of await readdir(dir).catch(() => [] as string[])) {
    if (!keepNames.has(n)) await rm(path.join(dir, n), { recursive: true, force: true });
  }
}
