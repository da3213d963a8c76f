// List filters (capabilities, developer, token limits, price, open weights) end to end: a fixture publication with
// several developers and capabilities, the gateway's handler called in-process, answers checked against the models' details.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../src/gateway/keys.js';
import type { Gateway } from '../src/gateway/server.js';
import { openStore } from '../src/gateway/stores/index.js';
import type { QuotaStore } from '../src/gateway/stores/types.js';
import { build } from '../src/pipeline/build.js';
import { model, prov, smallCatalog, writeFixture, type FixtureSpec } from './helpers/fixture.js';
import { gatewayOver, request } from './helpers/request.js';

let tmp: string;
let gw: Gateway;
let store: QuotaStore;
let key: string;

const caps = (input: string[], extra: Record<string, unknown> = {}) => ({
  input,
  output: ['text'],
  reasoning: false,
  tool_call: true,
  structured_output: null,
  attachment: false,
  temperature: true,
  open_weights: false,
  knowledge_cutoff: null,
  ...extra,
});

/** The small catalog plus models of three developers with and without image input, prices and limits. */
function catalog(): FixtureSpec {
  const spec = smallCatalog();
  const m = (
    slug: string,
    id: number,
    developer: string,
    input: string[],
    { caps: own, ...extra }: Record<string, unknown> = {},
  ) => model(slug, id, { developer, capabilities: caps(input, own as Record<string, unknown>), ...extra });
  spec.models!.push(
    m('gpt-vision-1', 11, 'OpenAI', ['text', 'image'], { context_window_tokens: 128000, served_by: ['a', 'b'] }),
    m('gpt-vision-2', 12, 'OpenAI', ['image', 'text', 'pdf'], { release_date: '2025-04-01' }),
    m('gpt-vision-3', 13, 'OpenAI', ['text', 'image'], { name: 'GPT Vision Mini', max_output_tokens: 16000 }),
    m('gpt-text', 14, 'OpenAI', ['text'], { context_window_tokens: 200000 }),
    m('gpt-vision-4', 15, 'OpenAI', ['image', 'text'], { caps: { tool_call: false }, release_date: '2024-11-01' }),
    m('claude-eye', 16, 'Anthropic', ['text', 'image'], { context_window_tokens: 200000 }),
    m('llama-open', 17, 'Meta', ['text'], { caps: { open_weights: true }, context_window_tokens: 8000 }),
    m('late-lab', 18, 'Late Lab', ['text', 'image'], { lane: 'provisional' }),
  );
  const price = (model: string, input: number, output: number, n: number) => ({
    model,
    lane: 'verified',
    input_per_million: input,
    output_per_million: output,
    observed_at: '2025-01-15T00:00:00Z',
    provenance: prov(n),
  });
  spec.prices!.push(
    price('gpt-vision-1', 2, 8, 501),
    price('gpt-vision-2', 10, 30, 502),
    price('llama-open', 0.1, 0.1, 503),
  );
  return spec;
}

const get = (p: string, headers: Record<string, string> = {}) =>
  // Identity: these tests compare bodies and ETags with the files.
  request(gw, p, { headers: { 'x-api-key': key, 'accept-encoding': 'identity', ...headers } });

interface Item {
  slug: string;
  developer: string;
  context_window_tokens: number;
  max_output_tokens: number;
  capabilities?: { keys: string[]; open_weights: boolean };
}
interface ListBody {
  locale: string;
  data: { models: Item[]; pagination: { page: number; page_size: number; total: number; total_pages: number } };
}

/** Every page of a list at a page size, checking each page's pagination; the items in order. */
async function walk(query: string, pageSize: number): Promise<{ items: Item[]; total: number }> {
  const items: Item[] = [];
  let total = -1;
  for (let page = 1; ; page++) {
    const r = await get(`/api/v1/models?${query}&page_size=${pageSize}&page=${page}`);
    expect(r.status, query).toBe(200);
    const body = (await r.json()) as ListBody;
    const p = body.data.pagination;
    if (total < 0) total = p.total;
    expect(p).toEqual({ page, page_size: pageSize, total, total_pages: Math.ceil(total / pageSize) });
    expect(body.data.models.length).toBe(Math.max(0, Math.min(pageSize, total - (page - 1) * pageSize)));
    items.push(...body.data.models);
    if (page >= p.total_pages) return { items, total };
  }
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-filters-'));
  await writeFixture(path.join(tmp, 'data'), catalog());
  await build({ dataDir: path.join(tmp, 'data'), outDir: path.join(tmp, 'dist') });
  store = await openStore('memory:');
  key = (await createKey(store, 'filters')).key;
  gw = await gatewayOver(path.join(tmp, 'dist'), { storeInstance: store, quota: 10_000, cacheBytes: 1 << 24 });
});
afterAll(async () => {
  await gw?.close();
  await store?.close();
  await rm(tmp, { recursive: true, force: true });
});

