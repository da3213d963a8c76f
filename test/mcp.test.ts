// POST /mcp with the MCP SDK's own client over loopback, on a fixture publication: the tools list (the client compiles
// every outputSchema), each tool's answer against REST's, keys (x-api-key, Bearer, none, bad), the quota (a tool call
// counts one request; a bad argument none) and the log line (tool name, never an argument).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler } from '../src/gateway/app.js';
import { createKey, fingerprint, KeyCache } from '../src/gateway/keys.js';
import { QuotaLimiter } from '../src/gateway/quota.js';
import type { Gateway } from '../src/gateway/server.js';
import { openStore } from '../src/gateway/stores/index.js';
import type { QuotaStore } from '../src/gateway/stores/types.js';
import { build } from '../src/pipeline/build.js';
import { MCP_TOOLS } from '../src/schema/mcp.js';
import { smallCatalog, writeFixture } from './helpers/fixture.js';
import { gatewayOver, listen, request } from './helpers/request.js';

let tmp: string;
let gw: Gateway;
/** The handler on a loopback port, for the SDK client. */
let served: { url: string; close(): Promise<void> };
let store: QuotaStore;
let key: string;
const QUOTA = 5000;
const clients: Client[] = [];

const rest = async (p: string, k = key) => {
  const r = await request(gw, p, { headers: { 'x-api-key': k } });
  return { status: r.status, headers: r.headers, body: (await r.json()) as { data: unknown } };
};
const remaining = (h: Headers) => Number(/;r=(\d+)/.exec(h.get('ratelimit') ?? '')?.[1] ?? NaN);

/** A connected SDK client; `headers` carry the key. Closed after the file's tests, failed or not. */
async function connect(headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'modelpub-test', version: '1.0.0' });
  clients.push(client);
  await client.connect(new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), { requestInit: { headers } }));
  return client;
}
const callTool = (c: Client, name: string, args: Record<string, unknown>) =>
  c.callTool({ name, arguments: args }) as Promise<CallToolResult>;
const errorText = (r: CallToolResult) => {
  expect(r.isError, JSON.stringify(r)).toBe(true);
  return (r.content[0] as { text: string }).text;
};

/** A raw JSON-RPC POST, as a client without the SDK sends it. */
const post = (body: unknown, headers: Record<string, string>) =>
  request(gw, '/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
const toolsCall = (name: string, args: Record<string, unknown>, id = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-mcp-'));
  await writeFixture(path.join(tmp, 'data'), smallCatalog());
  await build({ dataDir: path.join(tmp, 'data'), outDir: path.join(tmp, 'dist') });
  store = await openStore('memory:');
  key = (await createKey(store, 'mcp')).key;
  gw = await gatewayOver(path.join(tmp, 'dist'), { storeInstance: store, quota: QUOTA, cacheBytes: 1 << 22 });
  served = await listen(gw);
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await served?.close();
  await gw?.close();
  await store?.close();
  await rm(tmp, { recursive: true, force: true });
});

