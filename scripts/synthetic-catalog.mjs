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
//   - price observations for about 80 % of models, some with several observations at the same newest instant;
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

function makeModels(r, n) {
  const models = [];
  const used = new Set();
  for (let i = 0; i < n; i++) {
    const developer = r.pick(DEVELOPERS);
    const family = r.pick(FAMILIES);
    const version = `${r.int(1, 5)}.${r.int(0, 9)}`;
    const size = r.pick(SIZES);
    let name = `${developer.split(' ')[0]} ${family} ${version} ${size}`;
    let slug = slugify(name);
    for (let k = 2; used.has(slug); k++) slug = slugify(`${name} r${k}`);
    if (slug !== slugify(name)) name = r.chance(0.5) ? name : `${name} (${slug.split('-').pop()})`; // some display names repeat
    used.add(slug);
    const release = EPOCH + r.int(0, Math.floor((END - EPOCH) / DAY) - 30) * DAY;
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
    // served_by: Zipf-ish, most models have 1-3 providers, a few have many (this orders sort=popular, with ties).
    const nProviders = Math.min(PROVIDERS.length, Math.floor(1 / (0.07 + r.next() * 0.93)) - 1 + r.int(0, 1));
    const m = {
      slug,
      id: i + 1,
      name,
      developer,
      release_date: isoDate(release),
      updated_at: isoDate(updated),
      context_window_tokens: r.pick(CONTEXTS),
      max_output_tokens: r.pick(OUTPUTS),
      documentation_url: r.chance(0.9) ? `https://docs.${slugify(developer)}.example/models/${slug}` : null,
      hub_url: openWeights ? `https://huggingface.co/${slugify(developer)}/${slug}` : null,
      served_by: r.sample(PROVIDERS, nProviders).sort(),
      description: null,
      capabilities: caps,
      lane: r.chance(0.05) ? 'provisional' : 'verified',
      provenance: null,
    };
    m.description = describe(m, caps);
    m.provenance = { source: 'synth-catalog', evidence_sha256: sha256(JSON.stringify({ ...m, slug })) };
    m.quality = r.normal(); // latent, not written
    models.push(m);
  }
  return models;
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

function priceRows(r, models) {
  const rows = [];
  for (const m of models) {
    if (!r.chance(0.8)) continue;
    const base = Math.exp(r.normal() * 1.2 - m.quality * 0.5); // USD per million input tokens
    const n = r.int(1, 4);
    let at = Date.parse(`${m.release_date}T00:00:00Z`);
    for (let k = 0; k < n; k++) {
      at = Math.min(END, at + r.int(0, 120) * DAY);
      const copies = k === n - 1 && r.chance(0.1) ? 2 : 1; // two observations at the same newest instant: averaged
      for (let c = 0; c < copies; c++) {
        const input = r.chance(0.03) ? 0 : round(base * (1 + 0.1 * r.normal()) * (1 - 0.1 * k), 3);
        const [lane] = laneOf(r);
        const row = {
          model: m.slug,
          lane,
          input_per_million: Math.max(0, input),
          output_per_million: Math.max(0, round(input * r.pick([2, 3, 4, 5, 8]), 3)),
          observed_at: `${new Date(at).toISOString().slice(0, 19)}Z`,
        };
        rows.push({
          ...row,
          provenance: { source: 'synth-prices', evidence_sha256: sha256(JSON.stringify(row) + rows.length) },
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
  for (const d of ['models', 'overrides', 'measurements/speed', 'measurements/benchmarks', 'measurements/prices'])
    fs.mkdirSync(path.join(out, d), { recursive: true });
  const put = (rel, text) => fs.writeFileSync(path.join(out, rel), text);

  const { site, sources, metrics, sourceOf } = catalog(r, opts.metrics);
  put('site.yaml', yaml(site));
  put('sources.yaml', yaml({ sources }));
  put('metrics.yaml', yaml({ metrics }));

  const models = makeModels(r, opts.models);
  for (const { slug, quality, ...m } of models) put(`models/${slug}.yaml`, yaml(m));

  const counts = { models: models.length, metrics: metrics.length, benchmarks: 0, prices: 0, speed: 0, overrides: 0 };
  const writers = new Map();
  const writer = (kind, source) => {
    const key = `${kind}/${source}`;
    if (!writers.has(key)) writers.set(key, jsonlWriter(path.join(out, 'measurements', kind, `${source}.jsonl`)));
    return writers.get(key);
  };
  for (const row of benchmarkRows(r, models, metrics, sourceOf)) {
    writer('benchmarks', row.provenance.source).write(row);
    counts.benchmarks++;
  }
  for (const row of priceRows(r, models)) {
    writer('prices', row.provenance.source).write(row);
    counts.prices++;
  }
  for (const { source, row } of speedRows(r, models, opts.speed)) {
    writer('speed', source).write(row);
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
    `wrote ${opts.out}: ${c.models} models, ${c.metrics} metrics, ${c.benchmarks} benchmark results, ${c.prices} price observations, ${c.speed} speed runs, ${c.overrides} overrides (seed ${opts.seed}) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('synthetic-catalog.mjs')) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
