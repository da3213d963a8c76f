// scripts/synthetic-catalog.mjs: the load-test catalog covers today's data model (offers at several providers, their
// price cards and dated prices, lifecycle and alias/snapshot links), validates, builds, and is the same bytes for the
// same seed. A small catalog, generated twice, validated by the CLI, built and read through the gateway's handler.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createKey } from '../src/gateway/keys.js';
import type { Gateway } from '../src/gateway/server.js';
import { openStore } from '../src/gateway/stores/index.js';
import type { QuotaStore } from '../src/gateway/stores/types.js';
import { build } from '../src/pipeline/build.js';
import { tracked } from './helpers/children.js';
import { ROOT, ensureCompiled, runCli } from './helpers/cli.js';
import { gatewayOver, request } from './helpers/request.js';

const SCRIPT = path.join(ROOT, 'scripts/synthetic-catalog.mjs');
/** A seed whose 30 models include aliases and a model that is not active (about 4 % and 4 % of any catalog). */
const SEED = 17;

let tmp: string;
let data: string;
let gw: Gateway;
let store: QuotaStore;
let key: string;

/** Runs the generator; resolves with its exit code and stderr. */
const generate = (out: string, seed: number) =>
  new Promise<{ code: number; stderr: string }>((resolve) => {
    const args = [SCRIPT, '--out', out, '--models', '30', '--metrics', '4', '--speed', '200', '--seed', String(seed)];
    tracked(
      execFile(process.execPath, args, (err, _stdout, stderr) =>
        resolve({ code: err ? ((err.code as number | undefined) ?? 1) : 0, stderr }),
      ),
    );
  });

/** Every file of a tree with the sha256 of its bytes, by relative path. */
function digests(dir: string, rel = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(path.join(dir, rel)).sort()) {
    const p = path.join(rel, name);
    if (statSync(path.join(dir, p)).isDirectory()) Object.assign(out, digests(dir, p));
    else
      out[p] = createHash('sha256')
        .update(readFileSync(path.join(dir, p)))
        .digest('hex');
  }
  return out;
}
const jsonl = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
const folder = (rel: string) => readdirSync(path.join(data, rel)).flatMap((f) => jsonl(path.join(data, rel, f)));

beforeAll(async () => {
  ensureCompiled();
  tmp = mkdtempSync(path.join(tmpdir(), 'modelpub-synthetic-'));
  data = path.join(tmp, 'data');
  const gen = await generate(data, SEED);
  expect(gen.code, gen.stderr).toBe(0);
});