describe('MCP tools over the SDK client', () => {
  it('lists the six tools, each with an input and an output schema the client compiles', async () => {
    const c = await connect({ 'x-api-key': key });
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(Object.keys(MCP_TOOLS).sort());
    for (const t of tools) {
      expect(t.inputSchema.type, t.name).toBe('object');
      expect(t.outputSchema?.type, t.name).toBe('object');
    }
  });

  it('search_models answers the REST list data, filters and paging included', async () => {
    const c = await connect({ 'x-api-key': key });
    await c.listTools(); // the client checks structuredContent against the outputSchema from here on
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'page_size=10'],
      [{ q: 'alp', include: ['pricing', 'benchmarks'] }, 'q=alp&include=pricing,benchmarks&page_size=10'],
      [{ developer: ['Lab'], sort: 'newest', page_size: 2, page: 2 }, 'developer=Lab&sort=newest&page_size=2&page=2'],
      [
        { lane: 'all', locale: 'zh', capabilities: ['input:text'] },
        'lane=all&locale=zh&capabilities=input:text&page_size=10',
      ],
    ];
    for (const [args, query] of cases) {
      const r = await callTool(c, 'search_models', args);
      expect(r.isError, JSON.stringify(r)).toBeFalsy();
      const expected = await rest(`/api/v1/models?${query}`);
      expect(expected.status).toBe(200);
      expect(r.structuredContent, query).toEqual(expected.body.data);
    }
  });

  it('get_model answers the REST detail data', async () => {
    const c = await connect({ 'x-api-key': key });
    await c.listTools();
    for (const [args, query] of [
      [{ slug: 'alpha' }, 'alpha'],
      [
        { slug: 'beta', include: ['capabilities', 'benchmarks', 'pricing'], locale: 'ru' },
        'beta?include=benchmarks,capabilities,pricing&locale=ru',
      ],
    ] as const) {
      const r = await callTool(c, 'get_model', args);
      expect(r.isError, JSON.stringify(r)).toBeFalsy();
      expect(r.structuredContent).toEqual({ model: (await rest(`/api/v1/models/${query}`)).body.data });
      expect((r.content[0] as { text: string }).text).toContain(args.slug);
    }
  });

  it('compare_models gives one row per model from its REST detail with capabilities and pricing', async () => {
    const c = await connect({ 'x-api-key': key });
    await c.listTools();
    const r = await callTool(c, 'compare_models', { slugs: ['beta', 'alpha'] });
    expect(r.isError, JSON.stringify(r)).toBeFalsy();
    const rows = (r.structuredContent as { models: Record<string, unknown>[] }).models;
    expect(rows.map((m) => m.slug)).toEqual(['beta', 'alpha']);
    for (const row of rows) {
      const d = (await rest(`/api/v1/models/${row.slug}?include=capabilities,pricing`)).body.data as {
        pricing: {
          input_price_per_million: number;
          output_price_per_million: number;
          blended_price_per_million: number;
          cache_read_price_per_million: number | null;
          cache_write_price_per_million: number | null;
        } | null;
        lifecycle: { status: string };
        capabilities: { keys: string[] };
        context_window_tokens: number;
        max_output_tokens: number;
        benchmark_summary: { metric_key: string; value: number; rank: number }[];
      };
      expect(row.input_price_per_million).toBe(d.pricing?.input_price_per_million ?? null);
      expect(row.output_price_per_million).toBe(d.pricing?.output_price_per_million ?? null);
      expect(row.blended_price_per_million).toBe(d.pricing?.blended_price_per_million ?? null);
      expect(row.cache_read_price_per_million).toBe(d.pricing?.cache_read_price_per_million ?? null);
      expect(row.cache_write_price_per_million).toBe(d.pricing?.cache_write_price_per_million ?? null);
      expect(row.status).toBe(d.lifecycle.status);
      expect(row.capabilities).toEqual(d.capabilities.keys);
      expect(row.context_window_tokens).toBe(d.context_window_tokens);
      expect(row.max_output_tokens).toBe(d.max_output_tokens);
      expect((row.benchmarks as { metric_key: string; value: number }[]).map((b) => [b.metric_key, b.value])).toEqual(
        d.benchmark_summary.map((b) => [b.metric_key, b.value]),
      );
    }
    expect(rows.some((m) => m.input_price_per_million !== null)).toBe(true);
    expect(errorText(await callTool(c, 'compare_models', { slugs: ['alpha'] }))).toMatch(/slugs/);
    expect(errorText(await callTool(c, 'compare_models', { slugs: ['alpha', 'alpha'] }))).toMatch(
      /slugs: "alpha" is listed twice/,
    );
    expect(errorText(await callTool(c, 'compare_models', { slugs: ['alpha', 'nope'] }))).toMatch(/^slugs: .*"nope"/);
  });

  it('get_prices answers as GET /api/v1/models/{slug}/prices, with or without at', async () => {
    const c = await connect({ 'x-api-key': key });
    await c.listTools();
    // The fixture has no dated prices: the route answers 404, and the tool an error naming the slug.
    for (const [args, query] of [
      [{ slug: 'alpha' }, ''],
      [{ slug: 'alpha', at: '2025-01-01' }, '?at=2025-01-01'],
    ] as const) {
      const expected = await rest(`/api/v1/models/alpha/prices${query}`);
      expect(expected.status).toBe(404);
      expect(errorText(await callTool(c, 'get_prices', args))).toMatch(/^slug: no model of the slug "alpha" has dated/);
    }
    expect(errorText(await callTool(c, 'get_prices', { slug: 'alpha', at: 'yesterday' }))).toMatch(/at/);
  });

  it('list_metrics and list_changes answer the REST data', async () => {
    const c = await connect({ 'x-api-key': key });
    await c.listTools();
    const metrics = await callTool(c, 'list_metrics', {});
    expect(metrics.structuredContent).toEqual((await rest('/api/v1/metrics')).body.data);
    const changes = await callTool(c, 'list_changes', {});
    expect(changes.structuredContent).toEqual((await rest('/api/v1/changes')).body.data);
  });

  it('an unknown slug, a bad argument or an unknown value is an error result naming the argument', async () => {
    const c = await connect({ 'x-api-key': key });
    expect(errorText(await callTool(c, 'get_model', { slug: 'no-such-model' }))).toMatch(/^slug: .*no-such-model/);
    expect(errorText(await callTool(c, 'get_model', { slug: 'GPT-4o' }))).toMatch(/slug: must be a slug/);
    expect(errorText(await callTool(c, 'get_model', {}))).toMatch(/slug/);
    expect(errorText(await callTool(c, 'search_models', { page_size: 21 }))).toMatch(/page_size/);
    expect(errorText(await callTool(c, 'search_models', { capabilities: ['input:telepathy'] }))).toMatch(
      /capabilities/,
    );
    expect(errorText(await callTool(c, 'search_models', { developer: 'Lab' }))).toMatch(/developer/);
    expect(errorText(await callTool(c, 'search_models', { developer: ['lab'] }))).toMatch(/developer: "lab" is not/);
    expect(errorText(await callTool(c, 'search_models', { developr: ['Lab'] }))).toMatch(/developr/);
    expect(errorText(await callTool(c, 'list_changes', { since: 'r-unknown' }))).toMatch(/^since: /);
    expect(errorText(await callTool(c, 'no_such_tool', {}))).toMatch(/no_such_tool/);
  });
});

