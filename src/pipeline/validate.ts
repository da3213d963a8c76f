// Stage 2: check every record against the schemas, then the rules that span files. All problems are collected
// and reported together (file, line, record, field); nothing is built from data with a single problem.
import path from 'node:path';
import { isAlias, isMap, isScalar, isSeq, visit } from 'yaml';
import type { z } from 'zod';
import { ValidationError, quoted, type SourceIssue } from '../errors.js';
import { Slug } from '../schema/primitives.js';
import {
  type BenchmarkResult,
  MetricsFile,
  ModelRecord,
  type OfferRecord,
  ProvidersFile,
  OverridesFile,
  type PriceHistoryRecord,
  type PriceObservation,
  SiteFile,
  SourcesFile,
  type DisplayOverride,
  type Metric,
  PRICE_FIELDS,
  type ProviderRecord,
  type Source,
} from '../schema/source.js';
import { lineOf, type LoadedTree, type YamlSource } from './load.js';
import { checked, fieldOf, located, type Located, type RecordSet } from './records.js';
import type { SpeedRuns } from './speed-runs.js';
import {
  noOverlappingPrices,
  noUnannouncedFuturePrices,
  priceRangesNotEmpty,
  pricesOfKnownOffers,
} from './validate-history.js';

export interface ModelEntry extends ModelRecord {
  slug: string;
  file: string;
}
export interface SourceData {
  site: z.infer<typeof SiteFile>;
  sources: Source[];
  metrics: Metric[];
  models: ModelEntry[]; // sorted by slug
  speed: SpeedRuns;
  benchmarks: BenchmarkResult[];
  prices: PriceObservation[];
  /** data/providers.yaml, sorted by id. */
  providers: ProviderRecord[];
  /** Every offer, sorted by model, provider and provider_model_id. */
  offers: OfferRecord[];
  /** Every dated price (price-history/), sorted by offer, source and start. */
  priceHistory: PriceHistoryRecord[];
  overrides: DisplayOverride[];
  digest: string;
  /** The newest date found in the data: the default publication time, so that no clock enters the output. */
  latestInstant: string;
  /** Values that are valid but implausible (a unit mix-up?): reported, not refused; `validate --strict` refuses them. */
  warnings: SourceIssue[];
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
  const r = checked(schema, js);
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

/** models/<slug>.yaml -> slug: the file name is the slug. */
const slugOfFile = (file: string) => path.posix.basename(file).replace(/\.ya?ml$/, '');

/** An override as parsed, with its file and its index there (its lines are looked up by path). */
interface OverrideAt {
  value: DisplayOverride;
  y: YamlSource;
  i: number;
}
type Reference = { model: string | null; provenance: { source: string }; metric?: string };

/**
 * What every rule reads: the tree as loaded, the records that passed their schema, and where to report. A rule
 * pushes plain sentences naming file, line, record and field: `errors` refuse the data, `warnings` (valid but
 * implausible values) are reported and refused only by `validate --strict`.
 */
interface Context {
  tree: LoadedTree;
  site: z.infer<typeof SiteFile> | null;
  /** null when the file is missing or fails its schema. */
  sources: Source[] | null;
  metrics: Metric[] | null;
  models: ModelEntry[]; // sorted by slug
  /** Each model file by its name, for the lines of a model's fields. */
  modelFiles: Map<string, YamlSource>;
  /** Every model file whose name is a slug, valid or not, with its id as written: clashes are found in both. */
  named: { slug: string; id: unknown; file: string; y: YamlSource }[]; // sorted by slug
  /** Models whose files have problems already reported: records naming them get no "unknown model" each. */
  invalidSlugs: Set<string>;
  speed: SpeedRuns;
  benchmarks: RecordSet<BenchmarkResult>;
  prices: RecordSet<PriceObservation>;
  /** null when providers.yaml is missing or fails its schema. */
  providers: ProviderRecord[] | null;
  offers: RecordSet<OfferRecord>;
  priceHistory: RecordSet<PriceHistoryRecord>;
  overrides: OverrideAt[];
  errors: SourceIssue[];
  warnings: SourceIssue[];
  /** The newest observation time (noFutureObservations): the default publication time. */
  latest: string;
}
type Rule = (c: Context) => void;

/**
 * The rules that span records and files, applied in this order to the records that passed their schemas. A rule is a
 * named function of the context below; to add one, write it and name it here.
 */
const rules: Rule[] = [
  uniqueSourceIds,
  uniqueMetricKeys,
  uniqueSlugs,
  uniqueModelIds,
  knownReferences,
  knownOffers,
  ascendingTiers,
  knownLinks,
  knownSuccessors,
  retirementAfterDeprecation,
  noFutureObservations,
  oneDeciderPerRunGroup,
  oneValuePerRun,
  tidyNames,
  plausibleValues,
  cacheReadBelowInput,
  costKeysOnTheCard,
  pricesOfKnownOffers,
  priceRangesNotEmpty,
  noOverlappingPrices,
  noUnannouncedFuturePrices,
];

/** Validate a loaded tree; throws ValidationError listing every problem. */
export function validateTree(tree: LoadedTree): SourceData {
  const c = parse(tree);
  for (const rule of rules) rule(c);
  if (c.errors.length || !c.site) throw new ValidationError(c.errors);
  // The checked records themselves, not copies: the located sets go with the tree.
  return {
    site: c.site,
    sources: c.sources ?? [],
    metrics: c.metrics ?? [],
    models: c.models,
    overrides: c.overrides.map((o) => o.value),
    digest: tree.digest,
    latestInstant: c.latest,
    warnings: c.warnings,
    speed: c.speed,
    benchmarks: c.benchmarks.values,
    prices: c.prices.values,
    providers: [...(c.providers ?? [])].sort((a, b) => cmpStr(a.id, b.id)),
    offers: c.offers.values.sort(
      (a, b) =>
        cmpStr(a.model, b.model) || cmpStr(a.provider, b.provider) || cmpStr(a.provider_model_id, b.provider_model_id),
    ),
    priceHistory: c.priceHistory.values.sort(
      (a, b) =>
        cmpStr(a.model, b.model) ||
        cmpStr(a.provider, b.provider) ||
        cmpStr(a.provider_model_id, b.provider_model_id) ||
        cmpStr(a.provenance.source, b.provenance.source) ||
        cmpStr(a.effective_from ?? '', b.effective_from ?? ''),
    ),
  };
}

const cmpStr = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Each file against its schema: the context of the rules, with the schemas' problems already in `errors`. */
function parse(tree: LoadedTree): Context {
  const errors: SourceIssue[] = [...tree.issues];
  const nth = (list: string, what: string) => (p: readonly PropertyKey[]) =>
    p[0] === list && typeof p[1] === 'number' ? `${what} #${p[1] + 1}` : undefined;
  const site = tree.site && checkYaml(SiteFile, tree.site, errors);
  const sources = tree.sources && checkYaml(SourcesFile, tree.sources, errors, nth('sources', 'source'));
  const metrics = tree.metrics && checkYaml(MetricsFile, tree.metrics, errors, nth('metrics', 'metric'));
  const models: ModelEntry[] = [];
  const invalidSlugs = new Set(tree.issues.filter((i) => i.file.startsWith('models/')).map((i) => slugOfFile(i.file)));
  const named: Context['named'] = [];
  for (const y of tree.models) {
    const slug = slugOfFile(y.file);
    if (!Slug.safeParse(slug).success) {
      errors.push({
        file: y.file,
        message: `file name ${quoted(slug)} is not a slug (lowercase letters, digits and single hyphens): the slug is the file name`,
      });
      continue;
    }
    // An aliased id (id: *n) as its anchor's value, as the schema check reads it: else a duplicate went unseen.
    const id = unaliased(y, y.doc.get('id', true));
    named.push({ slug, id: isScalar(id) ? id.value : undefined, file: y.file, y });
    const m = checkYaml(ModelRecord, y, errors, () => `model "${slug}"`);
    if (m) models.push({ ...m, slug, file: y.file });
    else invalidSlugs.add(slug);
  }
  const bySlug = <T extends { slug: string }>(a: T, b: T) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0);
  // The JSON Lines records were checked as they were read; their problems follow the models', as they always have.
  for (const kind of ['speed', 'benchmarks', 'prices', 'offers', 'priceHistory'] as const)
    for (const issue of tree.recordIssues[kind]) errors.push(issue);
  const { speed, benchmarks, prices, offers, priceHistory } = tree.records;
  const providers = tree.providers && checkYaml(ProvidersFile, tree.providers, errors, nth('providers', 'provider'));
  const overrides: OverrideAt[] = [];
  for (const y of tree.overrides) {
    const file = checkYaml(OverridesFile, y, errors, nth('overrides', 'override'));
    for (const [i, value] of (file?.overrides ?? []).entries()) overrides.push({ value, y, i });
  }
  return {
    tree,
    site,
    sources: sources?.sources ?? null,
    metrics: metrics?.metrics ?? null,
    models: models.sort(bySlug),
    modelFiles: new Map(tree.models.map((y) => [y.file, y])),
    named: named.sort(bySlug),
    invalidSlugs,
    speed,
    benchmarks,
    prices,
    providers: providers?.providers ?? null,
    offers,
    priceHistory,
    overrides,
    errors,
    warnings: [],
    latest: '0000-01-01T00:00:00.000Z',
  };
}

