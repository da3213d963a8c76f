// No source line over 140 columns: the check `npm run lint` runs (scripts/check-line-width.mjs), here over src/ and
// over a folder with a line that breaks it.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');
const check = (...dirs: string[]) =>
  promisify(execFile)(process.execPath, [path.join(root, 'scripts/check-line-width.mjs'), ...dirs]).then(
    () => ({ code: 0, stderr: '' }),
    (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
  );

describe('line width', () => {
  it('src/ has no line over 140 columns', async () => {
    expect(await check(path.join(root, 'src'))).toEqual({ code: 0, stderr: '' });
  });
  it('names the file and line of a longer one, counting characters, not bytes', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'modelpub-lines-'));
    try {
      const wide = '千'.repeat(137); // 140 columns with its '// ', 414 bytes: fits
      await writeFile(path.join(dir, 'a.ts'), `const ok = 1;\n// ${'x'.repeat(138)}\n// ${wide}\n`);
      expect(await check(dir)).toEqual({ code: 1, stderr: `${path.join(dir, 'a.ts')}:2: 141 columns (at most 140)\n` });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
