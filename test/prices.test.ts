// Dated prices: GET /api/v1/models/{slug}/prices[?at=] and GET /api/v1/prices?at= on a built fixture, through the
// gateway's handler. The fixture's history of alpha at acme covers a price change, a short-lived row dropped and the
// rows around it merged, a removal and a reappearance, two sources for one offer, and a day before every row.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../src/gateway/keys.js';
import type { Gateway } from '../src/gateway/server.js';
import { openStore } from '../src/gateway/stores/index.js';
import type { QuotaStore } from '../src/gateway/stores/types.js';
import { build } from '../src/pipeline/build.js';
import { diffSnapshots } from '../src/pipeline/diff.js';
import { compute } from '../src/pipeline/compute/index.js';
import { snapshotOf } from '../src/pipeline/snapshot.js';
import { loadAndValidate } from '../src/pipeline/build.js';
import { DEFAULT_SOURCES, HASH, prov, smallCatalog, writeFixture } from './helpers/fixture.js';
import { gatewayOver, request } from './helpers/request.js';

let tmp = '';
let store: QuotaStore;
let gw: Gateway;
let key = '';

const jsonl = (rows: object[]) => `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`;
const offer = (provider: string, id: string, firstParty: boolean) => ({
  model: 'alpha',
  provider,
  provider_model_id: id,
  first_party: firstParty,
  input_price_per_million: 3,
  output_price_per_million: 4,
  updated_at: '2025-05-01',
  provenance: prov(700),
});
let n = 800;
const row = (
  from: string | null,
  to: string | null,
  input: number,
  output: number,
  extra: Record<string, unknown> = {},
) => ({
  model: 'alpha',
  provider: 'acme',
  provider_model_id: 'alpha-1',
  effective_from: from,
  effective_to: to,
  input_price_per_million: input,
  output_price_per_million: output,
  precision: 'commit_date',
  provenance: prov(n++),
  ...extra,
});
const vendor = { precision: 'announced', provenance: { source: 'vendor', evidence_sha256: HASH(899) } };

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-prices-'));
  const spec = smallCatalog();
  spec.sources = [
    ...DEFAULT_SOURCES,
    { id: 'vendor', name: 'Vendor', url: 'https://example.org/vendor', license: 'MIT', redistributable: true },
  ];
  // The headline offer of alpha: its newest price observation names acme's.
  spec.prices = [
    ...spec.prices!,
    {
      model: 'alpha',
      lane: 'verified',
      input_per_million: 3,
      output_per_million: 4,
      observed_at: '2025-05-01T00:00:00Z',
      offer: { provider: 'acme', provider_model_id: 'alpha-1' },
      provenance: prov(701),
    },
  ];
  spec.files = {
    'providers.yaml': `providers:\n  - id: acme\n    name: Acme\n    provenance: { source: lab, evidence_sha256: "${HASH(702)}" }\n  - id: resell\n    name: Resell\n    provenance: { source: lab, evidence_sha256: "${HASH(703)}" }\n`,
    'offers/acme.jsonl': jsonl([offer('acme', 'alpha-1', true)]),
    'offers/resell.jsonl': jsonl([offer('resell', 'alpha/alpha-1', false)]),
    'price-history/lab.jsonl': jsonl([
      row('2025-01-01', '2025-02-01', 1, 2, { first_seen: true }),
      row('2025-02-01', '2025-02-02', 9, 9, { short_lived: true }),
      row('2025-02-02', '2025-03-01', 1, 2, { likely_correction: true }),
      row('2025-03-01', '2025-04-01', 3, 4, { removed: true }),
      row('2025-05-01', null, 3, 4),
      row('2025-02-01', null, 5, 6, { provider: 'resell', provider_model_id: 'alpha/alpha-1' }),
    ]),
    'price-history/vendor.jsonl': jsonl([
      row(null, '2025-01-15', 10, 40, vendor),
      row('2025-01-15', null, 2, 8, { ...vendor, provenance: { source: 'vendor', evidence_sha256: HASH(898) } }),
    ]),
  };
  await writeFixture(path.join(tmp, 'data'), spec);
  await build({ dataDir: path.join(tmp, 'data'), outDir: path.join(tmp, 'dist') });
  store = await openStore('memory:');
  key = (await createKey(store, 'prices')).key;
  gw = await gatewayOver(path.join(tmp, 'dist'), { storeInstance: store });
});
afterAll(async () => {
  await gw?.close();
  await store?.close();
  await rm(tmp, { recursive: true, force: true });
});

