#!/usr/bin/env node
// Writes a synthetic, valid source tree (the format of src/schema/source.ts) for load and performance tests.
//
//   node scripts/synthetic-catalog.mjs --out DIR [--models 2000] [--metrics 60] [--speed 500000] [--seed 1] [--force]
//
// Deterministic: everything comes from one seeded PRNG (mulberry32) and no clock is read, so the same arguments
// always give byte-identical files. The shape imitates the reference data:
//   - every model has values for most metrics (a per-model coverage between 70 % and 100 %), correlated through a
//     latent "quality" so leaderboards look plausible; values are rounded, so leaderboards have ties;
//   - metrics of both directions (higher-is-better percentages and scores, lower-is-better seconds and dollars);
//   - about 10 % of measurements are in the provisional lane (confidence 0.7), about 5 % of models are provisional;
//   - some (model, metric) pairs are measured more than once (the build has to choose), and about 3 % of benchmark
//     rows come from a source whose licence forbids redistribution (the rights filter has to drop them);
//   - offers (offers/<provider>.jsonl, providers.yaml) in the reference's proportions: 4.5 per model on average, most
//     models at one or two providers and a few at 20 to 40, about half with the developer's own (first-party) offer;
//     price cards with cache prices on half, long-context tiers, a `fast` mode, other_prices, unpriced offers and free
//     listings; served_by is the providers of a model's offers;
//   - every offer's dated prices (price-history/*.jsonl): contiguous ranges, 1.35 rows per offer, some short-lived,
//     corrections and removals, and a second source's announced prices for a few first-party offers;
//   - price observations naming each priced model's headline offer, for about 88 % of those models, some with
//     several observations at the same newest instant;
//   - lifecycle: about 3 % deprecated, a few retired and beta, some with dates and a successor; about 4 % of models
//     are aliases ("... (latest)") of one to three dated snapshots that are models of their own;
//   - speed runs spread unevenly over models (Zipf, exponent 1.1, over a shuffled model order; some models get none);
//   - a few display-only overrides in two override files.
// The folder given to --out must be empty or missing (or pass --force to delete what it holds first).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs as parseCliArgs } from 'node:util';
import YAML from 'yaml';

// ---------------------------------------------------------------------------------------------
// Command line

const USAGE =
  'usage: node scripts/synthetic-catalog.mjs --out DIR [--models 2000] [--metrics 60] [--speed 500000] [--seed 1] [--force]';

/** A whole number >= min, or an error naming the flag. */
export function wholeNumber(flag, v, min = 0) {
  if (!/^\d+$/.test(v) || Number(v) < min)
    throw new Error(`--${flag} must be a whole number >= ${min}, got ${JSON.stringify(v)}`);
  return Number(v);
}

export function parseArgs(argv) {
  const { values: v } = parseCliArgs({
    args: argv,
    options: {
      out: { type: 'string' },
      models: { type: 'string', default: '2000' },
      metrics: { type: 'string', default: '60' },
      speed: { type: 'string', default: '500000' },
      seed: { type: 'string', default: '1' },
      force: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const opts = {
    out: v.out ? path.resolve(v.out) : null,
    models: wholeNumber('models', v.models, 1),
    metrics: wholeNumber('metrics', v.metrics, 1),
    speed: wholeNumber('speed', v.speed),
    seed: wholeNumber('seed', v.seed),
    force: v.force,
    help: v.help,
  };
  if (!opts.help && !opts.out) throw new Error(`--out is required; ${USAGE}`);
  return opts;
}

// ---------------------------------------------------------------------------------------------
// Seeded randomness

/** mulberry32: a tiny 32-bit PRNG, good enough for test data and identical on every platform. */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function makeRandom(seed) {
  const next = mulberry32(seed * 0x9e3779b1 + 0x1234567);
  const r = {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)), // inclusive
    chance: (p) => next() < p,
    pick: (arr) => arr[Math.floor(next() * arr.length)],
    normal: () => {
      // Box-Muller; 1 - next() keeps the log argument in (0, 1].
      const u = 1 - next();
      const v = next();
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    },
    shuffle: (arr) => {
      for (let i = arr.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [arr[i], arr[j]] = [arr[j], arr[i]];
      }
      return arr;
    },
    sample: (arr, k) => r.shuffle([...arr]).slice(0, k),
  };
  return r;
}

// ---------------------------------------------------------------------------------------------
// Helpers

const sha256 = (text) => createHash('sha256').update(text, 'utf8').digest('hex');
const round = (x, d) => Math.round(x * 10 ** d) / 10 ** d;
const clamp = (x, lo, hi) => Math.min(hi, Math.max(lo, x));
const pad = (n, w = 2) => String(n).padStart(w, '0');
const DAY = 86400000;
// Every date lies in [EPOCH, END], a fixed range in the past: validation refuses observations dated after tomorrow, so
// the data validates on any later day, and no clock is read, so the same arguments still give the same bytes.
const EPOCH = Date.UTC(2022, 0, 1);
const END = Date.UTC(2026, 5, 30);
const isoDate = (ms) => new Date(ms).toISOString().slice(0, 10);
/** An instant with microseconds and a Z, like the speed-test timestamps of the reference data. */
const isoMicros = (ms, micros) => `${new Date(ms).toISOString().slice(0, 19)}.${pad(micros, 6)}Z`;
const slugify = (s) =>
  s
    .toLowerCase()
    .replace(/\+/g, '-plus')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
const yaml = (value) => YAML.stringify(value, { lineWidth: 0 });

const MONTHS_EN = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const MONTHS_RU = [
  'января',
  'февраля',
  'марта',
  'апреля',
  'мая',
  'июня',
  'июля',
  'августа',
  'сентября',
  'октября',
  'ноября',
  'декабря',
];
const MODALITY = {
  text: { en: 'text', zh: '文本', ru: 'текст' },
  image: { en: 'image', zh: '图像', ru: 'изображения' },
  audio: { en: 'audio', zh: '音频', ru: 'аудио' },
  video: { en: 'video', zh: '视频', ru: 'видео' },
  pdf: { en: 'PDF', zh: 'PDF', ru: 'PDF' },
};
const listEn = (xs) => (xs.length <= 1 ? xs.join('') : `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}`);
const listRu = (xs) => (xs.length <= 1 ? xs.join('') : `${xs.slice(0, -1).join(', ')} и ${xs[xs.length - 1]}`);
const groupEn = (n) => n.toLocaleString('en-US');
const groupRu = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, '\u00a0');