describe('MCP keys and quota', () => {
  it('takes the key from x-api-key or Authorization: Bearer; none or a bad one is a 401 problem', async () => {
    const init = { jsonrpc: '2.0', id: 1, method: 'ping' };
    const none = await post(init, {});
    expect(none.status).toBe(401);
    expect(none.headers.get('content-type')).toBe('application/problem+json');
    expect(((await none.json()) as { code: string }).code).toBe('missing_api_key');
    const bad = await post(init, { authorization: 'Bearer mp_not-a-key' });
    expect(bad.status).toBe(401);
    expect(((await bad.json()) as { code: string }).code).toBe('invalid_api_key');
    const badX = await post(init, { 'x-api-key': 'nope' });
    expect(badX.status).toBe(401);
    await expect(connect({})).rejects.toThrow(/401/);

    const c = await connect({ authorization: `Bearer ${key}` });
    const r = await callTool(c, 'get_model', { slug: 'alpha' });
    expect(r.isError).toBeFalsy();
  });

  it('five tool calls cost five requests; a bad argument, initialize, tools/list and ping cost none', async () => {
    const own = (await createKey(store, 'mcp-quota')).key;
    const before = remaining((await rest('/api/v1/models/alpha', own)).headers);
    const c = await connect({ 'x-api-key': own });
    await c.listTools();
    await c.ping();
    await callTool(c, 'get_model', { slug: 'alpha' });
    await callTool(c, 'get_model', { slug: 'no-such-model' }); // an unknown slug counts, as REST's 404
    await callTool(c, 'search_models', { q: 'a' });
    await callTool(c, 'list_metrics', {});
    await callTool(c, 'list_changes', {});
    await callTool(c, 'search_models', { page_size: 500 }); // refused: not counted
    await callTool(c, 'search_models', { developer: ['nobody'] }); // unknown developer: refunded, as REST's 400
    const after = remaining((await rest('/api/v1/models/alpha', own)).headers);
    expect(before - after).toBe(6); // five calls and the second REST request
  });

  it('the HTTP answer of a tool call carries RateLimit; over the quota the call is an error result with Retry-After', async () => {
    const tiny = await gatewayOver(path.join(tmp, 'dist'), { storeInstance: store, quota: 1 });
    try {
      const own = (await createKey(store, 'mcp-tiny')).key;
      const send = (id: number) =>
        request(tiny, '/mcp', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'x-api-key': own,
          },
          body: JSON.stringify(toolsCall('get_model', { slug: 'alpha' }, id)),
        });
      const first = await send(1);
      expect(first.status).toBe(200);
      expect(first.headers.get('ratelimit')).toMatch(/;r=0;/);
      expect(((await first.json()) as { result: CallToolResult }).result.isError).toBeFalsy();
      const second = await send(2);
      expect(second.status).toBe(200);
      expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(0);
      const result = ((await second.json()) as { result: CallToolResult }).result;
      expect(errorText(result)).toMatch(
        /quota of 1 requests is spent: it resets at 00:00 UTC \(\d{4}-\d{2}-\d{2}T00:00:00\.000Z\)/,
      );
    } finally {
      await tiny.close();
    }
  });
});

