// A build's output folder on the local disk: what a build writes (claimed, locked, switched, pruned here) and what
// `serve --dir`, `publish --from`, `diff --against` and the next build read (folderSource).
//   <out>/.modelpub-publication   marker: this folder is ours (a folder without it, and not empty, is refused), and
//                                 its record: the release and staging folders its builds made, the only ones removed
//   <out>/current -> releases/<n>-<revision>  the live release; replaced by rename(2), so readers see old or new
//   <out>/releases/<n>-<revision>/            one complete release (layout.ts)
//   <out>/.staging-<revision>-<pid>           a build in progress; a killed build's is removed by the next build
//   <out>/.build-lock[.pid]  the build lock (an OS lock on the file) and, while it is held, its holder's pid
//   <out>/.modelpub-parts     the models' parts of the last build, a cache (pipeline/parts-store.ts)
import { rmSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { lstat, mkdir, open, readdir, readFile, readlink, realpath, rename, rm, stat, symlink } from 'node:fs/promises';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { z } from 'zod';
import { UsageError } from '../errors.js';
import { makeDirs } from '../make-dirs.js';
import { pidAlive } from '../pid-alive.js';
import { namedReadError, readFileNamed, writeFileNamed } from '../write-file.js';
import { PublicationMeta } from './files.js';
import { MANIFEST_FILE, META_FILE, type StoredBytes } from './layout.js';
import { parseJsonFile, parseManifest, parseManifestIndex } from './reader.js';
import { type IndexedRelease, openIndexedRelease, openRelease, type Release, type Source } from './release.js';
import { readRegularFile } from './targets/file.js';
import type { GetOptions } from './targets/types.js';

export const MARKER = '.modelpub-publication';
export const CURRENT = 'current';
export const RELEASES = 'releases';

/**
 * What is at a folder, as far as a build writing there is concerned: nothing yet, a folder a build may write to
 * (empty, or marked as modelpub's), or something it must not touch. One answer for `build --out` (checkOutDir) and
 * for the hint `serve --dir` gives when it finds no publication. A link to a folder is that folder.
 */
export type OutDirState =
  | { kind: 'missing' | 'ours' | 'dangling-link' | 'not-a-folder' | 'through-file' }
  | { kind: 'foreign'; names: string[] }
  | { kind: 'unusable'; error: Error };

export async function outDirState(out: string): Promise<OutDirState> {
  let st: Awaited<ReturnType<typeof lstat>>;
  try {
    st = await lstat(out);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'ENOENT'
      ? { kind: 'missing' }
      : code === 'ENOTDIR'
        ? { kind: 'through-file' }
        : { kind: 'unusable', error: e as Error };
  }
  const target = st.isSymbolicLink() ? await stat(out).catch(() => null) : st;
  if (!target) return { kind: 'dangling-link' };
  if (!target.isDirectory()) return { kind: 'not-a-folder' };
  const names = await readdir(out);
  return names.length === 0 || names.includes(MARKER) ? { kind: 'ours' } : { kind: 'foreign', names };
}

/**
 * The live release folder, or null before the first publication. A `current` that is not the link a build makes
 * (`releases/<name>`), a file or a folder a user put there, is refused rather than replaced.
 */
export async function currentRelease(out: string): Promise<string | null> {
  const file = path.join(out, CURRENT);
  const st = await lstat(file).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return null;
    throw e;
  });
  if (!st) return null;
  const target = st.isSymbolicLink() ? await readlink(file) : null;
  if (target === null || !/^releases\/[^/]+$/.test(target)) {
    const what =
      target !== null
        ? `a link to ${JSON.stringify(target.slice(0, 200))}`
        : st.isDirectory()
          ? 'a folder'
          : st.isFile()
            ? 'a file'
            : 'not a link';
    throw new UsageError(
      `--out ${out}: its \`current\` is ${what}, not the link a build makes (current -> releases/<n>-<revision>); a ` +
        'build does not replace it: move it away, or choose another --out',
    );
  }
  return path.resolve(out, target);
}

/**
 * The bytes `s` names in a release folder (a real path): a whole file, or its range of one; a file larger than
 * `maxBytes` is refused unread, and only a regular file inside the folder is read (readRegularFile). A range past the
 * end of the file comes back short, and the caller's check refuses it.
 */
