// scripts/convert-reference.mjs on a hand-made reference snapshot (the shape of ../shared/reference): runs, dated
// snapshots, sentinels, reseller prices and display names, then a build of what it wrote.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { build } from '../src/pipeline/build.js';
import { ROOT } from './helpers/cli.js';
import { withTemp } from './helpers/fixture.js';

const COMMIT = 'c'.repeat(40);
const block = (repo: string, licence: string) => ({
  repo,
  commit: COMMIT,
  commit_date: '2026-07-01T00:00:00+00:00',
  licence,
});

function catalogModel(slug: string, name: string, developer: string, pricing: Record<string, unknown> | null) {
  return {
    slug,
    name,
    developer,
    developer_id: developer.toLowerCase(),
    release_date: '2025-01-01',
    last_updated: '2025-02-01',
    knowledge_cutoff: null,
    context_window: 100000,
    max_output_tokens: 8000,
    pricing,
    modalities: { input: ['text'], output: ['text'] },
    reasoning: true,
    tool_call: true,
    attachment: false,
    structured_output: null,
    temperature: true,
    open_weights: false,
    links: [],
    hub_url: null,
    provider_docs_url: 'https://example.org/docs',
    served_by_providers: [],
  };
}

/** An Aider leaderboard entry: one row per metric, as benchmarks.json has them. */
function aiderRun(name: string, slug: string, date: string, dirname: string, effort: string | null, values: number[]) {
  const metrics = ['pass_rate_2', 'total_cost', 'seconds_per_case'];
  const units = ['percent', 'USD', 'seconds'];
  return metrics.map((metric, i) => ({
    source: 'aider',
    benchmark: 'Aider Polyglot',
    metric,
    model_name: name,
    value: values[i],
    unit: units[i],
    stderr: null,
    ci: null,
    date,
    settings: { edit_format: 'diff', dirname, ...(effort ? { reasoning_effort: effort } : {}), test_cases: 225 },
    source_path: 'aider/website/_data/polyglot_leaderboard.yml',
    catalog_slug: slug,
  }));
}

const citation = (value: number, settings: Record<string, string>) => ({
  source: 'models.dev',
  benchmark: 'Terminal-Bench',
  metric: 'pass@1',
  model_name: 'openai/gpt-5',
  value,
  unit: 'pass@1',
  stderr: null,
  ci: null,
  date: null,
  settings,
  source_path: 'models/openai/gpt-5.toml',
  catalog_slug: 'gpt-5',
});

/** An offers.json row: one provider file of models.dev, its cost table as written. */
const offer = (
  slug: string,
  provider: string,
  id: string,
  firstParty: boolean,
  cost: Record<string, unknown> | null,
  modes: Record<string, unknown> | null = null,
) => ({
  catalog_slug: slug,
  provider,
  provider_model_id: id,
  first_party: firstParty,
  status: null,
  release_date: '2025-01-01',
  last_updated: '2025-02-01',
  cost,
  modes,
  limit: { context: 100000, output: 0 },
  source_path: `providers/${provider}/models/${id}.toml`,
});

const sample = (tps: number, ttft: number, at: string) => ({
  source: 'thefastest.ai',
  model_name: 'gpt-5',
  output_tokens_per_second: tps,
  ttft_s: ttft,
  timestamp: at,
  error_code: null,
  catalog_slug: 'gpt-5',
});