// ---------------------------------------------------------------------------------------------
// Vocabulary

const DEVELOPERS = [
  'Acme AI',
  'Borealis Labs',
  'Cobalt Research',
  'Dunmore',
  'Eastwind',
  'Fathom',
  'Granite Systems',
  'Halcyon',
  'Ironbark',
  'Juniper AI',
  'Kestrel',
  'Lumen Works',
  'Meridian',
  'Nimbus',
  'Orchid Labs',
  'Pioneer',
  'Quasar',
  'Riverstone',
  'Sable',
  'Tessellate',
  'Umbra',
  'Vantage',
  'Willow',
  'Xylem',
  'Yarrow',
  'Zephyr',
  'Aster',
  'Basalt',
  'Cinder',
  'Delta Forge',
];
const FAMILIES = [
  'Atlas',
  'Beacon',
  'Comet',
  'Drift',
  'Ember',
  'Flux',
  'Glide',
  'Harbor',
  'Iris',
  'Jade',
  'Kite',
  'Lark',
  'Mosaic',
  'Nova',
  'Onyx',
  'Prism',
  'Quill',
  'Raven',
  'Sparrow',
  'Tide',
  'Vale',
  'Wren',
  'Zenith',
];
const SIZES = [
  'Nano',
  'Mini',
  'Small',
  'Base',
  'Plus',
  'Pro',
  'Max',
  'Ultra',
  '8B',
  '70B',
  '405B',
  'Instruct',
  'Vision',
  'Coder',
  'Reasoner',
];
const PROVIDERS = [
  'openrouter',
  'vercel',
  'kilo',
  'together',
  'fireworks',
  'groq',
  'deepinfra',
  'azure',
  'bedrock',
  'vertex',
  'cerebras',
  'novita',
  'hyperbolic',
  'lambda',
];
const CONTEXTS = [8192, 16384, 32768, 65536, 128000, 131072, 200000, 262144, 1000000, 1048576, 2000000];
const OUTPUTS = [0, 2048, 4096, 8192, 16384, 32768, 65536, 128000];
const GROUPS = ['coding', 'reasoning', 'math', 'language', 'data', 'agentic', 'knowledge', 'efficiency'];
const BENCHMARK_NAMES = [
  'CodeArena',
  'LogicBench',
  'MathQuest',
  'LinguaEval',
  'TableSense',
  'AgentGym',
  'TriviaMax',
  'Throughput Lab',
  'BugHunt',
  'Riddle Suite',
  'ProofCheck',
  'Translate-X',
  'SQLBench',
  'ToolTrail',
  'FactScope',
  'CostWatch',
];

// ---------------------------------------------------------------------------------------------
// Generation

/** The fixed part of the tree: site, sources and the metric catalog. */
function catalog(r, nMetrics) {
  const site = { name: 'modelpub synthetic', url: 'https://synthetic.modelpub.example', schema_version: '1.0.0' };
  const src = (id, name, license, redistributable) => ({
    id,
    name,
    url: `https://synthetic.modelpub.example/sources/${id}`,
    license,
    redistributable,
    attribution: `${name} (synthetic data for benchmarks), ${license}`,
  });
  const sources = [
    src('synth-catalog', 'Synthetic catalog', 'MIT', true),
    src('synth-bench-a', 'Synthetic benchmark suite A', 'Apache-2.0', true),
    src('synth-bench-b', 'Synthetic benchmark suite B', 'CC-BY-4.0', true),
    src('synth-closed', 'Synthetic closed leaderboard', 'NOASSERTION', false),
    src('synth-prices', 'Synthetic price tracker', 'MIT', true),
    // The build reads price_since from the rows of the models-dev source (compute/history.ts): the dated prices'
    // source has that id, so that the synthetic catalog exercises it.
    src('models-dev', 'Synthetic price history (in the place of models.dev)', 'MIT', true),
    src('synth-announcements', 'Synthetic vendor price announcements', 'MIT', true),
    src('synth-speed-eu', 'Synthetic speed probe (EU)', 'MIT', true),
    src('synth-speed-us', 'Synthetic speed probe (US)', 'MIT', true),
  ];
  // Metrics come in benchmarks of 2-6 metrics; about a quarter are lower-is-better (latency, cost, error rates).
  const metrics = [];
  for (let b = 0; metrics.length < nMetrics; b++) {
    const bench =
      BENCHMARK_NAMES[b % BENCHMARK_NAMES.length] +
      (b >= BENCHMARK_NAMES.length ? ` ${Math.floor(b / BENCHMARK_NAMES.length) + 1}` : '');
    const group = GROUPS[b % GROUPS.length];
    const count = Math.min(r.int(2, 6), nMetrics - metrics.length);
    for (let k = 0; k < count; k++) {
      const kind =
        group === 'efficiency'
          ? r.pick(['seconds', 'usd'])
          : r.chance(0.12)
            ? 'error'
            : r.chance(0.25)
              ? 'score'
              : 'percent';
      const label =
        kind === 'seconds'
          ? `time to answer ${k + 1}`
          : kind === 'usd'
            ? `cost per task ${k + 1}`
            : kind === 'error'
              ? `error rate ${k + 1}`
              : kind === 'score'
                ? `score ${k + 1}`
                : `pass rate ${k + 1}`;
      metrics.push({
        key: `${slugify(bench)}.${slugify(label)}`,
        label: `${bench} ${label}`,
        benchmark: bench,
        group,
        unit: kind === 'error' ? 'percent' : kind,
        higher_is_better: kind === 'percent' || kind === 'score',
        aggregate: k === 0 && r.chance(0.3),
        headline: k === 0 && r.chance(0.5),
      });
    }
  }
  // Each benchmark is published by one source; a few benchmarks come only from the closed leaderboard.
  const benchmarks = [...new Set(metrics.map((m) => m.benchmark))];
  const sourceOf = new Map(
    benchmarks.map((b, i) => [b, i === 6 ? 'synth-closed' : i % 2 ? 'synth-bench-b' : 'synth-bench-a']),
  );
  return { site, sources, metrics, sourceOf };
}