/** The line of a field of a model's record. */
const modelLine = (c: Context, m: ModelEntry, at: PropertyKey[]) => lineOf(c.modelFiles.get(m.file)!, at);

function uniqueSourceIds(c: Context): void {
  const y = c.tree.sources;
  if (y)
    uniqueBy(
      c.sources ?? [],
      (s) => s.id,
      'source id',
      y,
      c.errors,
      (i) => lineOf(y, ['sources', i, 'id']),
    );
}

function uniqueMetricKeys(c: Context): void {
  const y = c.tree.metrics;
  if (y)
    uniqueBy(
      c.metrics ?? [],
      (m) => m.key,
      'metric key',
      y,
      c.errors,
      (i) => lineOf(y, ['metrics', i, 'key']),
    );
}

/** Slugs and ids are compared in valid and invalid files alike: a clash is reported with the other problems. */
function uniqueSlugs(c: Context): void {
  duplicates(
    c.named,
    (m) => m.slug,
    (k, a, b) => `Duplicate slug ${quoted(k)} used by both ${a.file} and ${b.file}. Slugs must be unique.`,
    c.errors,
  );
}

function uniqueModelIds(c: Context): void {
  duplicates(
    c.named.filter((m) => typeof m.id === 'number' || typeof m.id === 'string'),
    (m) => String(m.id),
    (k, a, b) =>
      `Duplicate model id ${k.length <= 80 ? k : quoted(k)} used by both ${a.file} and ${b.file}. Ids must be unique.`,
    c.errors,
    (m) => lineOf(m.y, ['id']),
  );
}