async function writeReference(dir: string) {
  await mkdir(dir, { recursive: true });
  const put = (name: string, value: unknown) => writeFile(path.join(dir, name), JSON.stringify(value));
  await put('catalog.json', {
    source: { ...block('anomalyco/models.dev', 'MIT'), licence_holder: 'Copyright (c) 2025 models.dev' },
    models: [
      catalogModel('claude-3-5-haiku', 'Anthropic: Claude 3.5 Haiku', 'Anthropic', {
        input: 0.8,
        output: 4,
        first_party: true,
        source_path: 'providers/anthropic/models/claude-3-5-haiku.toml',
      }),
      catalogModel('deepseek-r1', 'DeepSeek R1', 'DeepSeek', {
        input: 0,
        output: 0,
        first_party: false,
        source_path: 'providers/nvidia/models/deepseek-ai/deepseek-r1.toml',
      }),
      catalogModel('deepseek-r1-0528', ' DeepSeek  R1 0528 ', 'DeepSeek', null),
      catalogModel('gpt-5', 'GPT-5', 'OpenAI', {
        input: 1.25,
        output: 10,
        first_party: true,
        source_path: 'providers/openai/models/gpt-5.toml',
      }),
      catalogModel('gpt-5-latest', 'GPT-5 (latest)', 'OpenAI', null),
    ],
  });
  const provider = (id: string, name: string) => ({ id, name, api: null, doc: `https://${id}.example/docs`, env: [] });
  await put('offers.json', {
    source: { repository: 'anomalyco/models.dev', commit: COMMIT },
    providers: [
      provider('anthropic', 'Anthropic'),
      provider('groq', 'Groq'),
      provider('nvidia', 'NVIDIA'),
      provider('openai', 'OpenAI'),
    ],
    offers: [
      offer('claude-3-5-haiku', 'anthropic', 'claude-3-5-haiku', true, { input: 0.8, output: 4, cache_read: 0.08 }),
      offer('deepseek-r1', 'nvidia', 'deepseek-ai/deepseek-r1', false, { input: 0, output: 0 }),
      offer(
        'gpt-5',
        'openai',
        'gpt-5',
        true,
        {
          input: 1.25,
          output: 10,
          cache_read: 0.125,
          tiers: [{ tier: { type: 'context', size: 272000 }, input: 2.5, output: 15 }],
        },
        { fast: { cost: { input: 2.5, output: 20 } } },
      ),
      offer('gpt-5', 'groq', 'openai/gpt-5', false, { input: 1, output: 8, request: 0.01 }),
      offer('deepseek-r1-0528', 'groq', 'deepseek-r1-0528', false, null),
    ],
  });
  const mdRow = (from: string, to: string | null, cost: unknown, flags: Record<string, boolean> = {}) => ({
    catalog_slug: 'gpt-5',
    provider: 'openai',
    source_path: 'providers/openai/models/gpt-5.toml',
    effective_from: from,
    effective_to: to,
    cost,
    modes: null,
    precision: 'commit_date',
    first_seen: false,
    short_lived: false,
    likely_correction: false,
    ...flags,
  });
  const genai = (
    provider: string,
    id: string,
    match: string,
    from: string | null,
    to: string | null,
    prices: unknown,
  ) => ({
    catalog_slug: 'gpt-5',
    provider,
    genai_prices_id: id,
    match,
    effective_from: from,
    effective_to: to,
    announced_future: false,
    prices,
    precision: 'announced',
  });
  await put('price-history.json', {
    sources: {
      models_dev_git: { repository: 'anomalyco/models.dev', commit: COMMIT },
      genai_prices: {
        repository: 'pydantic/genai-prices',
        commit: 'd'.repeat(40),
        licence: 'MIT',
        copyright: 'Pydantic',
      },
    },
    models_dev_git: [
      mdRow('2025-06-10', '2025-07-01', { input: 2, output: 8 }, { first_seen: true }),
      mdRow('2025-07-01', '2025-07-01', { input: 9, output: 9 }, { short_lived: true }),
      mdRow('2025-07-01', '2025-07-02', { input: 20, output: 80 }, { short_lived: true }),
      mdRow('2025-07-02', null, { input: 1.25, output: 10, cached_input: 0.1 }, { likely_correction: true }),
    ],
    genai_prices: [
      genai('openai', 'gpt-5', 'catalog_model_id_or_slug', null, '2025-06-10', {
        input_mtok: { base: 10, tiers: [{ start: 272000, price: 20 }] },
        output_mtok: 40,
        web_searches_kcount: { base: 10, tiers: [{ start: 272000, price: 12 }] },
      }),
      genai('groq', 'openai/gpt-5', 'offer_provider_model_id', '2025-06-10', null, { input_mtok: 1, output_mtok: 8 }),
    ],
  });
  const life = (slug: string, status: string | null, snapshots: string[] | null = null) => ({
    catalog_slug: slug,
    status,
    snapshots,
    deprecation_date: null,
    retirement_date: null,
  });
  await put('lifecycle.json', {
    sources: { models_dev: { repository: 'anomalyco/models.dev', commit: COMMIT } },
    models: [
      life('claude-3-5-haiku', 'deprecated'),
      life('deepseek-r1', null),
      life('deepseek-r1-0528', null),
      life('gpt-5', null),
      life('gpt-5-latest', null, ['gpt-5']),
    ],
  });
  await put('benchmarks.json', {
    sources: { aider: block('Aider-AI/aider', 'Apache-2.0'), 'models.dev': block('anomalyco/models.dev', 'MIT') },
    rows: [
      ...aiderRun('gpt-5 (high)', 'gpt-5', '2025-08-23', '2025-08-23--gpt-5-high', 'high', [88, 29.08, 194]),
      ...aiderRun('gpt-5 (medium)', 'gpt-5', '2025-08-25', '2025-08-25--gpt-5-medium', 'medium', [86.7, 17.69, 118.7]),
      ...aiderRun('gpt-5 (low)', 'gpt-5', '2025-08-25', '2025-08-25--gpt-5-low', 'low', [81.3, 10.37, 62.4]),
      ...aiderRun('DeepSeek R1', 'deepseek-r1', '2025-01-20', '2025-01-20--r1', null, [56.9, 5.42, 113.7]),
      ...aiderRun('DeepSeek R1 (0528)', 'deepseek-r1', '2025-06-06', '2025-06-06--r1-diff', null, [71.4, 4.8, 716.6]),
      citation(70.6, { harness: 'Cursor CLI', variant: 'medium', source: 'https://artificialanalysis.ai/agents' }),
      citation(73.8, { harness: 'Codex', variant: 'xhigh', source: 'https://artificialanalysis.ai/agents' }),
    ],
  });
  await put('speed-tests.json', {
    sources: { 'thefastest.ai': block('fixie-ai/thefastest.ai', 'MIT') },
    rows: [
      sample(50, 0.3, '2024-04-15T08:00:00'),
      sample(999, 0.9, '2024-04-16T08:00:00'),
      sample(70, 0.5, '2024-04-17T08:00:00'),
    ],
  });
}