const get = (target: string, headers: Record<string, string> = {}) =>
  request(gw, target, { headers: { 'x-api-key': key, ...headers } });
interface Row {
  effective_from: string | null;
  effective_to: string | null;
  input_price_per_million: number;
  output_price_per_million: number;
  source: string;
  precision: string;
  first_seen: boolean;
  likely_correction: boolean;
}
interface Offer {
  provider: string;
  provider_model_id: string;
  first_party: boolean;
  history: Row[];
}
const short = (r: Row) => [
  r.effective_from,
  r.effective_to,
  r.input_price_per_million,
  r.output_price_per_million,
  r.source,
];
async function on(day: string | null): Promise<[string, unknown[]][]> {
  const r = await get(`/api/v1/models/alpha/prices${day ? `?at=${day}` : ''}`);
  expect(r.status).toBe(200);
  const body = (await r.json()) as { data: { slug: string; offers: Offer[] } };
  expect(body.data.slug).toBe('alpha');
  return body.data.offers.map((o) => [`${o.provider}/${o.provider_model_id}`, o.history.map(short)]);
}

describe('GET /api/v1/models/{slug}/prices', () => {
  it('every row of each offer, oldest first: the short-lived row dropped and the rows around it merged, a gap where the offer was removed', async () => {
    const r = await get('/api/v1/models/alpha/prices');
    const body = (await r.json()) as { data: { offers: Offer[] } };
    expect(body.data.offers.map((o) => [o.provider, o.first_party])).toEqual([
      ['acme', true],
      ['resell', false],
    ]);
    expect(body.data.offers[0]!.history.map(short)).toEqual([
      [null, '2025-01-15', 10, 40, 'vendor'],
      ['2025-01-01', '2025-03-01', 1, 2, 'lab'], // 1/2, the 9/9 of a day dropped, then 1/2 again: one row
      ['2025-01-15', null, 2, 8, 'vendor'],
      ['2025-03-01', '2025-04-01', 3, 4, 'lab'], // removed on 2025-04-01
      ['2025-05-01', null, 3, 4, 'lab'], // reappeared: not merged across the gap
    ]);
    const merged = body.data.offers[0]!.history[1]!;
    expect([merged.first_seen, merged.likely_correction, merged.precision]).toEqual([true, true, 'commit_date']);
    expect(body.data.offers[0]!.history[0]!.precision).toBe('announced');
  });

  it('?at= a day of a price change gives the new price; two sources give a row each', async () => {
    expect(await on('2025-03-15')).toEqual([
      [
        'acme/alpha-1',
        [
          ['2025-01-15', null, 2, 8, 'vendor'],
          ['2025-03-01', '2025-04-01', 3, 4, 'lab'],
        ],
      ],
      ['resell/alpha/alpha-1', [['2025-02-01', null, 5, 6, 'lab']]],
    ]);
    expect(await on('2025-01-10')).toEqual([
      [
        'acme/alpha-1',
        [
          [null, '2025-01-15', 10, 40, 'vendor'],
          ['2025-01-01', '2025-03-01', 1, 2, 'lab'],
        ],
      ],
    ]);
  });

  it('?at= on a boundary day: effective_from is in force, effective_to is not', async () => {
    const acme = async (day: string) => (await on(day)).find(([o]) => o === 'acme/alpha-1')![1];
    expect(await acme('2025-03-01')).toContainEqual(['2025-03-01', '2025-04-01', 3, 4, 'lab']);
    expect(await acme('2025-03-01')).not.toContainEqual(['2025-01-01', '2025-03-01', 1, 2, 'lab']);
    expect(await acme('2025-01-15')).toEqual([
      ['2025-01-01', '2025-03-01', 1, 2, 'lab'],
      ['2025-01-15', null, 2, 8, 'vendor'],
    ]);
    // Removed on 2025-04-01 and back on 2025-05-01: no lab price in between.
    expect(await acme('2025-04-01')).toEqual([['2025-01-15', null, 2, 8, 'vendor']]);
    expect(await acme('2025-05-01')).toContainEqual(['2025-05-01', null, 3, 4, 'lab']);
    // The short-lived row's day has the row before it.
    expect(await acme('2025-02-01')).toContainEqual(['2025-01-01', '2025-03-01', 1, 2, 'lab']);
  });

  it('?at= before the first row: only a start-less row; an offer with none that day is left out', async () => {
    expect(await on('2024-12-31')).toEqual([['acme/alpha-1', [[null, '2025-01-15', 10, 40, 'vendor']]]]);
    expect(await on('1999-01-01')).toEqual([['acme/alpha-1', [[null, '2025-01-15', 10, 40, 'vendor']]]]);
  });

  it('a malformed or impossible date, or any other parameter, is a 400 naming it; no key is a 401; a slug without prices a 404', async () => {
    for (const q of ['at=2025-02-30', 'at=2025-2-1', 'at=', 'at=yesterday']) {
      const r = await get(`/api/v1/models/alpha/prices?${q}`);
      expect(r.status).toBe(400);
      expect(((await r.json()) as { invalid_params: { name: string }[] }).invalid_params.map((p) => p.name)).toEqual([
        'at',
      ]);
    }
    const other = await get('/api/v1/models/alpha/prices?locale=en');
    expect(other.status).toBe(400);
    expect(((await other.json()) as { invalid_params: { name: string }[] }).invalid_params[0]!.name).toBe('locale');
    expect((await request(gw, '/api/v1/models/alpha/prices')).status).toBe(401);
    expect((await get('/api/v1/models/beta/prices')).status).toBe(404);
    expect((await get('/api/v1/models/beta/prices?at=2025-01-01')).status).toBe(404);
  });

  it('ETag, Last-Modified and CORS as on every route; If-None-Match answers 304, prebuilt or picked', async () => {
    for (const target of [
      '/api/v1/models/alpha/prices',
      '/api/v1/models/alpha/prices?at=2025-03-15',
      '/api/v1/prices?at=2025-03-15',
    ]) {
      const r = await get(target);
      expect(r.status).toBe(200);
      const etag = r.headers.get('etag')!;
      expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
      expect(r.headers.get('last-modified')).toBeTruthy();
      expect(r.headers.get('access-control-allow-origin')).toBe('*');
      expect((await get(target, { 'if-none-match': etag })).status).toBe(304);
    }
    const a = await get('/api/v1/models/alpha/prices?at=2025-03-15');
    const b = await get('/api/v1/models/alpha/prices?at=2025-01-10');
    expect(a.headers.get('etag')).not.toBe(b.headers.get('etag'));
  });
});