export function readStored(releaseDir: string, s: StoredBytes, o: GetOptions = {}): Promise<Buffer | null> {
  return readRegularFile(path.join(releaseDir, s.path), releaseDir, storedWhere(releaseDir, s), {
    maxBytes: o.maxBytes,
    offset: s.offset,
    length: s.offset === undefined ? undefined : s.bytes,
  });
}

const storedWhere = (dir: string, s: StoredBytes) =>
  s.offset === undefined ? path.join(dir, s.path) : `${path.join(dir, s.path)} at ${s.offset}`;

/** One release folder, opened: its two files read and checked (release.ts). */
export async function openFolderRelease(dir: string): Promise<Release> {
  const [manifestBytes, metaBytes] = await Promise.all([
    readFileNamed(path.join(dir, MANIFEST_FILE)),
    readFileNamed(path.join(dir, META_FILE)),
  ]);
  // Checked a slice at a time, and hashed off the event loop: a gateway answers requests while it loads a release.
  const manifest = await parseManifest(manifestBytes, path.join(dir, MANIFEST_FILE));
  const manifestSha256 = Buffer.from(
    await crypto.subtle.digest('SHA-256', manifestBytes as Uint8Array<ArrayBuffer>),
  ).toString('hex');
  return openRelease({
    id: dir,
    where: dir,
    dir,
    manifest,
    manifestSha256,
    meta: parseJsonFile(PublicationMeta, metaBytes, path.join(dir, META_FILE)),
    manifestBytes,
    fetch: (s, bounds) => readStored(dir, s, bounds),
    whereOf: (s) => storedWhere(dir, s),
  });
}

/** What manifest.json is read in, a chunk at a time, by openFolderIndexed. */
const MANIFEST_CHUNK_BYTES = 4 * 1024 * 1024;

/** `file` a chunk at a time; a failed read names the file. */
async function* chunksOf(file: string): AsyncGenerator<Buffer> {
  const handle = await open(file, 'r').catch((e) => Promise.reject(namedReadError(e, file)));
  try {
    for (;;) {
      const buffer = Buffer.allocUnsafe(MANIFEST_CHUNK_BYTES);
      const { bytesRead } = await handle
        .read(buffer, 0, buffer.length, null)
        .catch((e) => Promise.reject(namedReadError(e, file)));
      if (bytesRead === 0) return;
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}

/** One release folder, opened as an IndexedRelease: manifest.json read a chunk at a time into tables, not kept. */
export async function openFolderIndexed(dir: string): Promise<IndexedRelease> {
  const file = path.join(dir, MANIFEST_FILE);
  const [manifest, metaBytes] = await Promise.all([
    parseManifestIndex(chunksOf(file), file, () => readFileNamed(file)),
    readFileNamed(path.join(dir, META_FILE)),
  ]);
  return openIndexedRelease({
    id: dir,
    where: dir,
    dir,
    manifest,
    meta: parseJsonFile(PublicationMeta, metaBytes, path.join(dir, META_FILE)),
    fetch: (s, bounds) => readStored(dir, s, bounds),
    whereOf: (s) => storedWhere(dir, s),
  });
}

/**
 * A publication on the local disk: a build's --out (the live release is its `current`) or one release folder. The id
 * is the resolved release folder, so a build's switch shows up as a new id while the old release stays readable for
 * requests already under way. `out`: the folder is a build's --out, whose `current` must be the link a build makes
 * (currentRelease); else a `current` folder is read too.
 */
export function folderSource(dir: string, { out = false } = {}): Source {
  const root = path.resolve(dir);
  const currentId = async (): Promise<string | null> => {
    if (out) {
      const live = await currentRelease(dir);
      return live && realpath(live);
    }
    // ENOTDIR: `dir` is a file, which holds no publication (said as such, not as stat's errno).
    const cur = await stat(path.join(root, CURRENT)).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT' || e.code === 'ENOTDIR') return null;
      throw e;
    });
    if (cur?.isDirectory()) return realpath(path.join(root, CURRENT));
    // No live release: one release folder itself, or nothing published.
    const meta = await stat(path.join(root, META_FILE)).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT' || e.code === 'ENOTDIR') return null;
      throw e;
    });
    return meta ? realpath(root) : null;
  };
  return {
    description: root,
    nothingPublished: `${root} holds no publication: it has no current release, and is not a release folder (no ${META_FILE})`,
    currentId,
    release: openFolderRelease,
    kept: () => [],
    async live() {
      const id = await currentId();
      return id === null ? null : openFolderRelease(id);
    },
    async liveIndexed() {
      const id = await currentId();
      return id === null ? null : openFolderIndexed(id);
    },
    close: async () => {},
  };
}

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
        `--out ${out} holds files that modelpub did not write (${s.names.slice(0, 3).join(', ')}` +
          `${s.names.length > 3 ? ', …' : ''}): choose an empty or new folder`,
      );
  }
}