function describe(m, caps) {
  const d = new Date(`${m.release_date}T00:00:00Z`);
  const [day, month, year] = [d.getUTCDate(), d.getUTCMonth(), d.getUTCFullYear()];
  const inputs = caps.input.map((x) => MODALITY[x]);
  const outputs = caps.output.map((x) => MODALITY[x]);
  const multimodal = caps.input.length > 1 || caps.output.length > 1;
  const kindEn = caps.reasoning ? 'reasoning model' : multimodal ? 'multimodal model' : 'language model';
  const kindZh = caps.reasoning ? '推理模型' : multimodal ? '多模态模型' : '语言模型';
  const kindRu = caps.reasoning ? 'модель рассуждений' : multimodal ? 'мультимодальная модель' : 'языковая модель';
  const en = [
    `${m.name} is a ${kindEn} from ${m.developer}, released on ${day} ${MONTHS_EN[month]} ${year}.`,
    `It accepts ${listEn(inputs.map((x) => x.en))} input and produces ${listEn(outputs.map((x) => x.en))} output, with a context window of ${groupEn(m.context_window_tokens)} tokens${m.max_output_tokens ? ` and up to ${groupEn(m.max_output_tokens)} output tokens` : ''}.`,
    caps.tool_call ? 'It supports tool calling.' : 'It does not support tool calling.',
    caps.open_weights ? 'Its weights are openly available.' : '',
    caps.knowledge_cutoff ? `Its knowledge cutoff is ${caps.knowledge_cutoff}.` : '',
  ]
    .filter(Boolean)
    .join(' ');
  const zh = [
    `${m.name} 是 ${m.developer} 于 ${year} 年 ${month + 1} 月 ${day} 日发布的${kindZh}。`,
    `它接受${inputs.map((x) => x.zh).join('、')}输入并生成${outputs.map((x) => x.zh).join('、')}，上下文窗口为 ${groupEn(m.context_window_tokens)} 个 token。`,
    caps.tool_call ? '该模型支持工具调用。' : '该模型不支持工具调用。',
    caps.open_weights ? '其权重公开发布。' : '',
    caps.knowledge_cutoff ? `其知识截止日期为 ${caps.knowledge_cutoff}。` : '',
  ]
    .filter(Boolean)
    .join('');
  const ru = [
    `${m.name} — ${kindRu} от ${m.developer}, выпущенная ${day} ${MONTHS_RU[month]} ${year} года.`,
    `На вход принимает ${listRu(inputs.map((x) => x.ru))}, на выходе выдаёт ${listRu(outputs.map((x) => x.ru))}. Контекстное окно — ${groupRu(m.context_window_tokens)} токенов.`,
    caps.tool_call ? 'Поддерживает вызов инструментов.' : 'Не поддерживает вызов инструментов.',
    caps.open_weights ? 'Веса модели открыты.' : '',
    caps.knowledge_cutoff ? `Обучающие данные охватывают период до ${caps.knowledge_cutoff}.` : '',
  ]
    .filter(Boolean)
    .join(' ');
  return { en, zh, ru };
}

