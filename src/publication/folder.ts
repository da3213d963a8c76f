// A build's output folder on the local disk, as the build and the gateway's `serve --dir` both read it:
//   <out>/.modelpub-publication   marker: this folder is ours (a folder without it, and not empty, is refused)
//   <out>/current -> releases/<n>-<revision>  the live release; replaced by rename(2), so readers see old or new
//   <out>/releases/<n>-<revision>/            one complete release (layout.ts)
//   <out>/.staging-*               a build in progress
import { lstat, open, readdir, readFile, readlink, stat } from 'node:fs/promises';
import path from 'node:path';
import { UsageError } from '../errors.js';
import type { StoredBytes } from './layout.js';

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
 * The bytes `s` names in a release folder: a whole file, or its range of one. A range past the end of the file comes
 * back short, and the caller's sha256 check refuses it like any damaged body.
 */
export async function readStored(releaseDir: string, s: StoredBytes): Promise<Buffer> {
  const file = path.join(releaseDir, s.path);
  if (s.offset === undefined) return readFile(file);
  const handle = await open(file, 'r');
  try {
    const out = Buffer.allocUnsafe(s.bytes);
    const { bytesRead } = await handle.read(out, 0, s.bytes, s.offset);
    return out.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
