// Source records: what people and machines author under data/. Every published field is derived from these.
// Private fields live only under `private`; the renderer never reads that key (see test/privacy.test.ts).
import { z } from 'zod';
import { Sha256Hex, Slug } from './primitives.js';

export const LOCALES = ['en', 'zh', 'ru'] as const;
export const Locale = z.enum(LOCALES);
export type Locale = z.infer<typeof Locale>;

/** Lanes a record can be authored in; `all` is a query lane only. */
export const RecordLane = z.enum(['verified', 'provisional'], {
  error: (iss) => `unknown lane ${JSON.stringify(String(iss.input).slice(0, 40))}: must be "verified" or "provisional"`,
});
export type RecordLane = z.infer<typeof RecordLane>;

/**
 * Characters a reader cannot see or that change how text around them reads: C0 and C1 controls, DEL, bidirectional
 * controls (U+202E turns `gpt-4o` into a look-alike of another name), zero-width and other invisible format
 * characters, and the byte-order mark. Refused in the fields that name things (names, developers, providers, labels);
 * descriptions may hold tabs and line breaks, nothing else of these (data/README.md).
 */
const HIDDEN_IN_TEXT =
  '\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u00ad\\u061c\\u115f\\u1160\\u180e\\u200b-\\u200f' +
  '\\u202a-\\u202e\\u2060-\\u206f\\u3164\\ufeff\\ufff9-\\ufffb';
const HIDDEN_IN_NAME = `\\u0009\\u000a${HIDDEN_IN_TEXT}`;
const hiddenChar = (chars: string) => new RegExp(`[${chars}]`);
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** "contains U+202E (a bidirectional control) at character 5" for the first hidden character of a value. */
function hiddenMessage(input: unknown, chars: string, what: string): string {
  const text = typeof input === 'string' ? input : '';
  const at = text.search(hiddenChar(chars));
  const c = text.codePointAt(at) ?? 0;
  const kind = BIDI.test(String.fromCodePoint(c))
    ? 'a bidirectional control'
    : c < 0x20 || (c >= 0x7f && c <= 0x9f)
      ? 'a control character'
      : 'an invisible character';
  return `contains U+${c.toString(16).toUpperCase().padStart(4, '0')} (${kind}) at character ${at + 1}: ${what}`;
}

/** A non-empty name, label or identifier shown to people: no hidden characters, no line breaks. */
const NameText = (whenEmpty?: string) =>
  z
    .string()
    .min(1, whenEmpty)
    .regex(new RegExp(`^[^${HIDDEN_IN_NAME}]*$`), {
      error: (iss) => hiddenMessage(iss.input, HIDDEN_IN_NAME, 'names may not hold control or invisible characters'),
    });

/** Prose (a description, an attribution): tabs and line breaks allowed, other hidden characters not. */
const ProseText = (l: string) =>
  z.string().regex(new RegExp(`^[^${HIDDEN_IN_TEXT}]*$`), {
    error: (iss) =>
      hiddenMessage(
        iss.input,
        HIDDEN_IN_TEXT,
        `the ${l} may not hold control or invisible characters but tabs and line breaks`,
      ),
  });

/** A provider id as offers.json and models.dev write it: groq, amazon-bedrock, siliconflow-cn. */
export const ProviderId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]*$/, 'must be a provider id: lowercase letters, digits, ".", "_" and "-"');

const HttpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });
/** A calendar date, as maintainers write it. */
const IsoDate = z.iso.date({ error: 'must be a date YYYY-MM-DD' });
/** An instant; a timestamp without zone is rejected rather than guessed. */
const IsoInstant = z.iso.datetime({
  offset: true,
  error: 'must be an ISO 8601 timestamp with a zone, e.g. 2024-04-15T08:04:59Z',
});
/**
 * zod 4 rejects NaN and ±Infinity (JSON `1e999`, YAML `.inf`) as an invalid type and `.finite()` is a no-op, so one
 * message function tells a missing value, a non-number and a non-finite number apart.
 */