/** One model's record but its lifecycle, served_by and provenance (finishModels), and its latent quality. */
function modelRecord(r, { id, slug, name, developer, release }) {
  const updated = r.chance(0.05) ? release - r.int(1, 60) * DAY : Math.min(END, release + r.int(0, 400) * DAY); // a few out of order, as in the reference
  const input = ['text', ...['image', 'audio', 'video', 'pdf'].filter(() => r.chance(0.25))];
  const output = ['text', ...['image', 'audio'].filter(() => r.chance(0.08))];
  const openWeights = r.chance(0.3);
  const caps = {
    input,
    output,
    reasoning: r.chance(0.35),
    tool_call: r.chance(0.7),
    structured_output: r.chance(0.15) ? null : r.chance(0.6),
    attachment: input.length > 1,
    temperature: r.chance(0.9),
    open_weights: openWeights,
    knowledge_cutoff: r.chance(0.3)
      ? null
      : r.chance(0.5)
        ? isoDate(release - r.int(60, 500) * DAY)
        : isoDate(release - r.int(60, 500) * DAY).slice(0, 7),
  };
  const m = {
    slug,
    id,
    name,
    developer,
    release_date: isoDate(release),
    updated_at: isoDate(updated),
    context_window_tokens: r.pick(CONTEXTS),
    max_output_tokens: r.pick(OUTPUTS),
    documentation_url: r.chance(0.9) ? `https://docs.${slugify(developer)}.example/models/${slug}` : null,
    hub_url: openWeights ? `https://huggingface.co/${slugify(developer)}/${slug}` : null,
    served_by: [], // the providers of its offers (finishModels)
    description: null,
    capabilities: caps,
    lane: r.chance(0.05) ? 'provisional' : 'verified',
    status: 'active',
  };
  m.description = describe(m, caps);
  m.quality = r.normal(); // latent, not written
  return m;
}

/**
 * Models, in id order. About 4 % are aliases ("Acme Nova 2.1 Pro (latest)", as claude-opus-4-5 in the reference: 27
 * of 674) naming 1-3 dated snapshots that follow them (acme-nova-2-1-pro-20250314), each a model of its own.
 */
function makeModels(r, n) {
  const models = [];
  const used = new Set();
  const uniqueSlug = (name) => {
    let slug = slugify(name);
    for (let k = 2; used.has(slug); k++) slug = slugify(`${name} r${k}`);
    used.add(slug);
    return slug;
  };
  const lastRelease = Math.floor((END - EPOCH) / DAY) - 30;
  while (models.length < n) {
    const developer = r.pick(DEVELOPERS);
    const family = r.pick(FAMILIES);
    const version = `${r.int(1, 5)}.${r.int(0, 9)}`;
    const size = r.pick(SIZES);
    const base = `${developer.split(' ')[0]} ${family} ${version} ${size}`;
    const release = EPOCH + r.int(0, lastRelease) * DAY;
    const nSnapshots = r.chance(0.04) ? r.pick([1, 1, 1, 1, 1, 1, 2, 2, 2, 3]) : 0;
    if (nSnapshots === 0 || models.length + 1 + nSnapshots > n) {
      const slug = uniqueSlug(base);
      // Some display names repeat: a second model of the same name gets its slug's suffix half of the time.
      const name = slug === slugify(base) || r.chance(0.5) ? base : `${base} (${slug.split('-').pop()})`;
      models.push(modelRecord(r, { id: models.length + 1, slug, name, developer, release }));
      continue;
    }
    const alias = modelRecord(r, {
      id: models.length + 1,
      slug: uniqueSlug(base),
      name: `${base} (latest)`,
      developer,
      release,
    });
    models.push(alias);
    alias.snapshots = [];
    for (let k = 0; k < nSnapshots; k++) {
      // The newest snapshot is the alias's release; older ones came months before.
      const at = Math.max(EPOCH, release - k * r.int(60, 200) * DAY);
      const slug = uniqueSlug(`${alias.slug}-${isoDate(at).replaceAll('-', '')}`);
      models.push(modelRecord(r, { id: models.length + 1, slug, name: base, developer, release: at }));
      alias.snapshots.push(slug);
    }
    alias.snapshots.sort();
  }
  return models;
}

/**
 * Lifecycle as in the reference (652 active, 21 deprecated, 1 beta of 674), plus a few retired models, some with
 * dates and a successor; served_by from the offers; then the provenance hash over the whole record.
 */
function finishModels(r, models, offersOf) {
  for (const m of models) {
    const u = r.next();
    m.status = u < 0.03 ? 'deprecated' : u < 0.034 ? 'retired' : u < 0.036 ? 'beta' : 'active';
    if (m.status === 'deprecated' || m.status === 'retired') {
      const deprecated = Date.parse(`${m.release_date}T00:00:00Z`) + r.int(90, 600) * DAY;
      if (m.status === 'retired' || r.chance(0.5)) m.deprecation_date = isoDate(deprecated);
      if (m.status === 'retired') m.retirement_date = isoDate(deprecated + r.int(0, 180) * DAY);
      if (r.chance(0.3)) {
        const s = r.pick(models).slug;
        if (s !== m.slug) m.successor = s;
      }
    }
    m.served_by = [...new Set((offersOf.get(m.slug) ?? []).map((o) => o.provider))].sort();
    // snapshots go after the lifecycle fields, as the reference writes them
    if (m.snapshots) {
      const { snapshots } = m;
      delete m.snapshots;
      m.snapshots = snapshots;
    }
    const { slug, quality, price, outputRatio, ...record } = m;
    m.provenance = { source: 'synth-catalog', evidence_sha256: sha256(JSON.stringify({ ...record, slug })) };
  }
}

const laneOf = (r) => (r.chance(0.1) ? ['provisional', 0.7] : ['verified', 1]);

