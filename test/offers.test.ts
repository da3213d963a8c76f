// Offers, the price card and lifecycle (issue: what a model costs, where, and where it stands in its life), end to
// end: a small fixture with two offers one first-party, a tier, a mode, an unpriced offer, a free listing, an
// unknown cost key, an alias with two snapshots; built, served over real HTTP, and diffed.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createKey } from '../src/gateway/keys.js';
import { startGateway, type RunningGateway } from '../src/gateway/server.js';
import { openStore } from '../src/gateway/stores/index.js';
import type { QuotaStore } from '../src/gateway/stores/types.js';
import { build, loadAndValidate } from '../src/pipeline/build.js';
import { diffSnapshots } from '../src/pipeline/diff.js';
import { compute } from '../src/pipeline/compute/index.js';
import { priceSummaries } from '../src/pipeline/compute/prices.js';
import { snapshotOf } from '../src/pipeline/snapshot.js';
import { DetailResponse, ListResponse, type Offer, type PricingDetail } from '../src/schema/api.js';
import { model, prov, writeFixture, type FixtureSpec } from './helpers/fixture.js';

let tmp: string;
let gw: RunningGateway;
let store: QuotaStore;
let key: string;

const provider = (id: string, name: string, n: number) => ({ id, name, provenance: prov(n) });
const price = (p: Record<string, number | null>) => ({
  input_price_per_million: null,
  output_price_per_million: null,
  cache_read_price_per_million: null,
  cache_write_price_per_million: null,
  ...p,
});
const offer = (model: string, provider: string, id: string, n: number, extra: Record<string, unknown> = {}) => ({
  model,
  provider,
  provider_model_id: id,
  first_party: false,
  updated_at: '2025-03-01',
  provenance: prov(n),
  ...extra,
});
const jsonl = (rows: unknown[]) => `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`;

/** alpha: four offers; freebie: only a free listing; lonely: none; omega: an alias of two dated snapshots. */
function catalog(): FixtureSpec {
  return {
    models: [
      model('alpha', 1, { developer: 'Lab' }),
      model('freebie', 2),
      model('lonely', 3),
      model('omega', 4, { snapshots: ['omega-20250101', 'omega-20250601'] }),
      model('omega-20250101', 5, { status: 'deprecated' }),
      model('omega-20250601', 6, { lane: 'provisional' }),
    ],
    prices: [
      {
        model: 'alpha',
        lane: 'verified',
        input_per_million: 3,
        output_per_million: 15,
        first_party: true,
        observed_at: '2025-03-01T00:00:00Z',
        offer: { provider: 'lab', provider_model_id: 'alpha-1' },
        provenance: prov(301),
      },
      {
        model: 'freebie',
        lane: 'verified',
        input_per_million: 0,
        output_per_million: 0,
        first_party: false,
        observed_at: '2025-03-01T00:00:00Z',
        offer: { provider: 'host', provider_model_id: 'vendor/freebie:free' },
        provenance: prov(302),
      },
    ],
    files: {
      'providers.yaml': stringify({
        providers: [
          provider('lab', 'Lab', 501),
          provider('host', 'Host Inc', 502),
          provider('free-host', 'Free Host', 503),
          provider('nocost', 'No Cost', 504),
        ],
      }),
      'offers/lab.jsonl': jsonl([
        offer('alpha', 'lab', 'alpha-1', 601, {
          first_party: true,
          input_price_per_million: 3,
          output_price_per_million: 15,
          cache_read_price_per_million: 0.3,
          cache_write_price_per_million: 3.75,
          tiers: [
            { above_context_tokens: 200000, ...price({ input_price_per_million: 6, output_price_per_million: 22.5 }) },
          ],
          modes: { fast: price({ input_price_per_million: 30, output_price_per_million: 150 }) },
          context_window_tokens: 1000000,
          max_output_tokens: 64000,
        }),
      ]),
      'offers/host.jsonl': jsonl([
        offer('alpha', 'host', 'vendor/alpha-1.5', 602, {
          input_price_per_million: 2,
          output_price_per_million: 10,
          cache_read_price_per_million: 0.2,
          other_prices: { request: 0.01 },
          status: 'beta',
        }),
        offer('freebie', 'host', 'vendor/freebie:free', 603, {
          input_price_per_million: 0,
          output_price_per_million: 0,
        }),
      ]),
      'offers/free-host.jsonl': jsonl([
        offer('alpha', 'free-host', 'alpha:free', 604, { input_price_per_million: 0, output_price_per_million: 0 }),
      ]),
      'offers/nocost.jsonl': jsonl([
        offer('alpha', 'nocost', 'alpha', 605),
        offer('omega-20250101', 'nocost', 'omega-old', 606, { status: 'deprecated' }),
      ]),
    },
  };
}