/**
 * Every model, source and metric a record names exists. Sources and metrics are compared with sources.yaml and
 * metrics.yaml as written, also where those fail their schema: references are checked with the files' own problems.
 */
function knownReferences(c: Context): void {
  const slugs = new Set(c.models.map((m) => m.slug));
  const sourceIds = namesIn(c.tree.sources, 'sources', 'id');
  const metricKeys = namesIn(c.tree.metrics, 'metrics', 'key');
  /** `lineOf`: the line of a field of a record that spans several (YAML), when it differs from the record's. */
  const check = (
    rec: Reference,
    at: Omit<SourceIssue, 'message'>,
    lineOf?: (field: string[]) => number | undefined,
  ) => {
    const where = (field: string) => ({ ...at, line: lineOf?.(field.split('.')) ?? at.line, field });
    const model = rec.model;
    if (model !== null && !slugs.has(model) && !c.invalidSlugs.has(model))
      c.errors.push({
        ...where('model'),
        message: `unknown model ${quoted(model)}: no data/models/${model.length <= 80 ? model : '<that slug>'}.yaml`,
      });
    if (sourceIds && !sourceIds.has(rec.provenance.source))
      c.errors.push({
        ...where('provenance.source'),
        message: `unknown source ${quoted(rec.provenance.source)}: declare it in sources.yaml`,
      });
    if (rec.metric !== undefined && metricKeys && !metricKeys.has(rec.metric))
      c.errors.push({
        ...where('metric'),
        message: `unknown metric key ${quoted(rec.metric)}: declare it in metrics.yaml`,
      });
  };
  for (const { value: o, y, i } of c.overrides)
    check(o, { file: y.file, line: lineOf(y, ['overrides', i]), record: `override #${i + 1}` }, (field) =>
      lineOf(y, ['overrides', i, ...field]),
    );
  for (const m of c.models)
    check(
      { model: null, provenance: m.provenance },
      {
        file: m.file,
        line: modelLine(c, m, ['provenance', 'source']),
        record: `model "${m.slug}"`,
      },
    );
  const speed = c.speed;
  for (let i = 0; i < speed.length; i++)
    check(
      { model: speed.model(i), provenance: { source: speed.source(i) } },
      { file: speed.file(i), line: speed.line(i) },
    );
  for (const set of [c.benchmarks, c.prices, c.priceHistory] as RecordSet<Reference>[])
    for (const { value, file, line } of set) check(value, { file, line });
  for (const { value, file, line } of c.offers) check(value, { file, line, record: offerName(value) });
}