/**
 * checkOutDir, then create the folder if needed and mark it as modelpub's. A marker that is there is left as it is:
 * it holds the folder's record, which only a build holding the lock writes.
 */
export async function claimOutDir(out: string): Promise<void> {
  if (!(await checkOutDir(out))) makeDirs(out);
  const marker = path.join(out, MARKER);
  if (!(await lstat(marker).catch(() => null))) await writeFileNamed(marker, recordBytes(EMPTY_RECORD));
}

/**
 * The folder's own record, in its marker: the release folders (under releases/) and staging folders its builds made.
 * Only what it lists is ever removed, so a user's `releases/0001-userstuff` or `.staging-photos-12` stays. A marker
 * written before the record existed (or unreadable) is taken as a record of the live release alone.
 */
const OutRecord = z.object({ releases: z.array(z.string()), staging: z.array(z.string()) });
type OutRecord = z.infer<typeof OutRecord>;
const EMPTY_RECORD: OutRecord = { releases: [], staging: [] };
const recordBytes = (r: OutRecord) =>
  `${JSON.stringify({ format: 1, note: 'written by modelpub build; do not put other files here', ...r })}\n`;

async function readRecord(out: string): Promise<OutRecord> {
  const text = await readFile(path.join(out, MARKER), 'utf8').catch(() => '');
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {}
  const r = OutRecord.safeParse(parsed);
  if (r.success) return { releases: [...new Set(r.data.releases)], staging: [...new Set(r.data.staging)] };
  const live = await currentRelease(out).catch(() => null);
  return { releases: live ? [path.basename(live)] : [], staging: [] };
}

/** Written whole and renamed into place (under the build lock): a reader sees the old record or the new one. */
async function writeRecord(out: string, r: OutRecord): Promise<void> {
  const tmp = path.join(out, `${MARKER}.${process.pid}.tmp`);
  await writeFileNamed(tmp, recordBytes(r));
  await rename(tmp, path.join(out, MARKER));
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
      'Cannot import `better-sqlite3`, whose file lock keeps two builds apart: install it with ' +
        `\`npm install better-sqlite3\`. (${(e as Error).message})`,
      { cause: e },
    );
  }
}

/** A staging folder (`.staging-<revision>-<pid>`), and the link switchTo renames over `current`. */
const STAGING = /^\.staging-[A-Za-z0-9][A-Za-z0-9._-]{0,63}-(\d{1,10})$/;
const CURRENT_TMP = /^\.current-(\d{1,10})$/;

/**
 * Remove what builds that died left: only names a build makes, of the kind it makes them (a folder, a link), and only
 * those of a process that is gone. The caller holds the lock, so no other build of this folder is running; one with
 * this process's pid is a dead build's too (in a container every build is PID 1). Anything else is left alone.
 */
export async function clearStaleStaging(out: string): Promise<void> {
  const dead = (pid: string | undefined) => Number(pid) === process.pid || !pidAlive(Number(pid));
  const record = await readRecord(out);
  const staging = record.staging.filter((name) => {
    const m = STAGING.exec(name);
    return m !== null && !dead(m[1]);
  });
  for (const name of record.staging) {
    if (staging.includes(name) || !STAGING.test(name)) continue;
    const st = await lstat(path.join(out, name)).catch(() => null);
    if (st?.isDirectory()) removeTree(path.join(out, name));
  }
  if (staging.length !== record.staging.length) await writeRecord(out, { ...record, staging });
  for (const name of await readdir(out)) {
    const link = CURRENT_TMP.exec(name);
    const st = link && (await lstat(path.join(out, name)).catch(() => null));
    if (st?.isSymbolicLink() && dead(link![1])) await rm(path.join(out, name), { force: true });
  }
}

/**
 * The staging folder of this build (`.staging-<revision>-<pid>`), entered in the record before it is made, so that
 * the next build removes it if this one dies. A folder of that name the record does not list is not this build's.
 */