const numberError = (iss: { input?: unknown }) =>
  iss.input === undefined
    ? 'required'
    : typeof iss.input === 'number'
      ? `must be a finite number, not ${iss.input}`
      : 'must be a number';
const NonNegative = () => z.number({ error: numberError }).min(0, 'cannot be negative');

/**
 * Upper bounds of the numbers the build computes with. Generous (300 times or more the largest value in the reference
 * data, given after each), so that only a typo or a unit mix-up meets one; they keep sums, means and the scaling in
 * compute/numbers.ts round() far below float overflow, whose Infinity JSON would publish as null.
 */
export const LIMITS = {
  tokens: 1e9, // context window and max output; largest 3,500,000
  tokens_per_second: 1e6, // largest measured 999
  first_token_latency_ms: 86_400_000, // one day; largest measured 79,057 ms
  usd_per_million_tokens: 1e6, // one dollar a token; largest 600
} as const;
/** Non-negative and at most `max`; each bound aborts, so that a huge value gets one message, not "not whole" too. */
const Bounded = (max: number, unit: string) =>
  z
    .number({ error: numberError })
    .min(0, { error: 'cannot be negative', abort: true })
    .max(max, {
      error: `cannot be more than ${max.toLocaleString('en-US')} ${unit}: a typo or a unit mix-up?`,
      abort: true,
    });
const TokenCount = Bounded(LIMITS.tokens, 'tokens').int('must be a whole number of tokens');

/** Fields that may accompany any record and never reach the publication. */
export const PrivateFields = z
  .strictObject({
    internal_id: z.union([z.string(), z.number()]).optional().describe("An id in a maintainer's own systems"),
    validator_input: z.unknown().optional().describe('What a checking tool was given, kept for audits'),
    snapshot_ref: z.string().optional().describe('Where the evidence was archived'),
    notes: z.string().optional().describe('Notes for maintainers'),
  })
  .describe('For maintainers only: never read by the build, never published');

/**
 * A record kind the import (scripts/convert-reference.mjs) writes and a maintainer may also write. `maintained: true`
 * marks a record a maintainer wrote or owns whole; a list of fields marks the fields a maintainer set in an imported
 * record. The import never deletes or rewrites what is marked, and reports where it would set another value
 * (data/README.md, "Maintained records").
 */
function maintainable<S extends z.core.$ZodLooseShape>(shape: S) {
  const fields = Object.keys(shape).filter((k) => k !== 'private') as [string, ...string[]];
  return z.strictObject({
    ...shape,
    maintained: z
      .union([z.literal(true), z.array(z.enum(fields)).min(1, 'list at least one field, or write true')])
      .optional()
      .describe(
        'Written by a maintainer: true for the whole record, or the fields a maintainer set; the import keeps them and reports a conflict',
      ),
  });
}

/** Where a record comes from: a source declared in data/sources.yaml and the hash of the evidence it rests on. */
export const Provenance = z
  .strictObject({
    source: z.string().min(1).describe('The id of a source in sources.yaml: who states the record'),
    evidence_sha256: Sha256Hex.describe(
      'sha256 of the evidence the record rests on: the canonical JSON of the reference row, or of what a maintainer read',
    ),
  })
  .describe('Where the record comes from');
export type Provenance = z.infer<typeof Provenance>;

