// Stage 6: the output folder (publication/folder.ts) claimed and locked, the previous release read back, and the
// atomic switch: `current` is replaced by rename(2), so readers see the old release or the new one, never a mix. A
// killed build leaves its staging folder behind, removed by the next build.
//   <out>/.build-lock[.pid]  the build lock (an OS lock on the file) and, while it is held, its holder's pid
import { lstat, mkdir, readdir, readFile, realpath, rename, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { UsageError } from '../errors.js';
import { makeDirs } from '../make-dirs.js';
import { writeFileNamed } from '../write-file.js';
import { CURRENT, currentRelease, MARKER, outDirState, RELEASES } from '../publication/folder.js';
import { readRelease } from '../publication/reader.js';
import type { PreviousRelease } from '../publication/writer.js';

const LOCK = '.build-lock';
const LOCK_HOLDER = '.build-lock.pid';

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
        `--out ${out} holds files that modelpub did not write ` +
          `(${s.names.slice(0, 3).join(', ')}${s.names.length > 3 ? ', …' : ''}): choose an empty or new folder`,
      );
  }
}

/** checkOutDir, then create the folder if needed and mark it as modelpub's. */
export async function claimOutDir(out: string): Promise<void> {
  if (!(await checkOutDir(out))) makeDirs(out);
  await writeFileNamed(
    path.join(out, MARKER),
    `${JSON.stringify({ format: 1, note: 'written by modelpub build; do not put other files here' })}\n`,
  );
}

/**
 * One build at a time per folder: an OS lock (SQLite's, through better-sqlite3: a POSIX record lock on
 * `.build-lock`) held for the whole build. The kernel releases it when its process ends however it ends, so there
 * is no stale lock to take over, and two builds can never both hold it. The file itself stays: deleting it would let
 * one build lock the old file and another a new one. The holder's pid is in `.build-lock.pid` while it holds the
 * lock, for the message another build gives.
 */
export async function lockOutDir(out: string): Promise<() => Promise<void>> {
  const dir = await realpath(out); // one key per folder, however --out spells it (a link to it too)
  const file = path.join(dir, LOCK);
  if (held.has(file))
    throw new UsageError(`another build (pid ${process.pid}) is publishing into ${out}; wait for it to finish`);
  const Database = await loadSqlite();
  const db = new Database(file, { timeout: 0 });
  try {
    db.pragma('journal_mode = MEMORY'); // nothing is written: no journal file beside it (OFF is refused)
    db.exec('BEGIN IMMEDIATE'); // the write lock, taken at once or refused
  } catch (e) {
    db.close();
    if ((e as { code?: string }).code !== 'SQLITE_BUSY') throw e;
    const pid = Number(await readFile(path.join(dir, LOCK_HOLDER), 'utf8').catch(() => ''));
    const who = pid && pid !== process.pid && pidAlive(pid) ? ` (pid ${pid})` : '';
    throw new UsageError(`another build${who} is publishing into ${out}; wait for it to finish`);
  }
  held.add(file);
  const unlock = async () => {
    if (!held.delete(file)) return;
    try {
      await rm(path.join(dir, LOCK_HOLDER), { force: true }); // before the lock goes: the next holder writes its own
    } finally {
      db.exec('ROLLBACK');
      db.close();
    }
  };
  await writeFileNamed(path.join(dir, LOCK_HOLDER), String(process.pid)).catch(async (e: unknown) => {
    await unlock();
    throw e;
  });
  return unlock;
}

/** The lock files this process holds: SQLite's lock admits a second connection of the holder's own process. */
const held = new Set<string>();

async function loadSqlite(): Promise<typeof BetterSqlite3> {
  try {
    return (await import('better-sqlite3')).default;
  } catch (e) {
    throw new Error(
      `Cannot import \`better-sqlite3\`, whose file lock keeps two builds apart: install it with \`npm install ` +
        `better-sqlite3\`. (${(e as Error).message})`,
      { cause: e },
    );
  }
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
    where: dir,
    readBody: (entry) => readFile(path.join(dir, entry.path)),
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

/** A staging folder (`.staging-<revision>-<pid>`), the link switchTo renames over `current`, an older lock's files. */
const STAGING = /^\.staging-[A-Za-z0-9][A-Za-z0-9._-]{0,63}-(\d{1,10})$/;
const CURRENT_TMP = /^\.current-(\d{1,10})$/;
const OLD_LOCK = /^\.build\.lock(?:-(\d{1,10}))?$/;

/**
 * Remove what builds that died left: only names a build makes, of the kind it makes them (a folder, a link), and only
 * those of a process that is gone. The caller holds the lock, so no other build of this folder is running; one with
 * this process's pid is a dead build's too (in a container every build is PID 1). Anything else is left alone.
 */
export async function clearStaleStaging(out: string): Promise<void> {
  const dead = (pid: string | undefined) => Number(pid) === process.pid || !pidAlive(Number(pid));
  for (const name of await readdir(out)) {
    const file = path.join(out, name);
    const st = await lstat(file).catch(() => null);
    if (!st) continue;
    const staging = STAGING.exec(name);
    const link = CURRENT_TMP.exec(name);
    const lock = OLD_LOCK.exec(name);
    if (staging && st.isDirectory() && dead(staging[1])) await rm(file, { recursive: true, force: true });
    else if (link && st.isSymbolicLink() && dead(link[1])) await rm(file, { force: true });
    else if (lock && st.isFile() && st.size <= 10) {
      // The pid file an older modelpub locked with, left by a killed build.
      const pid = lock[1] ?? (await readFile(file, 'utf8').catch(() => ''));
      if (/^\d{1,10}$/.test(pid) && dead(pid)) await rm(file, { force: true });
    }
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
  await currentRelease(out); // still the build's own link (or none), checked again just before it is replaced
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

/** A release folder as switchTo names it. */
const RELEASE_NAME = /^\d{1,9}-[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * Delete every release but the given ones (the new one and the one it replaced): only folders named as switchTo
 * names them. Anything else in releases/ (a user's folder, an older modelpub's release names) is left alone.
 */
export async function pruneReleases(out: string, keep: string[]): Promise<void> {
  const dir = path.join(out, RELEASES);
  const keepNames = new Set(keep.map((k) => path.basename(k)));
  for (const n of await readdir(dir).catch(() => [] as string[])) {
    if (keepNames.has(n) || !RELEASE_NAME.test(n)) continue;
    const st = await lstat(path.join(dir, n)).catch(() => null);
    if (st?.isDirectory()) await rm(path.join(dir, n), { recursive: true, force: true });
  }
}
