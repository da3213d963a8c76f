#!/usr/bin/env node
// No source line over 140 columns (the formatter wraps code at 120, but not a long string or comment): prints each
// longer line of src/ as file:line and exits 1. Run by `npm run lint`; test/line-width.test.ts runs it too.
//   node scripts/check-line-width.mjs [DIR ...]   (default: src)
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const MAX_COLUMNS = 140;

/** Every line of the .ts, .mjs and .js files under `dirs` longer than MAX_COLUMNS, as `file:line: N columns`. */
export async function longLines(dirs) {
  const out = [];
  for (const dir of dirs) {
    for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !/\.(ts|mjs|js)$/.test(entry.name)) continue;
      const file = path.join(entry.parentPath, entry.name);
      const lines = (await readFile(file, 'utf8')).split('\n');
      lines.forEach((line, i) => {
        const columns = [...line].length; // code points: a character is a column
        if (columns > MAX_COLUMNS) out.push(`${file}:${i + 1}: ${columns} columns`);
      });
    }
  }
  return out.sort();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dirs = process.argv.slice(2);
  const long = await longLines(dirs.length ? dirs : ['src']);
  for (const l of long) console.error(`${l} (at most ${MAX_COLUMNS})`);
  process.exitCode = long.length ? 1 : 0;
}