export const Source = maintainable({
  id: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, 'must be a lowercase identifier'),
  name: NameText(),
  url: HttpUrl,
  license: NameText('every source declares its licence, or NOASSERTION'),
  /** The rights filter (SPEC part 1): only sources whose licence allows redistribution reach the publication. */
  redistributable: z.boolean(),
  attribution: ProseText('attribution').min(1).optional(),
  /**
   * The tokens-per-second value the source writes when it could not measure (thefastest.ai: 999 for a request too
   * short to time). Samples carrying it are valid data, left out of the tokens-per-second average and counted.
   */
  tokens_per_second_sentinel: z
    .number({ error: numberError })
    .positive('must be a positive number')
    .max(LIMITS.tokens_per_second, `cannot be more than ${LIMITS.tokens_per_second.toLocaleString('en-US')}`)
    .optional(),
  private: PrivateFields.optional(),
});
export type Source = z.infer<typeof Source>;
export const SourcesFile = z.strictObject({ sources: z.array(Source) });

export const SiteFile = z.strictObject({
  name: NameText(),
  url: HttpUrl,
  schema_version: z.string().regex(/^\d+\.\d+\.\d+$/, 'must be a semantic version like 1.0.0'),
});
export type SiteFile = z.infer<typeof SiteFile>;

export const Metric = maintainable({
  key: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, 'must be a lowercase identifier'),
  label: NameText(),
  benchmark: NameText(),
  group: z.enum(['coding', 'reasoning', 'math', 'language', 'data', 'agentic', 'knowledge', 'efficiency']),
  unit: z.enum(['percent', 'score', 'index', 'usd', 'seconds']),
  higher_is_better: z.boolean(),
  aggregate: z.boolean().default(false),
  headline: z.boolean().default(false),
  /**
   * Metrics that share a run group are published from one run per model (compute/ranks.ts): Aider's pass rate, cost
   * and time of a benchmark come from the same run, never one number from each. Default: the metric's own key.
   */
  run_group: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]*$/, 'must be a lowercase identifier')
    .optional(),
  /** The metric of its run group whose best value picks the run (at most one per group). */
  decides_run: z.boolean().default(false),
});
export type Metric = z.infer<typeof Metric>;
export const MetricsFile = z.strictObject({ metrics: z.array(Metric) });

/** A YYYY-MM or YYYY-MM-DD of the calendar: 2025-13 and 2024-02-30 match the pattern but are none (Date.UTC rolls them over). */
export function realMonthOrDay(s: string): boolean {
  const [y, m, d = 1] = s.split('-').map(Number) as [number, number, number?];
  const t = new Date(Date.UTC(y, m - 1, d));
  return t.getUTCMonth() === m - 1 && t.getUTCDate() === d;
}

export const CAPABILITY_MODALITIES = ['text', 'image', 'audio', 'video', 'pdf'] as const;
export const Modality = z.enum(CAPABILITY_MODALITIES);

/** Capabilities as declared by the catalog; parsed into filterable keys by compute/capabilities.ts. */
export const CapabilityDeclaration = z.strictObject({
  input: z.array(Modality).min(1, 'declare at least one input modality').describe('What the model accepts'),
  output: z.array(Modality).min(1, 'declare at least one output modality').describe('What the model produces'),
  reasoning: z.boolean().describe('Whether it reasons (thinks) before answering'),
  tool_call: z.boolean().describe('Whether it calls tools (functions)'),
  structured_output: z.boolean().nullable().describe('Whether it follows a JSON schema for its output; null: unknown'),
  attachment: z.boolean().describe('Whether it accepts file attachments'),
  temperature: z
    .boolean()
    .nullable()
    .describe('Whether the temperature parameter is accepted; null: the source does not say'),
  open_weights: z.boolean().describe('Whether its weights are published'),
  knowledge_cutoff: z
    .string()
    .regex(/^\d{4}-\d{2}(-\d{2})?$/, 'must be YYYY-MM or YYYY-MM-DD')
    .refine(realMonthOrDay, 'must be YYYY-MM or YYYY-MM-DD, a real month or day')
    .nullable()
    .describe('The month or day its training data ends; null: unknown'),
});

