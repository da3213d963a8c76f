// The previous release's manifest read on a thread of its own (publication/manifest-thread.ts), run compiled (lib/) as
// a build runs it: its tables come back through postMessage the tables read here, a damaged manifest gives the error
// a read here gives, and a build's read ahead (folder.ts readLiveAhead) is taken only while its release is still live.
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { build } from '../src/pipeline/build.js';
import type { BodyRepresentations, Manifest, ManifestEntry } from '../src/publication/files.js';
import { readLiveAhead } from '../src/publication/folder.js';
import type * as Thread from '../src/publication/manifest-thread.js';
import { readManifestIndex } from '../src/publication/manifest-thread.js';
import type { IndexedManifest } from '../src/publication/reader.js';
import { ensureCompiled, ROOT } from './helpers/cli.js';
import { model, smallCatalog, writeFixture } from './helpers/fixture.js';

const hex = (s: string) => createHash('sha256').update(s).digest('hex');

let tmp: string;
let compiled: typeof Thread;
beforeAll(async () => {
  ensureCompiled();
  compiled = await import(pathToFileURL(path.join(ROOT, 'lib/publication/manifest-thread.js')).href);
  tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-manifest-thread-'));
});
afterAll(() => rm(tmp, { recursive: true, force: true }));

/** A manifest of `n` entries (several slices), two packs, and the odd `inputs` a table keeps apart. */
function manifest(n: number): Manifest {
  const files: ManifestEntry[] = [];
  const representations: Record<string, BodyRepresentations> = {};
  for (let i = 0; i < n; i++) {
    const body = `body ${i % (n - 3)}`;
    const e: ManifestEntry = {
      path: `api/v1/models/m${i}/en.all.public.base.json${i === 7 ? 'é' : ''}`,
      sha256: hex(body),
      bytes: 100 + i,
      content_type: 'application/json; charset=utf-8',
      revision: `r00000000000${i % 3}`,
      last_modified: `2026-01-0${1 + (i % 4)}T00:00:00.000Z`,
      ...(i % 4 === 1 ? { inputs: createHash('sha256').update(`in ${i}`).digest('base64url') } : {}),
      ...(i === 2 ? { inputs: 'any other string' } : {}),
    };
    files.push(e);
    representations[e.sha256] = {
      br: { sha256: hex(`br ${body}`), bytes: 10 + i },
      gzip: { sha256: hex(`gz ${body}`), bytes: 20 + i },
    };
  }
  let offset = 0;
  for (const r of Object.values(representations)) {
    r.pack = 0;
    r.offset = offset;
    offset += r.br.bytes + r.gzip.bytes;
  }
  return {
    schemaVersion: '1.0.0',
    publicationRevision: 'r000000000002',
    publishedAt: '2026-01-04T00:00:00.000Z',
    files,
    representations,
    packs: [{ path: 'representations-r000000000002.pack', bytes: offset }],
    compression: { brotliQuality: 6, gzipLevel: 6 },
  };
}

/** Everything a build asks of an indexed manifest, as plain values. */
function contents(m: IndexedManifest) {
  const r = m.representations!;
  return {
    head: m.head,
    sha256: m.sha256,
    files: [...m.files.entries()],
    latest: m.files.latestLastModified(),
    representations: [...r],
    packs: r.packFiles(),
    rows: [...r].map(([identity]) => [r.rowOf(identity), r.bytesOf(r.rowOf(identity))]),
  };
}

it('reads a manifest on a thread of its own into the tables a read here gives, found again by path and digest', async () => {
  const m = manifest(6000);
  const file = path.join(tmp, 'manifest.json');
  await writeFile(file, JSON.stringify(m));
  const here = await readManifestIndex(file);
  const aside = compiled.readManifestIndexAside(file);
  expect(aside.thread).not.toBeNull();
  const there = await aside.manifest;
  expect(contents(there)).toEqual(contents(here));
  for (const f of m.files) expect(there.files.get(f.path)).toEqual(f);
  expect(there.files.has('api/v1/none.json')).toBe(false);
  expect(there.representations!.get(hex('no such body'))).toBeUndefined();
  // The TypeScript sources have no module a thread can run: the read is this thread's, with the same tables.
  const inProcess = (await import('../src/publication/manifest-thread.js')).readManifestIndexAside(file);
  expect(inProcess.thread).toBeNull();
  expect(contents(await inProcess.manifest)).toEqual(contents(here));
});

it('gives a damaged manifest the error a read here gives; a cancelled read is not taken', async () => {
  const file = path.join(tmp, 'damaged.json');
  const m = manifest(3000);
  (m.files[2500] as { bytes: unknown }).bytes = -1;
  await writeFile(file, JSON.stringify(m));
  const error = await readManifestIndex(file).then(
    () => null,
    (e: Error) => e.message,
  );
  expect(error).toMatch(/damaged\.json: files\.2500\.bytes/);
  await expect(compiled.readManifestIndexAside(file).manifest).rejects.toThrow(error!);
  await expect(compiled.readManifestIndexAside(path.join(tmp, 'none.json')).manifest).rejects.toThrow(/none\.json/);
  const cancelled = compiled.readManifestIndexAside(path.join(tmp, 'manifest.json'));
  cancelled.cancel();
  await expect(cancelled.manifest).rejects.toThrow(/cancelled/);
});

it("takes a build's read ahead only while its release is still the live one", async () => {
  const data = path.join(tmp, 'data');
  const out = path.join(tmp, 'out');
  const spec = smallCatalog();
  await writeFixture(data, spec);
  const first = await build({ dataDir: data, outDir: out });
  const ahead = await readLiveAhead(out);
  // Another build switches the live release before this one asks for it (a build reads ahead before its lock).
  await writeFixture(data, { ...spec, models: [...(spec.models ?? []), model('late-model', 99)] });
  const second = await build({ dataDir: data, outDir: out });
  expect(second.revision).not.toBe(first.revision);
  const live = await ahead.liveIndexed();
  expect(live!.meta.publicationRevision).toBe(second.revision);
  expect(live!.files.size).toBe(second.files);
  // Still live: the read ahead is the one taken, the same as a read then.
  const again = await readLiveAhead(out);
  expect((await again.liveIndexed())!.meta.publicationRevision).toBe(second.revision);
  // An --out with no release yet reads nothing ahead.
  expect(await (await readLiveAhead(path.join(tmp, 'empty'))).liveIndexed()).toBeNull();
});
