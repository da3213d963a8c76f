// The gateway end to end: a fixture publication, the memory store, real keys. Its handler is called in-process
// (helpers/request.ts); a listening gateway only where the bytes on the connection are the point.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../src/pipeline/build.js';
import { createKey } from '../src/gateway/keys.js';
import { startGateway, type Gateway, type RunningGateway } from '../src/gateway/server.js';
import { MAX_QUEUED_PER_CONNECTION } from '../src/gateway/app.js';
import { connect } from 'node:net';
import { openStore } from '../src/gateway/stores/index.js';
import type { QuotaStore } from '../src/gateway/stores/types.js';
import { parseRequest } from '../src/schema/requests.js';
import { detailFile, listFile, packedRepresentations } from '../src/publication/layout.js';
import { ArtifactView, composerOf } from '../src/gateway/compose.js';
import { loadedArtifact } from '../src/gateway/artifact.js';
import type { ManifestEntry } from '../src/publication/files.js';
import { SORTS, INCLUDES } from '../src/schema/api.js';
import { model, smallCatalog, writeFixture } from './helpers/fixture.js';
import { gatewayOver, request } from './helpers/request.js';
import { tick, until } from './helpers/wait.js';
import type { HandlerOptions } from '../src/gateway/server.js';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';

let tmp: string;
let gw: Gateway;
/** A listening gateway on the same publication, for the tests of what is sent on the connection: see listening(). */
let live: RunningGateway | undefined;
let store: QuotaStore;
let key: string;
const QUOTA = 400;
const PAGE_SIZES = [1, 2, 3, 7, 100];

// Enough models for several pages, accents to search for, and the small catalog's lanes and overrides.
function catalog() {
  const spec = smallCatalog();
  spec.models!.push(
    model('zeta-ultra', 10, {
      name: 'Zêta Ultra',
      description: { en: 'A café-grade model.', zh: '一个模型。', ru: 'Модель для кафе.' },
    }),
    ...Array.from({ length: 9 }, (_, i) => model(`extra-${i}`, 20 + i, { release_date: `2024-0${1 + (i % 9)}-15` })),
  );
  return spec;
}

/** A gateway's handler on a publication folder, with the test store and quota; other options as given. */
const gatewayOn = (dir: string, o: Partial<HandlerOptions> = {}) =>
  gatewayOver(dir, { storeInstance: store, quota: QUOTA, cacheBytes: 1 << 20, pollMs: 1000, ...o });
/** The shared publication served on a loopback port, started on first use and closed after all tests. */
const listening = async () =>
  (live ??= await startGateway({
    dir: path.join(tmp, 'plain'),
    port: 0,
    host: '127.0.0.1',
    store: 'memory:',
    storeInstance: store,
    quota: QUOTA,
    cacheBytes: 1 << 24,
    pollMs: 50,
    logLevel: 'silent',
  }));

const get = (p: string, headers: Record<string, string> = {}, method = 'GET') =>
  request(gw, p, { method, headers: { 'accept-encoding': 'identity', 'x-api-key': key, ...headers } });
/** Bytes sent as they are on a new connection; everything read until the gateway closes it. */
const raw = async (bytes: string) => {
  const port = Number(new URL((await listening()).url).port);
  return new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
  });
};

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-gw-'));
  await writeFixture(path.join(tmp, 'data'), catalog());
  // The gateway serves `plain`; `full` is the same data with every list page size prebuilt, for byte comparison.
  await build({ dataDir: path.join(tmp, 'data'), outDir: path.join(tmp, 'plain') });
  await build({ dataDir: path.join(tmp, 'data'), outDir: path.join(tmp, 'full'), pageSizes: PAGE_SIZES });
  store = await openStore('memory:');
  key = (await createKey(store, 'test')).key;
  gw = await gatewayOn(path.join(tmp, 'plain'), { cacheBytes: 1 << 24, pollMs: 50 });
});
afterAll(async () => {
  await live?.close();
  await gw?.close();
  await store?.close();
  await rm(tmp, { recursive: true, force: true });
});

describe('keys', () => {
  it('answers 401 problem+json without a key, with an unknown key, on both operations', async () => {
    for (const p of ['/api/v1/models', '/api/v1/models/alpha']) {
      const none = await request(gw, p);
      expect(none.status).toBe(401);
      expect(none.headers.get('content-type')).toBe('application/problem+json');
      expect(await none.json()).toMatchObject({ status: 401, code: 'missing_api_key' });
      const wrong = await request(gw, p, {
        headers: { 'accept-encoding': 'identity', 'x-api-key': 'mp_not-a-key' },
      });
      expect(wrong.status).toBe(401);
      expect(await wrong.json()).toMatchObject({ status: 401, code: 'invalid_api_key' });
    }
  });
  it('answers the CORS preflight without a key and allows the x-api-key header', async () => {
    const r = await request(gw, `/api/v1/models`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-headers': 'x-api-key' },
    });
    expect(r.status).toBe(204);
    expect(r.headers.get('access-control-allow-headers')).toContain('x-api-key');
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    const detail = await request(gw, `/api/v1/models/alpha?locale=zh`, { method: 'OPTIONS' });
    expect(detail.status).toBe(204);
    for (const other of ['/', '/nonexistent', '/api/v1/list/en.json', '/api/v1/models/alpha/extra']) {
      const o = await request(gw, other, { method: 'OPTIONS' });
      expect(o.status, other).toBe(404); // no preflight for paths that do not exist
      expect(o.headers.get('access-control-allow-origin'), other).toBe('*'); // a browser can read why
    }
  });
  it('passes the preflight for a detail path whose slug is not canonical, so a page reads the 404 body', async () => {
    // A browser fails a request whose preflight is not 2xx with a bare network error: the page would never see why.
    for (const slug of ['Alpha', 'gpt-4.1', 'a_b', 'caf%C3%A9']) {
      const pre = await request(gw, `/api/v1/models/${slug}`, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example', 'access-control-request-headers': 'x-api-key' },
      });
      expect(pre.status, slug).toBe(204);
      const r = await get(`/api/v1/models/${slug}`, { origin: 'https://app.example' });
      expect(r.status, slug).toBe(404);
      expect(r.headers.get('access-control-allow-origin'), slug).toBe('*');
      expect(await r.json(), slug).toMatchObject({ status: 404, code: 'not_found' });
    }
  });
});

