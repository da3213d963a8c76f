// Reading a publication folder back: every file with its hash, size and inode, symlinks with their targets.
import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';

export interface TreeFile {
  sha256: string;
  bytes: number;
  ino: number;
}
export interface Tree {
  files: Map<string, TreeFile>;
  links: Map<string, string>;
  dirs: Set<string>;
}

export const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/** Every entry under dir (symlinks are not followed), by path relative to dir with forward slashes. */
export async function readTree(dir: string): Promise<Tree> {
  const t: Tree = { files: new Map(), links: new Map(), dirs: new Set() };
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const abs = path.join(e.parentPath, e.name);
    const rel = path.relative(dir, abs).split(path.sep).join('/');
    if (e.isSymbolicLink()) t.links.set(rel, await readlink(abs));
    else if (e.isDirectory()) t.dirs.add(rel);
    else {
      const [buf, st] = await Promise.all([readFile(abs), lstat(abs)]);
      t.files.set(rel, { sha256: sha256(buf), bytes: buf.length, ino: st.ino });
    }
  }
  return t;
}

/** Paths and hashes only, sorted: what two deterministic builds must share. */
export const fingerprint = (t: Tree) => ({
  files: [...t.files].map(([p, f]) => `${p} ${f.sha256}`).sort(),
  links: [...t.links].map(([p, target]) => `${p} -> ${target}`).sort(),
  dirs: [...t.dirs].sort(),
});

/** Every file under dir, with its bytes. */
export async function readAll(dir: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const abs = path.join(e.parentPath, e.name);
    out.set(path.relative(dir, abs).split(path.sep).join('/'), await readFile(abs));
  }
  return out;
}