describe('list filters', () => {
  it('capabilities=input:image&developer=OpenAI: exactly the OpenAI models whose capabilities hold input:image, paged and sorted', async () => {
    // What the filter must give, from every model's detail in the lane.
    const all = await walk('sort=alphabetical', 100);
    const details = await Promise.all(
      all.items.map(async (i) => {
        const r = await get(`/api/v1/models/${i.slug}?include=capabilities`);
        return ((await r.json()) as { data: Item }).data;
      }),
    );
    const expected = details
      .filter((d) => d.developer === 'OpenAI' && d.capabilities!.keys.includes('input:image'))
      .map((d) => d.slug);
    // By name, lower-cased code points: 'gpt vision mini' (gpt-vision-3) sorts before 'gpt-vision-1'.
    expect(expected).toEqual(['gpt-vision-3', 'gpt-vision-1', 'gpt-vision-2', 'gpt-vision-4']);
    for (const pageSize of [1, 3, 50]) {
      const { items, total } = await walk('capabilities=input:image&developer=OpenAI&sort=alphabetical', pageSize);
      expect(items.map((i) => i.slug)).toEqual(expected);
      expect(total).toBe(4);
      // Each item is the unfiltered list's item.
      for (const i of items) expect(i).toEqual(all.items.find((a) => a.slug === i.slug));
    }
    // Every sort gives the same models, in that sort's order.
    for (const sort of ['popular', 'newest', 'recent']) {
      const order = (await walk(`sort=${sort}`, 100)).items.map((i) => i.slug);
      const filtered = (await walk(`capabilities=input:image&developer=OpenAI&sort=${sort}`, 2)).items;
      expect(filtered.map((i) => i.slug)).toEqual(order.filter((s) => expected.includes(s)));
    }
  });

  it('takes several capabilities (all required), modalities as OpenRouter names them, several developers (any of)', async () => {
    const slugs = async (q: string) => (await walk(q, 100)).items.map((i) => i.slug).sort();
    expect(await slugs('capabilities=input:image,tool_use&developer=OpenAI')).toEqual([
      'gpt-vision-1',
      'gpt-vision-2',
      'gpt-vision-3',
    ]);
    expect(await slugs('capabilities=input:pdf')).toEqual(['gpt-vision-2']);
    expect(await slugs('input_modalities=image,pdf')).toEqual(['gpt-vision-2']);
    expect(await slugs('developer=Anthropic,Meta')).toEqual(['claude-eye', 'llama-open']);
    expect(await slugs('developer=Anthropic&capabilities=input:image')).toEqual(['claude-eye']);
    // One request however the same filter is spelled: one ETag.
    const a = await get('/api/v1/models?input_modalities=image&developer=OpenAI,Anthropic');
    const b = await get('/api/v1/models?developer=Anthropic,OpenAI,Anthropic&capabilities=input:image');
    expect(a.headers.get('etag')).toBe(b.headers.get('etag'));
    expect(await a.text()).toBe(await b.text());
    // Repeated keys (openapi-fetch's default form) are the comma list: the same answer and ETag, prebuilt or composed.
    const c = await get('/api/v1/models?developer=OpenAI&developer=Anthropic&input_modalities=image');
    expect(c.headers.get('etag')).toBe(a.headers.get('etag'));
    const comma = await get('/api/v1/models/alpha?include=pricing,capabilities');
    const repeated = await get('/api/v1/models/alpha?include=capabilities&include=pricing');
    expect(repeated.status).toBe(200);
    expect(repeated.headers.get('etag')).toBe(comma.headers.get('etag'));
    expect(await repeated.text()).toBe(await comma.text());
    const twice = await get('/api/v1/models?min_output_tokens=1&min_output_tokens=1');
    expect(twice.status).toBe(400);
  });

  it('min_context_window, min_output_tokens, max_blended_price and open_weights', async () => {
    const slugs = async (q: string) => (await walk(q, 100)).items.map((i) => i.slug).sort();
    expect(await slugs('min_context_window=128000')).toEqual(['claude-eye', 'gpt-text', 'gpt-vision-1']);
    expect(await slugs('min_context_window=128001')).toEqual(['claude-eye', 'gpt-text']);
    expect(await slugs('min_output_tokens=10000')).toEqual(['gpt-vision-3']);
    // Blended = (3 x input + output) / 4: beta 0.75, llama-open 0.1, gpt-vision-1 3.5, alpha 5, gpt-vision-2 15.
    expect(await slugs('max_blended_price=3.5')).toEqual(['beta', 'gpt-vision-1', 'llama-open']);
    expect(await slugs('max_blended_price=0.75')).toEqual(['beta', 'llama-open']);
    expect(await slugs('max_blended_price=0')).toEqual([]); // models without a price never match
    expect(await slugs('open_weights=true')).toEqual(['llama-open']);
    const closed = await slugs('open_weights=false');
    expect(closed).not.toContain('llama-open');
    expect(closed.length).toBe((await walk('sort=popular', 100)).total - 1);
    expect(await slugs('open_weights=true&capabilities=input:image')).toEqual([]);
  });

  it('combine with q, locale, lane, includeDisplayOnly and include', async () => {
    const r = await get(
      '/api/v1/models?q=vision&developer=OpenAI&capabilities=tool_use&locale=zh&lane=all&includeDisplayOnly=true&include=capabilities,pricing&sort=newest',
    );
    expect(r.status).toBe(200);
    const body = (await r.json()) as ListBody;
    expect(body.locale).toBe('zh');
    expect(body.data.models.map((i) => i.slug)).toEqual(['gpt-vision-2', 'gpt-vision-1', 'gpt-vision-3']);
    for (const i of body.data.models) {
      expect(i.capabilities!.keys).toContain('tool_use');
      expect(i).toHaveProperty('pricing');
    }
    // A developer known to the publication but without a model in the lane: an empty list, not an error.
    const verified = await get('/api/v1/models?developer=Late%20Lab');
    expect(verified.status).toBe(200);
    expect(((await verified.json()) as ListBody).data.pagination).toMatchObject({ total: 0, total_pages: 0 });
    const inLane = await get('/api/v1/models?developer=Late%20Lab&lane=provisional');
    expect(((await inLane.json()) as ListBody).data.models.map((i) => i.slug)).toEqual(['late-lab']);
  });

  it('carry the headers of any list, a strong ETag per filter, and answer If-None-Match with 304', async () => {
    const q = '/api/v1/models?capabilities=input:image&developer=OpenAI';
    const r = await get(q);
    expect(r.status).toBe(200);
    const etag = r.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(r.headers.get('cache-control')).toBe('private, max-age=300');
    expect(r.headers.get('vary')).toBe('accept-encoding, x-api-key');
    expect(r.headers.get('x-publication-revision')).toBe(gw.publication().revision);
    expect(r.headers.get('ratelimit')).toMatch(/^"daily";r=\d+;t=\d+$/);
    // Last-Modified: the list artifact's, as for q.
    const artifact = gw.publication().entries.get('artifacts/verified.public.json')!;
    expect(new Date(r.headers.get('last-modified')!).toISOString()).toBe(
      new Date(Math.floor(Date.parse(artifact.last_modified) / 1000) * 1000).toISOString(),
    );
    expect((await get(q, { 'if-none-match': etag })).status).toBe(304);
    const others = await Promise.all(
      [`${q},Anthropic`, `${q}&page_size=2`, '/api/v1/models?developer=OpenAI', '/api/v1/models?page_size=7'].map(
        async (p) => (await get(p)).headers.get('etag'),
      ),
    );
    expect(new Set([etag, ...others]).size).toBe(5);
  });

  it('refuse an unknown capability, an unknown developer and a misspelled parameter with 400, not counted', async () => {
    const remaining = async () =>
      Number(/r=(\d+)/.exec((await get('/api/v1/models?page_size=1')).headers.get('ratelimit')!)![1]);
    const before = await remaining();
    const telepathy = await get('/api/v1/models?capabilities=input:telepathy&developer=OpenAI');
    expect(telepathy.status).toBe(400);
    expect(telepathy.headers.get('content-type')).toBe('application/problem+json');
    const t = (await telepathy.json()) as { code: string; detail: string; invalid_params: { name: string }[] };
    expect(t.code).toBe('invalid_parameter');
    expect(t.detail).toMatch(
      /^capabilities: "input:telepathy" is not a capability key; one of attachments, input:audio/,
    );
    expect(t.detail).toContain('tool_use');

    const misspelled = await get('/api/v1/models?developr=OpenAI');
    expect(misspelled.status).toBe(400);
    const m = (await misspelled.json()) as { detail: string; invalid_params: { name: string; reason: string }[] };
    expect(m.invalid_params[0]!.name).toBe('developr');
    expect(m.detail).toMatch(
      /^developr: not a parameter of this operation \(did you mean developer\?\); accepted: q, /,
    );

    for (const dev of ['openai', 'Open%20AI', 'OpenAI,Nobody']) {
      const unknown = await get(`/api/v1/models?developer=${dev}&capabilities=input:image`);
      expect(unknown.status, dev).toBe(400);
      expect(unknown.headers.get('ratelimit'), dev).toBeNull();
      const u = (await unknown.json()) as { detail: string; invalid_params: { name: string; reason: string }[] };
      expect(u.invalid_params.map((p) => p.name)).toEqual(['developer']);
      // Names the value and the developers there are (lane all's: Late Lab has only a provisional model).
      expect(u.detail, dev).toContain(`"${decodeURIComponent(dev).split(',').at(-1)}" is not a developer`);
      expect(u.detail, dev).toContain('one of Anthropic, Lab, Late Lab, Meta, OpenAI');
    }
    // None of the refusals counted: the next request is the second since `before`.
    expect(await remaining()).toBe(before - 1);
  });
});