const Description = (l: string) =>
  z
    .string({
      error: (iss) =>
        iss.input === undefined ? `the ${l} description is required` : `the ${l} description must be text`,
    })
    .min(1, `the ${l} description is required`)
    .regex(new RegExp(`^[^${HIDDEN_IN_TEXT}]*$`), {
      error: (iss) =>
        hiddenMessage(
          iss.input,
          HIDDEN_IN_TEXT,
          `the ${l} description may not hold control or invisible characters but tabs and line breaks`,
        ),
    });
export const LocalizedText = z.strictObject({
  en: Description('en').describe('In English'),
  zh: Description('zh').describe('In Simplified Chinese'),
  ru: Description('ru').describe('In Russian'),
});

/** Where a model stands in its life, by its developer's own listing (a reseller's status stays on that offer). */
export const LIFECYCLE_STATUSES = ['active', 'beta', 'deprecated', 'retired'] as const;
export const LifecycleStatus = z.enum(LIFECYCLE_STATUSES);
export type LifecycleStatus = z.infer<typeof LifecycleStatus>;

/** The lifecycle fields of a model record; dates and successor are what a source or a maintainer states, else null. */
const Lifecycle = {
  status: LifecycleStatus.default('active').describe(
    "active, beta, deprecated or retired, as the developer's own listing states it; active where it states nothing",
  ),
  deprecation_date: IsoDate.nullable()
    .default(null)
    .describe('The date the developer deprecated the model (announced or effective), when a source states it'),
  retirement_date: IsoDate.nullable()
    .default(null)
    .describe('The date the model stops (or stopped) being served by its developer; not before deprecation_date'),
  successor: Slug.nullable().default(null).describe('The slug of the model the developer names as its replacement'),
  snapshots: z
    .array(Slug)
    .default([])
    .describe(
      'On an alias (claude-opus-4-5, mistral-large-latest): the slugs of every dated snapshot it has named; the API ' +
        "derives each snapshot's aliases from these",
    ),
};

/** data/models/<slug>.yaml: the slug is the file name and is never repeated inside. */
export const ModelRecord = maintainable({
  id: z
    .number()
    .int()
    .positive('must be a positive integer')
    .describe('Stable numeric id, unique among models: the highest in models/ plus one for a new model'),
  name: NameText().describe('Display name as the developer writes it, without a vendor prefix'),
  // The list filter takes developers as a comma list of names up to 100 characters (developer=OpenAI,Anthropic).
  developer: NameText()
    .max(100)
    .regex(/^[^,]*$/, 'must not contain a comma')
    .describe('The company or lab that made the model (the list filter developer= matches it)'),
  release_date: IsoDate.describe('When the model was released; may lie in the future (an announced model)'),
  updated_at: IsoDate.describe('When the facts of this record were last observed to change'),
  context_window_tokens: TokenCount.describe('Context window in tokens; 0: unknown'),
  max_output_tokens: TokenCount.describe('Most output tokens per request; 0: unknown'),
  documentation_url: HttpUrl.nullable().default(null).describe("The developer's page about the model"),
  hub_url: HttpUrl.nullable().default(null).describe('Its Hugging Face page, for open weights'),
  served_by: z
    .array(NameText())
    .default([])
    .describe('Provider ids that serve the model; their count orders sort=popular'),
  description: LocalizedText.describe('A paragraph about the model in each locale'),
  capabilities: CapabilityDeclaration.describe('Modalities and features'),
  lane: RecordLane.default('verified').describe('verified: from a primary source; provisional: second-hand'),
  ...Lifecycle,
  provenance: Provenance,
  private: PrivateFields.optional(),
});
export type ModelRecord = z.infer<typeof ModelRecord>;

const Measurement = {
  model: Slug.describe('The slug of the model measured (a file in models/)'),
  lane: RecordLane.describe('verified: measured by the source itself; provisional: a value it cites from elsewhere'),
  provenance: Provenance,
  private: PrivateFields.optional(),
};