describe('POST /mcp over HTTP', () => {
  it('answers the CORS preflight with mcp-protocol-version and Authorization allowed', async () => {
    const r = await request(gw, '/mcp', {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:6274', 'access-control-request-method': 'POST' },
    });
    expect(r.status).toBe(204);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('access-control-allow-headers')).toMatch(/mcp-protocol-version/);
    expect(r.headers.get('access-control-allow-headers')).toMatch(/authorization/);
    const answer = await post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { 'x-api-key': key });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('answers GET with 405 (stateless: no event stream) and JSON that is not JSON with a parse error', async () => {
    const get = await request(gw, '/mcp', { headers: { 'x-api-key': key, accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST, OPTIONS');
    const r = await request(gw, '/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': key },
      body: '{"jsonrpc":',
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { code: number } }).error.code).toBe(-32700);
  });
});

describe('the log line', () => {
  it('is route mcp with the tool names and the key fingerprint, never an argument value', async () => {
    const lines: Record<string, unknown>[] = [];
    const quota = new QuotaLimiter(store, { limit: QUOTA });
    const handler = createHandler({
      publication: () => gw.publication(),
      keys: new KeyCache(store),
      quota,
      log: {
        info: (o) => lines.push(o as Record<string, unknown>),
        error: (o) => lines.push(o as Record<string, unknown>),
      },
      fingerprint,
    });
    try {
      const send = (body: unknown) =>
        request({ handler }, '/mcp', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'x-api-key': key,
          },
          body: JSON.stringify(body),
        }).then((r) => r.text());
      await send(toolsCall('search_models', { q: 'secret-query-text', developer: ['Lab'] }));
      await send(toolsCall('get_model', { slug: 'alpha' }));
      await send({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
      expect(lines.map((l) => [l.route, l.tool, l.status])).toEqual([
        ['mcp', 'search_models', 200],
        ['mcp', 'get_model', 200],
        ['mcp', undefined, 200],
      ]);
      expect(lines[0]!.key).toBe(fingerprint(key));
      const text = JSON.stringify(lines);
      for (const secret of ['secret-query-text', 'alpha', key]) expect(text).not.toContain(secret);
    } finally {
      await quota.close();
    }
  });
});

describe('GET /llms.txt', () => {
  it('answers without a key: an H1, a summary blockquote and sections of links to the API, /mcp and its tools', async () => {
    const r = await request(gw, '/llms.txt');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(r.headers.get('cache-control')).toBe('public, max-age=300');
    expect(r.headers.get('ratelimit')).toBeNull(); // counts against no quota
    const etag = r.headers.get('etag')!;
    const text = await r.text();
    expect(text).toMatch(/^# modelpub\n\n> .+\n/);
    const sections = [...text.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    expect(sections).toEqual(['REST API', 'MCP tools', 'Optional']);
    for (const link of ['/api/v1/models', '/mcp', '/api/v1/openapi.json', '/docs'])
      expect(text, link).toContain(`](${link})`);
    for (const tool of Object.keys(MCP_TOOLS))
      expect(text, tool).toMatch(new RegExp(`^- \\[${tool}\\]\\(/mcp\\): .+Example arguments: \``, 'm'));
    expect(text).toContain(`publication "${gw.publication().revision}"`);
    // Its examples name the publication's own models, so they work: the get_model one answers.
    const slug = /"slug":"([a-z0-9-]+)"/.exec(text)![1]!;
    expect((await rest(`/api/v1/models/${slug}`)).status).toBe(200);
    expect((await request(gw, '/llms.txt', { headers: { 'if-none-match': etag } })).status).toBe(304);
  });
});
