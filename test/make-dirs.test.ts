// makeDirs: `mkdir -p` semantics, one level at a time (Node's recursive mkdir spins under /proc: cli-gateway.test.ts).
import { mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeDirs } from '../src/make-dirs.js';

const tmp = mkdtempSync(path.join(tmpdir(), 'modelpub-mkdirs-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('makeDirs', () => {
  it('creates missing levels, and accepts a folder that exists (relative paths, trailing slashes, links to folders)', () => {
    makeDirs(`${path.join(tmp, 'a', 'b', 'c')}/`);
    expect(statSync(path.join(tmp, 'a', 'b', 'c')).isDirectory()).toBe(true);
    makeDirs(path.join(tmp, 'a', 'b'));
    makeDirs(path.relative(process.cwd(), path.join(tmp, 'rel', 'x')));
    expect(statSync(path.join(tmp, 'rel', 'x')).isDirectory()).toBe(true);
    symlinkSync(path.join(tmp, 'a'), path.join(tmp, 'link-to-a'));
    makeDirs(path.join(tmp, 'link-to-a', 'd'));
    expect(statSync(path.join(tmp, 'a', 'd')).isDirectory()).toBe(true);
  });

  it('fails, naming the level, where a file or a dangling link is in the way', () => {
    writeFileSync(path.join(tmp, 'file'), '');
    symlinkSync(path.join(tmp, 'file'), path.join(tmp, 'link-to-file'));
    symlinkSync(path.join(tmp, 'nowhere'), path.join(tmp, 'dangling'));
    for (const [p, code] of [
      ['file', 'EEXIST'],
      ['link-to-file', 'EEXIST'],
      ['dangling', 'EEXIST'],
      ['file/below', 'ENOTDIR'],
      ['dangling/below', 'EEXIST'],
    ] as const) {
      expect(() => makeDirs(path.join(tmp, p)), p).toThrow(
        expect.objectContaining({ code, message: expect.stringContaining(path.join(tmp, p.split('/')[0]!)) }),
      );
    }
  });
});