/** data/measurements/speed/*.jsonl: one test run per line. */
export const SpeedRun = maintainable({
  ...Measurement,
  tokens_per_second: Bounded(LIMITS.tokens_per_second, 'tokens per second').describe(
    "Output tokens per second of one request (the source's sentinel where it could not measure)",
  ),
  first_token_latency_ms: Bounded(LIMITS.first_token_latency_ms, 'ms (a day)').describe(
    'Milliseconds from sending the request to the first token',
  ),
  measured_at: IsoInstant.describe('When the request was sent'),
});
export type SpeedRun = z.infer<typeof SpeedRun>;

/** Scalar settings of a run, as the source writes them (Aider: edit_format, reasoning_effort, dirname, ...). */
const RunSettings = z.record(
  z.string(),
  z.union([z.string(), z.number({ error: numberError }), z.boolean(), z.null()]),
);

/**
 * The run a benchmark value belongs to, when its source reports several runs of one model: the values of one run
 * share its id. Its date is the result's eval_date and its provenance the result's.
 */
export const BenchmarkRun = z.strictObject({
  /** Unique among the runs of a model in its source, e.g. Aider's dirname. */
  id: z.string().min(1, 'a run needs an id').describe("Unique among the model's runs in its source (Aider's dirname)"),
  variant: z
    .string()
    .min(1)
    .nullable()
    .default(null)
    .describe('What sets the run apart, for people ("reasoning effort high, diff edit format"); published'),
  settings: RunSettings.default({}).describe('The settings of the run as the source writes them (scalars)'),
});
export type BenchmarkRun = z.infer<typeof BenchmarkRun>;

/** data/measurements/benchmarks/*.jsonl: one metric value per line. */
export const BenchmarkResult = maintainable({
  ...Measurement,
  /** null: the source reports one run (a model's values of one source and eval_date form it). */
  run: BenchmarkRun.nullable().default(null).describe('The run the value belongs to; null: the source reports one run'),
  metric: z.string().min(1).describe('The key of a metric in metrics.yaml'),
  value: z.number({ error: numberError }).describe("The value in the metric's unit"),
  stderr: NonNegative().nullable().default(null).describe('Standard error of the value, when the source states it'),
  confidence: z
    .number({ error: numberError })
    .min(0, 'confidence is in [0, 1]')
    .max(1, 'confidence is in [0, 1]')
    .describe('How far the value is trusted, 0 to 1: 1 for a primary source'),
  eval_date: IsoDate.describe('When the evaluation ran, or the source published it'),
});
export type BenchmarkResult = z.infer<typeof BenchmarkResult>;

/** data/measurements/prices/*.jsonl: one price observation per line, USD per million tokens. */
export const PriceObservation = maintainable({
  ...Measurement,
  input_per_million: Bounded(LIMITS.usd_per_million_tokens, 'USD per million tokens').describe(
    'USD per million input tokens',
  ),
  output_per_million: Bounded(LIMITS.usd_per_million_tokens, 'USD per million tokens').describe(
    'USD per million output tokens',
  ),
  first_party: z
    .boolean()
    .default(true)
    .describe("false: a reseller's listing, not the developer's own price (a reseller's 0/0 is no price)"),
  observed_at: IsoInstant.describe('When the price was observed'),
  offer: z
    .strictObject({ provider: ProviderId, provider_model_id: NameText() })
    .nullable()
    .default(null)
    .describe("The offer (offers/) this headline price is read from: the model's price in lists and sorts"),
});
export type PriceObservation = z.infer<typeof PriceObservation>;

/** data/providers.yaml: a company or endpoint that serves models through an API. */
export const ProviderRecord = maintainable({
  id: ProviderId.describe("Stable identifier, as an offer's `provider` and the list filter `provider=` write it"),
  name: NameText().describe('Display name: "Amazon Bedrock"'),
  api: HttpUrl.nullable()
    .default(null)
    .describe('Base URL of its API (an OpenAI-compatible endpoint, mostly), when known'),
  doc: HttpUrl.nullable().default(null).describe('Its documentation of models and prices, when known'),
  provenance: Provenance,
  private: PrivateFields.optional(),
});
export type ProviderRecord = z.infer<typeof ProviderRecord>;
export const ProvidersFile = z.strictObject({ providers: z.array(ProviderRecord) });

