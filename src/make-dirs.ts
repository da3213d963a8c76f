// `mkdir -p` without Node's recursive mkdir, which loops forever at 100% CPU where mkdir(2) answers ENOENT under a
// parent that exists (/proc, /sys: `--store sqlite:/proc/x/gateway.db` hung the CLI).
import { existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';

const isDir = (p: string) => statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false;

/**
 * Creates `dir` and its missing parents, one level at a time. Like `mkdir -p`, fails with mkdir's error, naming the
 * level, where a level cannot be made or something other than a folder is in the way (a file, a dangling link).
 */
export function makeDirs(dir: string): void {
  const target = path.resolve(dir);
  const missing: string[] = [];
  for (let d = target; !existsSync(d); ) {
    missing.push(d);
    const up = path.dirname(d);
    if (up === d) break;
    d = up;
  }
  if (missing.length === 0 && !isDir(target)) mkdirSync(target); // throws EEXIST naming it
  for (const level of missing.reverse()) {
    try {
      mkdirSync(level);
    } catch (e) {
      // EEXIST: made meanwhile by another process (fine), or a dangling link (not fine).
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || !isDir(level)) throw e;
    }
  }
}