function benchmarkRows(r, models, metrics, sourceOf) {
  const rows = [];
  for (const m of models) {
    const coverage = 0.7 + 0.3 * r.next();
    for (const metric of metrics) {
      if (!r.chance(coverage)) continue;
      const runs = r.chance(0.05) ? r.int(2, 3) : 1; // repeated measurements: the build chooses one
      for (let k = 0; k < runs; k++) {
        const q = m.quality + 0.6 * r.normal();
        let value;
        switch (metric.unit) {
          case 'percent':
            value = metric.higher_is_better
              ? round(clamp(60 + 15 * q, 0, 100), 1)
              : round(clamp(12 - 4 * q, 0, 100), 1);
            break;
          case 'score':
            value = Math.round(clamp(1200 + 150 * q, 500, 2000));
            break;
          case 'index':
            value = round(clamp(50 + 10 * q, 0, 100), 1);
            break;
          case 'seconds':
            value = round(clamp(3 - 0.8 * q, 0.05, 30), 2);
            break;
          case 'usd':
            value = round(clamp(0.5 * Math.exp(-0.8 * q), 0, 50), 2);
            break;
        }
        const [lane, confidence] = laneOf(r);
        const row = {
          model: m.slug,
          metric: metric.key,
          lane,
          value,
          stderr: r.chance(0.3) ? round(Math.abs(value) * 0.02 * r.next(), 3) : null,
          confidence,
          eval_date: isoDate(Math.min(END, Date.parse(`${m.release_date}T00:00:00Z`) + r.int(0, 365) * DAY)),
          // Repeats are runs of their own: without an id, two on one day would be two values in one run.
          ...(runs > 1 ? { run: { id: `repeat-${k + 1}`, variant: `repeat ${k + 1}` } } : {}),
        };
        // About 3 % of rows (besides the closed benchmarks) come from the closed leaderboard.
        const source = r.chance(0.03) ? 'synth-closed' : sourceOf.get(metric.benchmark);
        rows.push({
          ...row,
          provenance: { source, evidence_sha256: sha256(JSON.stringify(row) + source + rows.length) },
        });
      }
    }
  }
  return rows;
}

/** Speed runs: Zipf over a shuffled model order, so a few models carry most runs and the tail gets none. */
function* speedRows(r, models, total) {
  const order = r.shuffle(models.map((_, i) => i));
  const cum = new Float64Array(order.length);
  let acc = 0;
  for (let k = 0; k < order.length; k++) cum[k] = acc += 1 / (k + 1) ** 1.1;
  const tps = models.map((m) => clamp(80 + 40 * m.quality + 30 * r.normal(), 5, 400));
  const ttft = models.map((m) => clamp(500 - 150 * m.quality + 100 * r.normal(), 50, 5000));
  const span = END - Date.UTC(2024, 0, 1);
  for (let i = 0; i < total; i++) {
    const u = r.next() * acc;
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    const mi = order[lo];
    const at = Date.UTC(2024, 0, 1) + Math.floor((i / Math.max(1, total)) * span) + r.int(0, 59_000); // time order, like an appended log
    const [lane] = laneOf(r);
    const row = {
      model: models[mi].slug,
      lane,
      tokens_per_second: round(Math.max(0, tps[mi] * (1 + 0.15 * r.normal())), 6),
      first_token_latency_ms: round(Math.max(0, ttft[mi] * (1 + 0.2 * r.normal())), 6),
      measured_at: isoMicros(at, r.int(0, 999_999)),
    };
    const source = i % 3 === 0 ? 'synth-speed-eu' : 'synth-speed-us';
    yield { source, row: { ...row, provenance: { source, evidence_sha256: sha256(JSON.stringify(row) + i) } } };
  }
}

// ---------------------------------------------------------------------------------------------
// Providers, offers and dated prices

/**
 * How many offers a model has, as counted in the reference's offers/ (3,076 offers of 668 models): weight of 1, 2, ...
 * 40 offers. Most models have one or two; a few dozen of every thousand have 20 to 40.
 */
const OFFER_COUNTS = [
  258, 112, 75, 47, 23, 21, 13, 8, 12, 14, 9, 8, 11, 8, 8, 3, 5, 5, 5, 2, 2, 1, 1, 0, 1, 3, 1, 0, 3, 3, 0, 2, 0, 0, 1,
  0, 1, 0, 1, 1,
];
const RESELLER_WORDS = [
  ['Open', 'Deep', 'Cloud', 'Edge', 'Hyper', 'Swift', 'Bright', 'Prime', 'Polar', 'Signal'],
  ['Router', 'Infer', 'Host', 'Gate', 'Compute', 'Serve', 'Stack'],
];

/**
 * Providers: each developer's own API (a first-party offer) and 80 resellers, the first ones carrying most offers
 * (Zipf), as the reference's 123 providers do.
 */
function makeProviders() {
  const own = DEVELOPERS.map((d) => ({ id: slugify(d), name: d, firstParty: true }));
  const resellers = [...PROVIDERS.map((id) => ({ id, name: id[0].toUpperCase() + id.slice(1) }))];
  for (const b of RESELLER_WORDS[1])
    for (const a of RESELLER_WORDS[0])
      if (resellers.length < 80 && !resellers.some((p) => p.id === slugify(a + b)))
        resellers.push({ id: slugify(a + b), name: a + b });
  const records = [...own, ...resellers]
    .map((p, i) => ({
      id: p.id,
      name: p.name,
      api: i % 7 === 3 ? null : `https://api.${p.id}.example/v1`,
      doc: i % 5 === 2 ? null : `https://docs.${p.id}.example/models`,
      provenance: { source: 'synth-catalog', evidence_sha256: sha256(`provider ${p.id}`) },
    }))
    .sort((a, b) => (a.id < b.id ? -1 : 1));
  const weights = resellers.map((_, k) => 1 / (k + 1) ** 0.8);
  return { records, resellers: resellers.map((p) => p.id), weights };
}

