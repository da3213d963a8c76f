// A publication on the local disk: either a build's --out folder (the live release is its `current` link) or
// one release folder itself. The id is the resolved release folder, so a build's switch shows up as a new id
// while the old release stays readable for requests already under way.
import { readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { readStored } from '../../publication/folder.js';
import { readRelease } from '../../publication/reader.js';
import type { Origin } from './types.js';

export function dirOrigin(dir: string): Origin {
  const root = path.resolve(dir);
  return {
    description: root,
    verifies: false,
    async currentId() {
      const cur = path.join(root, 'current');
      const st = await stat(cur).catch(() => null);
      return realpath(st?.isDirectory() ? cur : root);
    },
    // One folder is one build: its files are not checked against each other's hashes (a build wrote them together).
    release: (id) =>
      readRelease(
        (file) => readFile(path.join(id, file)),
        (file) => `publication ${id}: ${file}`,
      ),
    read: (id, stored) => readStored(id, stored),
    close: async () => {},
  };
}
