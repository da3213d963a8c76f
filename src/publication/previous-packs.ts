// The previous release's packs as a build reuses them: on this disk (checked by their sizes), or made again from a
// remote release by downloading the representations the build asks for.
import { statSync } from 'node:fs';
import { type FileHandle, mkdir, open, rm } from 'node:fs/promises';
import path from 'node:path';
import { namedWriteError } from '../write-file.js';
import { Budget } from './budget.js';
import type { CompressionLevels } from './compress.js';
import type { PackFile } from './files.js';
import type { IndexedRelease } from './release.js';
import type { RepresentationTable } from './tables.js';

/** The figures reading a remote previous release adds to a build's (WriteStats). */
export interface PreviousReadStats {
  bytesWritten: number;
  /** Representations of a remote previous release that could not be read (made again), and why the first could not. */
  previousUnread: number;
  previousUnreadWhy: string | null;
}

/** The previous release's packs, as a build reuses them. */
export interface PreviousPacks {
  dir: string;
  table: RepresentationTable;
  files: PackFile[];
  /** Per pack: 1 when it is there with the size the manifest lists (what linking it, or reading from it, needs). */
  sound: Uint8Array;
  /** Per row of `table`: its pack, and where its br bytes start in it. */
  packOf: Uint32Array;
  offsets: Float64Array;
  /**
   * A remote release's: puts a row's representations in place in its pack (downloaded, checked); false when they
   * cannot be read, and they are made again.
   */
  fetch?: (row: number) => Promise<boolean>;
  close?: () => Promise<void>;
}

/** Representations of a remote previous release read at once (a br and a gzip object each): 64 requests. */
const REMOTE_ROWS_AT_ONCE = 32;

/** Where a build downloads a remote previous release's packs, in its staging folder (the same disk: linked from). */
const REMOTE_PACKS_DIR = '.previous-packs';

/**
 * The packs of `previous`, when they were made at `levels` (null else): those of its folder when it is on this disk,
 * else those of a remote release, downloaded into the staging folder as they are asked for.
 */
export function previousPacksOf(
  previous: IndexedRelease,
  stagingDir: string,
  levels: CompressionLevels,
  stats: PreviousReadStats,
): Promise<PreviousPacks | null> {
  return previous.dir
    ? previousPacks(previous, previous.dir, levels)
    : remotePacks(previous, path.join(stagingDir, REMOTE_PACKS_DIR), levels, stats);
}

/** Where each representation of `previous` is in its packs, when they were made at `levels` (null else). */
function packsIndex(previous: IndexedRelease, levels: CompressionLevels) {
  const { representations: table } = previous;
  const { compression } = previous.head;
  const same = compression?.brotliQuality === levels.brotliQuality && compression?.gzipLevel === levels.gzipLevel;
  if (!table || !same) return null;
  const packOf = new Uint32Array(table.size);
  const offsets = new Float64Array(table.size);
  let files: PackFile[] = [];
  // `pack` is already an index into the pack files packed() gives (the manifest's list, or the one implied pack).
  for (const { row, pack, br } of table.packed((f) => (files = f))) {
    packOf[row] = pack;
    offsets[row] = br.offset;
  }
  return { table, files, packOf, offsets };
}

/**
 * The previous release's packs and where each representation is in them, when they were made at the same levels
 * (null else). A pack is checked as a carried body is, by its size (stat), not read: one missing or of another size
 * is not sound, and the representations it holds are made again.
 */
async function previousPacks(
  previous: IndexedRelease,
  dir: string,
  levels: CompressionLevels,
): Promise<PreviousPacks | null> {
  const index = packsIndex(previous, levels);
  if (!index) return null;
  const sound = new Uint8Array(index.files.length);
  index.files.forEach((f, p) => {
    const st = statSync(path.join(dir, f.path), { throwIfNoEntry: false });
    sound[p] = st?.isFile() && st.size === f.bytes ? 1 : 0;
  });
  return { dir, ...index, sound };
}

/**
 * A remote previous release's packs, made again in `dir` as the build asks for representations: each pack a file of
 * its listed size, in which a representation is put at its offset once downloaded (an object of its own on the
 * remote, read and checked as every read of a release is: its size and sha256, within the source's bounds) and written
 * straight to the file. Only the representations the build reuses are downloaded; the rest of a pack (those no body of
 * this build has, and the bytes no representation of the previous release lists) stays zeros, which no manifest
 * entry points at. One that cannot be read (missing, damaged, a host that fails) is made again, never inherited. The
 * packs are then linked or compacted as a kept dist/'s are.
 */
async function remotePacks(
  previous: IndexedRelease,
  dir: string,
  levels: CompressionLevels,
  stats: PreviousReadStats,
): Promise<PreviousPacks | null> {
  const index = packsIndex(previous, levels);
  if (!index) return null;
  const { table, files, packOf, offsets } = index;
  await mkdir(dir, { recursive: true }).catch((e) => Promise.reject(namedWriteError(e, dir)));
  const handles: FileHandle[] = [];
  const close = async () => {
    for (const h of handles.splice(0)) await h.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (const f of files) {
      const file = path.join(dir, f.path);
      const h = await open(file, 'wx').catch((e) => Promise.reject(namedWriteError(e, file)));
      handles.push(h);
      await h.truncate(f.bytes).catch((e) => Promise.reject(namedWriteError(e, file)));
    }
  } catch (e) {
    await close();
    throw e;
  }
  // Per row: 0 not asked for yet, 1 in place, 2 unreadable.
  const state = new Uint8Array(table.size);
  const reading = new Map<number, Promise<boolean>>();
  // Rows being read: however many bodies the writer has under way, no more requests at once than a modest static
  // host answers in time.
  const reads = new Budget(REMOTE_ROWS_AT_ONCE);
  const get = async (row: number): Promise<boolean> => {
    const pack = packOf[row]!;
    const { br, gzip } = table.at(row);
    let got: Buffer[];
    try {
      got = await Promise.all([br, gzip].map((s) => previous.read({ path: files[pack]!.path, ...s })));
    } catch (e) {
      state[row] = 2;
      stats.previousUnread++;
      stats.previousUnreadWhy ??= (e as Error).message;
      return false;
    }
    const file = path.join(dir, files[pack]!.path);
    const { bytesWritten } = await handles[pack]!.writev(got, offsets[row]!).catch((e) =>
      Promise.reject(namedWriteError(e, file)),
    );
    if (bytesWritten !== br.bytes + gzip.bytes) throw new Error(`${file}: a write was cut short (is the disk full?)`);
    stats.bytesWritten += bytesWritten;
    state[row] = 1;
    return true;
  };
  const read = async (row: number): Promise<boolean> => {
    await reads.take(1);
    try {
      return await get(row);
    } finally {
      reads.give(1);
    }
  };
  const fetch = (row: number): Promise<boolean> => {
    if (state[row]) return Promise.resolve(state[row] === 1);
    let p = reading.get(row);
    if (!p) {
      p = read(row).finally(() => reading.delete(row));
      reading.set(row, p);
    }
    return p;
  };
  return { dir, table, files, sound: new Uint8Array(files.length).fill(1), packOf, offsets, fetch, close };
}