const priceOr = (x, d = 3) => (x == null ? null : round(x, d));
/** A card with every per-million price times f (an older price). */
function scaledCard(card, f) {
  const s = (x) => priceOr(x == null ? null : x * f);
  const prices = (c) =>
    Object.fromEntries(Object.entries(c).map(([k, v]) => [k, k.endsWith('_per_million') ? s(v) : v]));
  return {
    ...prices(card),
    tiers: card.tiers.map(prices),
    modes: Object.fromEntries(Object.entries(card.modes).map(([k, v]) => [k, prices(v)])),
    other_prices: card.other_prices,
  };
}
/** The card's fields as the reference writes them: null prices and empty lists left out. */
function cardFields(card) {
  const out = {};
  for (const [k, v] of Object.entries(card)) {
    if (v === null || (Array.isArray(v) && !v.length)) continue;
    if (typeof v === 'object' && !Array.isArray(v) && !Object.keys(v).length) continue;
    if (Array.isArray(v)) out[k] = v.map((t) => Object.fromEntries(Object.entries(t).filter(([, x]) => x !== null)));
    else if (typeof v === 'object')
      out[k] = Object.fromEntries(
        Object.entries(v).map(([n, m]) => [
          n,
          typeof m === 'object' ? Object.fromEntries(Object.entries(m).filter(([, x]) => x !== null)) : m,
        ]),
      );
    else out[k] = v;
  }
  return out;
}

/** One offer's price card, in the shares the reference's offers have them (cache reads on half, tiers on 5 %, ...). */
function priceCard(r, m, firstParty) {
  const none = { input_price_per_million: null, output_price_per_million: null };
  const empty = { tiers: [], modes: {}, other_prices: {} };
  if (r.chance(0.06)) return { ...none, ...empty }; // unpriced: the source states no price
  if (!firstParty && r.chance(0.07)) return { input_price_per_million: 0, output_price_per_million: 0, ...empty }; // a free listing
  const input = firstParty ? m.price : m.price * Math.exp(0.2 * r.normal());
  const output = input * m.outputRatio;
  const cacheRead = r.chance(0.5) ? input * r.pick([0.1, 0.25, 0.5]) : null;
  const card = {
    input_price_per_million: round(input, 3),
    output_price_per_million: round(output, 3),
    cache_read_price_per_million: priceOr(cacheRead),
    cache_write_price_per_million: r.chance(0.17) ? round(input * 1.25, 3) : null,
    reasoning_price_per_million: r.chance(0.018) ? round(output, 3) : null,
    input_audio_price_per_million: r.chance(0.014) ? round(input * 4, 3) : null,
    output_audio_price_per_million: r.chance(0.002) ? round(output * 4, 3) : null,
    ...empty,
  };
  if (r.chance(0.047))
    card.tiers = [
      {
        above_context_tokens: r.pick([128000, 200000, 256000]),
        input_price_per_million: round(input * 2, 3),
        output_price_per_million: round(output * 1.5, 3),
        cache_read_price_per_million: priceOr(cacheRead == null ? null : cacheRead * 2),
        cache_write_price_per_million: null,
      },
    ];
  if (r.chance(0.012))
    card.modes = {
      fast: {
        input_price_per_million: round(input * 6, 3),
        output_price_per_million: round(output * 6, 3),
        cache_read_price_per_million: priceOr(cacheRead == null ? null : cacheRead * 6),
        cache_write_price_per_million: null,
      },
    };
  if (r.chance(0.004))
    card.other_prices = { [r.pick(['request', 'citation', 'web_search'])]: round(0.001 + r.next() * 0.01, 4) };
  return card;
}

/** Weight of the number of dated rows an offer has in the reference (1 row: 2,335 of 3,076 offers; up to 13). */
const HISTORY_ROWS = [2335, 529, 153, 32, 13, 5, 3, 2, 0, 2, 0, 1, 1];
const weighted = (r, weights) => {
  let u = r.next() * weights.reduce((a, b) => a + b, 0);
  for (let i = 0; i < weights.length; i++) if ((u -= weights[i]) < 0) return i;
  return weights.length - 1;
};

/**
 * One offer's dated prices from the history source: contiguous ranges, the last still in force (or ended by a
 * removal), older prices a little higher; some rows short-lived or flagged as corrections, as in the reference.
 * Returns the rows and the card in force now (the offer's card).
 */
function historyOf(r, offer, card, startMs) {
  const n = weighted(r, HISTORY_ROWS) + 1;
  const starts = [startMs];
  for (let k = 1; k < n; k++) {
    const prev = starts[k - 1];
    const next = prev + (r.chance(0.04) ? r.int(1, 2) : r.int(3, 150)) * DAY;
    if (next > END) break;
    starts.push(next);
  }
  const removedOn = r.chance(0.01) ? starts[starts.length - 1] + r.int(1, 60) * DAY : null;
  const removed = removedOn !== null && removedOn <= END;
  const rows = starts.map((from, k) => {
    const last = k === starts.length - 1;
    const to = last ? (removed ? removedOn : null) : starts[k + 1];
    const c = last ? card : scaledCard(card, 1 + 0.08 * (starts.length - 1 - k) * r.next());
    const row = {
      model: offer.model,
      provider: offer.provider,
      provider_model_id: offer.provider_model_id,
      effective_from: k === 0 && n > 1 && r.chance(0.002) ? null : isoDate(from),
      effective_to: to === null ? null : isoDate(to),
      ...cardFields(c),
      precision: 'commit_date',
      ...(k === 0 ? { first_seen: true } : {}),
      ...(!last && to - from < 3 * DAY ? { short_lived: true } : {}),
      ...(k > 0 && r.chance(0.085) ? { likely_correction: true } : {}),
      ...(last && removed ? { removed: true } : {}),
    };
    return { ...row, provenance: { source: 'models-dev', evidence_sha256: sha256(JSON.stringify(row)) } };
  });
  return { rows, updated: starts[starts.length - 1] };
}

