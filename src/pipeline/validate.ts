// Stage 2: check every record against the schemas, then the rules that span files. All problems are collected
// and reported together (file, line, record, field); nothing is built from data with a single problem.
import path from 'node:path';
import { isAlias, isMap, isScalar, isSeq, visit } from 'yaml';
import type { z } from 'zod';
import { ValidationError, type SourceIssue } from '../errors.js';
import {
  BenchmarkResult,
  MetricsFile,
  ModelRecord,
  OverridesFile,
  PriceObservation,
  SiteFile,
  SourcesFile,
  SpeedRun,
  Slug,
  type DisplayOverride,
  type Metric,
  type Source,
} from '../schema/source.js';
import { lineOf, type JsonlRecord, type LoadedTree, type YamlSource } from './load.js';

export interface ModelEntry extends ModelRecord {
  slug: string;
  file: string;
}
export interface SourceData {
  site: z.infer<typeof SiteFile>;
  sources: Source[];
  metrics: Metric[];
  models: ModelEntry[]; // sorted by slug
  speed: z.infer<typeof SpeedRun>[];
  benchmarks: z.infer<typeof BenchmarkResult>[];
  prices: z.infer<typeof PriceObservation>[];
  overrides: DisplayOverride[];
  digest: string;
  /** The newest date found in the data: the default publication time, so that no clock enters the output. */
  latestInstant: string;
  /** Values that are valid but implausible (a unit mix-up?): reported, not refused; `validate --strict` refuses them. */
  warnings: SourceIssue[];
}

const fieldOf = (p: readonly PropertyKey[]) =>
  p.map((k, i) => (typeof k === 'number' ? `[${k}]` : `${i ? '.' : ''}${String(k)}`)).join('') || undefined;

/**
 * The messages zod writes itself are for programmers ("Invalid input: expected string, received undefined"); a
 * missing field is "required" (the schemas' own messages take precedence over this).
 */
const plainErrors = {
  error: (iss: { code: string; input?: unknown }) =>
    iss.code === 'invalid_type' && iss.input === undefined ? 'required' : undefined,
};

/** zod reports unknown keys once, at the object; split them so that each names its own field (and line). */
function located(issues: z.core.$ZodIssue[]): { path: PropertyKey[]; message: string }[] {
  return issues.flatMap((iss) =>
    iss.code === 'unrecognized_keys'
      ? iss.keys.map((k) => ({ path: [...iss.path, k], message: 'unknown field: not in the schema (a typo?)' }))
      : [{ path: iss.path, message: iss.message }],
  );
}

function checkYaml<T extends z.ZodType>(
  schema: T,
  y: YamlSource,
  issues: SourceIssue[],
  record?: (p: readonly PropertyKey[]) => string | undefined,
): z.infer<T> | null {
  let js: unknown;
  try {
    js = y.doc.toJS();
  } catch (e) {
    // The yaml library refuses to expand aliases past a limit (an "alias bomb": a few lines, billions of nodes).
    if (!(e instanceof ReferenceError)) throw e;
    let line: number | undefined;
    visit(y.doc, {
      Alias: (_, node) => {
        if (node.range) line = y.lines.linePos(node.range[0]).line;
        return visit.BREAK;
      },
    });
    issues.push({
      file: y.file,
      line,
      message: 'YAML: too many aliases (*name): they would expand to a resource-exhausting size; write the values out',
    });
    return null;
  }
  if (js === null || js === undefined) {
    issues.push({ file: y.file, record: record?.([]), message: 'the file is empty (or holds only comments)' });
    return null;
  }
  const r = schema.safeParse(js, plainErrors);
  if (r.success) return r.data;
  for (const iss of located(r.error.issues)) {
    issues.push({
      file: y.file,
      line: lineOf(y, iss.path),
      record: record?.(iss.path),
      field: fieldOf(iss.path),
      message: iss.message,
    });
  }
  return null;
}