describe('serving the publication', () => {
  it('serves prebuilt bodies byte for byte with validators and version headers', async () => {
    const r = await get('/api/v1/models?include=pricing,benchmarks');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const file = await readFile(
      path.join(
        tmp,
        'plain',
        'current',
        listFile({
          locale: 'en',
          lane: 'verified',
          displayOnly: false,
          include: ['benchmarks', 'pricing'],
          sort: 'popular',
          page: 1,
          pageSize: 50,
        }),
      ),
    );
    expect(Buffer.from(await r.arrayBuffer()).equals(file)).toBe(true);
    expect(r.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);
    expect(new Date(r.headers.get('last-modified')!).toISOString()).toBe('2025-02-01T00:00:00.000Z');
    expect(r.headers.get('x-publication-revision')).toBe(gw.publication().revision);
    expect(r.headers.get('x-schema-version')).toBe('1.0.0');
    expect(r.headers.get('cache-control')).toBe('private, max-age=300');
    expect(r.headers.get('vary')).toBe('accept-encoding, x-api-key');
    expect(r.headers.get('ratelimit-policy')).toBe(`"daily";q=${QUOTA};w=86400`);
    expect(r.headers.get('ratelimit')).toMatch(/^"daily";r=\d+;t=\d+$/);
  });
  it('answers If-None-Match (lists, weak form) with 304, and lets it win over If-Modified-Since', async () => {
    const r = await get('/api/v1/models/alpha');
    const etag = r.headers.get('etag')!;
    const lm = r.headers.get('last-modified')!;
    for (const inm of [etag, `"x", ${etag}`, `W/${etag}`, '*']) {
      const c = await get('/api/v1/models/alpha', { 'if-none-match': inm });
      expect(c.status).toBe(304);
      expect(await c.text()).toBe('');
      expect(c.headers.get('etag')).toBe(etag);
      expect(c.headers.get('vary')).toBe('accept-encoding, x-api-key');
    }
    expect((await get('/api/v1/models/alpha', { 'if-none-match': '"other"', 'if-modified-since': lm })).status).toBe(
      200,
    );
    expect((await get('/api/v1/models/alpha', { 'if-modified-since': lm })).status).toBe(304);
    expect((await get('/api/v1/models/alpha', { 'if-modified-since': 'Thu, 01 Jan 2015 00:00:00 GMT' })).status).toBe(
      200,
    );
    // The obsolete HTTP-date forms count; other date-like values are not HTTP-dates and are ignored (RFC 9110 13.1.3).
    expect((await get('/api/v1/models/alpha', { 'if-modified-since': 'Tuesday, 31-Dec-30 00:00:00 GMT' })).status).toBe(
      304,
    );
    expect((await get('/api/v1/models/alpha', { 'if-modified-since': 'Tue Dec 31 00:00:00 2030' })).status).toBe(304);
    for (const notADate of [
      '2030',
      '2030-01-01',
      '12/31/2030 1:00 am',
      'Tue, 31 Dec 2030 00:00:00 +0000',
      'tomorrow',
    ]) {
      expect((await get('/api/v1/models/alpha', { 'if-modified-since': notADate })).status, notADate).toBe(200);
    }
    expect((await get('/api/v1/models/alpha?locale=zh', { 'if-none-match': etag })).status).toBe(200);
  });
  it('gives every answer its own header values and body when many are in flight (header lists and send buffers are reused)', async () => {
    const manifest = JSON.parse(await readFile(path.join(tmp, 'plain', 'current', 'manifest.json'), 'utf8')) as {
      files: { path: string; sha256: string; bytes: number }[];
    };
    const byPath = new Map(manifest.files.map((f) => [f.path, f]));
    const own = (await createKey(store, 'interleaved')).key;
    // Over real connections: a send buffer reused before the socket wrote it would show only there.
    const { url } = await listening();
    const at = (u: string, headers: Record<string, string> = {}) =>
      fetch(url + u, { headers: { 'accept-encoding': 'identity', 'x-api-key': own, ...headers } });
    const slugs = ['alpha', 'zeta-ultra', ...Array.from({ length: 9 }, (_, i) => `extra-${i}`)];
    // Prebuilt details (validators from the manifest) and composed lists (their own ETag and Last-Modified).
    const details = slugs.flatMap((slug) =>
      (['en', 'zh', 'ru'] as const).map((locale) => {
        const file = byPath.get(
          detailFile({ slug, locale, lane: 'verified', displayOnly: false, include: ['pricing'] }),
        )!;
        return { url: `/api/v1/models/${slug}?locale=${locale}&include=pricing`, file };
      }),
    );
    const lists = [1, 2, 3, 4].flatMap((page) =>
      ['extra', 'a'].map((q) => ({ url: `/api/v1/models?q=${q}&page_size=2&page=${page}&lane=all`, file: null })),
    );
    const cases = [...details, ...lists];
    const NAMES = ['etag', 'last-modified', 'x-publication-revision', 'x-schema-version', 'content-length'] as const;
    // The oracle: each URL's headers asked alone.
    const alone = new Map<string, Record<string, string | null>>();
    const aloneBody = new Map<string, Buffer>();
    for (const c of cases) {
      const r = await at(c.url);
      aloneBody.set(c.url, Buffer.from(await r.arrayBuffer()));
      alone.set(c.url, Object.fromEntries(NAMES.map((n) => [n, r.headers.get(n)])));
    }
    expect(new Set(cases.map((c) => alone.get(c.url)!.etag)).size).toBe(cases.length); // a leaked value would show
    const answers = await Promise.all(
      cases.flatMap((c) => [
        at(c.url).then(async (r) => ({ c, r, body: Buffer.from(await r.arrayBuffer()) })),
        at(c.url, { 'if-none-match': alone.get(c.url)!.etag! }).then(async (r) => ({
          c,
          r,
          body: Buffer.from(await r.arrayBuffer()),
        })),
      ]),
    );
    const remaining = new Set<string>();
    for (const { c, r, body } of answers) {
      const want = alone.get(c.url)!;
      for (const n of NAMES.slice(0, 4)) expect(r.headers.get(n), `${n} of ${c.url}`).toBe(want[n]);
      remaining.add(r.headers.get('ratelimit')!);
      if (r.status === 200) {
        expect(r.headers.get('content-length')).toBe(want['content-length']);
        expect(body.length).toBe(Number(want['content-length']));
        // Composed pages are joined into reused send buffers: one reused too early would show as another page's bytes.
        expect(body.equals(aloneBody.get(c.url)!), `body of ${c.url}`).toBe(true);
        if (c.file) {
          expect(r.headers.get('etag')).toBe(`"${c.file.sha256.slice(0, 32)}"`);
          expect(createHash('sha256').update(body).digest('hex')).toBe(c.file.sha256);
        }
      } else {
        expect(r.status).toBe(304);
        expect(r.headers.get('content-length')).toBeNull();
        expect(r.headers.get('content-type')).toBeNull();
      }
    }
    // One key, one process: each admitted request saw its own count.
    expect(remaining.size).toBe(answers.length);
  });
  it('answers HEAD with the GET headers and no body', async () => {
    const [g, h] = [await get('/api/v1/models'), await get('/api/v1/models', {}, 'HEAD')];
    expect(h.status).toBe(200);
    expect(await h.text()).toBe('');
    expect(h.headers.get('etag')).toBe(g.headers.get('etag'));
    expect(h.headers.get('content-length')).toBe(g.headers.get('content-length'));
  });
  it('rejects other methods with 405 and Allow', async () => {
    for (const m of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const r = await get('/api/v1/models', {}, m);
      expect(r.status).toBe(405);
      expect(r.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
      expect(r.headers.get('content-type')).toBe('application/problem+json');
    }
  });
  it('answers 400 naming the parameter, and 404 for unknown slugs and paths', async () => {
    const r = await get('/api/v1/models?page_size=101&sort=best');
    expect(r.status).toBe(400);
    const body = await r.json();
    expect(body.invalid_params).toEqual([
      { name: 'sort', reason: 'must be one of popular, recent, newest, alphabetical' },
      { name: 'page_size', reason: 'must be at most 100' },
    ]);
    // The detail names them too: a client that logs only title and detail still says what to change.
    expect(body.detail).toBe(
      'sort: must be one of popular, recent, newest, alphabetical; page_size: must be at most 100.',
    );
    expect((await get('/api/v1/models?page=2&page=3')).status).toBe(400);
    expect((await get('/api/v1/models/no-such-model')).status).toBe(404);
    expect((await get('/api/v2/models')).status).toBe(404);
    expect((await get('/api/v1/models/delta')).status).toBe(404); // provisional only
    expect((await get('/api/v1/models/delta?lane=provisional')).status).toBe(200);
  });
  it('says in a 404 whether the path, the form of the slug or the lane was wrong', async () => {
    // Its own key: 404s count, and the shared key's quota is spent almost exactly by the other tests.
    const own = (await createKey(store, '404 details')).key;
    const detail = async (p: string) => {
      const r = await get(p, { 'accept-encoding': 'identity', 'x-api-key': own });
      expect(r.status, p).toBe(404);
      return ((await r.json()) as { detail: string }).detail;
    };
    // A model listed with lane=all and then fetched without it: the detail names the lane, not just "no such model".
    expect(await detail('/api/v1/models/delta')).toMatch(/in lane verified \(the default\); lane=all/);
    expect(await detail('/api/v1/models/no-such-model?lane=provisional')).toMatch(/in lane provisional; lane=all/);
    expect(await detail('/api/v1/models/no-such-model?lane=all')).toBe('No published model has this slug.');
    expect(await detail('/api/v1/models/Alpha')).toMatch(/^No model has this slug: slugs are lower-case/);
    // A well-formed but over-long slug: the detail names the bound it broke, not only the characters.
    expect(await detail(`/api/v1/models/${'a'.repeat(161)}`)).toContain('at most 160 characters');
    for (const p of ['/api/v2/models', '/api/v1/models/alpha/extra', '/api/v1/models/'])
      expect(await detail(p), p).toMatch(/^No such path/);
  });
});

describe('composed answers', () => {
  it('are byte-identical to what the build writes when the page size is prebuilt', async () => {
    const full = path.join(tmp, 'full', 'current');
    let compared = 0;
    for (const pageSize of PAGE_SIZES) {
      for (const sort of SORTS) {
        const variants = [
          ['verified', false, [], 'ru'],
          ['all', true, [...INCLUDES], 'ru'],
          ['provisional', false, ['pricing'], 'ru'],
          ['verified', true, ['benchmarks', 'pricing'], 'zh'],
        ] as const;
        for (const [lane, displayOnly, include, locale] of variants) {
          const total = lane === 'provisional' ? 2 : lane === 'all' ? 14 : 13;
          for (let page = 1; page <= Math.max(1, Math.ceil(total / pageSize)); page++) {
            const q = new URLSearchParams({
              page: String(page),
              page_size: String(pageSize),
              sort,
              lane,
              locale,
              includeDisplayOnly: String(displayOnly),
            });
            if (include.length) q.set('include', include.join(','));
            const r = await get(`/api/v1/models?${q}`);
            expect(r.status).toBe(200);
            const want = await readFile(
              path.join(full, listFile({ locale, lane, displayOnly, include: [...include], sort, page, pageSize })),
            );
            expect(Buffer.from(await r.arrayBuffer()).toString()).toBe(want.toString());
            compared++;
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(100);
  });
  it('after a build that changed only the attribution, are byte-identical to a fresh build of the new data (new revision, new attribution)', async () => {
    const data = path.join(tmp, 'attr-data');
    const out = path.join(tmp, 'attr-out');
    await writeFixture(data, catalog());
    await build({ dataDir: data, outDir: out });
    const site = path.join(data, 'site.yaml');
    await writeFile(site, (await readFile(site, 'utf8')).replace('name: modelpub', 'name: modelpub-renamed'));
    const r2 = await build({ dataDir: data, outDir: out });
    const fresh = await build({ dataDir: data, outDir: path.join(tmp, 'attr-fresh'), pageSizes: [7] });
    expect(fresh.revision).toBe(r2.revision);
    const own = await gatewayOn(out);
    try {
      const r = await request(own, `/api/v1/models?page_size=7&page=2&include=pricing`, {
        headers: { 'accept-encoding': 'identity', 'x-api-key': key },
      });
      expect(r.headers.get('x-publication-revision')).toBe(r2.revision);
      const want = await readFile(
        path.join(
          fresh.releaseDir,
          listFile({
            locale: 'en',
            lane: 'verified',
            displayOnly: false,
            include: ['pricing'],
            sort: 'popular',
            page: 2,
            pageSize: 7,
          }),
        ),
      );
      const got = Buffer.from(await r.arrayBuffer()).toString();
      expect(got).toContain('modelpub-renamed');
      expect(got).toBe(want.toString());
    } finally {
      await own.close();
    }
  });

  it("from an artifact of an older build, without its own attribution, take the publication's (an upgraded gateway serving an old build)", async () => {
    const release = path.join(tmp, 'full', 'current');
    const raw = JSON.parse(await readFile(path.join(release, 'artifacts/verified.public.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    const manifest = JSON.parse(await readFile(path.join(release, 'manifest.json'), 'utf8')) as {
      files: ManifestEntry[];
    };
    const entry = manifest.files.find((f) => f.path === 'artifacts/verified.public.json')!;
    const theirs = { required: true, name: 'n', url: 'https://x.example', text: 't' };
    expect(loadedArtifact(raw as never, entry, theirs).attributionJson).toBe(JSON.stringify(raw.attribution));
    delete raw.attribution;
    const legacy = loadedArtifact(raw as never, entry, theirs);
    expect(legacy.attributionJson).toBe(JSON.stringify(theirs));
    // The validator covers that attribution too: an attribution-only rebuild by an older build keeps the artifact's bytes.
    const other = loadedArtifact(raw as never, entry, { ...theirs, name: 'renamed' });
    expect(legacy.validatorPrefix.copy().digest('hex')).not.toBe(other.validatorPrefix.copy().digest('hex'));
  });

  it('caches a composed page from its second request, answers it the same from the cache, to HEAD with its length, and with 304 to its ETag', async () => {
    const own = (await createKey(store, 'composed')).key;
    const at = (u: string, headers: Record<string, string> = {}, method = 'GET') =>
      request(gw, u, { method, headers: { 'accept-encoding': 'identity', 'x-api-key': own, ...headers } });
    const url = '/api/v1/models?q=extra&page_size=3&page=2&include=pricing&locale=zh';
    const first = await at(url);
    const body = Buffer.from(await first.arrayBuffer());
    expect(first.status).toBe(200);
    expect(first.headers.get('content-length')).toBe(String(body.length));
    expect((JSON.parse(body.toString()) as { data: { models: unknown[] } }).data.models).toHaveLength(3);
    // Cached from its second request on: a page asked for once is not kept.
    const parsed = parseRequest('/api/v1/models', new URL(url, 'http://x').searchParams);
    if (!parsed.ok || parsed.request.kind !== 'list') throw new Error('a list request');
    expect(composerOf(gw.publication()).cached(parsed.request)).toBeUndefined();
    const again = await at(url);
    expect(composerOf(gw.publication()).cached(parsed.request)).toBeDefined();
    expect(Buffer.from(await again.arrayBuffer()).equals(body)).toBe(true);
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
    const cached = await at(url);
    expect(Buffer.from(await cached.arrayBuffer()).equals(body)).toBe(true);
    const head = await at(url, {}, 'HEAD');
    expect(head.headers.get('content-length')).toBe(String(body.length));
    expect(await head.text()).toBe('');
    expect((await at(url, { 'if-none-match': first.headers.get('etag')! })).status).toBe(304);
  });
  it('search is case- and accent-insensitive over name, slug and localized description', async () => {
    const names = async (q: string, locale = 'en') =>
      (
        (await (await get(`/api/v1/models?q=${encodeURIComponent(q)}&locale=${locale}`)).json()).data.models as {
          slug: string;
        }[]
      ).map((m) => m.slug);
    expect(await names('ZETA')).toEqual(['zeta-ultra']);
    expect(await names('cafe')).toEqual(['zeta-ultra']);
    expect(await names('кафе', 'ru')).toEqual(['zeta-ultra']);
    expect(await names('кафе', 'en')).toEqual([]);
    expect(await names('zeta ultra')).toEqual(['zeta-ultra']);
    // exact slug first, then prefix matches, then the rest in the requested order
    expect((await names('extra-1')).slice(0, 1)).toEqual(['extra-1']);
    const none = await (await get('/api/v1/models?q=nothing-matches-this')).json();
    expect(none.data.pagination).toEqual({ page: 1, page_size: 50, total: 0, total_pages: 0 });
    // Only a combining mark: no words left after folding, so nothing is filtered (docs/api.md). Its own key: the
    // shared one's quota is counted by the quota tests.
    const own = (await createKey(store, 'combining mark')).key;
    const slugs = async (q: string) =>
      (
        (
          await (
            await request(gw, `/api/v1/models?q=${encodeURIComponent(q)}`, {
              headers: { 'accept-encoding': 'identity', 'x-api-key': own },
            })
          ).json()
        ).data.models as { slug: string }[]
      ).map((m) => m.slug);
    const marked = await slugs('\u0301');
    expect(marked).toHaveLength(13);
    expect(marked).toEqual(await slugs('')); // q= empty is no query
  });
  it('search finds a name however its separators are typed (gpt4o, GPT-4o, "gpt 4o"), the closest name first', async () => {
    const own = (await createKey(store, 'search separators')).key; // the shared key's day is counted by other tests
    const slugs = async (q: string) =>
      (
        (
          await (
            await request(gw, `/api/v1/models?q=${encodeURIComponent(q)}`, {
              headers: { 'accept-encoding': 'identity', 'x-api-key': own },
            })
          ).json()
        ).data.models as { slug: string }[]
      ).map((m) => m.slug);
    for (const q of ['zetaultra', 'Zeta_Ultra', 'zêta.ultra', 'zeta-ult', '"zeta ultra"'])
      expect(await slugs(q), q).toEqual(['zeta-ultra']);
    for (const q of ['extra1', 'extra.1', 'EXTRA_1']) expect(await slugs(q), q).toEqual(['extra-1']);
    expect(await slugs('extra 1')).toEqual(['extra-1']);
    // From a word's start only: "taultra" is in zetaultra by accident of the joined letters, not a name anyone types.
    expect(await slugs('taultra')).toEqual([]);
    // Word by word still matches across fields (name and description), after the names that hold the query.
    expect(await slugs('cafe zeta')).toEqual(['zeta-ultra']);
    // The same request answers other bytes than an older gateway's rules gave it: the rules enter its validator, so
    // an ETag held from before is not told 304. A composed page without q has the validator of artifact and request.
    const composed = async (u: string) => {
      const r = await request(gw, u, { headers: { 'accept-encoding': 'identity', 'x-api-key': own } });
      await request(gw, u, { headers: { 'accept-encoding': 'identity', 'x-api-key': own } }); // cached from its second request on
      const parsed = parseRequest('/api/v1/models', new URL(u, 'http://x').searchParams);
      if (!parsed.ok || parsed.request.kind !== 'list') throw new Error('a list request');
      const f = composerOf(gw.publication()).cached(parsed.request)!;
      expect(r.headers.get('etag'), u).toBe(`"${f.entry.sha256.slice(0, 32)}"`);
      const a = await composerOf(gw.publication()).artifact({ lane: 'verified', displayOnly: false });
      return { validator: f.entry.sha256, withoutRules: a.validatorPrefix.copy().update(f.entry.path).digest('hex') };
    };
    const plain = await composed('/api/v1/models?page_size=4');
    expect(plain.validator).toBe(plain.withoutRules);
    const searched = await composed('/api/v1/models?q=extra1');
    expect(searched.validator).not.toBe(searched.withoutRules);
    // Last-Modified too: an answer with q is no older than its rules, so If-Modified-Since with the artifact's time
    // (all an older gateway's answer carried) gets the new bytes, not a 304. Without q, the artifact's time.
    const artifactTime = (await composerOf(gw.publication()).artifact({ lane: 'verified', displayOnly: false }))
      .lastModified;
    const since = (u: string) =>
      request(gw, u, {
        headers: { 'accept-encoding': 'identity', 'x-api-key': own, 'if-modified-since': artifactTime },
      });
    const withQ = await since('/api/v1/models?q=extra1');
    expect(withQ.status).toBe(200);
    expect(Date.parse(withQ.headers.get('last-modified')!)).toBeGreaterThan(Date.parse(artifactTime));
    // That date is the rules', shared by the answers of the next artifact older than them (after a publish or a
    // rollback): If-Modified-Since with it gets the bytes again; the answer's own ETag still gets 304.
    const withQAgain = (h: Record<string, string>) =>
      request(gw, '/api/v1/models?q=extra1', { headers: { 'accept-encoding': 'identity', 'x-api-key': own, ...h } });
    expect((await withQAgain({ 'if-modified-since': withQ.headers.get('last-modified')! })).status).toBe(200);
    expect((await withQAgain({ 'if-none-match': withQ.headers.get('etag')! })).status).toBe(304);
    expect((await since('/api/v1/models?page_size=4')).status).toBe(304);
  });
  it('search ranks a name holding the query inside a word (通义千问 for 千问, ultra for ltra) above description matches', () => {
    const search = (name: string, slug: string, text: string) => ({
      search: { name, slug, text: { en: text, zh: text, ru: text } },
    });
    const models = {
      about: search('about', 'about', 'about\nabout\nlike 千问 and ultra, ltra'),
      tongyi: search('通义千问', 'tongyi-qianwen', '通义千问\ntongyi-qianwen\n'),
      zeta: search('zeta ultra', 'zeta-ultra', 'zeta ultra\nzeta-ultra\n'),
    };
    const order = ['about', 'tongyi', 'zeta'];
    const a = new ArtifactView(
      loadedArtifact(
        {
          publicationRevision: 'r',
          schemaVersion: '1.0.0',
          attribution: null,
          orders: Object.fromEntries(SORTS.map((k) => [k, order])),
          models,
        } as never,
        { sha256: '0'.repeat(64), last_modified: '2026-01-01T00:00:00.000Z' } as ManifestEntry,
        null,
      ),
    );
    expect(a.search('千问', 'zh', 'popular')).toEqual(['tongyi', 'about']);
    expect(a.search('ltra', 'en', 'popular')).toEqual(['zeta', 'about']);
    expect(a.search('ultra', 'en', 'popular')).toEqual(['zeta', 'about']); // from a word's start: tier 2 as well
  });
  it('answers a page past the end with 200 and no models', async () => {
    const r = await (await get('/api/v1/models?page=99')).json();
    expect(r.data.models).toEqual([]);
    expect(r.data.pagination.total).toBe(13);
  });
});

describe('a body cache smaller than the publication', () => {
  it('serves the right bytes while bodies are evicted and read again (a URL remembers its cache slot, not its body)', async () => {
    const slugs = ['alpha', 'zeta-ultra', 'extra-0', 'extra-1', 'extra-2', 'extra-3'];
    const files = await Promise.all(
      slugs.map((slug) =>
        readFile(
          path.join(
            tmp,
            'plain',
            'current',
            detailFile({ slug, locale: 'en', lane: 'verified', displayOnly: false, include: [...INCLUDES].sort() }),
          ),
        ),
      ),
    );
    // Room for about two of the six bodies: every round evicts what the last one cached.
    const small = await gatewayOn(path.join(tmp, 'plain'), {
      cacheBytes: 2 * Math.max(...files.map((f) => f.length)) + 1,
      pollMs: 60_000,
    });
    const own = (await createKey(store, 'small-cache')).key;
    try {
      for (let round = 0; round < 3; round++) {
        for (const [i, slug] of slugs.entries()) {
          for (let twice = 0; twice < 2; twice++) {
            const r = await request(small, `/api/v1/models/${slug}?include=${INCLUDES.join(',')}`, {
              headers: { 'accept-encoding': 'identity', 'x-api-key': own },
            });
            expect(r.status).toBe(200);
            expect(Buffer.from(await r.arrayBuffer()).equals(files[i]!)).toBe(true);
            expect(r.headers.get('etag')).toBe(
              `"${createHash('sha256').update(files[i]!).digest('hex').slice(0, 32)}"`,
            );
          }
        }
      }
    } finally {
      await small.close();
    }
  });
});

describe('a failing store', () => {
  it('answers 503 problem+json (never 500, never an unchecked request) while the store is down, and recovers', async () => {
    const own = await openStore('memory:');
    const ownKey = (await createKey(own, 'store-down')).key;
    const [take, findKey] = [own.take.bind(own), own.findKey.bind(own)];
    let down = true;
    own.take = (...a) => (down ? Promise.reject(new Error('store down')) : take(...a));
    const g = await gatewayOn(path.join(tmp, 'plain'), { storeInstance: own, pollMs: 60_000 });
    const at = (p: string, k = ownKey) => request(g, p, { headers: { 'accept-encoding': 'identity', 'x-api-key': k } });
    try {
      // The key is found, the quota cannot be checked: refused.
      for (const p of ['/api/v1/models/alpha', '/api/v1/models?q=extra']) {
        const r = await at(p);
        expect(r.status).toBe(503);
        expect(r.headers.get('content-type')).toBe('application/problem+json');
        expect((await r.json()).code).toBe('unavailable');
      }
      // A key the gateway has not seen cannot be looked up either: refused, not let through.
      const unseen = (await createKey(own, 'unseen')).key;
      own.findKey = () => Promise.reject(new Error('store down'));
      expect((await at('/api/v1/models/alpha', unseen)).status).toBe(503);
      down = false;
      own.findKey = findKey;
      expect((await at('/api/v1/models/alpha', unseen)).status).toBe(200);
      const ok = await at('/api/v1/models/alpha');
      expect(ok.status).toBe(200);
      expect(ok.headers.get('ratelimit')).toMatch(/^"daily";r=\d+;t=\d+$/);
    } finally {
      await g.close();
      await own.close();
    }
  });
});

describe('hostile input', () => {
  it('never answers 500 nor serves a file outside the publication', async () => {
    const secret = await readFile(path.join(tmp, 'plain', 'current', 'manifest.json'), 'utf8');
    const paths = [
      '/api/v1/models/..%2F..%2Fmanifest',
      '/api/v1/models/%2e%2e%2fmanifest.json',
      '/api/v1/models/....//',
      '/api/v1/models/%00',
      '/api/v1/models/alpha%00',
      '/api/v1/models/%5c..%5cmanifest',
      '/api/v1/models/../../manifest.json',
      '/api/v1/models/alpha/',
      '/api/v1/models//alpha',
      '/api/v1/models/%C0%AE%C0%AE%2F',
      '/api/v1/models/%ff%fe',
      `/api/v1/models/${'a'.repeat(5000)}`,
      '/api/v1/models?q=%ff%fe',
      '/api/v1/models?q=%00',
      '/api/v1/models?page=1e3',
      '/api/v1/models?page=-0',
      '/api/v1/models?page_size=%31%30%31',
      '/api/v1/models?include=benchmarks,,pricing',
      '/api/v1/models?locale=en&locale=en',
      '/api/v1/models?unknown=1&x=%zz',
      '/manifest.json',
      '/current/manifest.json',
      '/api/v1/../../etc/passwd',
      '//etc/passwd',
      '/api/v1/models/alpha?include=../',
      `/api/v1/models?q=${'x'.repeat(3000)}`,
      '/api/v1/models/ALPHA',
      '/api/v1/models/alpha.json',
      '/%2e%2e/%2e%2e/etc/passwd',
    ];
    // Generated: every path above with each of a few suffixes.
    const corpus = paths.flatMap((p) => [p, `${p + (p.includes('?') ? '&' : '?')}lane=all`, `${p}#frag`]);
    for (const p of corpus) {
      const r = await get(p);
      const body = await r.text();
      expect(r.status, p).not.toBeGreaterThanOrEqual(500);
      expect([200, 400, 404, 414], p).toContain(r.status);
      expect(body.includes(secret.slice(0, 200)), p).toBe(false);
      if (r.status !== 200) expect(r.headers.get('content-type'), p).toBe('application/problem+json');
      else expect(JSON.parse(body).data, p).toBeTruthy();
    }
  });
  it('reads an origin-form target as a path (//x/api/v1/models/alpha is not a URL of host x); takes the absolute form', async () => {
    expect((await get('//x/api/v1/models/alpha')).status).toBe(404);
    expect((await get('/api/v1/models?q=a%C2%85b')).status).toBe(400); // a C1 control (NEL) in q, like C0 ones
    // RFC 9112 3.2.2: a server accepts the absolute form (proxies send it); its host is not a part of the path.
    const own = (await createKey(store, 'absolute form')).key; // the shared key's day is counted by other tests
    const target = '/api/v1/models/alpha?locale=zh&include=pricing';
    const answer = await raw(
      `GET http://other.example${target} HTTP/1.1\r\nHost: other.example\r\nx-api-key: ${own}\r\nConnection: close\r\n\r\n`,
    );
    const [head, body] = [answer.slice(0, answer.indexOf('\r\n\r\n')), answer.slice(answer.indexOf('\r\n\r\n') + 4)];
    expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(Buffer.from(body, 'latin1').toString('utf8')).toBe(
      await (await get(target, { 'accept-encoding': 'identity', 'x-api-key': own })).text(),
    );
  });
  it('survives very long headers and keys', async () => {
    const { url } = await listening(); // node:http refuses headers past its limit, before the handler
    const r = await fetch(`${url}/api/v1/models`, {
      headers: { 'accept-encoding': 'identity', 'x-api-key': 'k'.repeat(5000) },
    });
    expect(r.status).toBe(401);
    const big = await fetch(`${url}/api/v1/models`, {
      headers: { 'accept-encoding': 'identity', 'x-api-key': key, 'x-junk': 'j'.repeat(20_000) },
    });
    expect(big.status).toBe(431);
    // Answered by the gateway, not by node:http's bare status line: a problem body, and CORS so a page can read it.
    expect(big.headers.get('content-type')).toBe('application/problem+json');
    expect(big.headers.get('access-control-allow-origin')).toBe('*');
    expect(await big.json()).toMatchObject({ status: 431, code: 'headers_too_large' });
  });
  it('answers bytes that are not HTTP/1.1 with a 400 problem and closes; behind a request being answered, it only closes', async () => {
    const bad = await raw('BREW /api/v1/models HTTP/1.1\r\nHost: x\r\n\r\n');
    const [head, body] = bad.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(head).toMatch(/\r\naccess-control-allow-origin: \*\r\n/);
    expect(head).toMatch(/\r\nconnection: close(\r\n|$)/);
    expect(Number(/content-length: (\d+)/.exec(head!)?.[1])).toBe(Buffer.byteLength(body!));
    expect(JSON.parse(body!)).toMatchObject({
      status: 400,
      code: 'bad_request',
      detail: expect.stringContaining('HPE_INVALID_METHOD'),
    });
    // A second request that cannot be parsed, behind one being answered: the first request's answer, then the
    // connection closes (an error answer here could be read as the first request's).
    const own = (await createKey(store, 'unparsable second request')).key;
    const get = (slug: string) =>
      `GET /api/v1/models/${slug}?include=capabilities HTTP/1.1\r\nHost: x\r\nx-api-key: ${own}\r\n\r\n`;
    const two = await raw(`${get('alpha')}BREW / HTTP/1.1\r\n\r\n`);
    expect(two.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 200']);
    // Several in flight: every one is answered before the connection closes.
    const four = await raw(`${get('beta')}${get('gamma')}${get('alpha')}BREW / HTTP/1.1\r\n\r\n`);
    expect(four.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 200']);
  });

  it('answers an HTTP/1.1 request without Host (400) and an Expect it cannot meet (417) with problem+json and CORS headers', async () => {
    const own = (await createKey(store, 'host and expect')).key;
    const read = (text: string) => {
      const [head, body] = text.split('\r\n\r\n');
      expect(head).toMatch(/\r\naccess-control-allow-origin: \*\r\n/);
      expect(head).toMatch(/\r\ncontent-type: application\/problem\+json\r\n/);
      expect(head).toMatch(/\r\nconnection: close(\r\n|$)/);
      expect(Number(/content-length: (\d+)/.exec(head!)?.[1])).toBe(Buffer.byteLength(body!));
      return { head: head!, body: JSON.parse(body!) };
    };
    const noHost = read(await raw(`GET /api/v1/models/alpha HTTP/1.1\r\nx-api-key: ${own}\r\n\r\n`));
    expect(noHost.head).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(noHost.body).toMatchObject({ status: 400, code: 'bad_request', detail: expect.stringContaining('Host') });
    const bogus = read(
      await raw(`GET /api/v1/models/alpha HTTP/1.1\r\nHost: x\r\nExpect: bogus\r\nx-api-key: ${own}\r\n\r\n`),
    );
    expect(bogus.head).toMatch(/^HTTP\/1\.1 417 Expectation Failed\r\n/);
    expect(bogus.body).toMatchObject({ status: 417, code: 'expectation_failed' });
    // HTTP/1.0 needs no Host; 100-continue is met as before. Neither refusal above counted against the key.
    const old = await raw(`GET /api/v1/models/alpha HTTP/1.0\r\nx-api-key: ${own}\r\n\r\n`);
    expect(old).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\nratelimit: "daily";r=399;/);
  });

  it('answers at most MAX_QUEUED_PER_CONNECTION pipelined requests behind the one being sent, then 503 and closes', async () => {
    const own = (await createKey(store, 'pipelining')).key;
    const n = 200;
    const requests = Array.from(
      { length: n },
      (_, i) =>
        `GET /api/v1/models?page_size=${1 + (i % 99)}&include=benchmarks,pricing HTTP/1.1\r\nHost: x\r\nx-api-key: ${own}\r\n\r\n`,
    ).join('');
    const socket = connect(Number(new URL((await listening()).url).port), '127.0.0.1');
    const received = await new Promise<string>((resolve, reject) => {
      let text = '';
      socket.on('error', reject);
      socket.once('connect', () => {
        socket.write(requests);
        socket.pause(); // read nothing for a while: every answer has to wait in the server
        setTimeout(() => socket.resume(), 300);
      });
      socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
      socket.on('end', () => resolve(text));
    });
    const statuses = [...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1])); // bodies end without a newline
    const ok = statuses.filter((s) => s === 200).length;
    expect(statuses.slice(0, ok)).toEqual(Array(ok).fill(200)); // in order: answers, then refusals
    expect(ok).toBeGreaterThanOrEqual(1);
    expect(ok).toBeLessThanOrEqual(1 + MAX_QUEUED_PER_CONNECTION);
    expect(statuses.length).toBeGreaterThan(ok);
    expect(statuses.slice(ok).every((s) => s === 503)).toBe(true);
    expect(statuses.length).toBeLessThan(n); // the server closed the connection rather than answer all of them
    expect(received).toContain('"code":"too_many_pipelined"');
    expect(received.toLowerCase()).toContain('connection: close');
  });
});

describe('publication switch', () => {
  it('serves a new publication without a restart', async () => {
    const before = gw.publication().revision;
    await writeFile(
      path.join(tmp, 'data', 'models', 'alpha.yaml'),
      (await readFile(path.join(tmp, 'data', 'models', 'alpha.yaml'), 'utf8')).replace(
        'alpha is a model.',
        'alpha is a better model.',
      ),
    );
    await build({ dataDir: path.join(tmp, 'data'), outDir: path.join(tmp, 'plain') });
    await until(() => gw.publication().revision !== before);
    const r = await get('/api/v1/models/alpha');
    expect(r.headers.get('x-publication-revision')).not.toBe(before);
    expect((await r.json()).data.description).toBe('alpha is a better model.');
  });
  it('refuses a publication whose revision cannot be sent as a header, naming the file and field', async () => {
    const out = path.join(tmp, 'bad-revision');
    await build({ dataDir: path.join(tmp, 'data'), outDir: out });
    for (const name of ['manifest.json', 'publication.json']) {
      const file = path.join(out, 'current', name);
      const doc = JSON.parse(await readFile(file, 'utf8')) as { publicationRevision: string };
      doc.publicationRevision += '\r\nset-cookie: x=1';
      await writeFile(file, JSON.stringify(doc));
    }
    await expect(gatewayOn(out)).rejects.toThrow(/manifest\.json: publicationRevision: 1 to 64 ASCII letters/);
  });

  it('refuses a publication whose schema version cannot be sent as a header, naming it', async () => {
    const out = path.join(tmp, 'bad-schema-version');
    await build({ dataDir: path.join(tmp, 'data'), outDir: out });
    const file = path.join(out, 'current', 'publication.json');
    const doc = JSON.parse(await readFile(file, 'utf8')) as { schemaVersion: string };
    doc.schemaVersion += '\r\nset-cookie: x=1';
    await writeFile(file, JSON.stringify(doc));
    await expect(gatewayOn(out)).rejects.toThrow(/X-Schema-Version.*cannot be sent as an HTTP header/);
  });
});

describe('quota', () => {
  it('admits exactly the daily quota, then 429 with Retry-After to the next UTC midnight', async () => {
    const fresh = (await createKey(store, 'quota')).key;
    const statuses = await Promise.all(
      Array.from({ length: QUOTA + 50 }, () =>
        request(gw, `/api/v1/models/alpha`, { headers: { 'accept-encoding': 'identity', 'x-api-key': fresh } }).then(
          async (r) => {
            await r.arrayBuffer();
            return r;
          },
        ),
      ),
    );
    expect(statuses.filter((r) => r.status === 200).length).toBe(QUOTA);
    const refused = statuses.filter((r) => r.status !== 200);
    expect(refused.every((r) => r.status === 429)).toBe(true);
    const ra = Number(refused[0]!.headers.get('retry-after'));
    const midnight = new Date();
    midnight.setUTCHours(24, 0, 0, 0);
    expect(Math.abs(ra - (midnight.getTime() - Date.now()) / 1000)).toBeLessThan(5);
    expect(refused[0]!.headers.get('ratelimit')).toMatch(/^"daily";r=0;t=\d+$/);
    // the other key is not affected
    expect((await get('/api/v1/models/alpha')).status).toBe(200);
  });
});

describe('a release deleted under the gateway', () => {
  it('a revision built again after its release was pruned is a new release: never the old one with other bytes', async () => {
    const data = path.join(tmp, 'data-reused');
    const out = path.join(tmp, 'reused');
    await writeFixture(data, catalog());
    const beta = path.join(data, 'models', 'beta.yaml');
    const original = await readFile(beta, 'utf8');
    const rewrite = (text: string) => writeFile(beta, original.replace(/beta (is|was) [^\n']*/, `beta was ${text}`));
    await build({ dataDir: data, outDir: out, revision: 'v1' });
    const own = await gatewayOn(out, { cacheBytes: 1 << 10, pollMs: 3_600_000 });
    const mine = (await createKey(store, 'reused revision')).key;
    const get = (url: string) =>
      request(own, `${url}`, { headers: { 'accept-encoding': 'identity', 'x-api-key': mine } });
    try {
      expect((await get('/api/v1/models/beta?locale=zh')).status).toBe(200);
      // Three builds before the next poll; the last one is v1 again, over other data.
      await rewrite('rewritten for v2');
      await build({ dataDir: data, outDir: out, revision: 'v2' });
      await build({ dataDir: data, outDir: out, revision: 'v3' });
      await rewrite('rewritten for the second v1');
      await build({ dataDir: data, outDir: out, revision: 'v1' });
      // Every answer is one publication's: its ETag is the hash of its body; the first may be a 503 (its release is
      // gone), and then the gateway serves the new v1.
      let last: { status: number; body: string } | undefined;
      while (last?.status !== 200) {
        const r = await get('/api/v1/models/beta');
        const body = Buffer.from(await r.arrayBuffer());
        if (r.status === 200)
          expect(r.headers.get('etag')).toBe(`"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"`);
        else expect(r.status).toBe(503);
        last = { status: r.status, body: body.toString('utf8') };
        if (r.status !== 200) await tick();
      }
      expect(last!.status).toBe(200);
      expect(last!.body).toContain('rewritten for the second v1');
    } finally {
      await own.close();
    }
  });

  it('a read that fails looks for the new publication at once, not at the next poll', async () => {
    const data = path.join(tmp, 'data');
    const out = path.join(tmp, 'pruned');
    await build({ dataDir: data, outDir: out });
    const own = await gatewayOn(out, { cacheBytes: 1 << 10, pollMs: 3_600_000 });
    const mine = (await createKey(store, 'pruned')).key;
    try {
      const served = own.publication().revision;
      const servedDir = own.publication().id; // the release folder
      // Two builds before the next poll: the second prunes the release the gateway still serves.
      for (const text of ['first rewrite', 'second rewrite']) {
        const file = path.join(data, 'models', 'beta.yaml');
        await writeFile(file, (await readFile(file, 'utf8')).replace(/beta (is|was) [^\n']*/, `beta was ${text}`));
        await build({ dataDir: data, outDir: out });
      }
      await expect(stat(servedDir)).rejects.toThrow();
      const first = await request(own, `/api/v1/models/gamma?locale=ru`, {
        headers: { 'accept-encoding': 'identity', 'x-api-key': mine },
      });
      expect(first.status).toBe(503); // its body is not cached (a 1 KB cache) and its release is gone
      await until(() => own.publication().revision !== served);
      expect(own.publication().revision).not.toBe(served);
      const second = await request(own, `/api/v1/models/gamma?locale=ru`, {
        headers: { 'accept-encoding': 'identity', 'x-api-key': mine },
      });
      expect(second.status).toBe(200);
      // The 503 was admitted, then failed: its unit went back (docs/quota.md), so this is the key's first counted request.
      expect(second.headers.get('ratelimit')).toMatch(new RegExp(`^"daily";r=${QUOTA - 1};`));
    } finally {
      await own.close();
    }
  });
});

describe('a damaged body on disk', () => {
  it('is answered 503 and logged, never served under the ETag of the intact bytes; other bodies are served', async () => {
    const data = path.join(tmp, 'data');
    const out = path.join(tmp, 'damaged');
    const r = await build({ dataDir: data, outDir: out });
    const rel = detailFile({ slug: 'alpha', locale: 'en', lane: 'verified', displayOnly: false, include: [] });
    const file = path.join(r.releaseDir, rel);
    const intact = await readFile(file);
    await writeFile(file, intact.subarray(0, intact.length - 10)); // truncated in place: every hard link sees it
    const own = await gatewayOn(out, { pollMs: 3_600_000 });
    const mine = (await createKey(store, 'damaged')).key;
    try {
      const bad = await request(own, `/api/v1/models/alpha`, {
        headers: { 'accept-encoding': 'identity', 'x-api-key': mine },
      });
      expect(bad.status).toBe(503);
      expect(await bad.json()).toMatchObject({ code: 'unavailable' });
      const good = await request(own, `/api/v1/models/beta`, {
        headers: { 'accept-encoding': 'identity', 'x-api-key': mine },
      });
      expect(good.status).toBe(200);
      await good.arrayBuffer();
      await expect(own.publication().body(own.publication().info(rel)!)).rejects.toThrow(
        `${rel} holds ${intact.length - 10} bytes, not the ${intact.length} it was published with`,
      );
    } finally {
      await own.close();
    }
  });
});

describe('compressed responses (Accept-Encoding)', () => {
  let own: string; // a key of its own: the tests above spend much of the shared key's quota
  beforeAll(async () => {
    own = (await createKey(store, 'compression')).key;
  });
  /** A GET or HEAD, decoding nothing: the bytes and headers as sent. */
  const rawGet = async (p: string, headers: Record<string, string> = {}, method = 'GET') => {
    const r = await request(gw, p, { method, headers: { 'x-api-key': own, ...headers } });
    const all: Record<string, string | undefined> = Object.fromEntries(r.headers);
    return { status: r.status, headers: all, body: Buffer.from(await r.arrayBuffer()) };
  };
  const decode = (body: Buffer, coding: string | undefined) =>
    coding === 'br' ? brotliDecompressSync(body) : coding === 'gzip' ? gunzipSync(body) : body;
  const DETAIL = '/api/v1/models/alpha?include=benchmarks,pricing';

  it('negotiates per request: br, gzip or identity, with Content-Encoding, its length, its own ETag and Vary', async () => {
    const identity = await rawGet(DETAIL);
    expect(identity.headers['content-encoding']).toBeUndefined();
    const etag = identity.headers.etag!;
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    const table: [string | undefined, 'br' | 'gzip' | undefined][] = [
      [undefined, undefined],
      ['gzip', 'gzip'],
      ['br;q=0.5, gzip', 'gzip'],
      ['*', 'br'],
      ['br, identity;q=0', 'br'],
      // identity refused and no coding named: nothing is acceptable (RFC 9110 12.5.3), answered as identity
      ['identity;q=0', undefined],
      ['gzip, deflate, br, zstd', 'br'],
      ['zstd, deflate', undefined], // codings not stored are ignored
      ['br;q=0, gzip;q=0, identity;q=0', undefined], // nothing acceptable: identity (docs/api.md)
      ['*;q=0', undefined],
    ];
    for (const [accept, coding] of table) {
      const r = await rawGet(DETAIL, accept === undefined ? {} : { 'accept-encoding': accept });
      const what = `Accept-Encoding: ${accept}`;
      expect(r.status, what).toBe(200);
      expect(r.headers['content-encoding'], what).toBe(coding);
      expect(r.headers['content-length'], what).toBe(String(r.body.length));
      expect(r.headers.vary, what).toBe('accept-encoding, x-api-key');
      expect(r.headers.etag, what).toBe(
        coding === undefined ? etag : `${etag.slice(0, -1)}${coding === 'br' ? '-br' : '-gz'}"`,
      );
      expect(decode(r.body, coding).equals(identity.body), what).toBe(true);
      if (coding) expect(r.body.length, what).toBeLessThan(identity.body.length);
    }
  });

  it('an ETag of any coding validates every coding of the body: 304 without a body, with the ETag of the coding asked for', async () => {
    const identity = await rawGet(DETAIL);
    const br = await rawGet(DETAIL, { 'accept-encoding': 'br' });
    const gz = await rawGet(DETAIL, { 'accept-encoding': 'gzip' });
    for (const [accept, sent, tag] of [
      ['br', br.headers.etag, identity.headers.etag],
      ['identity', identity.headers.etag, gz.headers.etag],
      ['gzip', gz.headers.etag, `W/${br.headers.etag}`],
      ['br', br.headers.etag, br.headers.etag],
    ] as const) {
      const r = await rawGet(DETAIL, { 'accept-encoding': accept, 'if-none-match': `"other", ${tag}` });
      expect(r.status, `${accept} / ${tag}`).toBe(304);
      expect(r.body.length).toBe(0);
      expect(r.headers.etag).toBe(sent);
      expect(r.headers['content-encoding']).toBeUndefined();
      expect(r.headers.vary).toBe('accept-encoding, x-api-key');
    }
    // another body's ETag with a suffix validates nothing
    const other = await rawGet('/api/v1/models/beta', { 'accept-encoding': 'br' });
    const r = await rawGet(DETAIL, { 'accept-encoding': 'br', 'if-none-match': other.headers.etag! });
    expect(r.status).toBe(200);
  });

  it('answers HEAD with the headers of the representation a GET would send, and no body', async () => {
    const get = await rawGet('/api/v1/models?include=pricing', { 'accept-encoding': 'gzip, br' });
    const head = await rawGet('/api/v1/models?include=pricing', { 'accept-encoding': 'gzip, br' }, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    for (const h of ['content-encoding', 'content-length', 'etag', 'vary'])
      expect(head.headers[h], h).toBe(get.headers[h]);
    expect(head.headers['content-encoding']).toBe('br');
    expect(Number(head.headers['content-length'])).toBe(get.body.length);
  });

  it('compresses composed answers (a page size not prebuilt, a search) when accepted, from the cache alike', async () => {
    for (const p of ['/api/v1/models?page_size=4&page=2', '/api/v1/models?q=cafe']) {
      const identity = await rawGet(p);
      for (const coding of ['br', 'gzip'] as const) {
        for (let i = 0; i < 3; i++) {
          // the third is answered from the composed caches
          const r = await rawGet(p, { 'accept-encoding': coding });
          expect(r.headers['content-encoding'], p).toBe(coding);
          expect(r.headers['content-length'], p).toBe(String(r.body.length));
          expect(r.headers.etag).toBe(`${identity.headers.etag!.slice(0, -1)}${coding === 'br' ? '-br' : '-gz'}"`);
          expect(decode(r.body, coding).equals(identity.body), p).toBe(true);
        }
      }
      const again = await rawGet(p, { 'accept-encoding': 'br', 'if-none-match': identity.headers.etag! });
      expect(again.status).toBe(304);
    }
  });

  it('a publication built with --no-compression has no representations and is served as identity, without Vary: Accept-Encoding', async () => {
    const dir = path.join(tmp, 'no-representations');
    await build({ dataDir: path.join(tmp, 'data'), outDir: dir, compression: false });
    const release = path.join(dir, 'current');
    const manifest = JSON.parse(await readFile(path.join(release, 'manifest.json'), 'utf8'));
    expect(manifest.representations).toBeUndefined();
    expect(manifest.compression).toBeUndefined();
    expect((await readdir(release)).filter((f) => f.endsWith('.pack'))).toEqual([]);
    const old = await gatewayOn(dir);
    try {
      const r = await request(old, `/api/v1/models/alpha`, {
        headers: { 'x-api-key': own, 'accept-encoding': 'br, gzip' },
      });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-encoding')).toBeNull();
      expect(r.headers.get('vary')).toBe('x-api-key');
      expect(r.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);
      expect((await r.json()).data.slug).toBe('alpha');
    } finally {
      await old.close();
    }
    // The same data built with compression is not "no changes": the release gains its representations.
    const again = await build({ dataDir: path.join(tmp, 'data'), outDir: dir });
    expect(again.semantic.unchanged).toBe(false);
    expect(again.compressed).toBe(true);
    expect(existsSync(path.join(again.releaseDir, `representations-${again.revision}.pack`))).toBe(true);
  });

  it('a representation damaged in the pack is never served: 503 for that coding, the other codings and identity still answer', async () => {
    const dir = path.join(tmp, 'damaged-pack');
    const r = await build({ dataDir: path.join(tmp, 'data'), outDir: dir });
    const manifest = JSON.parse(await readFile(path.join(r.releaseDir, 'manifest.json'), 'utf8'));
    const alpha = manifest.files.find(
      (f: { path: string }) => f.path === 'api/v1/models/alpha/en.verified.public.base.json',
    );
    const place = [...packedRepresentations(manifest.representations, manifest.packs)].find(
      (p) => p.identity === alpha.sha256,
    )!;
    // One byte of alpha's br representation flipped in place (hard links share it: this release only is read).
    const packPath = path.join(r.releaseDir, place.br.path);
    const pack = await readFile(packPath);
    pack[place.br.offset! + 3]! ^= 0xff;
    await writeFile(packPath, pack);
    const gw = await gatewayOn(dir);
    try {
      const ask = (coding: string) =>
        request(gw, `/api/v1/models/alpha`, { headers: { 'x-api-key': own, 'accept-encoding': coding } });
      expect((await ask('br')).status).toBe(503);
      const gz = await ask('gzip');
      expect(gz.status).toBe(200);
      expect(gz.headers.get('content-encoding')).toBe('gzip');
      expect(JSON.parse(gunzipSync(Buffer.from(await gz.arrayBuffer())).toString()).data.slug).toBe('alpha');
      const plain = await ask('identity');
      expect(plain.status).toBe(200);
      expect(plain.headers.get('content-encoding')).toBeNull();
    } finally {
      await gw.close();
    }
  });
});