describe('convert-reference on a hand-made snapshot', () => {
  let out = '';
  let data = '';
  const rows = async (file: string) =>
    (await readFile(path.join(data, file), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
  beforeAll(async () => {
    const tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-convert-'));
    data = path.join(tmp, 'data');
    await writeReference(path.join(tmp, 'reference'));
    out = execFileSync(
      process.execPath,
      [path.join(ROOT, 'scripts/convert-reference.mjs'), '--reference', path.join(tmp, 'reference'), '--data', data],
      { encoding: 'utf8' },
    );
    return () => rm(tmp, { recursive: true, force: true });
  });

  it('cleans vendor prefixes and stray spaces from display names, and prints each change', async () => {
    const name = async (slug: string) =>
      parseYaml(await readFile(path.join(data, 'models', `${slug}.yaml`), 'utf8')).name;
    expect(await name('claude-3-5-haiku')).toBe('Claude 3.5 Haiku');
    expect(await name('deepseek-r1-0528')).toBe('DeepSeek R1 0528');
    expect(out).toContain('names cleaned (vendor prefix, stray spaces): 2\n');
    expect(out).toContain('  claude-3-5-haiku: "Anthropic: Claude 3.5 Haiku" -> "Claude 3.5 Haiku"\n');
    expect(out).toContain('  deepseek-r1-0528: " DeepSeek  R1 0528 " -> "DeepSeek R1 0528"\n');
  });

  it('gives each Aider and models.dev value its run: id, variant and settings as the source gives them', async () => {
    const aider = await rows('measurements/benchmarks/aider.jsonl');
    const high = aider.find((r) => r.model === 'gpt-5' && r.metric === 'aider-polyglot.pass-rate-2' && r.value === 88);
    expect(high.run).toEqual({
      id: '2025-08-23--gpt-5-high',
      variant: 'reasoning effort high, diff edit format',
      settings: { dirname: '2025-08-23--gpt-5-high', edit_format: 'diff', reasoning_effort: 'high', test_cases: 225 },
    });
    const cited = await rows('measurements/benchmarks/models-dev.jsonl');
    expect(cited.map((r) => [r.value, r.run.variant])).toEqual([
      [70.6, 'Cursor CLI, medium, artificialanalysis.ai'],
      [73.8, 'Codex, xhigh, artificialanalysis.ai'],
    ]);
    expect(new Set(cited.map((r) => r.run.id)).size).toBe(2);
    const metrics = parseYaml(await readFile(path.join(data, 'metrics.yaml'), 'utf8')).metrics;
    expect(
      metrics
        .filter((m: { key: string }) => m.key.startsWith('aider-'))
        .map((m: Record<string, unknown>) => [m.key, m.run_group, m.decides_run ?? false]),
    ).toEqual([
      ['aider-polyglot.pass-rate-2', 'aider-polyglot', true],
      ['aider-polyglot.seconds-per-case', 'aider-polyglot', false],
      ['aider-polyglot.total-cost', 'aider-polyglot', false],
    ]);
  });

  it('matches a dated snapshot to the catalog entry that names it', async () => {
    const aider = await rows('measurements/benchmarks/aider.jsonl');
    expect(aider.filter((r) => r.model === 'deepseek-r1-0528').map((r) => r.value)).toEqual([71.4, 716.6, 4.8]);
    expect(aider.filter((r) => r.model === 'deepseek-r1').map((r) => r.value)).toEqual([56.9, 113.7, 5.42]);
    expect(out).toContain('dated snapshot: aider "DeepSeek R1 (0528)" matched to deepseek-r1-0528, not deepseek-r1');
  });

  it("declares thefastest.ai's sentinel and keeps a reseller's 0/0 price, marked as a reseller's", async () => {
    const sources = parseYaml(await readFile(path.join(data, 'sources.yaml'), 'utf8')).sources;
    expect(sources.find((s: { id: string }) => s.id === 'thefastest-ai').tokens_per_second_sentinel).toBe(999);
    const prices = await rows('measurements/prices/models-dev.jsonl');
    expect(prices.find((p) => p.model === 'deepseek-r1')).toMatchObject({
      input_per_million: 0,
      output_per_million: 0,
      first_party: false,
    });
    expect(out).toContain("speed: 1 sample at their source's tokens/s sentinel");
  });

  it('writes each offer with its price card, each provider, the headline offer of a price and the lifecycle', async () => {
    const openai = await rows('offers/openai.jsonl');
    expect(openai).toEqual([
      {
        model: 'gpt-5',
        provider: 'openai',
        provider_model_id: 'gpt-5',
        first_party: true,
        input_price_per_million: 1.25,
        output_price_per_million: 10,
        cache_read_price_per_million: 0.125,
        tiers: [{ above_context_tokens: 272000, input_price_per_million: 2.5, output_price_per_million: 15 }],
        modes: { fast: { input_price_per_million: 2.5, output_price_per_million: 20 } },
        context_window_tokens: 100000,
        max_input_tokens: null,
        max_output_tokens: null, // models.dev's 0: unknown
        status: null,
        updated_at: '2025-02-01',
        provenance: { source: 'models-dev', evidence_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
      },
    ]);
    const groq = await rows('offers/groq.jsonl');
    expect(groq.map((o) => [o.model, o.other_prices ?? null, o.input_price_per_million ?? null])).toEqual([
      ['deepseek-r1-0528', null, null],
      ['gpt-5', { request: 0.01 }, 1],
    ]);
    const providers = parseYaml(await readFile(path.join(data, 'providers.yaml'), 'utf8')).providers;
    expect(providers.map((p: { id: string }) => p.id)).toEqual(['anthropic', 'groq', 'nvidia', 'openai']);
    expect(providers[1]).toMatchObject({ name: 'Groq', api: null, doc: 'https://groq.example/docs' });
    const prices = await rows('measurements/prices/models-dev.jsonl');
    expect(prices.map((p) => [p.model, p.offer])).toEqual([
      ['claude-3-5-haiku', { provider: 'anthropic', provider_model_id: 'claude-3-5-haiku' }],
      ['deepseek-r1', { provider: 'nvidia', provider_model_id: 'deepseek-ai/deepseek-r1' }],
      ['gpt-5', { provider: 'openai', provider_model_id: 'gpt-5' }],
    ]);
    const model = async (slug: string) => parseYaml(await readFile(path.join(data, 'models', `${slug}.yaml`), 'utf8'));
    const haiku = await model('claude-3-5-haiku');
    expect(haiku.status).toBe('deprecated');
    expect(haiku.description.en).toContain('It is marked as deprecated.');
    expect((await model('gpt-5-latest')).snapshots).toEqual(['gpt-5']);
    expect(await model('gpt-5')).toMatchObject({ status: 'active' });
    expect((await model('gpt-5')).deprecation_date).toBeUndefined();
  });

  it('keeps what a maintainer wrote across a re-import: a model, an offer, a price, a benchmark row, an edited description', async () => {
    const tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-maintained-'));
    try {
      const reference = path.join(tmp, 'reference');
      const dir = path.join(tmp, 'data');
      await writeReference(reference);
      const convert = () =>
        spawnSync(
          process.execPath,
          [path.join(ROOT, 'scripts/convert-reference.mjs'), '--reference', reference, '--data', dir],
          {
            encoding: 'utf8',
          },
        );
      expect(convert().status).toBe(0);
      const at = (rel: string) => path.join(dir, rel);
      const append = async (rel: string, row: object) =>
        writeFile(at(rel), `${await readFile(at(rel), 'utf8')}${JSON.stringify(row)}\n`);
      const prov = (source: string) => ({ source, evidence_sha256: 'a'.repeat(64) });
      // The description of an imported model, marked as the maintainer's.
      const gpt5 = parseYaml(await readFile(at('models/gpt-5.yaml'), 'utf8'));
      const description = { ...gpt5.description, en: 'Written by a maintainer.' };
      await writeFile(at('models/gpt-5.yaml'), stringifyYaml({ ...gpt5, description, maintained: ['description'] }));
      // A model of the maintainer's own, with an offer, a price and a benchmark row.
      await writeFile(
        at('models/house-model.yaml'),
        stringifyYaml({ ...gpt5, id: 99, name: 'House Model', maintained: true, provenance: prov('models-dev') }),
      );
      const offer = {
        model: 'house-model',
        provider: 'groq',
        provider_model_id: 'house/model',
        first_party: false,
        input_price_per_million: 0.5,
        output_price_per_million: 1,
        updated_at: '2025-03-01',
        maintained: true,
        provenance: prov('models-dev'),
      };
      await append('offers/groq.jsonl', offer);
      const price = {
        model: 'house-model',
        lane: 'verified',
        input_per_million: 0.5,
        output_per_million: 1,
        first_party: false,
        observed_at: '2025-03-01T00:00:00Z',
        offer: { provider: 'groq', provider_model_id: 'house/model' },
        maintained: true,
        provenance: prov('models-dev'),
      };
      await append('measurements/prices/models-dev.jsonl', price);
      const result = {
        model: 'house-model',
        metric: 'aider-polyglot.pass-rate-2',
        lane: 'verified',
        value: 42,
        confidence: 1,
        eval_date: '2025-03-01',
        run: { id: 'house-run', variant: null, settings: {} },
        maintained: true,
        provenance: prov('aider'),
      };
      await append('measurements/benchmarks/aider.jsonl', result);
      const before = await readFile(at('models/house-model.yaml'), 'utf8');

      const again = convert();
      expect(again.status, again.stderr).toBe(0);
      expect(again.stderr).toBe(
        `conflict: data/models/gpt-5.yaml: description: kept the maintainer's ${JSON.stringify(description).slice(0, 77)}...; the import has ${JSON.stringify(gpt5.description).slice(0, 77)}...\n`,
      );
      expect(again.stdout).toContain(
        "maintained records kept: 5; conflicts (the maintainer's value kept): 1, on stderr",
      );
      const reread = parseYaml(await readFile(at('models/gpt-5.yaml'), 'utf8'));
      expect(reread).toEqual({ ...gpt5, description, maintained: ['description'] });
      expect(await readFile(at('models/house-model.yaml'), 'utf8')).toBe(before);
      const lines = async (rel: string) =>
        (await readFile(at(rel), 'utf8'))
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l));
      expect(await lines('offers/groq.jsonl')).toContainEqual(offer);
      expect(await lines('measurements/prices/models-dev.jsonl')).toContainEqual(price);
      expect(await lines('measurements/benchmarks/aider.jsonl')).toContainEqual(result);
      // All of it validates and builds, and the marker itself is never published.
      await withTemp(async (out) => {
        const r = await build({ dataDir: dir, outDir: out });
        const detail = JSON.parse(
          await readFile(path.join(r.releaseDir, 'api/v1/models/house-model/en.all.public.benchmarks.json'), 'utf8'),
        ).data;
        expect(detail.name).toBe('House Model');
        expect(detail.benchmarks.map((b: { value: number }) => b.value)).toContain(42);
        const gpt = JSON.parse(
          await readFile(path.join(r.releaseDir, 'api/v1/models/gpt-5/en.all.public.benchmarks.json'), 'utf8'),
        );
        expect(gpt.data.description).toBe('Written by a maintainer.');
        expect(JSON.stringify(gpt)).not.toContain('"maintained"');
      });

      // An edit outside any marked record is refused before anything is written: exit code 3, each file named.
      const groq = await readFile(at('offers/groq.jsonl'), 'utf8');
      await writeFile(
        at('offers/groq.jsonl'),
        groq.replace('"input_price_per_million":1,', '"input_price_per_million":1.5,'),
      );
      const edited = await readFile(at('offers/groq.jsonl'), 'utf8');
      expect(edited).not.toBe(groq);
      const refused = convert();
      expect(refused.status).toBe(3);
      expect(refused.stderr).toContain('refused, nothing written');
      expect(refused.stderr).toContain('  data/offers/groq.jsonl (1 record)\n');
      expect(await readFile(at('offers/groq.jsonl'), 'utf8')).toBe(edited);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  });

  it('writes dated prices per source: models.dev rows by file, genai-prices rows by first-party offer or offer id', async () => {
    const md = await rows('price-history/models-dev.jsonl');
    // The empty range is left out; the short-lived row is kept with its flag (the build leaves it out).
    expect(
      md.map((r) => [r.effective_from, r.effective_to, r.input_price_per_million, r.short_lived ?? false]),
    ).toEqual([
      ['2025-06-10', '2025-07-01', 2, false],
      ['2025-07-01', '2025-07-02', 20, true],
      ['2025-07-02', null, 1.25, false],
    ]);
    expect(md[0]).toMatchObject({ model: 'gpt-5', provider: 'openai', provider_model_id: 'gpt-5', first_seen: true });
    expect(md[2]).toMatchObject({
      other_prices: { cached_input: 0.1 },
      likely_correction: true,
      precision: 'commit_date',
    });
    const gp = await rows('price-history/genai-prices.jsonl');
    expect(gp).toEqual([
      {
        model: 'gpt-5',
        provider: 'groq',
        provider_model_id: 'openai/gpt-5',
        effective_from: '2025-06-10',
        effective_to: null,
        input_price_per_million: 1,
        output_price_per_million: 8,
        precision: 'announced',
        provenance: { source: 'genai-prices', evidence_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
      },
      {
        model: 'gpt-5',
        provider: 'openai',
        provider_model_id: 'gpt-5',
        effective_from: null,
        effective_to: '2025-06-10',
        input_price_per_million: 10,
        output_price_per_million: 40,
        tiers: [{ above_context_tokens: 272000, input_price_per_million: 20 }],
        other_prices: { web_searches_kcount: 10 },
        precision: 'announced',
        provenance: { source: 'genai-prices', evidence_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
      },
    ]);
    const sources = parseYaml(await readFile(path.join(data, 'sources.yaml'), 'utf8')).sources;
    expect(sources.find((s: { id: string }) => s.id === 'genai-prices')).toMatchObject({
      license: 'MIT',
      redistributable: true,
    });
    expect(out).toContain(
      'price history: 1 row with an empty range left out (1 of them short-lived); 1 genai-prices tiered',
    );
  });

  it('builds: one run per row, the sentinel sample out of the average, the reseller 0/0 as no price', async () => {
    await withTemp(async (dir) => {
      const r = await build({ dataDir: data, outDir: dir });
      expect(r.leftOut).toEqual({ sentinelSpeedSamples: 1, resellerZeroPrices: 1 });
      const detail = async (slug: string) =>
        JSON.parse(
          await readFile(path.join(r.releaseDir, 'api/v1/models', slug, 'en.all.public.benchmarks.json'), 'utf8'),
        ).data;
      const gpt = await detail('gpt-5');
      expect(
        gpt.benchmarks
          .filter((b: { metric_key: string }) => b.metric_key.startsWith('aider-'))
          .map((b: Record<string, unknown>) => [b.metric_key, b.value, b.variant]),
      ).toEqual([
        ['aider-polyglot.pass-rate-2', 88, 'reasoning effort high, diff edit format'],
        ['aider-polyglot.seconds-per-case', 194, 'reasoning effort high, diff edit format'],
        ['aider-polyglot.total-cost', 29.08, 'reasoning effort high, diff edit format'],
      ]);
      expect(gpt.stats).toMatchObject({ total_tests: 3, average_tokens_per_second: 60 });
      expect((await detail('deepseek-r1')).pricing_summary).toBeNull();
      expect((await detail('claude-3-5-haiku')).name).toBe('Claude 3.5 Haiku');
    });
  });
});