interface Located<T> {
  value: T;
  file: string;
  line: number;
}
function checkJsonl<T extends z.ZodType>(schema: T, rows: JsonlRecord[], issues: SourceIssue[]): Located<z.infer<T>>[] {
  const out: Located<z.infer<T>>[] = [];
  for (const row of rows) {
    const r = schema.safeParse(row.value, plainErrors);
    if (r.success) out.push({ value: r.data, file: row.file, line: row.line });
    else
      for (const iss of located(r.error.issues))
        issues.push({ file: row.file, line: row.line, field: fieldOf(iss.path), message: iss.message });
  }
  return out;
}

/** models/<slug>.yaml -> slug: the file name is the slug. */
const slugOfFile = (file: string) => path.posix.basename(file).replace(/\.ya?ml$/, '');

/** Validate a loaded tree; throws ValidationError listing every problem. */
export function validateTree(tree: LoadedTree): SourceData {
  const issues: SourceIssue[] = [...tree.issues];
  const site = tree.site && checkYaml(SiteFile, tree.site, issues);
  const sourcesFile =
    tree.sources &&
    checkYaml(SourcesFile, tree.sources, issues, (p) =>
      p[0] === 'sources' && typeof p[1] === 'number' ? `source #${p[1] + 1}` : undefined,
    );
  const metricsFile =
    tree.metrics &&
    checkYaml(MetricsFile, tree.metrics, issues, (p) =>
      p[0] === 'metrics' && typeof p[1] === 'number' ? `metric #${p[1] + 1}` : undefined,
    );
  const sources = sourcesFile?.sources ?? [];
  const metrics = metricsFile?.metrics ?? [];
  uniqueBy(
    sources,
    (s) => s.id,
    'source id',
    'sources.yaml',
    issues,
    (i) => lineOf(tree.sources!, ['sources', i, 'id']),
  );
  uniqueBy(
    metrics,
    (m) => m.key,
    'metric key',
    'metrics.yaml',
    issues,
    (i) => lineOf(tree.metrics!, ['metrics', i, 'key']),
  );

  const models: ModelEntry[] = [];
  // Models whose files have problems already reported (unparseable, or invalid below): records naming them get no
  // second "unknown model" problem each.
  const invalidSlugs = new Set(tree.issues.filter((i) => i.file.startsWith('models/')).map((i) => slugOfFile(i.file)));
  // Slugs and ids are compared in valid and invalid files alike: a clash is reported with the other problems, not
  // once they are fixed.
  const named: { slug: string; id: unknown; file: string; y: YamlSource }[] = [];
  for (const y of tree.models) {
    const slug = slugOfFile(y.file);
    if (!Slug.safeParse(slug).success) {
      issues.push({
        file: y.file,
        message: `file name "${slug}" is not a slug (lowercase letters, digits and single hyphens): the slug is the file name`,
      });
      continue;
    }
    // An aliased id (id: *n) as its anchor's value, as the schema check reads it: else a duplicate went unseen.
    const id = unaliased(y, y.doc.get('id', true));
    named.push({ slug, id: isScalar(id) ? id.value : undefined, file: y.file, y });
    const m = checkYaml(ModelRecord, y, issues, () => `model "${slug}"`);
    if (m) models.push({ ...m, slug, file: y.file });
    else invalidSlugs.add(slug);
  }
  const bySlug = <T extends { slug: string }>(a: T, b: T) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0);
  models.sort(bySlug);
  named.sort(bySlug);
  duplicates(
    named,
    (m) => m.slug,
    (k, a, b) => `Duplicate slug "${k}" used by both ${a.file} and ${b.file}. Slugs must be unique.`,
    issues,
  );
  const withId = named.filter((m) => typeof m.id === 'number' || typeof m.id === 'string');
  duplicates(
    withId,
    (m) => String(m.id),
    (k, a, b) => `Duplicate model id ${k} used by both ${a.file} and ${b.file}. Ids must be unique.`,
    issues,
    (m) => lineOf(m.y, ['id']),
  );
  const yamlOf = new Map(tree.models.map((y) => [y.file, y]));
  const modelLine = (m: ModelEntry, at: PropertyKey[]) => lineOf(yamlOf.get(m.file)!, at);

  const speed = checkJsonl(SpeedRun, tree.speed, issues);
  const benchmarks = checkJsonl(BenchmarkResult, tree.benchmarks, issues);
  const prices = checkJsonl(PriceObservation, tree.prices, issues);

  const slugs = new Set(models.map((m) => m.slug));
  const sourceIds = namesIn(tree.sources, 'sources', 'id');
  const metricKeys = namesIn(tree.metrics, 'metrics', 'key');
  /** `lineOf`: the line of a field of a record that spans several (YAML), when it differs from the record's. */
  function refsOk(
    model: string | null,
    source: string,
    at: Omit<SourceIssue, 'message'>,
    lineOf?: (field: string[]) => number | undefined,
  ): boolean {
    let ok = true;
    const where = (field: string) => ({ ...at, line: lineOf?.(field.split('.')) ?? at.line, field });
    if (model !== null && !slugs.has(model)) {
      if (!invalidSlugs.has(model))
        issues.push({ ...where('model'), message: `unknown model "${model}": no data/models/${model}.yaml` });
      ok = false;
    }
    if (sourceIds && !sourceIds.has(source)) {
      issues.push({ ...where('provenance.source'), message: `unknown source "${source}": declare it in sources.yaml` });
      ok = false;
    }
    return ok;
  }
  const overrides: DisplayOverride[] = [];
  for (const y of tree.overrides) {
    const f = checkYaml(OverridesFile, y, issues, (p) =>
      typeof p[1] === 'number' ? `override #${p[1] + 1}` : undefined,
    );
    if (f)
      f.overrides.forEach((o, i) => {
        overrides.push(o);
        refsOk(
          o.model,
          o.provenance.source,
          { file: y.file, line: lineOf(y, ['overrides', i]), record: `override #${i + 1}` },
          (field) => lineOf(y, ['overrides', i, ...field]),
        );
      });
  }
  for (const m of models)
    refsOk(null, m.provenance.source, {
      file: m.file,
      line: modelLine(m, ['provenance', 'source']),
      record: `model "${m.slug}"`,
    });
  for (const parsed of [speed, benchmarks, prices] as Located<{
    model: string;
    provenance: { source: string };
    metric?: string;
  }>[][]) {
    for (const { value: rec, file, line } of parsed) {
      refsOk(rec.model, rec.provenance.source, { file, line });
      if (rec.metric !== undefined && metricKeys && !metricKeys.has(rec.metric)) {
        issues.push({
          file,
          line,
          field: 'metric',
          message: `unknown metric key "${rec.metric}": declare it in metrics.yaml`,
        });
      }
    }
  }
  // Every observation time, as an instant: the newest is the publication time, and none may lie in the future.
  const observed: Observation[] = [
    ...models.map((m) => ({
      at: toInstant(m.updated_at),
      where: () => ({
        file: m.file,
        line: modelLine(m, ['updated_at']),
        record: `model "${m.slug}"`,
        field: 'updated_at',
      }),
    })),
    ...speed.map((r) => ({
      at: toInstant(r.value.measured_at),
      where: () => ({ file: r.file, line: r.line, field: 'measured_at' }),
    })),
    ...benchmarks.map((r) => ({
      at: toInstant(r.value.eval_date),
      where: () => ({ file: r.file, line: r.line, field: 'eval_date' }),
    })),
    ...prices.map((r) => ({
      at: toInstant(r.value.observed_at),
      where: () => ({ file: r.file, line: r.line, field: 'observed_at' }),
    })),
  ];
  futureObservations(observed, issues);
  if (metricsFile) runGroups(metricsFile.metrics, tree.metrics!, issues);
  oneValuePerRun(benchmarks, issues);
  if (issues.length || !site) throw new ValidationError(issues);

  const warnings: SourceIssue[] = [];
  for (const m of models) for (const w of nameWarnings(m)) warnings.push({ ...w, line: modelLine(m, ['name']) });
  implausible(speed, benchmarks, sources, metrics, warnings);

  const latest = observed.reduce((newest, o) => (o.at > newest ? o.at : newest), '0000-01-01T00:00:00.000Z');
  const values = <T>(rows: Located<T>[]) => rows.map((r) => r.value);
  return {
    site,
    sources,
    metrics,
    models,
    overrides,
    digest: tree.digest,
    latestInstant: latest,
    warnings,
    speed: values(speed),
    benchmarks: values(benchmarks),
    prices: values(prices),
  };
}

