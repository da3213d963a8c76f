import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOCALES } from '../src/schema/source.js';
import { dataReference } from '../src/data-reference.js';
import { jsonSchemas, schemaFiles } from '../src/json-schemas.js';

const ROOT_DIR = path.resolve(import.meta.dirname, '..');
import { SCHEMA_DIR, committedSchemas, createAjv } from './helpers/schemas.js';

const EXPECTED = [
  'BenchmarkResult',
  'CatalogResponse',
  'ChangeList',
  'ChangesResponse',
  'DetailResponse',
  'ListArtifact',
  'ListResponse',
  'Manifest',
  'MetricsFile',
  'MetricsResponse',
  'ModelPricesResponse',
  'ModelRecord',
  'OfferRecord',
  'OverridesFile',
  'PriceHistoryRecord',
  'PriceObservation',
  'PricesArtifact',
  'PricesAtResponse',
  'Problem',
  'ProvidersFile',
  'PublicationMeta',
  'SiteFile',
  'Snapshot',
  'SourcesFile',
  'SpeedRun',
];

describe('JSON Schemas generated from zod', () => {
  it('cover every source record file and every published shape', () => {
    expect(Object.keys(jsonSchemas()).sort()).toEqual(EXPECTED);
  });

  it('committed schemas/ files equal freshly generated ones (else run `npm run schemas`)', () => {
    const fresh = schemaFiles();
    const committed = readdirSync(SCHEMA_DIR)
      .filter((f) => f.endsWith('.schema.json'))
      .sort();
    const hint = 'schemas/ is stale: run `npm run schemas` and commit the result';
    expect(committed, `${hint} (file set differs)`).toEqual(Object.keys(fresh).sort());
    for (const [name, text] of Object.entries(fresh)) {
      expect(readFileSync(path.join(SCHEMA_DIR, name), 'utf8'), `${hint} (schemas/${name} differs)`).toBe(text);
    }
  });

  it('docs/data-reference.md, the field reference of the source records, equals a fresh one (else `npm run schemas`)', () => {
    const fresh = dataReference();
    expect(readFileSync(path.join(ROOT_DIR, 'docs/data-reference.md'), 'utf8'), 'run `npm run schemas`').toBe(fresh);
    // Every record kind the issue names, and every field of the offer's price card, has its row.
    for (const kind of ['Model', 'Offer', 'Provider', 'Benchmark result', 'Speed sample'])
      expect(fresh).toContain(`\n## ${kind}\n`);
    for (const f of ['input', 'output', 'cache_read', 'cache_write', 'reasoning', 'input_audio', 'output_audio'])
      expect(fresh).toContain(`| \`${f}_price_per_million\` |`);
    expect(fresh).toContain('| `tiers[].above_context_tokens` |');
    expect(fresh).toContain('| `modes.<name>.input_price_per_million` |');
  });

  it('files are pretty-printed, keys sorted at every level, with a trailing newline', () => {
    for (const [name, text] of Object.entries(schemaFiles())) {
      expect(text.endsWith('}\n'), name).toBe(true);
      expect(text.startsWith('{\n  "$schema": "https://json-schema.org/draft/2020-12/schema",\n'), name).toBe(true);
      const check = (v: unknown): void => {
        if (Array.isArray(v)) {
          for (const x of v) check(x);
          return;
        }
        if (v && typeof v === 'object') {
          const keys = Object.keys(v);
          expect(keys, name).toEqual([...keys].sort());
          Object.values(v).forEach(check);
        }
      };
      check(JSON.parse(text));
    }
  });

  it('each committed schema compiles with ajv/dist/2020 in strict mode', () => {
    const ajv = createAjv();
    for (const [name, s] of Object.entries(committedSchemas())) {
      expect(s.$schema, name).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(() => ajv.compile(s), name).not.toThrow();
    }
  });

  it('source schemas describe records as authored: defaulted fields are optional, unknown fields refused', () => {
    const ajv = createAjv();
    const s = jsonSchemas();
    const modelRecord = ajv.compile(s.ModelRecord!);
    const record = {
      id: 1,
      name: 'A',
      developer: 'Lab',
      release_date: '2025-01-01',
      updated_at: '2025-02-01',
      context_window_tokens: 1000,
      max_output_tokens: 100,
      description: { en: 'a', zh: 'a', ru: 'a' },
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
      provenance: { source: 'lab', evidence_sha256: '0'.repeat(64) },
    };
    expect(modelRecord(record)).toBe(true); // no lane, served_by, documentation_url, hub_url: all have defaults
    expect(modelRecord({ ...record, lane: 'beta' })).toBe(false);
    expect(modelRecord({ ...record, extra: 1 })).toBe(false);
    expect(modelRecord({ ...record, release_date: '2025-02-30' })).toBe(false);
    expect(modelRecord({ ...record, description: { en: 'a', ru: 'a' } })).toBe(false);
    const speed = ajv.compile(s.SpeedRun!);
    const run = {
      model: 'a',
      lane: 'verified',
      tokens_per_second: 1,
      first_token_latency_ms: 2,
      measured_at: '2025-01-01T00:00:00Z',
      provenance: record.provenance,
    };
    expect(speed(run)).toBe(true);
    expect(speed({ ...run, measured_at: '2025-01-01T00:00:00' })).toBe(false); // no zone
    expect(speed({ ...run, tokens_per_second: -1 })).toBe(false);
    const bench = ajv.compile(s.BenchmarkResult!);
    const result = {
      model: 'a',
      lane: 'verified',
      metric: 'm',
      value: 1,
      confidence: 1,
      eval_date: '2025-01-01',
      provenance: record.provenance,
    };
    expect(bench(result)).toBe(true); // stderr defaults to null
    expect(bench({ ...result, confidence: 2 })).toBe(false);
  });

  it('published schemas describe responses as written: every field required, nothing else allowed', () => {
    const s = jsonSchemas();
    const detail = (s.DetailResponse as { properties: { data: { required: string[]; additionalProperties: boolean } } })
      .properties.data;
    expect(detail.additionalProperties).toBe(false);
    expect(detail.required).toEqual([
      'id',
      'slug',
      'name',
      'service_url',
      'description',
      'developer',
      'release_date',
      'context_window_tokens',
      'max_output_tokens',
      'documentation_url',
      'hub_url',
      'stats',
      'performance_summary',
      'pricing_summary',
      'benchmark_count',
      'benchmark_summary',
      'provenance',
      'lifecycle',
    ]);
    const locale = (s.ListResponse as { properties: { locale: { enum: string[] } } }).properties.locale;
    expect(locale.enum).toEqual([...LOCALES]);
    const ajv = createAjv();
    const problem = ajv.compile(s.Problem!);
    expect(
      problem({
        type: 'about:blank',
        title: 'Bad Request',
        status: 400,
        detail: 'x',
        code: 'invalid_params',
        invalid_params: [{ name: 'page_size', reason: 'must be at most 100' }],
      }),
    ).toBe(true);
    expect(problem({ type: 'about:blank', title: 'Bad Request', status: 400, detail: 'x' })).toBe(false);
  });
});