/** An offer as problems name it: `offer "groq/openai/gpt-oss-120b"`, its provider and the id a client sends there. */
const offerName = (o: { provider: string; provider_model_id: string }) =>
  `offer ${quoted(`${o.provider}/${o.provider_model_id}`)}`;

/**
 * Every offer names a provider of providers.yaml, and a provider lists a provider_model_id once; a price's offer
 * exists and is an offer of that price's model.
 */
function knownOffers(c: Context): void {
  const providers = namesIn(c.tree.providers, 'providers', 'id') ?? new Set<string>();
  const offers = new Map<string, Located<OfferRecord>>();
  for (const r of c.offers) {
    const o = r.value;
    const at = { file: r.file, line: r.line, record: offerName(o) };
    if (!providers.has(o.provider))
      c.errors.push({
        ...at,
        field: 'provider',
        message: `unknown provider ${quoted(o.provider)}: declare it in providers.yaml`,
      });
    const key = `${o.provider}\u0000${o.provider_model_id}`;
    const first = offers.get(key);
    if (first)
      c.errors.push({
        ...at,
        field: 'provider_model_id',
        message:
          `${o.provider} already has an offer of this id at ${first.file}:${first.line}: ` +
          'one offer per provider and provider_model_id',
      });
    else offers.set(key, r);
  }
  for (const { value: p, file, line } of c.prices) {
    if (!p.offer) continue;
    const o = offers.get(`${p.offer.provider}\u0000${p.offer.provider_model_id}`)?.value;
    const name = offerName(p.offer);
    if (!o) c.errors.push({ file, line, field: 'offer', message: `unknown ${name}: no such offer in offers/` });
    else if (o.model !== p.model)
      c.errors.push({
        file,
        line,
        field: 'offer',
        message: `${name} is an offer of ${quoted(o.model)}, not of ${quoted(p.model)}`,
      });
  }
}

/** A tier's prices apply above its threshold, so thresholds ascend: a tier at or below the one before is never reached. */
function ascendingTiers(c: Context): void {
  for (const { value: o, file, line } of c.offers)
    o.tiers.forEach((t, i) => {
      const before = o.tiers[i - 1]?.above_context_tokens;
      if (before !== undefined && t.above_context_tokens <= before)
        c.errors.push({
          file,
          line,
          record: offerName(o),
          field: `tiers[${i}].above_context_tokens`,
          message: `${t.above_context_tokens} is not above the tier before it (${before}): tier thresholds ascend`,
        });
    });
}