/**
 * The `field` of each entry of a YAML file's `list`, as written, also where the file fails its schema: references to
 * them are checked with the file's own problems, not once those are fixed. null when there is no such list to read.
 */
function namesIn(y: YamlSource | null, list: string, field: string): Set<string> | null {
  if (!y) return null;
  // An alias (id: *name) is its anchor's value, as the schema check reads it: else a valid file's id went unseen.
  const entries = unaliased(y, y.doc.get(list, true));
  if (!isSeq(entries)) return null;
  return new Set(
    entries.items.flatMap((e) => {
      const entry = unaliased(y, e);
      const name = isMap(entry) ? unaliased(y, entry.get(field, true)) : undefined;
      return isScalar(name) && typeof name.value === 'string' ? [name.value] : [];
    }),
  );
}

/** A YAML node, or the node its alias names. */
const unaliased = (y: YamlSource, node: unknown): unknown => (isAlias(node) ? node.resolve(y.doc) : node);

/** Duplicates within one file's list; `at`: the line of the i-th item's key. */
function uniqueBy<T>(
  items: T[],
  key: (t: T) => string,
  what: string,
  file: string,
  issues: SourceIssue[],
  at: (i: number) => number | undefined,
) {
  duplicates(
    items.map((t, i) => ({ t, i, file })),
    (e) => key(e.t),
    (k) => `Duplicate ${what} "${k}". Each ${what} must be unique.`,
    issues,
    (e) => at(e.i),
  );
}
function duplicates<T extends { file: string }>(
  items: T[],
  key: (t: T) => string,
  msg: (k: string, a: T, b: T) => string,
  issues: SourceIssue[],
  line?: (t: T) => number | undefined,
) {
  const first = new Map<string, T>();
  for (const t of items) {
    const k = key(t);
    const prev = first.get(k);
    if (prev) issues.push({ file: t.file, line: line?.(t), message: msg(k, prev, t) });
    else first.set(k, t);
  }
}

