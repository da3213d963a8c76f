// A build's output folder on the local disk, as the build and the gateway's `serve --dir` both read it:
//   <out>/.modelpub-publication   marker: this folder is ours (a folder without it, and not empty, is refused)
//   <out>/current -> releases/<n>-<revision>  the live release; replaced by rename(2), so readers see old or new
//   <out>/releases/<n>-<revision>/            one complete release (layout.ts)
//   <out>/.staging-*               a build in progress
import { lstat, readdir, readlink, stat } from 'node:fs/promises';
import path from 'node:path';

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

/** The live release folder, or null before the first publication. */
export async function currentRelease(out: string): Promise<string | null> {
  const target = await readlink(path.join(out, CURRENT)).catch(() => null);
  return target ? path.resolve(out, target) : null;
}
