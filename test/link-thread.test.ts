// linkThread: a rebuild's carried files, hard-linked on a thread of their own when they are there at the size listed.
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { linkThread } from '../src/publication/link-thread.js';
import { withTemp } from './helpers/fixture.js';

describe('linkThread', () => {
  it('links each file there at its size, in batches, making folders; refuses another size, a folder, a missing file', async () => {
    await withTemp(async (tmp) => {
      const from = path.join(tmp, 'old');
      const to = path.join(tmp, 'new');
      const files = Array.from({ length: 300 }, (_, i) => `api/v1/models/m${i % 7}/f${i}.json`);
      for (const [i, f] of files.entries()) {
        mkdirSync(path.dirname(path.join(from, f)), { recursive: true });
        writeFileSync(path.join(from, f), 'x'.repeat(i));
      }
      mkdirSync(path.join(from, 'a-folder.json'));
      mkdirSync(to);
      const links = linkThread(from, to);
      try {
        // Asked for at once: more than a batch, all linked.
        const linked = await Promise.all(files.map((f, i) => links.link(f, i)));
        expect(linked.every(Boolean)).toBe(true);
        for (const f of files) expect(statSync(path.join(to, f)).ino).toBe(statSync(path.join(from, f)).ino);
        const refused = await Promise.all([
          links.link('api/v1/models/m1/f8.json', 9), // 8 bytes there
          links.link('a-folder.json', 4096),
          links.link('missing/file.json', 0),
        ]);
        expect(refused).toEqual([false, false, false]);
        expect(existsSync(path.join(to, 'a-folder.json'))).toBe(false);
        expect(existsSync(path.join(to, 'missing'))).toBe(false);
      } finally {
        await links.close();
      }
      await expect(links.link(files[0]!, 0)).rejects.toThrow('the link thread is closed');
    });
  });
});
