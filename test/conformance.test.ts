// Acceptance: the black-box checker in ../shared/conformance against `modelpub serve` on the default publication,
// run through the real CLI (compiled lib/, as `npm test` compiles first), with a SQLite store and fresh keys.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');
const checker = path.resolve(root, '../shared/conformance/check.mjs');
const cli = path.join(root, 'bin/modelpub.js');
const hasChecker = existsSync(checker);
if (!hasChecker) console.warn(`conformance checker not found at ${checker}: conformance test skipped`);

describe.skipIf(!hasChecker)('conformance checker against modelpub serve (default publication)', () => {
  let tmp: string;
  let server: ChildProcess | undefined;
  let url = '';
  const store = () => `sqlite:${path.join(tmp, 'gateway.db')}`;
  const newKey = () =>
    execFileSync('node', [cli, 'keys', 'create', '--store', store(), '--label', 'conformance'], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .at(-1)!;

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-conf-'));
    execFileSync(
      'node',
      [cli, 'build', '--data', path.join(root, 'data'), '--out', path.join(tmp, 'dist'), '--quiet'],
      { stdio: 'pipe' },
    );
    server = spawn(
      'node',
      [cli, 'serve', '--dir', path.join(tmp, 'dist'), '--port', '0', '--store', store(), '--log', 'silent'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    url = await new Promise<string>((resolve, reject) => {
      let out = '';
      server!.stdout!.on('data', (d: Buffer) => {
        out += d;
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      server!.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}`)));
    });
  }, 180_000);
  afterAll(async () => {
    server?.kill('SIGTERM');
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('passes every check, the quota group included', () => {
    let out = '';
    let code = 0;
    try {
      out = execFileSync('node', [checker, '--base', url, '--key', newKey(), '--quota-key', newKey()], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (e) {
      const err = e as { stdout: string; status: number };
      [out, code] = [err.stdout, err.status];
    }
    const failures = out.split('\n').filter((l) => l.startsWith('FAIL'));
    expect(failures).toEqual([]);
    expect(out.trim().split('\n').at(-1)).toMatch(/^\d+ passed, 0 failed$/);
    expect(code).toBe(0);
  }, 180_000);
});