/** An observation time (an instant, toInstant) and where it is written, for a problem about it. */
interface Observation {
  at: string;
  where: () => Omit<SourceIssue, 'message'>;
}

/**
 * Observation times become the publication's time, which never goes back (docs/publication.md): one in the future,
 * a typo like 2205, would hold every later Last-Modified there for good. Checked against this machine's clock with a
 * day's slack for zones and clocks: the one clock the pipeline reads, and only to refuse (the output never depends
 * on it). Release dates are not observations (an announced model may have a future one) and do not count.
 */
function futureObservations(observed: Observation[], issues: SourceIssue[]): void {
  const horizon = new Date(Date.now() + 86_400_000).toISOString();
  const message = `is later than ${horizon.slice(0, 10)}, tomorrow: an observation cannot be in the future (a typo in the year?)`;
  for (const o of observed) if (o.at > horizon) issues.push({ ...o.where(), message });
}

/** At most one metric decides the run of a run group (compute/ranks.ts): two would contradict each other. */
function runGroups(metrics: Metric[], y: YamlSource, issues: SourceIssue[]): void {
  const decider = new Map<string, string>();
  metrics.forEach((m, i) => {
    if (!m.decides_run) return;
    const group = m.run_group ?? m.key;
    const first = decider.get(group);
    if (first === undefined) decider.set(group, m.key);
    else
      issues.push({
        file: y.file,
        line: lineOf(y, ['metrics', i, 'decides_run']),
        record: `metric #${i + 1}`,
        field: 'decides_run',
        message: `run group "${group}" already has "${first}" deciding its run: one metric per group picks the run`,
      });
  });
}

