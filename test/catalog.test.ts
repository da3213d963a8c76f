// GET /api/v1/catalog, /api/v1/metrics, /api/v1/openapi.json and /docs over real HTTP on a fixture publication:
// the catalog equals every detail with every include, the metrics equal the leaderboards the details show, and the
// keyed ones follow the header and quota rules of the other operations while the open ones need no key.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../src/gateway/keys.js';
import type { Gateway } from '../src/gateway/server.js';
import { openStore } from '../src/gateway/stores/index.js';
import type { QuotaStore } from '../src/gateway/stores/types.js';
import { build } from '../src/pipeline/build.js';
import { QUERY_LANES } from '../src/schema/api.js';
import { LOCALES } from '../src/schema/source.js';
import { smallCatalog, writeFixture } from './helpers/fixture.js';
import { gatewayOver, request } from './helpers/request.js';

let tmp: string;
let gw: Gateway;
let store: QuotaStore;
let key: string;
const QUOTA = 5000;

const get = (p: string, headers: Record<string, string> = {}, method = 'GET') =>
  // Identity: these tests compare bodies and ETags with the files.
  request(gw, p, { method, headers: { 'x-api-key': key, 'accept-encoding': 'identity', ...headers } });
const remaining = (r: Response) => Number(/;r=(\d+)/.exec(r.headers.get('ratelimit') ?? '')?.[1] ?? NaN);

interface Envelope<T> {
  schemaVersion: string;
  publicationRevision: string;
  tier: string;
  locale: string;
  attribution: unknown;
  data: T;
}
interface Entry {
  metric_key: string;
  label: string;
  group: string;
  unit: string;
  higher_is_better: boolean;
  is_aggregate: boolean;
  ranked_count: number;
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-catalog-'));
  await writeFixture(path.join(tmp, 'data'), smallCatalog());
  await build({ dataDir: path.join(tmp, 'data'), outDir: path.join(tmp, 'dist') });
  store = await openStore('memory:');
  key = (await createKey(store, 'catalog')).key;
  gw = await gatewayOver(path.join(tmp, 'dist'), {
    storeInstance: store,
    quota: QUOTA,
    cacheBytes: 1 << 22,
    pollMs: 1000,
  });
});
afterAll(async () => {
  await gw?.close();
  await store?.close();
  await rm(tmp, { recursive: true, force: true });
});

describe('GET /api/v1/catalog', () => {
  it('holds every model of the lane, by slug, each equal to its detail with every include, in each locale, lane and variant', async () => {
    let compared = 0;
    for (const locale of LOCALES) {
      for (const lane of QUERY_LANES) {
        for (const displayOnly of [false, true]) {
          const variant = `locale=${locale}&lane=${lane}&includeDisplayOnly=${displayOnly}`;
          const r = await get(`/api/v1/catalog?${variant}`);
          expect(r.status, variant).toBe(200);
          const body = (await r.json()) as Envelope<{ models: { slug: string }[]; total: number }>;
          expect(body.locale).toBe(locale);
          // Every model the list has in that lane, in slug order.
          const list = (await (await get(`/api/v1/models?${variant}&page_size=100`)).json()) as Envelope<{
            models: { slug: string }[];
          }>;
          const slugs = list.data.models.map((m) => m.slug).sort();
          expect(slugs.length).toBeGreaterThan(0);
          expect(body.data.models.map((m) => m.slug)).toEqual(slugs);
          expect(body.data.total).toBe(slugs.length);
          for (const m of body.data.models) {
            const detail = (await (
              await get(`/api/v1/models/${m.slug}?${variant}&include=benchmarks,capabilities,pricing`)
            ).json()) as Envelope<unknown>;
            expect(m, `${m.slug} ${variant}`).toEqual(detail.data);
            compared++;
          }
        }
      }
    }
    expect(compared).toBe(3 * 2 * (3 + 2 + 4)); // locales x variants x (verified + provisional + all) models
  });

  it('has the headers of every keyed answer, answers If-None-Match with 304 and counts against the quota', async () => {
    const r = await get('/api/v1/catalog');
    expect(r.status).toBe(200);
    expect(r.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);
    expect(r.headers.get('last-modified')).toBeTruthy();
    expect(r.headers.get('cache-control')).toBe('private, max-age=300');
    expect(r.headers.get('vary')).toBe('accept-encoding, x-api-key');
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('x-publication-revision')).toBe(gw.publication().revision);
    expect(r.headers.get('x-schema-version')).toBe('1.0.0');
    expect(r.headers.get('ratelimit-policy')).toBe(`"daily";q=${QUOTA};w=86400`);
    const etag = r.headers.get('etag')!;
    const again = await get('/api/v1/catalog', { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(remaining(again)).toBe(remaining(r) - 1);
    const head = await get('/api/v1/catalog', {}, 'HEAD');
    expect([head.status, await head.text(), head.headers.get('etag')]).toEqual([200, '', etag]);
    // Another representation, another validator.
    expect((await get('/api/v1/catalog?locale=zh')).headers.get('etag')).not.toBe(etag);
  });

  it('needs a key and refuses parameters it does not have, naming what it takes', async () => {
    const none = await request(gw, `/api/v1/catalog`);
    expect(none.status).toBe(401);
    const bad = await get('/api/v1/catalog?include=pricing&page=2');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { invalid_params: unknown[] }).invalid_params).toEqual([
      {
        name: 'include',
        reason:
          'a parameter of the list (GET /api/v1/models), not of GET /api/v1/catalog; accepted: locale, lane, includeDisplayOnly',
      },
      {
        name: 'page',
        reason:
          'a parameter of the list (GET /api/v1/models), not of GET /api/v1/catalog; accepted: locale, lane, includeDisplayOnly',
      },
    ]);
    const pre = await request(gw, `/api/v1/catalog`, { method: 'OPTIONS' });
    expect(pre.status).toBe(204);
  });
});