const Usd = () => Bounded(LIMITS.usd_per_million_tokens, 'USD per million tokens').nullable().default(null);
/** The four token prices a tier or a mode restates; null where the source does not state one. */
const TokenPrices = {
  input_price_per_million: Usd().describe('USD per million input (prompt) tokens'),
  output_price_per_million: Usd().describe('USD per million output (completion) tokens'),
  cache_read_price_per_million: Usd().describe('USD per million input tokens read from the prompt cache'),
  cache_write_price_per_million: Usd().describe('USD per million input tokens written to the prompt cache'),
};
/** The seven price fields of an offer's card, in the order the API publishes them. */
export const PRICE_FIELDS = [
  'input_price_per_million',
  'output_price_per_million',
  'cache_read_price_per_million',
  'cache_write_price_per_million',
  'reasoning_price_per_million',
  'input_audio_price_per_million',
  'output_audio_price_per_million',
] as const;
export type PriceField = (typeof PRICE_FIELDS)[number];

/** Prices once a prompt exceeds a number of tokens (gemini-2-5-pro above 200,000: 2.50 / 15). */
export const PriceTier = z.strictObject({
  above_context_tokens: TokenCount.describe('The tier applies to a prompt of more than this many tokens'),
  ...TokenPrices,
});
export type PriceTier = z.infer<typeof PriceTier>;

/** Prices of a way of serving the same model at another speed or quality (anthropic's `fast`). */
export const PriceMode = z.strictObject(TokenPrices);
export type PriceMode = z.infer<typeof PriceMode>;

const CostKey = z.string().regex(/^[a-z0-9][a-z0-9_]*$/, 'must be a lowercase key such as cached_input or request');

/** The statuses a provider gives its own listing of a model, as written. */
export const OfferStatus = z.enum(['alpha', 'beta', 'deprecated']);

/** data/offers/<provider>.jsonl: one provider's listing of one model, with its price card and limits; one per line. */
export const OfferRecord = maintainable({
  model: Slug.describe('The slug of the model offered (a file in models/)'),
  provider: ProviderId.describe('The id of the provider, declared in providers.yaml'),
  provider_model_id: NameText().describe(
    'The id a client sends to that provider (openai/gpt-oss-120b); unique per provider',
  ),
  first_party: z
    .boolean()
    .describe("true when the provider is the model's developer (its own API), false for a reseller or host"),
  ...TokenPrices,
  reasoning_price_per_million: Usd().describe('USD per million reasoning tokens, where billed apart from output'),
  input_audio_price_per_million: Usd().describe('USD per million audio input tokens'),
  output_audio_price_per_million: Usd().describe('USD per million audio output tokens'),
  tiers: z
    .array(PriceTier)
    .default([])
    .describe('Long-context prices, by ascending above_context_tokens; a price a tier leaves null is the base one'),
  modes: z
    .record(z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, 'must be a lowercase mode name such as fast'), PriceMode)
    .default({})
    .describe('Prices of named serving modes ({fast: {...}})'),
  other_prices: z
    .record(CostKey, Bounded(LIMITS.usd_per_million_tokens, 'USD'))
    .default({})
    .describe(
      'Any other cost the source states, under its own key and unit (request, citation, cached_input): published as written',
    ),
  context_window_tokens: TokenCount.nullable().default(null).describe('Context window at this provider; null: unknown'),
  max_input_tokens: TokenCount.nullable()
    .default(null)
    .describe('Most input tokens this provider accepts; null: unknown'),
  max_output_tokens: TokenCount.nullable().default(null).describe('Most output tokens per request; null: unknown'),
  status: OfferStatus.nullable()
    .default(null)
    .describe('The status the provider gives this listing (alpha, beta, deprecated), as written; null: none'),
  updated_at: IsoDate.describe("When the listing was last observed to change (the source's last_updated)"),
  provenance: Provenance,
  private: PrivateFields.optional(),
});
export type OfferRecord = z.infer<typeof OfferRecord>;

