// `serve --origin URL`: the same publication fetched from a (local, plain) static host instead of the disk.
import { createServer, type Server } from 'node:http';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createKey } from '../src/gateway/keys.js';
import { startGateway, type RunningGateway } from '../src/gateway/server.js';
import { openStore } from '../src/gateway/stores/index.js';
import type { QuotaStore } from '../src/gateway/stores/types.js';
import { build } from '../src/pipeline/build.js';
import { detailFile } from '../src/publication/layout.js';
import { smallCatalog, writeFixture } from './helpers/fixture.js';

let tmp: string;
let host: Server;
let gw: RunningGateway;
let store: QuotaStore;
let key: string;
let release: string;
/** Requests the static host has answered, by path. */
const fetched = new Map<string, number>();

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-origin-'));
  await writeFixture(path.join(tmp, 'data'), smallCatalog());
  release = (await build({ dataDir: path.join(tmp, 'data'), outDir: path.join(tmp, 'out') })).releaseDir;
  // A static host that knows nothing about the API: path -> file under the release folder.
  host = createServer(async (req, res) => {
    const pathname = decodeURIComponent(new URL(req.url!, 'http://h').pathname);
    fetched.set(pathname, (fetched.get(pathname) ?? 0) + 1);
    const file = path.join(release, pathname);
    if (!file.startsWith(release + path.sep)) return void res.writeHead(404).end();
    try {
      const body = await readFile(file); // before writeHead: a missing file is a 404, not a 200 that never ends
      res.writeHead(200).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
  store = await openStore('memory:');
  key = (await createKey(store, 'origin test')).key;
  gw = await startGateway({
    origin: `http://127.0.0.1:${(host.address() as AddressInfo).port}/`,
    port: 0,
    host: '127.0.0.1',
    store: 'memory:',
    storeInstance: store,
    quota: 1000,
    cacheBytes: 1 << 20,
    pollMs: 60_000,
    logLevel: 'silent',
  });
});
afterAll(async () => {
  await gw?.close();
  await store?.close();
  await new Promise((r) => host?.close(r));
  await rm(tmp, { recursive: true, force: true });
});

it('serves the bytes the static host holds, with the manifest validators', async () => {
  const rel = detailFile({ slug: 'alpha', locale: 'ru', lane: 'verified', displayOnly: false, include: ['pricing'] });
  const r = await fetch(`${gw.url}/api/v1/models/alpha?locale=ru&include=pricing`, { headers: { 'x-api-key': key } });
  expect(r.status).toBe(200);
  expect(Buffer.from(await r.arrayBuffer()).equals(await readFile(path.join(release, rel)))).toBe(true);
  const list = await fetch(`${gw.url}/api/v1/models?q=alpha&page_size=3`, { headers: { 'x-api-key': key } });
  expect((await list.json()).data.models.map((m: { slug: string }) => m.slug)).toEqual(['alpha']);
});

it('fetches a body once for many concurrent requests that miss on it', async () => {
  const rel = detailFile({
    slug: 'gamma',
    locale: 'en',
    lane: 'verified',
    displayOnly: false,
    include: ['benchmarks', 'pricing'],
  });
  const rs = await Promise.all(
    Array.from({ length: 24 }, () =>
      fetch(`${gw.url}/api/v1/models/gamma?include=pricing,benchmarks`, { headers: { 'x-api-key': key } }),
    ),
  );
  const want = await readFile(path.join(release, rel));
  for (const r of rs) {
    expect(r.status).toBe(200);
    expect(Buffer.from(await r.arrayBuffer()).equals(want)).toBe(true);
  }
  expect([...fetched].filter(([p]) => p.endsWith(`/${rel}`)).map(([, n]) => n)).toEqual([1]);
});

it('refuses bytes that do not match the manifest (a host switched mid-way) with 503, never a mix', async () => {
  const rel = detailFile({ slug: 'beta', locale: 'zh', lane: 'verified', displayOnly: false, include: [] });
  await writeFile(path.join(release, rel), '{"tampered":true}');
  const r = await fetch(`${gw.url}/api/v1/models/beta?locale=zh`, { headers: { 'x-api-key': key } });
  expect(r.status).toBe(503);
  expect(r.headers.get('content-type')).toBe('application/problem+json');
  expect(await r.text()).not.toContain('tampered');
});

it('checks a list artifact against the manifest too: composed answers from other bytes are refused with 503', async () => {
  const file = path.join(release, 'artifacts/all.display.json');
  const text = await readFile(file, 'utf8');
  expect(text).toContain('"name":"ALPHA');
  await writeFile(file, text.replaceAll('"name":"ALPHA', '"name":"TAMPERED ALPHA'));
  const r = await fetch(`${gw.url}/api/v1/models?q=alpha&lane=all&includeDisplayOnly=true&page_size=3`, {
    headers: { 'x-api-key': key },
  });
  expect(r.status).toBe(503);
  expect(await r.text()).not.toContain('TAMPERED');
});

it('a rebuild of the same revision with other page sizes is a new publication: the gateway switches to it', async () => {
  const data = path.join(tmp, 'data');
  const before = await build({ dataDir: data, outDir: path.join(tmp, 'sizes-3'), pageSizes: [3] });
  const after = await build({ dataDir: data, outDir: path.join(tmp, 'sizes-default') });
  expect(after.revision).toBe(before.revision);
  const shared = release;
  release = before.releaseDir;
  const own = await startGateway({
    origin: `http://127.0.0.1:${(host.address() as AddressInfo).port}/`,
    port: 0,
    host: '127.0.0.1',
    store: 'memory:',
    storeInstance: store,
    quota: 1000,
    cacheBytes: 1 << 20,
    pollMs: 3_600_000,
    logLevel: 'silent',
  });
  try {
    const url = `${own.url}/api/v1/models?page_size=3&page=2&locale=zh`;
    const prebuilt = await fetch(url, { headers: { 'x-api-key': key } });
    expect(prebuilt.status).toBe(200);
    const bytes = Buffer.from(await prebuilt.arrayBuffer());
    release = after.releaseDir; // the host now holds the rebuild, which has no page_size=3 files
    // The old manifest's file is gone: one 503, then the gateway finds the rebuild (a new id for the same revision)
    // and composes the page, byte for byte the file it served before.
    const gone = await fetch(url.replace('page=2', 'page=1'), { headers: { 'x-api-key': key } });
    expect(gone.status).toBe(503);
    // The page asked first may still be answered from the old publication's cache until the switch is done.
    for (let i = 0; i < 250 && own.publication().meta.pageSizes.includes(3); i++)
      await new Promise((r) => setTimeout(r, 20));
    const again = await fetch(url, { headers: { 'x-api-key': key } });
    expect(again.status).toBe(200);
    expect(Buffer.from(await again.arrayBuffer()).equals(bytes)).toBe(true);
    expect(own.publication().meta.pageSizes).not.toContain(3);
  } finally {
    release = shared;
    await own.close();
  }
});

it('refuses a manifest that is not the one publication.json names (two builds of one revision mid-upload)', async () => {
  const { Publication, BodyCache } = await import('../src/gateway/publication.js');
  const fresh = (await build({ dataDir: path.join(tmp, 'data'), outDir: path.join(tmp, 'mid-upload') })).releaseDir;
  // The same files, but a manifest whose bytes differ from the one publication.json was written with.
  const origin = {
    description: 'a host mid-upload',
    currentId: async () => 'id',
    read: async (_id: string, file: string) => {
      const bytes = await readFile(path.join(fresh, file));
      return file === 'manifest.json' ? Buffer.concat([bytes, Buffer.from(' ')]) : bytes;
    },
  };
  await expect(Publication.load(origin, 'id', new BodyCache(1 << 20), { verify: true })).rejects.toThrow(
    /manifest\.json is not the one publication\.json names/,
  );
  // From the local disk (no verify) it is not checked: one folder is one build.
  expect((await Publication.load(origin, 'id', new BodyCache(1 << 20))).revision).toMatch(/^r[0-9a-f]{12}$/);
});

it('a body the host cuts short is an error naming its URL (it was a bare "terminated")', async () => {
  const { httpOrigin } = await import('../src/gateway/origins/http.js');
  const cutting = createServer((_req, res) => {
    res.writeHead(200, { 'content-length': '1000' });
    res.write('{"half":');
    setTimeout(() => res.destroy(), 20);
  });
  await new Promise<void>((r) => cutting.listen(0, '127.0.0.1', r));
  try {
    const base = `http://127.0.0.1:${(cutting.address() as AddressInfo).port}/pub/current`;
    await expect(httpOrigin(base).read('id', 'manifest.json')).rejects.toThrow(`origin ${base}/manifest.json: `);
    await expect(httpOrigin(base).currentId()).rejects.toThrow(`origin ${base}/publication.json: `);
  } finally {
    await new Promise((r) => cutting.close(r));
  }
});