/** A run reports one value per metric: a second one could only be another run, which needs a run id of its own. */
function oneValuePerRun(results: Located<z.infer<typeof BenchmarkResult>>[], issues: SourceIssue[]): void {
  const seen = new Map<string, Located<unknown>>();
  for (const r of results) {
    const v = r.value;
    const run = v.run ? `run "${v.run.id}"` : `the run of ${v.eval_date} (no run id)`;
    const key = `${v.model}\u0000${v.metric}\u0000${v.provenance.source}\u0000${v.run ? `id:${v.run.id}` : `date:${v.eval_date}`}`;
    const first = seen.get(key);
    if (!first) seen.set(key, r);
    else
      issues.push({
        file: r.file,
        line: r.line,
        field: v.run ? 'run.id' : 'run',
        message: `${run} of "${v.model}" (source ${v.provenance.source}) already has a value of "${v.metric}" at ${first.file}:${first.line}: give each run its own run.id`,
      });
  }
}

/** Folded for comparison: lower case, letters and digits only ("Z.ai" -> "zai"). */
const folded = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');

/** A display name with stray spaces, or one that starts with its developer ("Anthropic: Claude 3.5 Haiku"). */
function nameWarnings(m: ModelEntry): Omit<SourceIssue, 'line'>[] {
  const at = { file: m.file, record: `model "${m.slug}"`, field: 'name' };
  const out: Omit<SourceIssue, 'line'>[] = [];
  if (m.name !== m.name.trim() || /\s{2,}/.test(m.name))
    out.push({ ...at, message: `${JSON.stringify(m.name)} has leading, trailing or repeated spaces` });
  const prefix = /^([^:]{1,40}):\s/.exec(m.name)?.[1];
  const dev = folded(m.developer);
  if (prefix && dev && folded(prefix) && (dev.includes(folded(prefix)) || folded(prefix).includes(dev)))
    out.push({
      ...at,
      message: `${JSON.stringify(m.name)} starts with its developer ("${prefix}: "): lists sort it under the developer; the developer has a field of its own`,
    });
  return out;
}

/**
 * Valid values no measurement is likely to give: a first-token latency under 1 ms (seconds written as milliseconds),
 * tokens per second above what its source writes when it could not measure, a percentage outside 0-100.
 */
function implausible(
  speed: Located<z.infer<typeof SpeedRun>>[],
  benchmarks: Located<z.infer<typeof BenchmarkResult>>[],
  sources: Source[],
  metrics: Metric[],
  warnings: SourceIssue[],
): void {
  const sentinel = new Map(sources.map((s) => [s.id, s.tokens_per_second_sentinel]));
  for (const { value: r, file, line } of speed) {
    if (r.first_token_latency_ms < 1)
      warnings.push({
        file,
        line,
        field: 'first_token_latency_ms',
        message: `${r.first_token_latency_ms} ms is under 1 ms: a latency in seconds written as milliseconds?`,
      });
    const max = sentinel.get(r.provenance.source);
    if (max !== undefined && r.tokens_per_second > max)
      warnings.push({
        file,
        line,
        field: 'tokens_per_second',
        message: `${r.tokens_per_second} is above ${max}, the value ${r.provenance.source} writes when it could not measure (sources.yaml tokens_per_second_sentinel): more than it can report`,
      });
  }
  const percent = new Set(metrics.filter((m) => m.unit === 'percent').map((m) => m.key));
  for (const { value: r, file, line } of benchmarks)
    if (percent.has(r.metric) && (r.value < 0 || r.value > 100))
      warnings.push({
        file,
        line,
        field: 'value',
        message: `${r.value} is outside 0-100, the range of a percentage (metric "${r.metric}"): a fraction, or a count?`,
      });
}

/** Dates and instants in the data, normalized to the API's ISO form (UTC, milliseconds). */
export function toInstant(d: string): string {
  return new Date(d.length === 10 ? `${d}T00:00:00Z` : d).toISOString();
}