/**
 * Offers of every model (several providers each, up to 40 for a few), their dated prices, and the price observations
 * naming each priced model's headline offer (its own API's, else the cheapest reseller's), as the reference has them.
 */
function makeOffers(r, models, providers) {
  const offersOf = new Map();
  const history = []; // the history source's rows (price-history/models-dev.jsonl)
  const announced = []; // a second source's rows for a few first-party offers (price-history/synth-announcements.jsonl)
  const observations = [];
  const taken = new Set(); // provider + provider_model_id: one offer per id at a provider
  for (const m of models) {
    m.price = Math.exp(r.normal() * 1.2 - m.quality * 0.5); // USD per million input tokens at the developer's API
    m.outputRatio = r.pick([2, 3, 4, 5, 8]);
    if (r.chance(0.01)) continue; // a few models no one offers
    const n = weighted(r, OFFER_COUNTS) + 1;
    const firstParty = r.chance(0.47);
    const chosen = new Set();
    while (chosen.size < Math.min(n - (firstParty ? 1 : 0), providers.resellers.length))
      chosen.add(providers.resellers[weighted(r, providers.weights)]);
    const listings = [...(firstParty ? [[slugify(m.developer), m.slug, true]] : [])];
    for (const p of [...chosen].sort()) {
      listings.push([p, `${slugify(m.developer)}/${m.slug}`, false]);
      if (r.chance(0.015)) listings.push([p, `${slugify(m.developer)}/${m.slug}:${r.pick(['free', 'fast'])}`, false]); // a second listing
    }
    const start = Math.max(Date.parse(`${m.release_date}T00:00:00Z`), EPOCH);
    const offers = [];
    for (const [provider, id, fp] of listings) {
      if (taken.has(`${provider}/${id}`)) continue;
      taken.add(`${provider}/${id}`);
      const card = id.endsWith(':free')
        ? { input_price_per_million: 0, output_price_per_million: 0, tiers: [], modes: {}, other_prices: {} }
        : priceCard(r, m, fp);
      const offer = { model: m.slug, provider, provider_model_id: id, first_party: fp };
      const since = Math.min(END, start + r.int(0, 90) * DAY);
      const { rows, updated } = historyOf(r, offer, card, since);
      history.push(...rows);
      if (fp && r.chance(0.02)) {
        // A vendor's own announcement: a price with no known start, then the announced one.
        const day = isoDate(Math.min(END, since + r.int(1, 30) * DAY));
        for (const [from, to] of [
          [null, day],
          [day, null],
        ]) {
          const row = { ...offer, effective_from: from, effective_to: to, ...cardFields(card), precision: 'announced' };
          delete row.first_party;
          announced.push({
            ...row,
            provenance: { source: 'synth-announcements', evidence_sha256: sha256(JSON.stringify(row)) },
          });
        }
      }
      const context = r.chance(0.975) ? (r.chance(0.8) ? m.context_window_tokens : r.pick(CONTEXTS)) : null;
      const record = {
        ...offer,
        ...cardFields(card),
        context_window_tokens: context,
        max_input_tokens: context !== null && r.chance(0.14) ? Math.floor(context * 0.75) : null,
        max_output_tokens: r.chance(0.97) ? m.max_output_tokens : null,
        status: r.chance(0.024) ? r.pick(['deprecated', 'deprecated', 'deprecated', 'deprecated', 'beta']) : null,
        updated_at: isoDate(updated),
      };
      offers.push({
        ...record,
        provenance: { source: 'synth-catalog', evidence_sha256: sha256(JSON.stringify(record)) },
        card,
        rows,
      });
    }
    offersOf.set(m.slug, offers);

    // The headline: the developer's own priced offer, else the cheapest priced reseller's; observed at each of its
    // prices' starts (the build keeps the newest), for about 88 % of the models that have one.
    const priced = offers.filter((o) => o.card.input_price_per_million > 0 && o.card.output_price_per_million > 0);
    const blend = (o) => 3 * o.card.input_price_per_million + o.card.output_price_per_million;
    const head = priced.find((o) => o.first_party) ?? priced.sort((a, b) => blend(a) - blend(b))[0];
    if (!head || !r.chance(0.88)) continue;
    const kept = head.rows.filter((row) => !row.short_lived && row.input_price_per_million > 0);
    kept.forEach((row, k) => {
      const copies = k === kept.length - 1 && r.chance(0.1) ? 2 : 1; // two observations at the same newest instant: averaged
      for (let c = 0; c < copies; c++) {
        const obs = {
          model: m.slug,
          lane: laneOf(r)[0],
          input_per_million: row.input_price_per_million,
          output_per_million: row.output_price_per_million,
          first_party: head.first_party,
          observed_at: `${row.effective_from ?? head.updated_at}T00:00:00Z`,
          offer: { provider: head.provider, provider_model_id: head.provider_model_id },
        };
        observations.push({
          ...obs,
          provenance: { source: 'synth-prices', evidence_sha256: sha256(JSON.stringify(obs) + observations.length) },
        });
      }
    });
  }
  return { offersOf, history, announced, observations };
}