export async function claimStaging(out: string, revision: string): Promise<string> {
  const name = `.staging-${revision}-${process.pid}`;
  const dir = path.join(out, name);
  const record = await readRecord(out);
  if (!record.staging.includes(name)) {
    if (await lstat(dir).catch(() => null))
      throw new UsageError(`--out ${out}: ${name} is in the way, and no build of this folder made it: move it away`);
    await writeRecord(out, { ...record, staging: [...record.staging, name] });
  }
  removeTree(dir);
  return dir;
}

/**
 * Removes a release or staging folder with everything in it. Synchronously: Node 20's fs.promises.rm starts removing
 * every file of the tree at once, which for a release of 2,000 models (310,000 paths) took 635 MB of memory; rmSync
 * goes a folder at a time, in 57 MB, and sooner (3.4 s against 4.3 s).
 */
export function removeTree(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Drop a staging folder's entry from the record, once the folder is gone (renamed into releases/, or removed). */
export async function forgetStaging(out: string, staging: string): Promise<void> {
  const record = await readRecord(out);
  const name = path.basename(staging);
  if (record.staging.includes(name))
    await writeRecord(out, { ...record, staging: record.staging.filter((n) => n !== name) });
}

/** A release folder's number: the n of `<n>-<revision>`; 0 for any other name. */
const releaseNumber = (name: string) => Number(/^(\d{1,9})-/.exec(name)?.[1] ?? 0); // 9 digits: exact as a number

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
  // Entered before the rename: a build killed between the two leaves a name with no folder, never an unlisted
  // release; the staging entry goes after it.
  const record = await readRecord(out);
  await writeRecord(out, { ...record, releases: [...record.releases, name] });
  await rename(staging, release);
  await forgetStaging(out, staging);
  const tmp = path.join(out, `.current-${process.pid}`);
  await rm(tmp, { force: true });
  await symlink(path.join(RELEASES, name), tmp);
  await rename(tmp, path.join(out, CURRENT));
  return release;
}

/** A release folder as switchTo names it. */
const RELEASE_NAME = /^\d{1,9}-[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * Delete every release but the given ones (the new one and the one it replaced): only folders the record lists (so
 * named as switchTo names them). Anything else in releases/ (a user's folder, however it is named) is left alone.
 */
export async function pruneReleases(out: string, keep: string[]): Promise<void> {
  const record = await readRecord(out);
  const { kept, old } = await sortReleases(out, record.releases, keep);
  for (const dir of old) removeTree(dir);
  if (kept.join() !== record.releases.join()) await writeRecord(out, { ...record, releases: kept });
}

/**
 * Removes now, on a thread of its own, the releases pruneReleases would remove beside `keep`, and leaves the record to
 * it: a build starts this once it knows it publishes, so that the unlinks of an old release (310,000 at 2,000 models,
 * 4 s) overlap its writing instead of following it.
 */
export async function removeOldReleases(out: string, keep: string[]): Promise<void> {
  const { old } = await sortReleases(out, (await readRecord(out)).releases, keep);
  if (!old.length) return;
  await new Promise<void>((resolve, reject) => {
    const thread = new Worker(REMOVE_SOURCE, { eval: true, workerData: old });
    thread.once('error', reject);
    thread.once('exit', (code) =>
      code ? reject(new Error(`removing ${old.join(', ')}: exit code ${code}`)) : resolve(),
    );
  });
}

/** removeTree, on a thread of its own. */
const REMOVE_SOURCE = `
const { rmSync } = require('node:fs');
for (const dir of require('node:worker_threads').workerData) rmSync(dir, { recursive: true, force: true });
`;

/** The listed releases that are there and kept (names), and the folders of the others that are there. */
async function sortReleases(out: string, listed: string[], keep: string[]) {
  const dir = path.join(out, RELEASES);
  const keepNames = new Set(keep.map((k) => path.basename(k)));
  const kept: string[] = [];
  const old: string[] = [];
  for (const n of listed) {
    if (!RELEASE_NAME.test(n)) continue;
    const st = await lstat(path.join(dir, n)).catch(() => null);
    if (keepNames.has(n) && st) kept.push(n);
    else if (st?.isDirectory()) old.push(path.join(dir, n));
  }
  return { kept, old };
}