/** An alias's snapshots are models of the data, and following alias -> snapshot never leads back to where it began. */
function knownLinks(c: Context): void {
  const bySlug = new Map(c.models.map((m) => [m.slug, m]));
  const at = (m: ModelEntry, i: number) => ({
    file: m.file,
    line: modelLine(c, m, ['snapshots', i]),
    record: `model "${m.slug}"`,
    field: `snapshots[${i}]`,
  });
  for (const m of c.models)
    m.snapshots.forEach((s, i) => {
      if (!bySlug.has(s) && !c.invalidSlugs.has(s))
        c.errors.push({ ...at(m, i), message: `unknown model ${quoted(s)}: no data/models/${s}.yaml` });
    });
  // Depth-first along the links; an edge back to a model on the current path closes a cycle, reported where written.
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (m: ModelEntry) => {
    state.set(m.slug, 'open');
    path.push(m.slug);
    m.snapshots.forEach((s, i) => {
      const next = bySlug.get(s);
      if (!next) return;
      if (state.get(s) === 'open') {
        const cycle = [...path.slice(path.indexOf(s)), s].join(' -> ');
        c.errors.push({ ...at(m, i), message: `alias and snapshot links form a cycle: ${cycle}` });
      } else if (!state.has(s)) visit(next);
    });
    path.pop();
    state.set(m.slug, 'done');
  };
  for (const m of c.models) if (!state.has(m.slug)) visit(m);
}

/** A successor is another model of the data. */
function knownSuccessors(c: Context): void {
  const slugs = new Set(c.models.map((m) => m.slug));
  for (const m of c.models) {
    const s = m.successor;
    if (s === null || (slugs.has(s) && s !== m.slug) || c.invalidSlugs.has(s)) continue;
    c.errors.push({
      file: m.file,
      line: modelLine(c, m, ['successor']),
      record: `model "${m.slug}"`,
      field: 'successor',
      message:
        s === m.slug ? 'a model is not its own successor' : `unknown successor ${quoted(s)}: no data/models/${s}.yaml`,
    });
  }
}

/** A model is retired after it is deprecated, or on the same day; not before. */
function retirementAfterDeprecation(c: Context): void {
  for (const m of c.models)
    if (m.deprecation_date !== null && m.retirement_date !== null && m.retirement_date < m.deprecation_date)
      c.errors.push({
        file: m.file,
        line: modelLine(c, m, ['retirement_date']),
        record: `model "${m.slug}"`,
        field: 'retirement_date',
        message: `${m.retirement_date} is before the deprecation_date ${m.deprecation_date}: a model is retired after it is deprecated`,
      });
}

/**
 * Every observation time, as an instant in milliseconds (the newest is the publication time, and none may lie in the
 * future), with where it is written, for a problem about it. Visited, not listed: a list held an object per record.
 */
function eachObservation(c: Context, visit: (at: number, where: () => Omit<SourceIssue, 'message'>) => void): void {
  for (const m of c.models)
    visit(instantMs(m.updated_at), () => ({
      file: m.file,
      line: modelLine(c, m, ['updated_at']),
      record: `model "${m.slug}"`,
      field: 'updated_at',
    }));
  type Set = Pick<RecordSet<unknown>, 'length' | 'file' | 'line'>;
  const records = (set: Set, field: string, instant: (i: number) => number) => {
    for (let i = 0; i < set.length; i++) visit(instant(i), () => ({ file: set.file(i), line: set.line(i), field }));
  };
  const { speed, benchmarks, prices, offers } = c;
  records(speed, 'measured_at', (i) => speed.time(i));
  records(benchmarks, 'eval_date', (i) => instantMs(benchmarks.values[i]!.eval_date));
  records(prices, 'observed_at', (i) => instantMs(prices.values[i]!.observed_at));
  records(offers, 'updated_at', (i) => instantMs(offers.values[i]!.updated_at));
}