function overrideFiles(r, models) {
  const picked = r.sample(models, Math.max(1, Math.min(40, Math.round(models.length / 100))));
  const files = { 'overrides/display.yaml': [], 'overrides/launch-names.yaml': [] };
  picked.forEach((m, i) => {
    const o = {
      model: m.slug,
      reason: i % 2 ? 'launch name used in the announcement' : 'marketing description requested by the developer',
    };
    if (i % 2) o.name = `${m.name} (launch edition)`;
    else o.description = { en: `${m.name}, as described by ${m.developer} at launch.` };
    if (i % 5 === 0) o.documentation_url = `https://launch.${slugify(m.developer)}.example/${m.slug}`;
    o.provenance = { source: 'synth-catalog', evidence_sha256: sha256(`override ${m.slug} ${i}`) };
    files[i % 2 ? 'overrides/launch-names.yaml' : 'overrides/display.yaml'].push(o);
  });
  return files;
}

// ---------------------------------------------------------------------------------------------
// Writing

/** Buffered JSON Lines writer: one write(2) per ~1 MB. */
function jsonlWriter(file) {
  const fd = fs.openSync(file, 'w');
  let buf = [];
  let size = 0;
  let lines = 0;
  const flush = () => {
    if (buf.length) fs.writeSync(fd, buf.join(''));
    buf = [];
    size = 0;
  };
  return {
    write(obj) {
      const s = `${JSON.stringify(obj)}\n`;
      buf.push(s);
      size += s.length;
      lines++;
      if (size > 1 << 20) flush();
    },
    close() {
      flush();
      fs.closeSync(fd);
      return lines;
    },
  };
}

export function generate(opts) {
  const r = makeRandom(opts.seed);
  const out = opts.out;
  if (fs.existsSync(out) && fs.readdirSync(out).length) {
    if (!opts.force)
      throw new Error(`${out} is not empty; choose an empty folder or pass --force to replace its contents`);
    fs.rmSync(out, { recursive: true, force: true });
  }
  for (const d of [
    'models',
    'overrides',
    'offers',
    'price-history',
    'measurements/speed',
    'measurements/benchmarks',
    'measurements/prices',
  ])
    fs.mkdirSync(path.join(out, d), { recursive: true });
  const put = (rel, text) => fs.writeFileSync(path.join(out, rel), text);

  const { site, sources, metrics, sourceOf } = catalog(r, opts.metrics);
  put('site.yaml', yaml(site));
  put('sources.yaml', yaml({ sources }));
  put('metrics.yaml', yaml({ metrics }));
  const providers = makeProviders();
  put('providers.yaml', yaml({ providers: providers.records }));

  const models = makeModels(r, opts.models);
  const counts = {
    models: models.length,
    metrics: metrics.length,
    benchmarks: 0,
    prices: 0,
    speed: 0,
    overrides: 0,
    providers: providers.records.length,
    offers: 0,
    history: 0,
  };
  const writers = new Map();
  const writer = (dir, name) => {
    const key = `${dir}/${name}`;
    if (!writers.has(key)) writers.set(key, jsonlWriter(path.join(out, dir, `${name}.jsonl`)));
    return writers.get(key);
  };
  for (const row of benchmarkRows(r, models, metrics, sourceOf)) {
    writer('measurements/benchmarks', row.provenance.source).write(row);
    counts.benchmarks++;
  }
  const { offersOf, history, announced, observations } = makeOffers(r, models, providers);
  for (const offers of offersOf.values())
    for (const { card, rows, ...offer } of offers) {
      writer('offers', offer.provider).write(offer);
      counts.offers++;
    }
  for (const row of [...history, ...announced]) {
    writer('price-history', row.provenance.source).write(row);
    counts.history++;
  }
  for (const row of observations) {
    writer('measurements/prices', row.provenance.source).write(row);
    counts.prices++;
  }
  finishModels(r, models, offersOf);
  for (const { slug, quality, price, outputRatio, ...m } of models) put(`models/${slug}.yaml`, yaml(m));
  for (const { source, row } of speedRows(r, models, opts.speed)) {
    writer('measurements/speed', source).write(row);
    counts.speed++;
  }
  for (const w of writers.values()) w.close();

  for (const [rel, overrides] of Object.entries(overrideFiles(r, models))) {
    if (overrides.length) {
      put(rel, yaml({ overrides }));
      counts.overrides += overrides.length;
    }
  }
  put(
    'README.md',
    `# Synthetic catalog\n\nGenerated by \`node scripts/synthetic-catalog.mjs --models ${opts.models} --metrics ${opts.metrics} --speed ${opts.speed} --seed ${opts.seed}\`. Not real data.\n`,
  );
  return counts;
}

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`synthetic-catalog: ${e.message}`);
    process.exit(2);
  }
  if (opts.help) {
    console.log(USAGE);
    return;
  }
  const t0 = performance.now();
  const c = generate(opts);
  console.log(
    `wrote ${opts.out}: ${c.models} models, ${c.metrics} metrics, ${c.benchmarks} benchmark results, ${c.prices} price observations, ${c.offers} offers of ${c.providers} providers, ${c.history} dated prices, ${c.speed} speed runs, ${c.overrides} overrides (seed ${opts.seed}) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('synthetic-catalog.mjs')) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