const get = (p: string) => fetch(gw.url + p, { headers: { 'x-api-key': key, 'accept-encoding': 'identity' } });
const detail = async (slug: string, query = 'include=pricing') => {
  const r = await get(`/api/v1/models/${slug}?${query}`);
  expect(r.status, slug).toBe(200);
  return DetailResponse.parse(await r.json()).data;
};
const slugs = async (query: string) => {
  const r = await get(`/api/v1/models?page_size=100&${query}`);
  expect(r.status, query).toBe(200);
  return ListResponse.parse(await r.json())
    .data.models.map((m) => m.slug)
    .sort();
};

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-offers-'));
  await writeFixture(path.join(tmp, 'data'), catalog());
  await build({ dataDir: path.join(tmp, 'data'), outDir: path.join(tmp, 'dist'), compression: false });
  store = await openStore('memory:');
  key = (await createKey(store, 'offers')).key;
  gw = await startGateway({
    dir: path.join(tmp, 'dist'),
    port: 0,
    host: '127.0.0.1',
    store: 'memory:',
    storeInstance: store,
    quota: 10_000,
    cacheBytes: 1 << 24,
    pollMs: 1000,
    logLevel: 'silent',
  });
});
afterAll(async () => {
  await gw?.close();
  await store?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('the price card and offers', () => {
  it("a detail's pricing: the headline offer's whole card, every offer by blended price, free and unpriced last", async () => {
    const p = (await detail('alpha')).pricing as PricingDetail;
    expect(p).toMatchObject({
      input_price_per_million: 3,
      output_price_per_million: 15,
      blended_price_per_million: 6,
      headline_offer: { provider: 'lab', provider_model_id: 'alpha-1' },
      cache_read_price_per_million: 0.3,
      cache_write_price_per_million: 3.75,
      reasoning_price_per_million: null,
      input_audio_price_per_million: null,
      output_audio_price_per_million: null,
      tiers: [
        {
          above_context_tokens: 200000,
          input_price_per_million: 6,
          output_price_per_million: 22.5,
          cache_read_price_per_million: null,
          cache_write_price_per_million: null,
        },
      ],
      modes: { fast: { input_price_per_million: 30, output_price_per_million: 150 } },
      offer_count: 4,
    });
    // host 2/10 (blended 4) before lab 3/15 (6); then the free listing and the unpriced one, by provider.
    expect(p.offers.map((o) => `${o.provider}/${o.provider_model_id}`)).toEqual([
      'host/vendor/alpha-1.5',
      'lab/alpha-1',
      'free-host/alpha:free',
      'nocost/alpha',
    ]);
    const [host, lab, free, unpriced] = p.offers as [Offer, Offer, Offer, Offer];
    expect(host).toEqual({
      provider: 'host',
      provider_name: 'Host Inc',
      provider_model_id: 'vendor/alpha-1.5',
      first_party: false,
      input_price_per_million: 2,
      output_price_per_million: 10,
      cache_read_price_per_million: 0.2,
      cache_write_price_per_million: null,
      reasoning_price_per_million: null,
      input_audio_price_per_million: null,
      output_audio_price_per_million: null,
      tiers: [],
      modes: {},
      other_prices: { request: 0.01 },
      context_window_tokens: null,
      max_input_tokens: null,
      max_output_tokens: null,
      status: 'beta',
      free: false,
      updated_at: '2025-03-01T00:00:00.000Z',
    });
    expect(lab).toMatchObject({ first_party: true, context_window_tokens: 1000000, max_output_tokens: 64000 });
    expect([free.free, unpriced.free]).toEqual([true, false]);
    expect(unpriced.input_price_per_million).toBeNull();
  });

  it('list items carry the card without offers; the detail without include has no pricing', async () => {
    const r = await get('/api/v1/models?include=pricing&page_size=100');
    const items = ListResponse.parse(await r.json()).data.models;
    const alpha = items.find((i) => i.slug === 'alpha')!;
    expect(alpha.pricing).toMatchObject({ headline_offer: { provider: 'lab' }, offer_count: 4, tiers: [{}] });
    expect(alpha.pricing).not.toHaveProperty('offers');
    expect(alpha).not.toHaveProperty('lifecycle');
    expect(await detail('alpha', '')).not.toHaveProperty('pricing');
  });

  it("a reseller's free listing is never the headline; a model without offers has pricing null", async () => {
    const free = (await detail('freebie')).pricing as PricingDetail;
    expect(free).toMatchObject({
      input_price_per_million: null,
      output_price_per_million: null,
      blended_price_per_million: null,
      updated_at: null,
      observations: 0,
      headline_offer: null,
      cache_read_price_per_million: null,
      tiers: [],
      modes: {},
      offer_count: 1,
    });
    expect(free.offers).toMatchObject([{ provider: 'host', free: true, input_price_per_million: 0 }]);
    expect((await detail('lonely')).pricing).toBeNull();
    expect((await detail('freebie', '')).pricing_summary).toBeNull();
  });
});

describe('the headline offer', () => {
  it('is the offer every newest observation names; none when they name different ones (an average)', () => {
    const obs = (input: number, offer: { provider: string; provider_model_id: string } | null) => ({
      model: 'm',
      lane: 'verified' as const,
      input_per_million: input,
      output_per_million: 10,
      first_party: true,
      observed_at: '2025-03-01T00:00:00Z',
      offer,
      provenance: prov(1),
    });
    const a = { provider: 'a', provider_model_id: 'm-1' };
    expect(priceSummaries([obs(1, a), obs(3, a)]).get('m')).toMatchObject({ input_price_per_million: 2, offer: a });
    expect(priceSummaries([obs(1, a), obs(3, { provider: 'b', provider_model_id: 'm-1' })]).get('m')!.offer).toBeNull();
    expect(priceSummaries([obs(1, a), obs(3, null)]).get('m')!.offer).toBeNull();
  });
});

describe('lifecycle', () => {
  it('status from the record (active by default), aliases derived from the snapshots an alias names', async () => {
    expect((await detail('omega', 'lane=all')).lifecycle).toEqual({
      status: 'active',
      deprecation_date: null,
      retirement_date: null,
      successor: null,
      aliases: [],
      dated_versions: ['omega-20250101', 'omega-20250601'],
    });
    expect((await detail('omega-20250101', 'lane=all')).lifecycle).toMatchObject({
      status: 'deprecated',
      aliases: ['omega'],
      dated_versions: [],
    });
    // A reseller's deprecated listing stays on its offer.
    expect((await detail('alpha', 'include=pricing')).lifecycle.status).toBe('active');
  });
});

describe('filters: provider, status, exclude_snapshots', () => {
  it('provider keeps the models with an offer at any provider listed; an unknown one is a 400 naming the known', async () => {
    expect(await slugs('provider=lab')).toEqual(['alpha']);
    expect(await slugs('provider=host')).toEqual(['alpha', 'freebie']);
    expect(await slugs('provider=nocost&lane=all')).toEqual(['alpha', 'omega-20250101']);
    expect(await slugs('provider=nocost&provider=lab&status=deprecated')).toEqual(['omega-20250101']);
    const r = await get('/api/v1/models?provider=groq,lab');
    expect(r.status).toBe(400);
    const body = (await r.json()) as { invalid_params: { name: string; reason: string }[] };
    expect(body.invalid_params).toEqual([
      {
        name: 'provider',
        reason: '"groq" is not a provider of any offer in this publication; one of free-host, host, lab, nocost',
      },
    ]);
    expect((await get('/api/v1/models?provider=Groq')).status).toBe(400);
  });

  it('status keeps the models of any status listed', async () => {
    expect(await slugs('status=deprecated&lane=all')).toEqual(['omega-20250101']);
    expect(await slugs('status=active,beta')).toEqual(['alpha', 'freebie', 'lonely', 'omega']);
    expect((await get('/api/v1/models?status=current')).status).toBe(400);
  });

  it('exclude_snapshots=true hides a dated snapshot when one of its aliases is in the same lane', async () => {
    expect(await slugs('lane=all')).toContain('omega-20250601');
    expect(await slugs('exclude_snapshots=true&lane=all')).toEqual(['alpha', 'freebie', 'lonely', 'omega']);
    expect(await slugs('exclude_snapshots=true')).toEqual(['alpha', 'freebie', 'lonely', 'omega']);
    // In the provisional lane the alias is not listed: its snapshot stays.
    expect(await slugs('exclude_snapshots=true&lane=provisional')).toEqual(['omega-20250601']);
    expect(await slugs('exclude_snapshots=false&lane=all')).toEqual(await slugs('lane=all'));
    expect((await get('/api/v1/models?exclude_snapshots=yes')).status).toBe(400);
  });
});

describe('diff', () => {
  it('names an offer by provider and provider model id', async () => {
    const data = path.join(tmp, 'data');
    const before = snapshotOf(compute(await loadAndValidate(data)), 'r000000000000');
    const file = path.join(data, 'offers/host.jsonl');
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace('"cache_read_price_per_million":0.2', '"cache_read_price_per_million":0.25'));
    const after = snapshotOf(compute(await loadAndValidate(data)), 'r000000000001');
    const d = diffSnapshots(before, after);
    expect(d.models).toEqual([
      {
        slug: 'alpha',
        name: 'ALPHA',
        change: 'changed',
        fields: [{ path: 'pricing.offers[host/vendor/alpha-1.5].cache_read_price_per_million', old: 0.2, new: 0.25 }],
      },
    ]);
    await writeFile(file, text);
  });
});
