// The manifest's entries kept out of the heap (publication/manifest-log.ts): manifest.json written from the log is
// byte for byte JSON.stringify of the manifest with its entries sorted by path, and the change list is what the
// entries and the previous release's say.
import { createHash } from 'node:crypto';
import { mkdtemp, open, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { BodyRepresentations, Manifest, ManifestEntry } from '../src/publication/files.js';
import { ManifestLog, writeManifest } from '../src/publication/manifest-log.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'manifest-log-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const hex = (s: string) => createHash('sha256').update(s).digest('hex');
const entry = (p: string, body = p): ManifestEntry => ({
  path: p,
  sha256: hex(body),
  bytes: body.length,
  content_type: 'application/json; charset=utf-8',
  revision: 'r000000000001',
  last_modified: '2026-01-01T00:00:00.000Z',
});

async function written(
  log: ManifestLog,
  head: Omit<Manifest, 'files' | 'representations'>,
  reps: Manifest['representations'],
) {
  const file = path.join(dir, 'manifest.json');
  const out = await open(file, 'w');
  const sha = await writeManifest(out, head, log, reps ? Object.entries(reps) : null).finally(() => out.close());
  return { bytes: await readFile(file), sha };
}

it('writes the bytes JSON.stringify gives for the manifest, entries in path order, through small chunks', async () => {
  // Enough entries that the log flushes to its file several times (4 MB chunks), pushed out of order.
  const paths = Array.from({ length: 40_000 }, (_, i) => `api/v1/models/m${(i * 7919) % 40_000}/ru/é${i % 3}.json`);
  const log = new ManifestLog(path.join(dir, '.log'), null);
  for (const p of paths) log.push({ ...entry(p), bytes: p.length * 1000 });
  await log.seal();
  const reps: Record<string, BodyRepresentations> = {};
  for (const p of paths.slice(0, 50).sort((a, b) => (hex(a) < hex(b) ? -1 : 1)))
    reps[hex(p)] = { br: { sha256: hex(`br${p}`), bytes: 3 }, gzip: { sha256: hex(`gz${p}`), bytes: 4 } };
  const head = {
    schemaVersion: '2.1.0',
    publicationRevision: 'r000000000001',
    publishedAt: '2026-01-01T00:00:00.000Z',
  };
  const manifest: Manifest = {
    ...head,
    files: paths.map((p) => ({ ...entry(p), bytes: p.length * 1000 })).sort((a, b) => (a.path < b.path ? -1 : 1)),
    representations: reps,
    compression: { brotliQuality: 6, gzipLevel: 6 },
  };
  const { bytes, sha } = await written(log, { ...head, compression: manifest.compression }, reps);
  expect(bytes.toString()).toBe(JSON.stringify(manifest));
  expect(sha).toBe(createHash('sha256').update(bytes).digest('hex'));
  await log.remove();
  expect(await readdir(dir)).toEqual(['manifest.json']);
});

it('writes an empty manifest, and one without representations', async () => {
  const head = {
    schemaVersion: '2.1.0',
    publicationRevision: 'r000000000001',
    publishedAt: '2026-01-01T00:00:00.000Z',
  };
  const empty = new ManifestLog(path.join(dir, '.log'), null);
  await empty.seal();
  expect((await written(empty, head, undefined)).bytes.toString()).toBe(JSON.stringify({ ...head, files: [] }));
  await empty.remove();
  const one = new ManifestLog(path.join(dir, '.log'), null);
  one.push(entry('b'));
  one.push(entry('a'));
  await one.seal();
  const files = [entry('a'), entry('b')];
  expect((await written(one, head, undefined)).bytes.toString()).toBe(JSON.stringify({ ...head, files }));
  await one.remove();
});

it('lists the paths added, changed and removed against the previous entries, sorted', async () => {
  const previous = new Map(['a', 'c', 'd', 'z'].map((p) => [p, entry(p)]));
  const log = new ManifestLog(path.join(dir, '.log'), previous);
  for (const e of [entry('d', 'new bytes'), entry('b'), entry('a'), entry('e'), entry('c', 'other')]) log.push(e);
  await log.seal();
  expect(log.changeList('r000000000002', 'r000000000001')).toEqual({
    publicationRevision: 'r000000000002',
    previousRevision: 'r000000000001',
    added: ['b', 'e'],
    changed: ['c', 'd'],
    removed: ['z'],
  });
  expect(log.length).toBe(5);
  await log.remove();
});