afterAll(async () => {
  await gw?.close();
  await store?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('synthetic catalog', () => {
  it('is byte-identical for the same seed, and another seed gives other data', async () => {
    const again = path.join(tmp, 'again');
    const other = path.join(tmp, 'other');
    expect((await generate(again, SEED)).code).toBe(0);
    expect((await generate(other, SEED + 1)).code).toBe(0);
    const first = digests(data);
    expect(Object.keys(first)).toContain('providers.yaml');
    expect(digests(again)).toEqual(first);
    expect(digests(other)).not.toEqual(first);
  });

  it('holds offers at several providers with price cards, their dated prices, and lifecycle links', () => {
    const offers = folder('offers');
    const providers = (
      parse(readFileSync(path.join(data, 'providers.yaml'), 'utf8')) as { providers: { id: string }[] }
    ).providers;
    const declared = new Set(providers.map((p) => p.id));
    for (const o of offers) expect(declared.has(o.provider as string), String(o.provider)).toBe(true);
    // Several providers per model for some models, and first-party and reseller offers both.
    const perModel = new Map<unknown, Set<unknown>>();
    for (const o of offers) perModel.set(o.model, (perModel.get(o.model) ?? new Set()).add(o.provider));
    expect(Math.max(...[...perModel.values()].map((s) => s.size))).toBeGreaterThan(3);
    expect(offers.some((o) => o.first_party === true)).toBe(true);
    expect(offers.some((o) => o.first_party === false)).toBe(true);
    expect(offers.some((o) => typeof o.cache_read_price_per_million === 'number')).toBe(true);

    // Every offer has dated prices; ranges of one offer and source are contiguous and the last one is open or removed.
    const history = folder('price-history');
    const byOffer = new Map<string, Record<string, unknown>[]>();
    for (const r of history) {
      const k = `${r.provider}/${r.provider_model_id}/${(r.provenance as { source: string }).source}`;
      byOffer.set(k, [...(byOffer.get(k) ?? []), r]);
    }
    const offerKeys = new Set(offers.map((o) => `${o.provider}/${o.provider_model_id}`));
    for (const o of offerKeys)
      expect(
        [...byOffer.keys()].some((k) => k.startsWith(`${o}/`)),
        o,
      ).toBe(true);
    for (const [k, rows] of byOffer) {
      rows.forEach((r, i) => {
        if (i > 0) expect(r.effective_from, k).toBe(rows[i - 1]!.effective_to);
      });
      const last = rows.at(-1)!;
      expect(last.effective_to === null || last.removed === true, k).toBe(true);
    }

    // served_by lists the providers of the model's offers; some models are aliases of dated snapshots.
    const models = readdirSync(path.join(data, 'models')).map((f) => ({
      slug: f.replace(/\.yaml$/, ''),
      text: readFileSync(path.join(data, 'models', f), 'utf8'),
    }));
    const records = models.map((m) => parse(m.text) as { served_by: string[]; status: string; snapshots?: string[] });
    expect(records.some((r) => r.snapshots?.length)).toBe(true);
    expect(records.some((r) => r.status !== 'active')).toBe(true);
    for (const [i, m] of models.entries()) {
      const record = records[i]!;
      expect(record.served_by, m.slug).toEqual([...(perModel.get(m.slug) ?? [])].sort());
      expect(['active', 'beta', 'deprecated', 'retired']).toContain(record.status);
      // The rebuild benchmark edits the first line of this shape.
      expect(m.text, m.slug).toMatch(/^ {2}en: \S/m);
    }
  });

  it('validates, and its build publishes the offers and their dated prices', async () => {
    const v = await runCli(['validate', '--data', data]);
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout).toMatch(/: valid\. 30 models/);

    const out = path.join(tmp, 'dist');
    await build({ dataDir: data, outDir: out });
    store = await openStore('memory:');
    key = (await createKey(store, 'synthetic')).key;
    gw = await gatewayOver(out, { storeInstance: store });
    const get = async (target: string) => {
      const r = await request(gw, target, { headers: { 'x-api-key': key } });
      expect(r.status, target).toBe(200);
      return ((await r.json()) as { data: unknown }).data;
    };

    const offers = folder('offers');
    const counts = new Map<unknown, number>();
    for (const o of offers) counts.set(o.model, (counts.get(o.model) ?? 0) + 1);
    const [slug, n] = [...counts].sort((a, b) => b[1] - a[1] || String(a[0]).localeCompare(String(b[0])))[0]!;
    const detail = (await get(`/api/v1/models/${slug}?include=pricing&lane=all`)) as {
      pricing: { offers: { provider: string }[] } | null;
    };
    expect(detail.pricing?.offers).toHaveLength(n);

    const prices = (await get(`/api/v1/models/${slug}/prices`)) as { offers: { history: unknown[] }[] };
    expect(prices.offers.length).toBeGreaterThan(0);
    expect(prices.offers.every((o) => o.history.length > 0)).toBe(true);

    // An alias's dated snapshot names its alias.
    const alias = readdirSync(path.join(data, 'models'))
      .map((f) => ({
        slug: f.replace(/\.yaml$/, ''),
        ...(parse(readFileSync(path.join(data, 'models', f), 'utf8')) as object),
      }))
      .find((m): m is { slug: string; snapshots: string[] } => 'snapshots' in m)!;
    const snapshot = (await get(`/api/v1/models/${alias.snapshots[0]}?lane=all`)) as {
      lifecycle: { aliases: string[] };
    };
    expect(snapshot.lifecycle.aliases).toContain(alias.slug);

    // The day's headline rows: a day late in the catalog's date range has rows for many models.
    const day = (await get('/api/v1/prices?at=2026-06-01')) as { models: { slug: string }[] };
    expect(day.models.length).toBeGreaterThan(5);
  });
});