describe('GET /api/v1/metrics', () => {
  it('lists every ranked metric with its leaderboard length per lane, as the details show them', async () => {
    const r = await get('/api/v1/metrics');
    expect(r.status).toBe(200);
    expect(r.headers.get('vary')).toBe('accept-encoding, x-api-key');
    const body = (await r.json()) as Envelope<{ metrics: (Omit<Entry, 'ranked_count'> & Record<string, unknown>)[] }>;
    expect(body.data.metrics).toEqual([
      {
        metric_key: 'code.pass',
        label: 'code.pass',
        benchmark: 'code',
        group: 'coding',
        unit: 'percent',
        higher_is_better: true,
        is_aggregate: false,
        headline: true,
        ranked_count: { verified: 3, provisional: 1, all: 4 },
      },
      {
        metric_key: 'cost.usd',
        label: 'cost.usd',
        benchmark: 'cost',
        group: 'efficiency',
        unit: 'usd',
        higher_is_better: false,
        is_aggregate: false,
        headline: false,
        ranked_count: { verified: 2, provisional: 0, all: 2 },
      },
    ]);
    // The same counts, labels and directions as every detail's benchmark entries in each lane.
    for (const lane of QUERY_LANES) {
      const catalog = (await (await get(`/api/v1/catalog?lane=${lane}`)).json()) as Envelope<{
        models: { benchmarks: Entry[] }[];
      }>;
      for (const m of catalog.data.models) {
        for (const e of m.benchmarks) {
          const metric = body.data.metrics.find((x) => x.metric_key === e.metric_key)!;
          expect((metric.ranked_count as Record<string, number>)[lane]).toBe(e.ranked_count);
          expect([metric.label, metric.group, metric.unit, metric.higher_is_better, metric.is_aggregate]).toEqual([
            e.label,
            e.group,
            e.unit,
            e.higher_is_better,
            e.is_aggregate,
          ]);
        }
      }
    }
    // Labels are not localized: the locales differ only in the envelope.
    const zh = (await (await get('/api/v1/metrics?locale=zh')).json()) as typeof body;
    expect(zh.locale).toBe('zh');
    expect(zh.data).toEqual(body.data);
    expect((await get('/api/v1/metrics?lane=all')).status).toBe(400); // counts of every lane are in each answer
  });
});

describe('GET /api/v1/openapi.json and /docs: no key, no quota', () => {
  it('serve the document and the reference page without a key, with validators, public caching and CORS', async () => {
    const before = remaining(await get('/api/v1/models/alpha'));
    const doc = await request(gw, `/api/v1/openapi.json`);
    expect(doc.status).toBe(200);
    expect(doc.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(doc.headers.get('cache-control')).toBe('public, max-age=300');
    expect(doc.headers.get('access-control-allow-origin')).toBe('*');
    expect(doc.headers.get('x-publication-revision')).toBe(gw.publication().revision);
    expect(doc.headers.get('ratelimit')).toBeNull();
    const body = (await doc.json()) as { openapi: string; 'x-publication-revision': string };
    expect(body.openapi).toBe('3.1.0');
    const etag = doc.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect((await request(gw, `/api/v1/openapi.json`, { headers: { 'if-none-match': etag } })).status).toBe(304);
    // With a key, the same answer, and still not counted.
    expect((await get('/api/v1/openapi.json')).status).toBe(200);
    const bad = await request(gw, `/api/v1/openapi.json?v=2`);
    expect(bad.status).toBe(400); // a cache-buster, told without a key
    expect(((await bad.json()) as { detail: string }).detail).toBe(
      'v: not a parameter of this operation; it takes none.',
    );

    const page = await request(gw, `/docs?from=readme`); // a web page: its query is not the API's
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await page.text();
    expect(html).toContain('<redoc spec-url="api/v1/openapi.json"');
    expect(html).toContain('<script src="docs/redoc.standalone.js"></script>');
    const script = await request(gw, `/docs/redoc.standalone.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect((await script.arrayBuffer()).byteLength).toBeGreaterThan(500_000);
    const scriptTag = script.headers.get('etag')!;
    expect((await request(gw, `/docs/redoc.standalone.js`, { headers: { 'if-none-match': scriptTag } })).status).toBe(
      304,
    );
    expect((await request(gw, `/docs`, { method: 'HEAD' })).status).toBe(200);
    // None of it counted: this request is the second since `before`.
    expect(remaining(await get('/api/v1/models/alpha'))).toBe(before - 1);
  });

  it('other paths are still 404, and say which paths there are', async () => {
    for (const p of ['/api/v1/metrics/x', '/docs/', '/docs/other.js', '/api/v1/openapi.yaml', '/api/v1/catalog/en']) {
      const r = await get(p);
      expect(r.status, p).toBe(404);
      expect(((await r.json()) as { detail: string }).detail, p).toContain('/api/v1/catalog');
    }
  });
});
