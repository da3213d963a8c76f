// `mkdir -p` without Node's recursive mkdir, which loops forever at 100% CPU where mkdir(2) answers ENOENT under a
// parent that exists (/proc, /sys: `--store sqlite:/proc/x/gateway.db` hung the CLI).
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';

/** Creates `dir` and its missing parents, one level at a time; a level that cannot be made throws mkdir's error. */
export function makeDirs(dir: string): void {
  const missing: string[] = [];
  for (let d = path.resolve(dir); !existsSync(d); ) {
    missing.push(d);
    const up = path.dirname(d);
    if (up === d) break;
    d = up;
  }
  for (const level of missing.reverse()) {
    try {
      mkdirSync(level);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e; // made meanwhile by another process: fine
    }
  }
}
