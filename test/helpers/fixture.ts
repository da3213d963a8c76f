// Builds a temporary source tree from inline records (models.dev-style `withFixture`): tests state their data and
// their expected answers side by side.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';

export const HASH = (n: number) => n.toString(16).padStart(64, '0');

export interface FixtureModel {
  slug: string;
  [k: string]: unknown;
}
export interface FixtureSpec {
  models?: FixtureModel[];
  metrics?: Record<string, unknown>[];
  sources?: Record<string, unknown>[];
  speed?: Record<string, unknown>[];
  benchmarks?: Record<string, unknown>[];
  prices?: Record<string, unknown>[];
  overrides?: Record<string, unknown>[];
  /** Extra raw files: relative path -> text. */
  files?: Record<string, string>;
}

export const prov = (n = 1, source = 'lab') => ({ source, evidence_sha256: HASH(n) });

export function model(slug: string, id: number, extra: Record<string, unknown> = {}): FixtureModel {
  return {
    slug,
    id,
    name: slug.toUpperCase(),
    developer: 'Lab',
    release_date: '2025-01-01',
    updated_at: '2025-02-01',
    context_window_tokens: 1000,
    max_output_tokens: 100,
    documentation_url: null,
    hub_url: null,
    served_by: ['a'],
    description: { en: `${slug} is a model.`, zh: `${slug} 是一个模型。`, ru: `${slug} — это модель.` },
    capabilities: {
      input: ['text'],
      output: ['text'],
      reasoning: false,
      tool_call: true,
      structured_output: null,
      attachment: false,
      temperature: true,
      open_weights: false,
      knowledge_cutoff: null,
    },
    lane: 'verified',
    provenance: prov(id),
    ...extra,
  };
}

export const metric = (key: string, extra: Record<string, unknown> = {}) => ({
  key,
  label: key,
  benchmark: key.split('.')[0],
  group: 'coding',
  unit: 'percent',
  higher_is_better: true,
  aggregate: false,
  headline: true,
  ...extra,
});

export const DEFAULT_SOURCES = [
  { id: 'lab', name: 'Lab', url: 'https://example.org/lab', license: 'MIT', redistributable: true },
  { id: 'closed', name: 'Closed', url: 'https://example.org/closed', license: 'NOASSERTION', redistributable: false },
];

export async function writeFixture(dir: string, spec: FixtureSpec): Promise<void> {
  const put = async (rel: string, text: string) => {
    await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await writeFile(path.join(dir, rel), text);
  };
  await put('site.yaml', stringify({ name: 'modelpub', url: 'https://modelpub.example', schema_version: '1.0.0' }));
  await put('sources.yaml', stringify({ sources: spec.sources ?? DEFAULT_SOURCES }));
  await put('metrics.yaml', stringify({ metrics: spec.metrics ?? [] }));
  for (const { slug, ...m } of spec.models ?? []) await put(`models/${slug}.yaml`, stringify(m));
  const jsonl = (rows: unknown[]) => `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`;
  if (spec.speed?.length) await put('measurements/speed/runs.jsonl', jsonl(spec.speed));
  if (spec.benchmarks?.length) await put('measurements/benchmarks/results.jsonl', jsonl(spec.benchmarks));
  if (spec.prices?.length) await put('measurements/prices/observations.jsonl', jsonl(spec.prices));
  if (spec.overrides?.length) await put('overrides/display.yaml', stringify({ overrides: spec.overrides }));
  for (const [rel, text] of Object.entries(spec.files ?? {})) await put(rel, text);
}

/** A fresh temporary folder, removed after the callback. */
export async function withTemp<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'modelpub-test-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The small catalog most tests share: 4 models, 2 metrics of opposite direction, ties, lanes, prices, an override. */
export function smallCatalog(): FixtureSpec {
  return {
    models: [
      model('alpha', 1, { served_by: ['a', 'b', 'c'] }),
      model('beta', 2, { release_date: '2025-03-01' }),
      model('gamma', 3, { release_date: '2024-06-01' }),
      model('delta', 4, { lane: 'provisional' }),
    ],
    metrics: [
      metric('code.pass', {}),
      metric('cost.usd', { higher_is_better: false, group: 'efficiency', unit: 'usd', headline: false }),
    ],
    benchmarks: [
      {
        model: 'alpha',
        metric: 'code.pass',
        lane: 'verified',
        value: 90,
        stderr: null,
        confidence: 1,
        eval_date: '2025-01-10',
        provenance: prov(101),
      },
      {
        model: 'beta',
        metric: 'code.pass',
        lane: 'verified',
        value: 80,
        stderr: 1.5,
        confidence: 1,
        eval_date: '2025-01-10',
        provenance: prov(102),
      },
      {
        model: 'gamma',
        metric: 'code.pass',
        lane: 'verified',
        value: 80,
        stderr: null,
        confidence: 1,
        eval_date: '2025-01-10',
        provenance: prov(103),
      },
      {
        model: 'delta',
        metric: 'code.pass',
        lane: 'provisional',
        value: 95,
        stderr: null,
        confidence: 0.7,
        eval_date: '2025-01-11',
        provenance: prov(104),
      },
      {
        model: 'alpha',
        metric: 'cost.usd',
        lane: 'verified',
        value: 3,
        stderr: null,
        confidence: 1,
        eval_date: '2025-01-10',
        provenance: prov(105),
      },
      {
        model: 'beta',
        metric: 'cost.usd',
        lane: 'verified',
        value: 1,
        stderr: null,
        confidence: 1,
        eval_date: '2025-01-10',
        provenance: prov(106),
      },
      {
        model: 'gamma',
        metric: 'code.pass',
        lane: 'verified',
        value: 99,
        stderr: null,
        confidence: 1,
        eval_date: '2025-01-10',
        provenance: prov(107, 'closed'),
      },
    ],
    speed: [
      {
        model: 'alpha',
        lane: 'verified',
        tokens_per_second: 100,
        first_token_latency_ms: 200,
        measured_at: '2025-01-05T10:00:00Z',
        provenance: prov(201),
      },
      {
        model: 'alpha',
        lane: 'verified',
        tokens_per_second: 50,
        first_token_latency_ms: 400,
        measured_at: '2025-01-06T10:00:00Z',
        provenance: prov(202),
      },
      {
        model: 'alpha',
        lane: 'provisional',
        tokens_per_second: 10,
        first_token_latency_ms: 900,
        measured_at: '2025-01-07T10:00:00Z',
        provenance: prov(203),
      },
    ],
    prices: [
      {
        model: 'alpha',
        lane: 'verified',
        input_per_million: 1,
        output_per_million: 4,
        observed_at: '2025-01-01T00:00:00Z',
        provenance: prov(301),
      },
      {
        model: 'alpha',
        lane: 'verified',
        input_per_million: 2,
        output_per_million: 8,
        observed_at: '2025-02-01T00:00:00Z',
        provenance: prov(302),
      },
      {
        model: 'alpha',
        lane: 'verified',
        input_per_million: 4,
        output_per_million: 8,
        observed_at: '2025-02-01T00:00:00Z',
        provenance: prov(303),
      },
      {
        model: 'beta',
        lane: 'verified',
        input_per_million: 0.5,
        output_per_million: 1.5,
        observed_at: '2025-01-01T00:00:00Z',
        provenance: prov(304),
      },
    ],
    overrides: [
      {
        model: 'beta',
        reason: 'launch name',
        name: 'Beta Prime',
        description: { en: 'Beta, as marketed.' },
        provenance: prov(401),
      },
    ],
  };
}
