// The linker hard-links a previous release's files into a new one on a thread of its own: a file is linked only when
// it is there with the size the manifest lists, and every answer comes back, in batches larger than one message.
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLinker } from '../src/publication/linker.js';
import { withTemp } from './helpers/fixture.js';

describe('linker', () => {
  it('links files of the listed size, making their folders, and refuses the missing, the resized and the folders', () =>
    withTemp(async (dir) => {
      const [from, to] = [path.join(dir, 'old'), path.join(dir, 'new')];
      await mkdir(path.join(from, 'a/b'), { recursive: true });
      await writeFile(path.join(from, 'a/b/one.json'), '{"one":1}');
      await writeFile(path.join(from, 'two.json'), '{"two":2}');
      const linker = createLinker(from, to);
      const answers = await Promise.all([
        linker.link('a/b/one.json', 9),
        linker.link('two.json', 8), // listed a byte short: damaged, not inherited
        linker.link('a/missing.json', 3),
        linker.link('a/b', 4096), // a folder is no body
      ]);
      await linker.close();
      expect(answers).toEqual([true, false, false, false]);
      const [a, b] = [await stat(path.join(from, 'a/b/one.json')), await stat(path.join(to, 'a/b/one.json'))];
      expect(b.ino).toBe(a.ino);
      await expect(stat(path.join(to, 'two.json'))).rejects.toThrow(/ENOENT/);
    }));

  it('answers every one of thousands of links asked for at once, and false once closed', () =>
    withTemp(async (dir) => {
      const [from, to] = [path.join(dir, 'old'), path.join(dir, 'new')];
      const files = Array.from({ length: 1000 }, (_, i) => `d${i % 7}/f${i}.json`);
      for (const f of files) {
        await mkdir(path.dirname(path.join(from, f)), { recursive: true });
        await writeFile(path.join(from, f), f);
      }
      const linker = createLinker(from, to);
      // Every other one listed with a wrong size: the answers must keep to their own file through the batches.
      const answers = await Promise.all(files.map((f, i) => linker.link(f, f.length + (i % 2))));
      expect(answers).toEqual(files.map((_, i) => i % 2 === 0));
      for (const [i, f] of files.entries()) {
        if (i % 2 === 0) expect(await readFile(path.join(to, f), 'utf8')).toBe(f);
      }
      await linker.close();
      expect(await linker.link(files[0]!, files[0]!.length)).toBe(false);
    }));
});