/**
 * Observation times become the publication's time, which never goes back (docs/publication.md): one in the future,
 * a typo like 2205, would hold every later Last-Modified there for good. Checked against this machine's clock with a
 * day's slack for zones and clocks: the one clock the pipeline reads, and only to refuse (the output never depends
 * on it). Release dates are not observations (an announced model may have a future one) and do not count.
 */
function noFutureObservations(c: Context): void {
  const horizon = Date.now() + 86_400_000;
  const tomorrow = new Date(horizon).toISOString().slice(0, 10);
  const message = `is later than ${tomorrow}, tomorrow: an observation cannot be in the future (a typo in the year?)`;
  let latest = instantMs(c.latest);
  eachObservation(c, (at, where) => {
    if (at > horizon) c.errors.push({ ...where(), message });
    if (at > latest) latest = at;
  });
  c.latest = new Date(latest).toISOString();
}

/** At most one metric decides the run of a run group (compute/ranks.ts): two would contradict each other. */
function oneDeciderPerRunGroup(c: Context): void {
  const y = c.tree.metrics;
  const decider = new Map<string, string>();
  c.metrics?.forEach((m, i) => {
    if (!m.decides_run || !y) return;
    const group = m.run_group ?? m.key;
    const first = decider.get(group);
    if (first === undefined) decider.set(group, m.key);
    else
      c.errors.push({
        file: y.file,
        line: lineOf(y, ['metrics', i, 'decides_run']),
        record: `metric #${i + 1}`,
        field: 'decides_run',
        message: `run group "${group}" already has "${first}" deciding its run: one metric per group picks the run`,
      });
  });
}

/** A run reports one value per metric: a second one could only be another run, which needs a run id of its own. */
function oneValuePerRun(c: Context): void {
  const seen = new Map<string, number>(); // key -> index of its first record
  const set = c.benchmarks;
  for (let i = 0; i < set.length; i++) {
    const v = set.values[i]!;
    const run = v.run ? `run "${v.run.id}"` : `the run of ${v.eval_date} (no run id)`;
    const key = `${v.model}\u0000${v.metric}\u0000${v.provenance.source}\u0000${v.run ? `id:${v.run.id}` : `date:${v.eval_date}`}`;
    const first = seen.get(key);
    if (first === undefined) seen.set(key, i);
    else
      c.errors.push({
        file: set.file(i),
        line: set.line(i),
        field: v.run ? 'run.id' : 'run',
        message:
          `${run} of "${v.model}" (source ${v.provenance.source}) already has a value of "${v.metric}" at ` +
          `${set.file(first)}:${set.line(first)}: give each run its own run.id`,
      });
  }
}

/** Folded for comparison: lower case, letters and digits only ("Z.ai" -> "zai"). */
const folded = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');

/** Warns of a display name with stray spaces, or one that starts with its developer ("Anthropic: Claude 3.5 Haiku"). */
function tidyNames(c: Context): void {
  for (const m of c.models) {
    const at = { file: m.file, line: modelLine(c, m, ['name']), record: `model "${m.slug}"`, field: 'name' };
    if (m.name !== m.name.trim() || /\s{2,}/.test(m.name))
      c.warnings.push({ ...at, message: `${JSON.stringify(m.name)} has leading, trailing or repeated spaces` });
    const prefix = /^([^:]{1,40}):\s/.exec(m.name)?.[1];
    const dev = folded(m.developer);
    if (prefix && dev && folded(prefix) && (dev.includes(folded(prefix)) || folded(prefix).includes(dev)))
      c.warnings.push({
        ...at,
        message:
          `${JSON.stringify(m.name)} starts with its developer ("${prefix}: "): ` +
          'lists sort it under the developer; the developer has a field of its own',
      });
  }
}

/**
 * Warns of valid values no measurement is likely to give: a first-token latency under 1 ms (seconds written as
 * milliseconds), tokens per second above what its source writes when it could not measure, a percentage outside 0-100.
 */