/** A reseller's 0 / 0 listing is a free listing, not a price: never a model's headline price. */
export const isFreeListing = (o: {
  first_party: boolean;
  input_price_per_million: number | null;
  output_price_per_million: number | null;
}): boolean => !o.first_party && o.input_price_per_million === 0 && o.output_price_per_million === 0;

/** data/overrides/*.yaml: manual display-only values, shown only with includeDisplayOnly=true. */
export const DisplayOverride = z.strictObject({
  model: Slug,
  reason: z.string().min(1, 'say why this display-only value exists'),
  name: NameText().optional(),
  description: LocalizedText.partial().optional(),
  documentation_url: HttpUrl.nullable().optional(),
  hub_url: HttpUrl.nullable().optional(),
  provenance: Provenance,
  private: PrivateFields.optional(),
});
export type DisplayOverride = z.infer<typeof DisplayOverride>;
export const OverridesFile = z.strictObject({ overrides: z.array(DisplayOverride) });

/** How sure an observation's effective_from is (docs/api.md): a vendor's stated date, a repository's, or a sighting. */
export const PricePrecision = z.enum(['announced', 'commit_date', 'observed']);
export type PricePrecision = z.infer<typeof PricePrecision>;

/** An offer's price card as OfferRecord writes it: the seven price fields, tiers, modes and other_prices. */
export const PriceCard = OfferRecord.pick({
  input_price_per_million: true,
  output_price_per_million: true,
  cache_read_price_per_million: true,
  cache_write_price_per_million: true,
  reasoning_price_per_million: true,
  input_audio_price_per_million: true,
  output_audio_price_per_million: true,
  tiers: true,
  modes: true,
  other_prices: true,
});
export type PriceCard = z.infer<typeof PriceCard>;

/**
 * data/price-history/<file>.jsonl: an offer's price card over a range of days, one per line. The source (provenance)
 * is what it was read from; ranges of one offer and source do not overlap (validate).
 */
export const PriceHistoryRecord = maintainable({
  model: Slug.describe('The slug of the model offered'),
  provider: ProviderId.describe('The provider of the offer (offers/<provider>.jsonl)'),
  provider_model_id: NameText().describe('The offer: the id a client sends to that provider'),
  effective_from: IsoDate.nullable().describe(
    'The first day the price is in force; null where the source gives no start (in force every day before effective_to)',
  ),
  effective_to: IsoDate.nullable()
    .default(null)
    .describe('The first day it is no longer in force (exclusive); null: still in force'),
  ...PriceCard.shape,
  precision: PricePrecision.describe(
    'announced: the date the vendor states; commit_date: when the change reached the source repository; observed: when someone saw it',
  ),
  first_seen: z
    .boolean()
    .default(false)
    .describe('The price when the source began listing the offer, not a price change nor a launch price'),
  short_lived: z.boolean().default(false).describe('Replaced within 72 hours: left out of the published history'),
  likely_correction: z
    .boolean()
    .default(false)
    .describe('A heuristic says this row fixes an earlier value (a typo), not a price change'),
  announced_future: z
    .boolean()
    .default(false)
    .describe('Announced before it took effect: effective_from may lie after the day the source was read'),
  removed: z
    .boolean()
    .default(false)
    .describe('The source stopped listing the offer on effective_to: no price from it until its next row'),
  provenance: Provenance,
  private: PrivateFields.optional(),
});
export type PriceHistoryRecord = z.infer<typeof PriceHistoryRecord>;
