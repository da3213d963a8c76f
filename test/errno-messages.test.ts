// Errors of the file system reach the user naming the file they concern, never as a bare errno message: Node's
// message for a failed read(2) is "EISDIR: illegal operation on a directory, read", and SQLite's for a file it cannot
// open is "unable to open database file". Each case runs the command as a user would and reads its one error line.
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../src/pipeline/build.js';
import { ensureCompiled, runCli } from './helpers/cli.js';
import { smallCatalog, writeFixture } from './helpers/fixture.js';

let tmp: string;
/** A release folder whose manifest.json is a folder. */
let damaged: string;
/** A file where a folder is expected. */
let file: string;

beforeAll(async () => {
  ensureCompiled();
  tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-errno-'));
  await writeFixture(path.join(tmp, 'data'), smallCatalog());
  const r = await build({ dataDir: path.join(tmp, 'data'), outDir: path.join(tmp, 'dist') });
  damaged = path.join(tmp, 'damaged');
  await cp(r.releaseDir, damaged, { recursive: true });
  await rm(path.join(damaged, 'manifest.json'));
  await mkdir(path.join(damaged, 'manifest.json'));
  file = path.join(tmp, 'notes.txt');
  await writeFile(file, 'not a publication');
});
afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

/** The error line of a command that must fail: its exit code and stderr. */
const failing = async (args: string[]) => {
  const r = await runCli(args);
  return { code: r.code, stderr: r.stderr.trim() };
};

describe('a file-system error names its file', () => {
  it('serve --dir and diff --against a release whose manifest.json is a folder (EISDIR)', async () => {
    const named = `cannot read ${path.join(damaged, 'manifest.json')}: illegal operation on a directory (EISDIR)`;
    const serve = await failing(['serve', '--dir', damaged, '--store', 'memory:', '--port', '0']);
    expect(serve.code).toBe(1);
    expect(serve.stderr).toContain(named);
    const diff = await failing(['diff', '--data', path.join(tmp, 'data'), '--against', damaged]);
    expect(diff).toEqual({ code: 2, stderr: `modelpub: ${named}` });
  });

  it('publish --from a file (ENOTDIR): it holds no publication', async () => {
    const r = await failing(['publish', '--from', file, '--to', pathToFileURL(path.join(tmp, 'remote')).href]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--from ${file} holds no publication`);
    expect(r.stderr).not.toMatch(/ENOTDIR/);
  });

  it('keys with a store SQLite cannot open: a folder (EISDIR), a file under /sys (EACCES, even for root)', async () => {
    const folder = await failing(['keys', 'create', '--store', `sqlite:${tmp}`]);
    expect(folder).toEqual({
      code: 1,
      stderr: `modelpub: Store "sqlite:${tmp}": cannot open ${tmp}: illegal operation on a directory (EISDIR)`,
    });
    const create = await failing(['keys', 'create', '--store', 'sqlite:/sys/modelpub-test.db']);
    expect(create).toEqual({
      code: 1,
      stderr:
        'modelpub: Store "sqlite:/sys/modelpub-test.db": cannot open /sys/modelpub-test.db: permission denied (EACCES)',
    });
  });
});