function plausibleValues(c: Context): void {
  const sentinel = new Map((c.sources ?? []).map((s) => [s.id, s.tokens_per_second_sentinel]));
  const speed = c.speed;
  for (let i = 0; i < speed.length; i++) {
    const latency = speed.firstTokenLatencyMs(i);
    if (latency < 1)
      c.warnings.push({
        file: speed.file(i),
        line: speed.line(i),
        field: 'first_token_latency_ms',
        message: `${latency} ms is under 1 ms: a latency in seconds written as milliseconds?`,
      });
    const [tps, source] = [speed.tokensPerSecond(i), speed.source(i)];
    const max = sentinel.get(source);
    if (max !== undefined && tps > max)
      c.warnings.push({
        file: speed.file(i),
        line: speed.line(i),
        field: 'tokens_per_second',
        message:
          `${tps} is above ${max}, the value ${source} writes when it could not measure ` +
          '(sources.yaml tokens_per_second_sentinel): more than it can report',
      });
  }
  const percent = new Set((c.metrics ?? []).filter((m) => m.unit === 'percent').map((m) => m.key));
  for (const { value: r, file, line } of c.benchmarks)
    if (percent.has(r.metric) && (r.value < 0 || r.value > 100))
      c.warnings.push({
        file,
        line,
        field: 'value',
        message: `${r.value} is outside 0-100, the range of a percentage (metric "${r.metric}"): a fraction, or a count?`,
      });
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
  y: YamlSource,
  issues: SourceIssue[],
  at: (i: number) => number | undefined,
) {
  duplicates(
    items.map((t, i) => ({ t, i, file: y.file })),
    (e) => key(e.t),
    (k) => `Duplicate ${what} ${quoted(k)}. Each ${what} must be unique.`,
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

/**
 * Reading a prompt from the cache costs less than reading it anew: a cache-read price above the input price of the
 * same card, tier or mode is most likely two prices swapped or a typo.
 */
function cacheReadBelowInput(c: Context): void {
  for (const { value: o, file, line } of c.offers) {
    type Card = { input_price_per_million: number | null; cache_read_price_per_million: number | null };
    const cards: [string, Card][] = [
      ['', o],
      ...o.tiers.map((t, i): [string, Card] => [`tiers[${i}].`, t]),
      ...Object.entries(o.modes).map(([name, m]): [string, Card] => [`modes.${name}.`, m]),
    ];
    for (const [prefix, p] of cards)
      if (p.cache_read_price_per_million !== null && p.input_price_per_million !== null)
        if (p.cache_read_price_per_million > p.input_price_per_million)
          c.warnings.push({
            file,
            line,
            record: offerName(o),
            field: `${prefix}cache_read_price_per_million`,
            message:
              `${p.cache_read_price_per_million} is above the input price ${p.input_price_per_million}: a cache read ` +
              'costs less than input (swapped, or a typo?)',
          });
  }
}

/**
 * A cost the card has no field for (request, citation, cached_input) is published as written in other_prices, with a
 * unit and meaning only its source knows: a client cannot compare it across offers. Often a card price misnamed.
 */
function costKeysOnTheCard(c: Context): void {
  for (const { value: o, file, line } of c.offers)
    for (const key of Object.keys(o.other_prices))
      c.warnings.push({
        file,
        line,
        record: offerName(o),
        field: `other_prices.${key}`,
        message:
          `${quoted(key)} is no price of the card ` +
          `(${PRICE_FIELDS.map((f) => f.replace('_price_per_million', '')).join(', ')}): published as written`,
      });
}

/** Dates and instants in the data, normalized to the API's ISO form (UTC, milliseconds). */
export function toInstant(d: string): string {
  return new Date(instantMs(d)).toISOString();
}

/** toInstant's instant in milliseconds since the epoch: later is larger, as instants compare. */
export const instantMs = (d: string): number => new Date(d.length === 10 ? `${d}T00:00:00Z` : d).getTime();
