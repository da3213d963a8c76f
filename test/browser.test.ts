// A real browser page on another origin using the API. Node's fetch() (every other gateway test) enforces no CORS
// and has no HTTP cache, so it cannot show what docs/api.md promises browser clients: that the preflight passes, that
// the page can read the exposed headers and the problem bodies of errors, and what the browser's own cache does to
// the quota. Here Debian's Chromium (never a downloaded browser), driven by playwright-core, loads a page from a
// node:http server on one loopback port and calls the gateway on another port: a different origin.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../src/gateway/keys.js';
import { startGateway, type RunningGateway } from '../src/gateway/server.js';
import { openStore } from '../src/gateway/stores/index.js';
import type { QuotaStore } from '../src/gateway/stores/types.js';
import { build } from '../src/pipeline/build.js';
import { smallCatalog, writeFixture } from './helpers/fixture.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_MISSING = `${CHROMIUM} not installed: browser CORS and cache tests skipped (CI installs Debian's chromium)`;
/** docs/api.md: the headers a page may read besides the CORS-safelisted ones. */
const EXPOSED = [
  'ETag',
  'Last-Modified',
  'Retry-After',
  'RateLimit',
  'RateLimit-Policy',
  'X-Publication-Revision',
  'X-Schema-Version',
];
const QUOTA = 1000;

/** What reached a gateway, in order: the browser's preflights, validators and origin as the server saw them. */
interface Seen {
  method: string;
  url: string;
  origin?: string;
  requestHeaders?: string;
  ifNoneMatch?: string;
  acceptEncoding?: string;
  status?: number;
}
function recordRequests(gw: RunningGateway): Seen[] {
  const seen: Seen[] = [];
  gw.server.on('request', (req, res) => {
    // The status is read when a test looks: writeHead() has set it before any byte reached the browser.
    seen.push({
      method: req.method!,
      url: req.url!,
      origin: req.headers.origin,
      requestHeaders: req.headers['access-control-request-headers'],
      ifNoneMatch: req.headers['if-none-match'],
      acceptEncoding: req.headers['accept-encoding'],
      get status() {
        return res.headersSent ? res.statusCode : undefined;
      },
    });
  });
  return seen;
}

interface PageAnswer {
  status: number;
  type: string;
  headers: Record<string, string | null>;
  body: string;
}
/** Runs fetch() in the page (the page's own JS, under the browser's CORS rules) and returns what that JS can see. */
function pageFetch(
  page: Page,
  url: string,
  init: { headers?: Record<string, string>; cache?: RequestCache } = {},
): Promise<PageAnswer> {
  const names = [...EXPOSED, 'Content-Type', 'Access-Control-Allow-Origin'];
  return page.evaluate(
    async ({ url, init, names }) => {
      const r = await fetch(url, init); // a CORS failure rejects with "TypeError: Failed to fetch" and fails the test
      return {
        status: r.status,
        type: r.type,
        headers: Object.fromEntries(names.map((n) => [n, r.headers.get(n)])),
        body: await r.text(),
      };
    },
    { url, init, names },
  );
}

const rateRemaining = (rateLimit: string | null | undefined) => Number(/;r=(\d+)/.exec(rateLimit ?? '')?.[1] ?? NaN);

const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) console.warn(CHROMIUM_MISSING);

describe.skipIf(!haveChromium)('a browser page on another origin (Chromium)', () => {
  let tmp: string;
  let store: QuotaStore;
  let gw: RunningGateway;
  /** The same publication with a quota of 2, for the 429. */
  let tight: RunningGateway;
  let gwSeen: Seen[];
  let tightSeen: Seen[];
  let site: Server;
  let pageOrigin: string;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-browser-'));
    await writeFixture(path.join(tmp, 'data'), smallCatalog());
    await build({ dataDir: path.join(tmp, 'data'), outDir: path.join(tmp, 'out') });
    store = await openStore('memory:');
    const options = {
      dir: path.join(tmp, 'out'),
      port: 0,
      host: '127.0.0.1',
      store: 'memory:',
      storeInstance: store,
      cacheBytes: 1 << 20,
      pollMs: 60_000,
      logLevel: 'silent',
    } as const;
    gw = await startGateway({ ...options, quota: QUOTA });
    tight = await startGateway({ ...options, quota: 2 });
    gwSeen = recordRequests(gw);
    tightSeen = recordRequests(tight);
    // Origin A: a page that knows nothing about the API; the tests run their fetch() calls in it.
    site = createServer((_req, res) =>
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end('<!doctype html><title>API client</title>'),
    );
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    pageOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      // Without the background-networking flags this machine refuses Chromium's connections.
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  afterAll(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
    await new Promise((r) => (site ? site.close(r) : r(undefined)));
    await gw?.close();
    await tight?.close();
    await store?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /** A page on origin A in a fresh browser context: its own HTTP cache and preflight cache. */
  async function freshPage(): Promise<Page> {
    const context = await browser.newContext();
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${pageOrigin}/`);
    expect(new URL(page.url()).port).not.toBe(new URL(gw.url).port);
    return page;
  }

  it('reads a model after a preflight, with every exposed header readable and equal to what Node sees', async () => {
    const key = (await createKey(store, 'browser detail')).key;
    const url = `${gw.url}/api/v1/models/alpha?include=pricing`;
    const identity = await (await fetch(url, { headers: { 'x-api-key': key, 'accept-encoding': 'identity' } })).text();
    // As Chromium asks (it sends `gzip, deflate, br, zstd`): the br representation.
    const direct = await fetch(url, { headers: { 'x-api-key': key, 'accept-encoding': 'br' } });
    expect(direct.status).toBe(200);
    expect(direct.headers.get('content-encoding')).toBe('br');
    const page = await freshPage();
    const mark = gwSeen.length;
    const r = await pageFetch(page, url, { headers: { 'x-api-key': key } });

    expect(r.status).toBe(200);
    expect(r.type).toBe('cors');
    // The browser got br (its ETag says so) and decoded it to the identity bytes.
    expect(r.headers.ETag).toMatch(/^"[0-9a-f]{32}-br"$/);
    expect(r.body).toBe(identity);
    expect(JSON.parse(r.body).data.slug).toBe('alpha');
    for (const name of EXPOSED.filter((n) => n !== 'Retry-After')) expect(r.headers[name], name).not.toBeNull();
    for (const name of ['ETag', 'Last-Modified', 'X-Publication-Revision', 'X-Schema-Version', 'RateLimit-Policy']) {
      expect(r.headers[name], name).toBe(direct.headers.get(name));
    }
    expect(rateRemaining(r.headers.RateLimit)).toBe(rateRemaining(direct.headers.get('ratelimit')) - 1);
    // The browser really filters: a header the gateway sends but does not expose is hidden from the page.
    expect(direct.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers['Access-Control-Allow-Origin']).toBeNull();
    // x-api-key is not a CORS-safelisted header, so the browser asked first.
    expect(gwSeen.slice(mark)).toMatchObject([
      {
        method: 'OPTIONS',
        url: '/api/v1/models/alpha?include=pricing',
        origin: pageOrigin,
        requestHeaders: 'x-api-key',
        status: 204,
      },
      {
        method: 'GET',
        url: '/api/v1/models/alpha?include=pricing',
        origin: pageOrigin,
        status: 200,
        acceptEncoding: expect.stringMatching(/\bbr\b/),
      },
    ]);
  });

  it('passes the preflight with the headers a fetch wrapper adds to every call (Content-Type, a client version)', async () => {
    const key = (await createKey(store, 'browser wrapper')).key;
    const page = await freshPage();
    const r = await pageFetch(page, `${gw.url}/api/v1/models/alpha`, {
      headers: { 'x-api-key': key, 'Content-Type': 'application/json', 'X-Client-Version': '2.1' },
    });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body).data.slug).toBe('alpha');
  });

  it('gets 401 problem+json it can read, without a key and with a wrong one (errors carry CORS headers)', async () => {
    const page = await freshPage();
    const url = `${gw.url}/api/v1/models/beta?include=pricing`;
    let mark = gwSeen.length;
    const none = await pageFetch(page, url);
    expect(none.status).toBe(401);
    expect(none.headers['Content-Type']).toBe('application/problem+json');
    expect(JSON.parse(none.body)).toMatchObject({ status: 401, code: 'missing_api_key' });
    // Without the custom header it is a simple request: no preflight.
    expect(gwSeen.slice(mark).map((s) => [s.method, s.status])).toEqual([['GET', 401]]);

    mark = gwSeen.length;
    const wrong = await pageFetch(page, url, { headers: { 'x-api-key': `mp_${'A'.repeat(43)}` } });
    expect(wrong.status).toBe(401);
    expect(JSON.parse(wrong.body)).toMatchObject({ status: 401, code: 'invalid_api_key' });
    expect(gwSeen.slice(mark).map((s) => [s.method, s.status])).toEqual([
      ['OPTIONS', 204],
      ['GET', 401],
    ]);
  });

  it('a request node:http cannot take (headers over 16 KiB) gets a 431 problem the page can read, not a network error', async () => {
    const page = await freshPage();
    // The one header a page may add here (the preflight allows x-api-key and the validators), made too long.
    const r = await pageFetch(page, `${gw.url}/api/v1/models/alpha`, { headers: { 'x-api-key': 'k'.repeat(20_000) } });
    expect(r.status).toBe(431);
    expect(r.headers['Content-Type']).toBe('application/problem+json');
    expect(JSON.parse(r.body)).toMatchObject({ status: 431, code: 'headers_too_large' });
  });

  it('over the daily quota gets 429 and can read Retry-After, RateLimit and the problem body', async () => {
    const key = (await createKey(store, 'browser quota')).key;
    const page = await freshPage();
    const mark = tightSeen.length;
    const answers: PageAnswer[] = [];
    for (const slug of ['alpha', 'beta', 'gamma'])
      answers.push(await pageFetch(page, `${tight.url}/api/v1/models/${slug}`, { headers: { 'x-api-key': key } }));

    expect(answers.map((a) => a.status)).toEqual([200, 200, 429]);
    expect(answers.map((a) => rateRemaining(a.headers.RateLimit))).toEqual([1, 0, 0]);
    const over = answers[2]!;
    expect(over.headers['RateLimit-Policy']).toBe('"daily";q=2;w=86400');
    expect(over.headers['Retry-After'], 'Retry-After readable by the page').not.toBeNull();
    const retryAfter = Number(over.headers['Retry-After']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(86_400);
    expect(over.headers.RateLimit).toBe(`"daily";r=0;t=${retryAfter}`); // both: seconds to the next UTC midnight
    expect(JSON.parse(over.body)).toMatchObject({ status: 429, code: 'quota_exceeded' });
    expect(
      tightSeen
        .slice(mark)
        .filter((s) => s.method === 'GET')
        .map((s) => s.status),
    ).toEqual([200, 200, 429]);
  });

  it("browser cache: a repeat is answered by the browser (not counted, RateLimit as first seen); cache: 'no-cache' revalidates, the 304 counts", async () => {
    const key = (await createKey(store, 'browser cache')).key;
    const page = await freshPage();
    const url = `${gw.url}/api/v1/models/gamma?include=pricing`;
    const gets = (from: number) => gwSeen.slice(from).filter((s) => s.method === 'GET');

    let mark = gwSeen.length;
    const first = await pageFetch(page, url, { headers: { 'x-api-key': key } });
    expect(first.status).toBe(200);
    expect(rateRemaining(first.headers.RateLimit)).toBe(QUOTA - 1);
    expect(gets(mark).map((s) => s.status)).toEqual([200]);

    // Cache-Control: private, max-age=300: the browser answers the repeat itself.
    mark = gwSeen.length;
    const repeat = await pageFetch(page, url, { headers: { 'x-api-key': key } });
    expect(repeat.status).toBe(200);
    expect(repeat.body).toBe(first.body);
    expect(repeat.headers.RateLimit).toBe(first.headers.RateLimit); // stale: the count the first answer carried
    expect(gwSeen.slice(mark)).toEqual([]);

    // Vary: x-api-key: the cached answer is for this key only. Another key is sent to the gateway, which refuses it.
    // (Without Vary, Chromium answered it with the cached 200, and a revoked key kept working for five minutes.)
    const otherKey = await pageFetch(page, url, { headers: { 'x-api-key': `mp_${'B'.repeat(43)}` } });
    expect(otherKey.status).toBe(401);
    expect(gets(mark).map((s) => s.status)).toEqual([401]);

    // cache: 'no-cache' revalidates with the ETag; the gateway's 304 reaches the page as a 200 with the cached body
    // and the 304's headers, so the RateLimit is current again. Chromium sends a new preflight for this cache mode.
    mark = gwSeen.length;
    const revalidated = await pageFetch(page, url, { headers: { 'x-api-key': key }, cache: 'no-cache' });
    expect(revalidated.status).toBe(200);
    expect(revalidated.body).toBe(first.body);
    expect(gwSeen.slice(mark)).toMatchObject([
      { method: 'OPTIONS', status: 204 },
      { method: 'GET', ifNoneMatch: first.headers.ETag, status: 304 },
    ]);
    expect(rateRemaining(revalidated.headers.RateLimit)).toBe(QUOTA - 2);

    // docs/quota.md "What counts": the 304 counted, the answers from the browser's cache could not.
    const after = await fetch(url, { headers: { 'x-api-key': key } });
    expect(rateRemaining(after.headers.get('ratelimit'))).toBe(QUOTA - 3);
  });

  it('/docs renders the API reference from the OpenAPI document, loading nothing but the gateway: every operation, an example for the list', async () => {
    const context = await browser.newContext();
    contexts.push(context);
    const page = await context.newPage();
    const requested: string[] = [];
    const failed: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    page.on('requestfailed', (r) => failed.push(r.url()));
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(String(e)));
    const mark = gwSeen.length;
    const r = await page.goto(`${gw.url}/docs`);
    expect(r!.status()).toBe(200);
    // Redoc renders each operation's summary; wait for the last one.
    const summaries = [
      'List, search and filter models',
      'One model',
      'Every metric models are ranked by',
      'Every model of a lane, with every include',
      'This document',
    ];
    await page.getByText(summaries.at(-1)!, { exact: true }).first().waitFor({ state: 'attached', timeout: 0 });
    for (const s of summaries) expect(await page.getByText(s, { exact: true }).count(), s).toBeGreaterThan(0);
    // The list operation's 200 example: a real first page, with its pagination, in the response samples panel.
    const list = page.locator('[id="operation/listModels"]');
    await list.scrollIntoViewIfNeeded();
    const sample = list.getByText('"pagination"', { exact: false });
    await sample.first().waitFor({ timeout: 0 });
    expect(await list.textContent()).toContain('"page_size": 2');
    // Nothing came from elsewhere: Redoc's footer asks for its logo from Redocly's CDN, and the page's
    // Content-Security-Policy refuses it (the only foreign request, and the only error); no fonts, no script.
    const origin = new URL(gw.url).origin;
    const logo = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
    const foreign = requested.filter((u) => !u.startsWith(origin) && !u.startsWith('blob:') && !u.startsWith('data:'));
    expect([...new Set(foreign)]).toEqual([logo]);
    expect(failed).toContain(logo);
    expect(problems.filter((p) => !p.includes(`Loading the image '${logo}' violates`))).toEqual([]);
    expect(requested).toEqual(
      expect.arrayContaining([`${origin}/docs`, `${origin}/docs/redoc.standalone.js`, `${origin}/api/v1/openapi.json`]),
    );
    // No key was sent and none was needed.
    expect(gwSeen.slice(mark).every((s) => s.status === 200 || s.status === 304)).toBe(true);
  });
});