describe('GET /api/v1/prices?at=', () => {
  it("each model once, with its headline offer's row of that day (an announced date before a commit date)", async () => {
    const r = await get('/api/v1/prices?at=2025-03-15');
    const body = (await r.json()) as { data: { at: string; models: { slug: string; provider: string; row: Row }[] } };
    expect(body.data.at).toBe('2025-03-15');
    expect(body.data.models.map((m) => [m.slug, m.provider, ...short(m.row)])).toEqual([
      ['alpha', 'acme', '2025-01-15', null, 2, 8, 'vendor'],
    ]);
    const before = (await (await get('/api/v1/prices?at=1999-01-01')).json()) as { data: { models: unknown[] } };
    expect(before.data.models).toHaveLength(1); // the start-less announced row
  });

  it('at is required and checked', async () => {
    for (const target of [
      '/api/v1/prices',
      '/api/v1/prices?at=2025-13-01',
      '/api/v1/prices?at=2025-01-01&slug=alpha',
    ]) {
      const r = await get(target);
      expect(r.status).toBe(400);
    }
  });
});

describe('changes', () => {
  it('a new price row is a change of its offer in the semantic diff (the changes feed and modelpub diff)', async () => {
    const data = await loadAndValidate(path.join(tmp, 'data'));
    const before = snapshotOf(compute(data), 'r000000000001');
    expect(before.models.alpha!.price_history).toEqual({
      'acme/alpha-1': { rows: 5, latest: '2025-05-01' },
      'resell/alpha/alpha-1': { rows: 1, latest: '2025-02-01' },
    });
    const later = { ...structuredClone(data), speed: data.speed }; // a clone of the speed runs would lose their class
    const current = later.priceHistory.find((r) => r.provider === 'resell')!;
    later.priceHistory.push({ ...current, effective_from: '2025-06-01', input_price_per_million: 4 });
    current.effective_to = '2025-06-01';
    const diff = diffSnapshots(before, snapshotOf(compute(later), 'r000000000002'));
    expect(diff.models.map((m) => [m.slug, m.change])).toEqual([['alpha', 'changed']]);
    expect(diff.models[0]!.fields).toEqual([
      { path: 'price_history.resell/alpha/alpha-1.latest', old: '2025-02-01', new: '2025-06-01' },
      { path: 'price_history.resell/alpha/alpha-1.rows', old: 1, new: 2 },
    ]);
  });
});
