#!/usr/bin/env node
// Converts the reference snapshot (catalog.json, offers.json, lifecycle.json, benchmarks.json, speed-tests.json,
// price-history.json; see its README.md) into the project's default source data under data/.
//
//   node scripts/convert-reference.mjs [--reference ../shared/reference] [--data data]
//
// Deterministic: no clock, no randomness, everything sorted, so two runs give byte-identical files.
// It writes only what it owns: data/models/*.yaml, the data/measurements/{speed,benchmarks,prices}/<source-id>.jsonl
// files of the sources below, data/offers/<provider>.jsonl,
// data/price-history/{models-dev,genai-prices}.jsonl, data/providers.yaml, data/sources.yaml,
// data/metrics.yaml (and data/site.yaml where there is none). In those, records a maintainer marked `maintained` are
// kept and win over the import, conflicts go to stderr (exit 0); a hand edit outside any marked record stops it before
// it writes anything (exit 3). Model ids are kept stable: an existing data/models/<slug>.yaml keeps its id; new slugs
// get ids after the current maximum, in slug order. See data/README.md.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { HISTORY_DIR, cardOfModelsDev, priceHistory } from './convert-price-history.mjs';

const SCRIPT_DIR = path.dirname(fileURLToPath(import.meta.url));

// ---------------------------------------------------------------------------------------------
// Command line

function parseArgs(argv) {
  const opts = {
    reference: path.resolve(SCRIPT_DIR, '../../shared/reference'),
    data: path.resolve(SCRIPT_DIR, '../data'),
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] = arg.includes('=')
      ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
      : [arg, undefined];
    if (flag === '--reference' || flag === '--data') {
      const value = inline ?? argv[++i];
      if (!value) throw new Error(`${flag} needs a directory`);
      opts[flag.slice(2)] = path.resolve(value);
    } else if (flag === '--help' || flag === '-h') {
      opts.help = true;
    } else {
      throw new Error(
        `unknown argument ${JSON.stringify(arg)}; usage: node scripts/convert-reference.mjs [--reference DIR] [--data DIR]`,
      );
    }
  }
  return opts;
}

// ---------------------------------------------------------------------------------------------
// Small helpers

/** JSON with object keys sorted at every level: the form evidence hashes are taken over. */
function canonicalJson(value) {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}
const sha256 = (text) => createHash('sha256').update(text, 'utf8').digest('hex');
const evidence = (value) => sha256(canonicalJson(value));

const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
/** Compare tuples of strings/numbers element by element. */
const cmpTuple = (a, b) => {
  for (let i = 0; i < a.length; i++) {
    const c = cmp(a[i], b[i]);
    if (c) return c;
  }
  return 0;
};

const isFiniteNumber = (v) => typeof v === 'number' && Number.isFinite(v);
const isHttpUrl = (v) => typeof v === 'string' && /^https?:\/\/[^\s]+$/.test(v);

/** A calendar date as YYYY-MM-DD, with its precision; a bare YYYY-MM becomes the 1st of the month. */
function normalizeDate(value) {
  if (typeof value !== 'string') return null;
  let m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (m) return { date: value, precision: 'day', y: +m[1], m: +m[2], d: +m[3] };
  m = /^(\d{4})-(\d{2})$/.exec(value);
  if (m) return { date: `${value}-01`, precision: 'month', y: +m[1], m: +m[2], d: 1 };
  return null;
}

/** An ISO instant in UTC ("…Z"), from a commit date with an offset. */
function toUtcInstant(value) {
  const t = Date.parse(value);
  if (Number.isNaN(t)) throw new Error(`not a timestamp: ${JSON.stringify(value)}`);
  return new Date(t).toISOString().replace('.000Z', 'Z');
}

/** A measurement timestamp: zone-less reference timestamps are UTC, so "Z" is appended. */
function toZonedInstant(value) {
  if (/(Z|[+-]\d{2}:?\d{2})$/.test(value)) return value;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(value))
    throw new Error(`not a timestamp: ${JSON.stringify(value)}`);
  return `${value}Z`;
}

/** Lowercase slug: '+' reads as "plus", apostrophes vanish, other runs of non [a-z0-9] become '-'. */
function slugify(text) {
  return text
    .replace(/\+/g, '-plus')
    .replace(/τ/g, 'tau')
    .replace(/['’]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** Folded for comparison: lower case, letters and digits only ("Z.ai" -> "zai"). */
const folded = (text) => text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');

/**
 * A display name as lists should show it: runs of white space made one space, ends trimmed, and a vendor prefix
 * ("Anthropic: Claude 3.5 Haiku", copied from OpenRouter) removed when it names the developer. The prefix stays as a
 * word when the slug starts with it and the rest does not ("DeepSeek: R1 Distill Qwen 32B" -> "DeepSeek R1 Distill
 * Qwen 32B"), so the name keeps what the slug says.
 */
function cleanName(name, developer, slug) {
  let clean = name.replace(/\s+/g, ' ').trim();
  const m = /^([^:]{1,40}):\s*(.+)$/.exec(clean);
  if (m) {
    const [, prefix, rest] = m;
    const dev = folded(developer);
    const pre = folded(prefix);
    if (pre && dev && (dev.includes(pre) || pre.includes(dev))) {
      const keepWord = slug.startsWith(`${slugify(prefix)}-`) && !slugify(rest).startsWith(slugify(prefix));
      clean = keepWord ? `${prefix} ${rest}` : rest;
    }
  }
  return clean;
}

/** A snapshot date as model names write it: 2025-04-16, 20250514, 06-05, 0528. */
const SNAPSHOT_TOKEN = /\b(\d{4}-\d{2}-\d{2}|\d{8}|\d{2}-\d{2}|\d{4})\b/g;

/**
 * The catalog entry of a dated snapshot that a source row names but the reference matched to the undated model:
 * "DeepSeek R1 (0528)" is deepseek-r1-0528, not deepseek-r1. The catalog keeps snapshots and aliases apart.
 */
function snapshotSlug(row, slugs) {
  for (const token of row.model_name.match(SNAPSHOT_TOKEN) ?? []) {
    const date = slugify(token);
    const candidate = `${row.catalog_slug}-${date}`;
    if (!row.catalog_slug.endsWith(date) && slugs.has(candidate)) return candidate;
  }
  return row.catalog_slug;
}

const REASONING_EFFORTS = new Set(['minimal', 'low', 'medium', 'high', 'xhigh']);

/** What sets an Aider run apart: its name's note, reasoning effort, thinking budget and edit format. */
function aiderVariant(row) {
  const s = row.settings ?? {};
  const note = /\(([^)]*)\)\s*$/.exec(row.model_name)?.[1]?.trim();
  const effort = s.reasoning_effort ?? (note && REASONING_EFFORTS.has(note.toLowerCase()) ? note.toLowerCase() : null);
  const parts = [];
  // A date in the note names the snapshot (the model), not the run.
  if (note && !new RegExp(`^${SNAPSHOT_TOKEN.source}$`).test(note) && note.toLowerCase() !== effort) parts.push(note);
  if (effort) parts.push(`reasoning effort ${effort}`);
  if (s.thinking_tokens != null && !/think/i.test(note ?? '')) parts.push(`${s.thinking_tokens} thinking tokens`);
  if (s.edit_format) parts.push(`${s.edit_format} edit format`);
  if (s.editor_model) parts.push(`editor ${s.editor_model}${s.editor_edit_format ? ` (${s.editor_edit_format})` : ''}`);
  return parts.join(', ') || null;
}

/** Scalar settings only, keys sorted: a run's settings as the source gives them. */
function scalarSettings(settings, where) {
  const out = {};
  for (const k of Object.keys(settings ?? {}).sort()) {
    const v = settings[k];
    if (v !== null && typeof v === 'object') throw new Error(`${where}: setting ${k} is not a scalar`);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/**
 * The run a benchmark row belongs to, for the sources that report several runs of a model: Aider (one leaderboard
 * entry, its dirname), LiveBench (one model name of a release) and models.dev's citations (one cited measurement:
 * source URL, harness, variant, dataset, version). EvalPlus reports one run per model: null.
 */
function runOf(row) {
  const where = `${row.source} ${row.benchmark} ${row.model_name}`;
  if (row.source === 'aider') {
    if (!row.settings?.dirname) throw new Error(`${where}: an Aider row without settings.dirname`);
    return { id: row.settings.dirname, variant: aiderVariant(row), settings: scalarSettings(row.settings, where) };
  }
  if (row.source === 'livebench') {
    const settings = { livebench_release: row.settings?.livebench_release, model_name: row.model_name };
    return { id: row.model_name, variant: row.model_name, settings: scalarSettings(settings, where) };
  }
  if (row.source === 'models.dev') {
    const s = row.settings ?? {};
    const url = s.source ? new URL(s.source) : null;
    const host = url?.host.replace(/^www\./, '');
    const described = [
      s.harness,
      s.variant,
      s.dataset && `dataset ${s.dataset}`,
      s.version && `version ${s.version}`,
    ].filter(Boolean);
    const id = slugify(
      [url ? `${url.host}${url.pathname}` : 'uncited', s.harness, s.variant, s.dataset, s.version]
        .filter(Boolean)
        .join(' '),
    );
    return { id, variant: [...described, host].filter(Boolean).join(', ') || null, settings: scalarSettings(s, where) };
  }
  return null;
}

/** The "owner/name" part of a repo description such as "anomalyco/models.dev (same project as sst/models.dev)". */
function repoName(repo) {
  const m = /^([A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+)/.exec(repo);
  if (!m) throw new Error(`cannot read a GitHub owner/name from ${JSON.stringify(repo)}`);
  return m[1];
}

/** SPDX id from a licence note such as "NOASSERTION - the repository has no LICENSE file …". */
const spdx = (licence) => licence.trim().split(/\s+/)[0];

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read ${file}: ${err.message}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Sources

/** Reference source names -> our source ids, with display names and redistribution rights. */
const SOURCE_META = {
  'models.dev': { id: 'models-dev', name: 'models.dev' },
  aider: { id: 'aider', name: 'Aider LLM leaderboards' },
  evalplus: { id: 'evalplus', name: 'EvalPlus leaderboard' },
  livebench: { id: 'livebench', name: 'LiveBench leaderboard' },
  // thefastest.ai writes 999 tokens/s when a response arrived in one piece: each request asked for 20 output tokens,
  // too few to time. The build leaves such samples out of the tokens/s averages (sources.yaml declares the value).
  'thefastest.ai': { id: 'thefastest-ai', name: 'thefastest.ai', tokensPerSecondSentinel: 999 },
  'llmperf-leaderboard': { id: 'llmperf-leaderboard', name: 'LLMPerf leaderboard' },
  'genai-prices': { id: 'genai-prices', name: 'genai-prices' },
};
/** Only these licences are treated as allowing redistribution; anything else (NOASSERTION included) is not. */
const REDISTRIBUTABLE_LICENCES = new Set(['MIT', 'Apache-2.0', 'BSD-2-Clause', 'BSD-3-Clause', 'CC-BY-4.0', 'CC0-1.0']);
const GENERATED_SOURCE = {
  id: 'modelpub-generated',
  name: 'modelpub description generator',
  url: 'https://modelpub.dev',
  license: 'MIT',
  redistributable: true,
  attribution:
    'Model descriptions in English, Simplified Chinese and Russian written by modelpub (scripts/convert-reference.mjs) from the models.dev catalog facts',
};

function sourceId(referenceName) {
  const meta = SOURCE_META[referenceName];
  if (!meta) throw new Error(`unknown reference source ${JSON.stringify(referenceName)}: add it to SOURCE_META`);
  return meta.id;
}

/** One entry of data/sources.yaml from a reference `source` block. */
function sourceRecord(referenceName, block) {
  const meta = SOURCE_META[referenceName];
  const repo = repoName(block.repo);
  const license = spdx(block.licence);
  const redistributable = REDISTRIBUTABLE_LICENCES.has(license);
  const licenceText = license === 'NOASSERTION' ? 'no licence file (NOASSERTION)' : license;
  const holder = block.licence_holder ? `, ${block.licence_holder}` : '';
  return {
    id: meta.id,
    name: meta.name,
    url: `https://github.com/${repo}/tree/${block.commit}`,
    license,
    redistributable,
    attribution: `${meta.name} (${repo}) @ ${block.commit}, ${licenceText}${holder}`,
    ...(meta.tokensPerSecondSentinel === undefined ? {} : { tokens_per_second_sentinel: meta.tokensPerSecondSentinel }),
  };
}

// ---------------------------------------------------------------------------------------------
// Metrics

const LIVEBENCH_TASK_LABELS = {
  AMPS_Hard: 'AMPS Hard',
  LCB_generation: 'LiveCodeBench generation',
  code_completion: 'code completion',
  code_generation: 'code generation',
  coding_completion: 'coding completion',
  connections: 'connections',
  consecutive_events: 'consecutive events',
  cta: 'column type annotation',
  integrals_with_game: 'integrals with game',
  javascript: 'JavaScript',
  logic_with_navigation: 'logic with navigation',
  math_comp: 'math competitions',
  olympiad: 'olympiad',
  paraphrase: 'paraphrase',
  plot_unscrambling: 'plot unscrambling',
  python: 'Python',
  simplify: 'simplify',
  spatial: 'spatial reasoning',
  story_generation: 'story generation',
  summarize: 'summarize',
  tablejoin: 'table join',
  tablereformat: 'table reformat',
  theory_of_mind: 'theory of mind',
  typescript: 'TypeScript',
  typos: 'typos',
  web_of_lies_v2: 'web of lies v2',
  web_of_lies_v3: 'web of lies v3',
  zebra_puzzle: 'zebra puzzle',
};
/** LiveBench's own task categories (categories_<release>.json) -> our groups. */
const LIVEBENCH_CATEGORY_GROUPS = {
  Coding: 'coding',
  'Agentic Coding': 'coding',
  Mathematics: 'math',
  Reasoning: 'reasoning',
  Language: 'language',
  IF: 'language', // instruction following: paraphrase, simplify, story generation, summarize
  'Data Analysis': 'data',
};
const AIDER_METRICS = {
  pass_rate_1: { label: 'pass rate (1 try)', group: 'coding' },
  pass_rate_2: { label: 'pass rate (2 tries)', group: 'coding' },
  percent_cases_well_formed: { label: 'well-formed edits', group: 'coding' },
  total_cost: { label: 'total cost (USD)', group: 'efficiency', lowerIsBetter: true },
  seconds_per_case: { label: 'seconds per case', group: 'efficiency', lowerIsBetter: true },
};
/** models.dev [[benchmarks]] names -> groups; first match wins. */
const MODELS_DEV_GROUPS = [
  [/^Artificial Analysis Coding Agent Index$/, 'agentic'],
  [/^Artificial Analysis .*Index$/, 'coding'],
  [/^(SWE|Terminal)[ -]/, 'agentic'],
  [/^(Claw-eval|NL2Repo|CTI-REALM|τ\d* )/, 'agentic'],
  [/^(Aider|LiveCodeBench|SciCode)/, 'coding'],
  [/^(GPQA|Humanity.s Last Exam|HLE|MMLU)/, 'knowledge'],
  [/^(CharXiv|Long Context Reasoning|MRCR)/, 'reasoning'],
];
const HEADLINE = {
  aider: (b, m) => b === 'Aider Polyglot' && m === 'pass_rate_2',
  evalplus: (b) => b === 'HumanEval+' || b === 'MBPP+',
  livebench: () => false,
  'models.dev': (b) =>
    ['SWE-Bench Verified', 'Aider Polyglot', 'Terminal-Bench', 'Artificial Analysis Coding Index'].includes(b),
};
const UNITS = {
  percent: 'percent',
  'percent correct': 'percent',
  'percent resolved': 'percent',
  resolved: 'percent',
  'resolve rate': 'percent',
  'pass@1': 'percent',
  'average pass@1': 'percent',
  'success rate': 'percent',
  score: 'score',
  'score (0-100)': 'score',
  index: 'index',
  usd: 'usd',
  seconds: 'seconds',
};

function unitOf(row) {
  const unit = UNITS[String(row.unit).toLowerCase()];
  if (!unit)
    throw new Error(
      `unknown unit ${JSON.stringify(row.unit)} for ${row.source} ${row.benchmark} ${row.metric}: add it to UNITS`,
    );
  return unit;
}

/**
 * The metric of each Aider benchmark whose best value picks the run to publish: the leaderboard's own headline,
 * pass rate after two tries, or after one where a benchmark reports no second (Refactoring).
 */
function aiderDeciders(rows) {
  const reported = new Map();
  for (const r of rows)
    if (r.source === 'aider') reported.set(r.benchmark, (reported.get(r.benchmark) ?? new Set()).add(r.metric));
  return new Map([...reported].map(([b, ms]) => [b, ms.has('pass_rate_2') ? 'pass_rate_2' : 'pass_rate_1']));
}

/** The metric definition a benchmark row belongs to, or a reason to drop the row. */
function metricFor(row, deciders) {
  const { source, benchmark, metric } = row;
  if (source === 'aider') {
    const m = AIDER_METRICS[metric];
    if (!m) throw new Error(`unknown aider metric ${JSON.stringify(metric)}`);
    // The legacy editing benchmark's name carries a parenthetical note; the key leaves it out, the label keeps it.
    const base = slugify(benchmark.replace(/\s*\(.*\)\s*$/, ''));
    // One leaderboard entry is one run: its pass rates, cost and time are published together.
    return {
      key: `${base}.${slugify(metric)}`,
      label: `${benchmark} ${m.label}`,
      benchmark,
      group: m.group,
      unit: unitOf(row),
      higher_is_better: !m.lowerIsBetter,
      aggregate: false,
      headline: HEADLINE.aider(benchmark, metric),
      run_group: base,
      ...(deciders.get(benchmark) === metric ? { decides_run: true } : {}),
    };
  }
  if (source === 'evalplus') {
    if (metric !== 'pass@1') throw new Error(`unexpected evalplus metric ${JSON.stringify(metric)}`);
    return {
      key: `evalplus.${slugify(benchmark)}`,
      label: `${benchmark} pass@1`,
      benchmark,
      group: 'coding',
      unit: unitOf(row),
      higher_is_better: true,
      aggregate: false,
      headline: HEADLINE.evalplus(benchmark, metric),
    };
  }
  if (source === 'livebench') {
    const category = row.settings?.category;
    const group = LIVEBENCH_CATEGORY_GROUPS[category];
    if (!group) throw new Error(`unknown LiveBench category ${JSON.stringify(category)} for task ${metric}`);
    const task = LIVEBENCH_TASK_LABELS[metric] ?? metric.replace(/_/g, ' ');
    return {
      key: `${slugify(benchmark)}.${slugify(metric)}`,
      label: `${benchmark}: ${task[0].toUpperCase()}${task.slice(1)}`,
      benchmark,
      group,
      unit: unitOf(row),
      higher_is_better: true,
      aggregate: false,
      headline: false,
      // A release's tasks of one model entry come from one run. No task decides between runs (this data has no overall
      // score): the build takes the newest run, then the first by id.
      run_group: slugify(benchmark),
    };
  }
  if (source === 'models.dev') {
    const group = MODELS_DEV_GROUPS.find(([re]) => re.test(benchmark))?.[1];
    if (!group)
      throw new Error(`no group for models.dev benchmark ${JSON.stringify(benchmark)}: add it to MODELS_DEV_GROUPS`);
    const aggregate = /^Artificial Analysis .*Index$/.test(benchmark);
    const headline = HEADLINE['models.dev'](benchmark, metric);
    if (metric == null) {
      // A few rows cite a bare number without a metric or unit; they are kept as percentages when they lie in 0..100.
      if (!(row.value >= 0 && row.value <= 100)) return { drop: 'no metric or unit, value outside 0..100' };
      return {
        key: `models-dev.${slugify(benchmark)}`,
        label: `${benchmark} (cited by models.dev)`,
        benchmark,
        group,
        unit: 'percent',
        higher_is_better: true,
        aggregate,
        headline,
      };
    }
    return {
      key: `models-dev.${slugify(benchmark)}.${slugify(metric)}`,
      label: `${benchmark}, ${metric} (cited by models.dev)`,
      benchmark,
      group,
      unit: unitOf(row),
      higher_is_better: true,
      aggregate,
      headline,
    };
  }
  throw new Error(`unknown benchmark source ${JSON.stringify(source)}`);
}

// ---------------------------------------------------------------------------------------------
// Descriptions (en, zh, ru), written from the catalog facts

const MODALITY_ORDER = ['text', 'image', 'audio', 'video', 'pdf'];
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
const MONTHS_RU_GEN = [
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
const MONTHS_RU_PREP = [
  'январе',
  'феврале',
  'марте',
  'апреле',
  'мае',
  'июне',
  'июле',
  'августе',
  'сентябре',
  'октябре',
  'ноябре',
  'декабре',
];

const KINDS = {
  language: { en: 'language model', zh: '语言模型', ru: 'языковая модель', tokens: 'both' },
  multimodal: { en: 'multimodal model', zh: '多模态模型', ru: 'мультимодальная модель', tokens: 'both' },
  embedding: {
    en: 'embedding model',
    zh: '文本嵌入模型',
    ru: 'модель для построения векторных представлений (эмбеддингов)',
    tokens: 'context',
  },
  rerank: {
    en: 'reranking model',
    zh: '重排序模型',
    ru: 'модель для переранжирования результатов поиска',
    tokens: 'context',
  },
  image: { en: 'image generation model', zh: '图像生成模型', ru: 'модель для генерации изображений', tokens: 'none' },
  video: { en: 'video generation model', zh: '视频生成模型', ru: 'модель для генерации видео', tokens: 'none' },
  tts: { en: 'text-to-speech model', zh: '语音合成模型', ru: 'модель синтеза речи', tokens: 'none' },
  stt: { en: 'speech recognition model', zh: '语音识别模型', ru: 'модель распознавания речи', tokens: 'none' },
  videoAnalysis: { en: 'video analysis model', zh: '视频分析模型', ru: 'модель для анализа видео', tokens: 'none' },
};
const MODALITY_WORDS = {
  en: { text: 'text', image: 'image', audio: 'audio', video: 'video', pdf: 'PDF' },
  zh: { text: '文本', image: '图像', audio: '音频', video: '视频', pdf: 'PDF' },
  // accusative plural where it differs: "принимает текст, изображения, аудио, видео и PDF-документы"
  ru: { text: 'текст', image: 'изображения', audio: 'аудио', video: 'видео', pdf: 'PDF-документы' },
};

function kindOf(model, input, output) {
  const text = `${model.slug} ${model.name}`.toLowerCase();
  if (/rerank/.test(text)) return 'rerank';
  if (/embed/.test(text) || (model.developer_id === 'voyage' && output.length === 1 && output[0] === 'text'))
    return 'embedding';
  if (output.includes('video')) return 'video';
  if (!output.includes('text')) {
    if (output.includes('image')) return 'image';
    if (output.includes('audio')) return 'tts';
  }
  if (output.length === 1 && output[0] === 'text') {
    if (input.length === 1 && input[0] === 'audio') return 'stt';
    if (input.length === 1 && input[0] === 'video') return 'videoAnalysis';
    if (input.length === 1 && input[0] === 'text') return 'language';
  }
  return 'multimodal';
}

const joinList = (items, conj, sep = ', ') =>
  items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(sep)}${conj}${items.at(-1)}`;
const groupThousands = (n, sep) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, sep);
const NBSP = '\u00a0';
/** Russian style: a (non-breaking) space groups thousands from five digits up; four-digit numbers stay whole. */
const ruNumber = (n) => (n >= 10000 ? groupThousands(n, NBSP) : String(n));
function ruPlural(n, one, few, many) {
  const n10 = n % 10;
  const n100 = n % 100;
  if (n10 === 1 && n100 !== 11) return one;
  if (n10 >= 2 && n10 <= 4 && (n100 < 12 || n100 > 14)) return few;
  return many;
}
const ruTokens = (n) => `${ruNumber(n)} ${ruPlural(n, 'токен', 'токена', 'токенов')}`;
const enTokens = (n) => `${groupThousands(n, ',')} ${n === 1 ? 'token' : 'tokens'}`;
const zhTokens = (n) => `${groupThousands(n, ',')} 个 token`;

const article = (phrase) => (/^[aeio]/i.test(phrase) ? 'an' : 'a');

function dateEn(d) {
  return d.precision === 'day' ? `on ${d.d} ${MONTHS_EN[d.m - 1]} ${d.y}` : `in ${MONTHS_EN[d.m - 1]} ${d.y}`;
}
const monthYearEn = (d) =>
  d.precision === 'day' ? `${d.d} ${MONTHS_EN[d.m - 1]} ${d.y}` : `${MONTHS_EN[d.m - 1]} ${d.y}`;
const dateZh = (d) => (d.precision === 'day' ? `${d.y}年${d.m}月${d.d}日` : `${d.y}年${d.m}月`);
const dateRuReleased = (d) =>
  d.precision === 'day' ? `${d.d} ${MONTHS_RU_GEN[d.m - 1]} ${d.y} года` : `в ${MONTHS_RU_PREP[d.m - 1]} ${d.y} года`;
const dateRuUntil = (d) =>
  d.precision === 'day'
    ? `до ${d.d} ${MONTHS_RU_GEN[d.m - 1]} ${d.y} года`
    : `до ${MONTHS_RU_GEN[d.m - 1]} ${d.y} года`;

/** Chinese typesetting: a space between Han characters and adjacent Latin letters or digits. */
function zhSpacing(s) {
  return s
    .replace(/([\u4e00-\u9fff])([A-Za-z0-9([])/g, '$1 $2')
    .replace(/([A-Za-z0-9)\]+.])([\u4e00-\u9fff])/g, '$1 $2');
}

function describe(model, facts) {
  const { input, output, release, cutoff, context, maxOutput } = facts;
  const kind = kindOf(model, input, output);
  const k = KINDS[kind];
  const open = model.open_weights === true;
  const showContext = k.tokens !== 'none' && context > 0;
  const showOutput = k.tokens === 'both' && maxOutput > 0;
  const describeOutput = kind !== 'embedding' && kind !== 'rerank';
  const features = [];
  if (model.tool_call) features.push('tool');
  if (model.structured_output === true) features.push('structured');
  if (model.reasoning) features.push('reasoning');
  const licence = open && model.weights_license ? model.weights_license : null;

  // English
  const kindEn = open ? `open-weight ${k.en}` : k.en;
  const en = [`${model.name} is ${article(kindEn)} ${kindEn} from ${model.developer}, released ${dateEn(release)}.`];
  {
    const ins = joinList(
      input.map((m) => MODALITY_WORDS.en[m]),
      ' and ',
    );
    const outs = joinList(
      output.map((m) => MODALITY_WORDS.en[m]),
      ' and ',
    );
    const tok = [];
    if (showContext) tok.push(`a context window of ${enTokens(context)}`);
    if (showOutput) tok.push(`up to ${groupThousands(maxOutput, ',')} output ${maxOutput === 1 ? 'token' : 'tokens'}`);
    if (describeOutput) {
      en.push(`It accepts ${ins} input and produces ${outs} output${tok.length ? `, with ${tok.join(' and ')}` : ''}.`);
    } else {
      en.push(`It accepts ${ins} input${showContext ? ` and has a context window of ${enTokens(context)}` : ''}.`);
    }
  }
  if (features.length) {
    const words = { tool: 'tool calling', structured: 'structured output', reasoning: 'reasoning' };
    en.push(
      `It supports ${joinList(
        features.map((f) => words[f]),
        ' and ',
      )}.`,
    );
  }
  if (licence) en.push(`Its weights are released under the ${licence} license.`);
  if (cutoff) en.push(`Its knowledge cutoff is ${monthYearEn(cutoff)}.`);
  if (model.status === 'deprecated') en.push('It is marked as deprecated.');
  if (model.status === 'beta') en.push('It is currently in beta.');

  // Simplified Chinese
  const zh = [`${model.name}是${model.developer}于${dateZh(release)}发布的${open ? '开放权重' : ''}${k.zh}。`];
  {
    const ins = joinList(
      input.map((m) => MODALITY_WORDS.zh[m]),
      '和',
      '、',
    );
    const outs = joinList(
      output.map((m) => MODALITY_WORDS.zh[m]),
      '和',
      '、',
    );
    const tok = [];
    if (showContext) tok.push(`上下文窗口为${zhTokens(context)}`);
    if (showOutput) tok.push(`单次最多输出${zhTokens(maxOutput)}`);
    const head = describeOutput ? `它接受${ins}输入并生成${outs}` : `它接受${ins}输入`;
    zh.push(`${[head, ...tok].join('，')}。`);
  }
  if (features.length) {
    const words = { tool: '工具调用', structured: '结构化输出', reasoning: '推理' };
    zh.push(
      `该模型支持${joinList(
        features.map((f) => words[f]),
        '和',
        '、',
      )}。`,
    );
  }
  if (licence) zh.push(`其权重以${licence}许可证发布。`);
  if (cutoff) zh.push(`其知识截止日期为${dateZh(cutoff)}。`);
  if (model.status === 'deprecated') zh.push('该模型已被标记为弃用。');
  if (model.status === 'beta') zh.push('该模型目前处于测试（beta）阶段。');

  // Russian
  const ru = [
    `${model.name} — ${k.ru}${open ? ' с открытыми весами' : ''} от ${model.developer}, выпущенная ${dateRuReleased(release)}.`,
  ];
  {
    const ins = joinList(
      input.map((m) => MODALITY_WORDS.ru[m]),
      ' и ',
    );
    const outs = joinList(
      output.map((m) => MODALITY_WORDS.ru[m]),
      ' и ',
    );
    ru.push(describeOutput ? `На вход принимает ${ins}, на выходе выдаёт ${outs}.` : `На вход принимает ${ins}.`);
    const tok = [];
    if (showContext) tok.push(`контекстное окно — ${ruTokens(context)}`);
    if (showOutput) tok.push(`максимальная длина ответа — ${ruTokens(maxOutput)}`);
    if (tok.length) {
      const s = tok.join(', ');
      ru.push(`${s[0].toUpperCase()}${s.slice(1)}.`);
    }
  }
  if (features.length) {
    const words = { tool: 'вызов инструментов', structured: 'структурированный вывод', reasoning: 'режим рассуждений' };
    ru.push(
      `Поддерживает ${joinList(
        features.map((f) => words[f]),
        ' и ',
      )}.`,
    );
  }
  if (licence) ru.push(`Веса распространяются по лицензии ${licence}.`);
  if (cutoff) ru.push(`Обучающие данные охватывают период ${dateRuUntil(cutoff)}.`);
  if (model.status === 'deprecated') ru.push('Модель помечена как устаревшая.');
  if (model.status === 'beta') ru.push('Модель находится в стадии бета-тестирования.');

  return { en: en.join(' '), zh: zhSpacing(zh.join('')), ru: ru.join(' ') };
}

// ---------------------------------------------------------------------------------------------
// Output

function yamlText(value) {
  const doc = new YAML.Document(value);
  // Quote date-like strings so YAML 1.1 readers do not turn them into timestamps.
  YAML.visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === 'string' && /^\d{4}-\d{2}(-\d{2})?$/.test(node.value)) node.type = 'QUOTE_SINGLE';
    },
  });
  return doc.toString({ lineWidth: 0 });
}
const jsonlText = (rows) => rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : '');

class Writer {
  constructor(dataDir) {
    this.dataDir = dataDir;
    this.counts = [];
  }
  write(rel, text, count) {
    const file = path.join(this.dataDir, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
    this.counts.push([rel, count]);
  }
}

// ---------------------------------------------------------------------------------------------
// Conversion

// ---------------------------------------------------------------------------------------------
// Offers, providers and lifecycle (offers.json, lifecycle.json)

/** A positive token limit, or null: models.dev writes 0 (or nothing) where it does not know one. */
const limit = (v) => (Number.isInteger(v) && v > 0 ? v : null);

/** One offers.json row as an OfferRecord (src/schema/source.ts); the evidence is the row itself. */
function offerRecord(row) {
  const where = `offers.json ${row.provider}/${row.provider_model_id}`;
  const updated = normalizeDate(row.last_updated) ?? normalizeDate(row.release_date);
  if (!updated) throw new Error(`${where}: neither last_updated nor release_date is a date`);
  if (row.status !== null && !['alpha', 'beta', 'deprecated'].includes(row.status))
    throw new Error(`${where}: unknown status ${JSON.stringify(row.status)}`);
  return {
    model: row.catalog_slug,
    provider: row.provider,
    provider_model_id: row.provider_model_id,
    first_party: row.first_party === true,
    ...cardOfModelsDev(row.cost, row.modes, where),
    context_window_tokens: limit(row.limit?.context),
    max_input_tokens: limit(row.limit?.input),
    max_output_tokens: limit(row.limit?.output),
    status: row.status,
    updated_at: updated.date,
    provenance: { source: 'models-dev', evidence_sha256: evidence(row) },
  };
}

/** A provider of providers.json as a ProviderRecord: id, name, api, doc (npm and env are client details, left out). */
function providerRecord(p) {
  return {
    id: p.id,
    name: p.name,
    api: isHttpUrl(p.api) ? p.api : null,
    doc: isHttpUrl(p.doc) ? p.doc : null,
    provenance: { source: 'models-dev', evidence_sha256: evidence(p) },
  };
}

/**
 * The offer a catalog price is read from (its pricing.source_path), as {provider, provider_model_id}: the model's
 * headline offer. null, with a note, when the catalog names no file or one with no offer.
 */
function headlineOffer(m, offerAt, notes) {
  const offer = offerAt.get(m.pricing.source_path);
  if (!offer || offer.model !== m.slug) {
    notes.push(`price of ${m.slug}: no offer at its pricing.source_path ${JSON.stringify(m.pricing.source_path)}`);
    return null;
  }
  return { provider: offer.provider, provider_model_id: offer.provider_model_id };
}

const LIFECYCLE_STATUS = { null: 'active', beta: 'beta', deprecated: 'deprecated', retired: 'retired' };

/** A model's lifecycle fields from its lifecycle.json row; dates and successor only when the source states them. */
function lifecycleFields(row, slugs) {
  const status = LIFECYCLE_STATUS[String(row.status)];
  if (!status) throw new Error(`lifecycle.json ${row.catalog_slug}: unknown status ${JSON.stringify(row.status)}`);
  for (const s of row.snapshots ?? [])
    if (!slugs.has(s)) throw new Error(`lifecycle.json ${row.catalog_slug}: snapshot ${s} is no catalog model`);
  const date = (k) => {
    if (row[k] == null) return {};
    const d = normalizeDate(row[k]);
    if (d?.precision !== 'day') throw new Error(`lifecycle.json ${row.catalog_slug}: ${k} is not a date`);
    return { [k]: d.date };
  };
  return {
    status,
    ...date('deprecation_date'),
    ...date('retirement_date'),
    ...(row.snapshots?.length ? { snapshots: [...row.snapshots].sort() } : {}),
  };
}

function readExistingIds(modelsDir) {
  const ids = new Map();
  if (!fs.existsSync(modelsDir)) return ids;
  for (const name of fs.readdirSync(modelsDir).sort()) {
    if (!name.endsWith('.yaml')) continue;
    const file = path.join(modelsDir, name);
    let id;
    try {
      id = YAML.parse(fs.readFileSync(file, 'utf8'))?.id;
    } catch (err) {
      throw new Error(`${file}: cannot parse the existing model file to keep its id: ${err.message}`);
    }
    if (!Number.isInteger(id) || id < 1) throw new Error(`${file}: existing model file has no positive integer id`);
    const slug = name.slice(0, -'.yaml'.length);
    for (const [other, otherId] of ids) {
      if (otherId === id) throw new Error(`${file}: id ${id} is also used by data/models/${other}.yaml`);
    }
    ids.set(slug, id);
  }
  return ids;
}

// ---------------------------------------------------------------------------------------------
// Maintained records (data/README.md, "Maintained records")

/**
 * What the import wrote, file by file (a short hash of each record): how it tells a hand edit outside marked records
 * from its own output. A dot-file, which validate and build never read.
 */
const MANIFEST = '.import-manifest.json';

/** Hand edits outside any marked record: the import stops before writing anything (exit code 3). */
class Refused extends Error {}

/** 8 hex digits of sha256 over each record no maintainer marked, sorted: what the import wrote in a file. */
const fingerprints = (rows) =>
  [...new Set(rows.filter((r) => r?.maintained === undefined).map((r) => sha256(canonicalJson(r)).slice(0, 8)))]
    .sort()
    .join('');
/** Records no maintainer marked that the import did not write as they are: edited or added by hand. */
function handEdits(rows, written) {
  const known = new Set(written.match(/.{8}/g) ?? []);
  return rows.filter((r) => r?.maintained === undefined && !known.has(sha256(canonicalJson(r)).slice(0, 8))).length;
}

/** A value as a conflict message quotes it: JSON, cut to 80 characters. */
const shown = (v) => {
  const text = JSON.stringify(v) ?? 'nothing';
  return text.length <= 80 ? text : `${text.slice(0, 77)}...`;
};

/**
 * The maintainer's record laid over the import's: the fields it marks (all of them for `maintained: true`) are the
 * maintainer's, the rest the import's. Where both set a field to different values, the maintainer's is kept and the
 * conflict is reported.
 */
function overlay(imported, mine, where, conflicts) {
  const fields =
    mine.maintained === true ? Object.keys(mine).filter((k) => k !== 'maintained' && k !== 'private') : mine.maintained;
  for (const f of fields)
    if (f in imported && canonicalJson(imported[f]) !== canonicalJson(mine[f] ?? null))
      conflicts.push(`${where}: ${f}: kept the maintainer's ${shown(mine[f])}; the import has ${shown(imported[f])}`);
  if (mine.maintained === true) return mine;
  const out = {};
  for (const [k, v] of Object.entries(imported))
    if (!fields.includes(k) || k in mine) out[k] = fields.includes(k) ? mine[k] : v;
  for (const f of fields) if (!(f in out) && f in mine) out[f] = mine[f];
  const { provenance, ...rest } = out;
  return { ...rest, maintained: mine.maintained, provenance, ...(mine.private ? { private: mine.private } : {}) };
}

/** The records of a data file: a model file's one record, a YAML file's list, a JSON Lines file's rows. */
function readRecords(dataDir, rel, kind, list) {
  const text = fs.readFileSync(path.join(dataDir, rel), 'utf8');
  try {
    if (kind === 'model') return [YAML.parse(text) ?? {}];
    if (kind === 'list') return YAML.parse(text)?.[list] ?? [];
  } catch (err) {
    throw new Error(`data/${rel}: cannot parse it to keep what maintainers wrote: ${err.message}`);
  }
  return text.split('\n').flatMap((line, i) => {
    if (!line.trim()) return [];
    try {
      return [JSON.parse(line)];
    } catch (err) {
      throw new Error(`data/${rel}:${i + 1}: cannot parse it to keep what maintainers wrote: ${err.message}`);
    }
  });
}

/** Every file under the data folder that `owned` says the import writes (the ones there now). */
function ownedFiles(dataDir, owned) {
  const out = [];
  const walk = (rel) => {
    const dir = path.join(dataDir, rel);
    if (!fs.existsSync(dir)) return;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory() && child.split('/').length < 3) walk(child);
      else if (e.isFile() && owned(child)) out.push(child);
    }
  };
  walk('');
  return out.sort();
}

/**
 * Lays what maintainers marked in the files the import owns over the import's `plan`, reports conflicts, and refuses
 * (Refused) when a file holds a record no maintainer marked that the import did not write (the manifest's hashes): a
 * hand edit the next write would revert. Returns what to remove (the import's own files it no longer writes) and what was kept.
 */
function applyMaintained(dataDir, plan, owned) {
  const manifestFile = path.join(dataDir, MANIFEST);
  const manifest = fs.existsSync(manifestFile) ? readJson(manifestFile) : null;
  const edited = [];
  const conflicts = [];
  const remove = [];
  let kept = 0;
  for (const rel of ownedFiles(dataDir, owned)) {
    const kind = rel.startsWith('models/') ? 'model' : rel.endsWith('.yaml') ? 'list' : 'jsonl';
    const list = kind === 'list' ? rel.slice(0, -'.yaml'.length) : undefined;
    const rows = readRecords(dataDir, rel, kind, list);
    const hand = manifest ? handEdits(rows, manifest[rel] ?? '') : 0;
    if (hand) edited.push(`${rel} (${hand} record${hand === 1 ? '' : 's'})`);
    const mine = rows.filter((r) => r?.maintained !== undefined);
    const f = plan.get(rel);
    if (!mine.length) {
      if (!f) remove.push(rel);
      continue;
    }
    kept += mine.length;
    if (!f) {
      // The import no longer writes this file (or never did): the maintainers' records stay, alone.
      plan.set(rel, { kind, list, rows: mine, untouched: mine.length === rows.length });
      continue;
    }
    if (kind === 'model') {
      const [m] = mine;
      f.rows = [overlay(f.rows[0], m, `data/${rel}`, conflicts)];
      f.untouched = m.maintained === true;
      continue;
    }
    const at = new Map(f.key ? f.rows.map((r, i) => [f.key(r), i]) : []);
    for (const m of mine) {
      const i = f.key ? at.get(f.key(m)) : undefined;
      if (i === undefined) f.rows.push(m);
      else f.rows[i] = overlay(f.rows[i], m, `data/${rel}: ${list ? `${list} ` : ''}${shown(f.key(m))}`, conflicts);
    }
  }
  if (edited.length)
    throw new Refused(
      `refused, nothing written: changed by hand since the import wrote them, outside any record marked \`maintained\`:\n${edited
        .map((rel) => `  data/${rel}\n`)
        .join(
          '',
        )}Mark what a maintainer wrote (maintained: true, or maintained: [field, ...]; data/README.md) or undo it, then run again.`,
    );
  return { kept, conflicts, remove, unchecked: !manifest };
}

function convert(opts) {
  const catalog = readJson(path.join(opts.reference, 'catalog.json'));
  const benchmarks = readJson(path.join(opts.reference, 'benchmarks.json'));
  const speed = readJson(path.join(opts.reference, 'speed-tests.json'));
  const offersRef = readJson(path.join(opts.reference, 'offers.json'));
  const lifecycle = readJson(path.join(opts.reference, 'lifecycle.json'));
  for (const [file, commit] of [
    ['offers.json', offersRef.source?.commit],
    ['lifecycle.json', lifecycle.sources?.models_dev?.commit],
  ])
    if (commit !== catalog.source.commit)
      throw new Error(`${file} cites a different models.dev commit than catalog.json`);
  const notes = [];

  // Sources -------------------------------------------------------------------------------------
  const history = readJson(path.join(opts.reference, 'price-history.json'));
  const genai = history.sources.genai_prices;
  const sourceBlocks = {
    'models.dev': catalog.source,
    ...benchmarks.sources,
    ...speed.sources,
    'genai-prices': {
      repo: genai.repository,
      commit: genai.commit,
      licence: genai.licence,
      licence_holder: genai.copyright,
    },
  };
  if (history.sources.models_dev_git.commit !== catalog.source.commit)
    throw new Error('price-history.json cites a different models.dev commit than catalog.json');
  if (benchmarks.sources['models.dev'] && benchmarks.sources['models.dev'].commit !== catalog.source.commit) {
    throw new Error('benchmarks.json cites a different models.dev commit than catalog.json');
  }
  const sourceInfo = {}; // reference name -> { id, commitDate }
  const sources = [];
  for (const name of Object.keys(sourceBlocks).sort((a, b) => cmp(sourceId(a), sourceId(b)))) {
    const block = sourceBlocks[name];
    const record = sourceRecord(
      name,
      name === 'models.dev' ? { ...block, licence_holder: catalog.source.licence_holder } : block,
    );
    sources.push(record);
    sourceInfo[name] = { id: record.id, commitDate: block.commit_date };
  }
  sources.push(GENERATED_SOURCE);
  sources.sort((a, b) => cmp(a.id, b.id));

  // Models --------------------------------------------------------------------------------------
  const modelsDir = path.join(opts.data, 'models');
  const existingIds = readExistingIds(modelsDir);
  const models = [...catalog.models].sort((a, b) => cmp(a.slug, b.slug));
  const slugs = new Set();
  for (const m of models) {
    if (!/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(m.slug))
      throw new Error(`catalog slug ${JSON.stringify(m.slug)} is not a valid slug`);
    if (slugs.has(m.slug)) throw new Error(`catalog slug ${m.slug} appears twice`);
    slugs.add(m.slug);
  }
  // Offers and providers --------------------------------------------------------------------------
  const offerRows = new Map(); // provider -> OfferRecord[]
  const offerAt = new Map(); // models.dev file path -> its offer, for the catalog's pricing.source_path
  for (const row of offersRef.offers) {
    if (!slugs.has(row.catalog_slug)) throw new Error(`offers.json names ${row.catalog_slug}, no catalog model`);
    const offer = offerRecord(row);
    if (!offerRows.has(offer.provider)) offerRows.set(offer.provider, []);
    offerRows.get(offer.provider).push(offer);
    offerAt.set(row.source_path, offer);
  }
  const providers = offersRef.providers.map(providerRecord).sort((a, b) => cmp(a.id, b.id));
  const providerIds = new Set(providers.map((p) => p.id));
  for (const id of offerRows.keys())
    if (!providerIds.has(id)) throw new Error(`offers.json: provider ${id} undeclared`);
  const lifecycleOf = new Map(lifecycle.models.map((r) => [r.catalog_slug, r]));

  let nextId = Math.max(0, ...existingIds.values()) + 1;
  const modelFiles = [];
  const priceRows = [];
  const coerced = { temperature: [], maxOutput: [], releaseMonth: [], updatedMonth: [], droppedModalities: [] };
  const renamed = []; // [slug, catalog name, published name]
  let resellerZero = 0;
  for (const m of models) {
    const release = normalizeDate(m.release_date);
    if (!release)
      throw new Error(`${m.slug}: release_date ${JSON.stringify(m.release_date)} is not YYYY-MM-DD or YYYY-MM`);
    if (release.precision === 'month') coerced.releaseMonth.push(m.slug);
    const updated = normalizeDate(m.last_updated) ?? release;
    if (m.last_updated && normalizeDate(m.last_updated)?.precision === 'month') coerced.updatedMonth.push(m.slug);
    const cutoff = m.knowledge_cutoff == null ? null : normalizeDate(m.knowledge_cutoff);
    if (m.knowledge_cutoff != null && !cutoff)
      throw new Error(`${m.slug}: knowledge_cutoff ${JSON.stringify(m.knowledge_cutoff)} is not a date`);
    const modalities = (list) => {
      const all = list ?? [];
      const kept = MODALITY_ORDER.filter((x) => all.includes(x));
      const dropped = all.filter((x) => !MODALITY_ORDER.includes(x));
      if (dropped.length) coerced.droppedModalities.push(`${m.slug}: ${dropped.join(', ')}`);
      return kept;
    };
    const input = modalities(m.modalities?.input);
    const output = modalities(m.modalities?.output);
    if (!input.length || !output.length) throw new Error(`${m.slug}: no usable input or output modality`);
    const context = Number.isInteger(m.context_window) && m.context_window > 0 ? m.context_window : 0;
    const maxOutput = Number.isInteger(m.max_output_tokens) && m.max_output_tokens > 0 ? m.max_output_tokens : 0;
    if (m.max_output_tokens == null) coerced.maxOutput.push(m.slug);
    if (typeof m.temperature !== 'boolean') coerced.temperature.push(m.slug);

    const linkUrl = Array.isArray(m.links) ? m.links.map((l) => l?.url).find(isHttpUrl) : undefined;
    const documentationUrl = linkUrl ?? (isHttpUrl(m.provider_docs_url) ? m.provider_docs_url : null);
    const id = existingIds.get(m.slug) ?? nextId++;
    const name = cleanName(m.name, m.developer, m.slug);
    const lifeRow = lifecycleOf.get(m.slug);
    if (!lifeRow) throw new Error(`${m.slug}: no lifecycle.json row`);
    const life = lifecycleFields(lifeRow, slugs);
    if (name !== m.name) renamed.push([m.slug, m.name, name]);
    const record = {
      id,
      name,
      developer: m.developer,
      release_date: release.date,
      updated_at: updated.date,
      context_window_tokens: context,
      max_output_tokens: maxOutput,
      documentation_url: documentationUrl,
      hub_url: isHttpUrl(m.hub_url) ? m.hub_url : null,
      served_by: [...new Set(m.served_by_providers ?? [])].sort(),
      // The developer's own listing's status (lifecycle.json), not a reseller's that catalog.json may have taken.
      description: describe(
        { ...m, name, status: life.status },
        { input, output, release, cutoff, context, maxOutput },
      ),
      capabilities: {
        input,
        output,
        reasoning: m.reasoning === true,
        tool_call: m.tool_call === true,
        structured_output: typeof m.structured_output === 'boolean' ? m.structured_output : null,
        attachment: m.attachment === true,
        // Unknown temperature support stays unknown (null), not false.
        temperature: typeof m.temperature === 'boolean' ? m.temperature : null,
        open_weights: m.open_weights === true,
        knowledge_cutoff: m.knowledge_cutoff ?? null,
      },
      lane: 'verified',
      ...life,
      provenance: { source: 'models-dev', evidence_sha256: evidence(m) },
    };
    modelFiles.push([m.slug, record]);

    const p = m.pricing;
    if (p) {
      if (!isFiniteNumber(p.input) || !isFiniteNumber(p.output) || p.input < 0 || p.output < 0) {
        notes.push(`price of ${m.slug} skipped: input/output is not a non-negative number`);
      } else {
        // A reseller's 0/0 listing is kept as the catalog has it; the build publishes it as no price (reference README).
        if (p.first_party === false && p.input === 0 && p.output === 0) resellerZero++;
        priceRows.push({
          model: m.slug,
          lane: 'verified',
          input_per_million: p.input,
          output_per_million: p.output,
          first_party: p.first_party !== false,
          observed_at: `${updated.date}T00:00:00Z`,
          offer: headlineOffer(m, offerAt, notes),
          provenance: { source: 'models-dev', evidence_sha256: evidence(p) },
        });
      }
    }
  }

  // Benchmarks ----------------------------------------------------------------------------------
  const metrics = new Map(); // key -> metric
  const metricOrigin = new Map(); // key -> "source|benchmark|metric"
  const benchRows = new Map(); // source id -> rows
  const dropped = { unmatched: 0, unknownSlug: 0, nonFinite: 0, unrecordedCost: 0, ambiguous: [] };
  const deciders = aiderDeciders(benchmarks.rows);
  const snapshots = new Map(); // "source|name|from|to" -> rows moved
  for (const reference of benchmarks.rows) {
    let row = reference;
    if (row.catalog_slug && slugs.has(row.catalog_slug)) {
      const slug = snapshotSlug(row, slugs);
      if (slug !== row.catalog_slug) {
        const k = `${row.source}|${row.model_name}|${row.catalog_slug}|${slug}`;
        snapshots.set(k, (snapshots.get(k) ?? 0) + 1);
        row = { ...row, catalog_slug: slug };
      }
    }
    if (!row.catalog_slug) {
      dropped.unmatched++;
      continue;
    }
    if (!slugs.has(row.catalog_slug)) {
      dropped.unknownSlug++;
      continue;
    }
    if (!isFiniteNumber(row.value)) {
      dropped.nonFinite++;
      continue;
    }
    // Aider's leaderboard files write 0 where a run's cost was not recorded, and its pages show "?" for it (most of
    // the legacy editing runs): kept, a 0 would rank first on a lower-is-better metric.
    if (row.source === 'aider' && row.metric === 'total_cost' && row.value === 0) {
      dropped.unrecordedCost++;
      continue;
    }
    const metric = metricFor(row, deciders);
    if (metric.drop) {
      dropped.ambiguous.push(`${row.source} ${row.benchmark} ${row.model_name}: ${metric.drop}`);
      continue;
    }
    const origin = `${row.source}|${row.benchmark}|${row.metric}`;
    const prev = metricOrigin.get(metric.key);
    if (prev && prev !== origin) throw new Error(`metric key ${metric.key} would stand for both ${prev} and ${origin}`);
    metricOrigin.set(metric.key, origin);
    metrics.set(metric.key, metric);
    const src = sourceInfo[row.source];
    if (!src) throw new Error(`benchmark row from undeclared source ${row.source}`);
    const evalDate = normalizeDate(row.date)?.date ?? toUtcInstant(src.commitDate).slice(0, 10);
    const isSecondary = row.source === 'models.dev';
    const run = runOf(row);
    const out = {
      model: row.catalog_slug,
      metric: metric.key,
      lane: isSecondary ? 'provisional' : 'verified',
      value: row.value,
      stderr: isFiniteNumber(row.stderr) && row.stderr >= 0 ? row.stderr : null,
      confidence: isSecondary ? 0.7 : 1,
      eval_date: evalDate,
      ...(run ? { run } : {}),
      // The evidence is the reference row as published, before any re-matching.
      provenance: { source: src.id, evidence_sha256: evidence(reference) },
    };
    if (!benchRows.has(src.id)) benchRows.set(src.id, []);
    benchRows.get(src.id).push(out);
  }

  // Runs: a variant label names one run among a model's runs of a run group; where two would read the same (two
  // Aider entries with the same edit format and no note), the run id is added so the published label tells them apart.
  const runStats = new Map(); // source id -> { runs, multiRunKeys, multiRunGroups }
  for (const [id, rows] of benchRows) {
    const groups = new Map(); // model | run group -> run id -> rows
    const perMetric = new Map(); // model | metric -> runs
    for (const r of rows) {
      if (!r.run) continue;
      const g = `${r.model}|${metrics.get(r.metric).run_group ?? r.metric}`;
      if (!groups.has(g)) groups.set(g, new Map());
      const runs = groups.get(g);
      if (!runs.has(r.run.id)) runs.set(r.run.id, []);
      runs.get(r.run.id).push(r);
      const k = `${r.model}|${r.metric}`;
      perMetric.set(k, (perMetric.get(k) ?? 0) + 1);
    }
    for (const runs of groups.values()) {
      const labels = new Map();
      for (const [runId, rs] of runs) labels.set(runId, rs[0].run.variant);
      for (const [runId, rs] of runs) {
        const label = labels.get(runId);
        const shared = [...labels].filter(([other, l]) => other !== runId && l === label).length > 0;
        if (shared) for (const r of rs) r.run = { ...r.run, variant: `${label ? `${label}, ` : ''}run ${runId}` };
      }
    }
    const runIds = new Set(rows.filter((r) => r.run).map((r) => `${r.model}|${r.run.id}`));
    if (runIds.size)
      runStats.set(id, {
        runs: runIds.size,
        multiRunKeys: [...perMetric.values()].filter((n) => n > 1).length,
        multiRunGroups: [...groups.values()].filter((runs) => runs.size > 1).length,
      });
  }

  // Speed ---------------------------------------------------------------------------------------
  const speedRows = new Map();
  for (const id of Object.keys(speed.sources).map(sourceId)) speedRows.set(id, []);
  const speedDropped = { unmatched: 0, unknownSlug: 0, error: 0, invalid: 0 };
  let sentinelSamples = 0;
  for (const reference of speed.rows) {
    let row = reference;
    if (row.catalog_slug && slugs.has(row.catalog_slug)) {
      const slug = snapshotSlug(row, slugs);
      if (slug !== row.catalog_slug) {
        const k = `${row.source}|${row.model_name}|${row.catalog_slug}|${slug}`;
        snapshots.set(k, (snapshots.get(k) ?? 0) + 1);
        row = { ...row, catalog_slug: slug };
      }
    }
    if (!row.catalog_slug) {
      speedDropped.unmatched++;
      continue;
    }
    if (!slugs.has(row.catalog_slug)) {
      speedDropped.unknownSlug++;
      continue;
    }
    if (row.error_code != null) {
      speedDropped.error++;
      continue;
    }
    const tps = row.output_tokens_per_second;
    const ttft = row.ttft_s;
    if (!isFiniteNumber(tps) || !isFiniteNumber(ttft) || tps < 0 || ttft < 0) {
      speedDropped.invalid++;
      continue;
    }
    const src = sourceInfo[row.source];
    if (!src) throw new Error(`speed row from undeclared source ${row.source}`);
    if (tps === SOURCE_META[row.source].tokensPerSecondSentinel) sentinelSamples++;
    speedRows.get(src.id).push({
      model: row.catalog_slug,
      lane: 'verified',
      tokens_per_second: tps,
      first_token_latency_ms: ttft * 1000,
      measured_at: row.timestamp ? toZonedInstant(row.timestamp) : toUtcInstant(src.commitDate),
      provenance: { source: src.id, evidence_sha256: evidence(reference) },
    });
  }

  // Write: what the import owns, with what maintainers marked laid over it ----------------------------
  const byTuple = (f) => (a, b) => cmpTuple(f(a), f(b));
  const plan = new Map(); // data-relative path -> { kind, rows, key?, sort, list? }
  plan.set('sources.yaml', {
    kind: 'list',
    list: 'sources',
    key: (s) => s.id,
    rows: sources,
    sort: byTuple((s) => [s.id]),
  });
  plan.set('metrics.yaml', {
    kind: 'list',
    list: 'metrics',
    key: (m) => m.key,
    rows: [...metrics.values()],
    sort: byTuple((m) => [m.key]),
  });
  plan.set('providers.yaml', {
    kind: 'list',
    list: 'providers',
    key: (p) => p.id,
    rows: providers,
    sort: byTuple((p) => [p.id]),
  });
  for (const [slug, record] of modelFiles) plan.set(`models/${slug}.yaml`, { kind: 'model', rows: [record] });
  const jsonl = (rel, rows, key, sort) => plan.set(rel, { kind: 'jsonl', rows, key, sort });
  const offerKey = (o) => `${o.provider}/${o.provider_model_id}`;
  for (const [id, rows] of offerRows)
    jsonl(
      `offers/${id}.jsonl`,
      rows,
      offerKey,
      byTuple((o) => [o.model, o.provider_model_id]),
    );
  const bySeen = (at) => byTuple((r) => [r.model, r[at], r.provenance.evidence_sha256]);
  jsonl('measurements/prices/models-dev.jsonl', priceRows, (r) => r.model, bySeen('observed_at'));
  for (const [id, rows] of benchRows)
    jsonl(
      `measurements/benchmarks/${id}.jsonl`,
      rows,
      null,
      byTuple((r) => [r.model, r.metric, r.eval_date, r.value, r.provenance.evidence_sha256]),
    );
  for (const [id, rows] of speedRows) {
    if (rows.length) jsonl(`measurements/speed/${id}.jsonl`, rows, null, bySeen('measured_at'));
    else notes.push(`no speed rows for ${id}: none of its rows is matched to a catalog model, so no file is written`);
  }
  // Dated prices: one file per source; other files under price-history/ are a maintainer's.
  const historyOut = priceHistory(history, offersRef.offers, evidence);
  for (const [id, rows] of Object.entries(historyOut.records))
    jsonl(`${HISTORY_DIR}/${id}.jsonl`, rows, (r) => `${r.provider}/${r.provider_model_id}/${r.effective_from}`, null);
  // Every file of the kinds the import writes: what it wrote before, and what a maintainer may have added beside it.
  const ownedIds = new Set(sources.map((s) => s.id));
  const owned = (rel) => {
    const [top, kind, name, more] = rel.split('/');
    if (more !== undefined) return false;
    if (['sources.yaml', 'metrics.yaml', 'providers.yaml'].includes(rel)) return true;
    if (top === 'models') return kind.endsWith('.yaml') && name === undefined;
    if (top === 'offers') return name === undefined && kind.endsWith('.jsonl') && providerIds.has(kind.slice(0, -6));
    if (top === HISTORY_DIR)
      return name === undefined && kind.endsWith('.jsonl') && kind.slice(0, -6) in historyOut.records;
    return (
      top === 'measurements' &&
      ['speed', 'benchmarks', 'prices'].includes(kind) &&
      name?.endsWith('.jsonl') &&
      ownedIds.has(name.slice(0, -6))
    );
  };
  const maintained = applyMaintained(opts.data, plan, owned);

  const w = new Writer(opts.data);
  // site.yaml is the maintainers' (its schema_version follows the API): written only where there is none.
  if (!fs.existsSync(path.join(opts.data, 'site.yaml')))
    w.write('site.yaml', yamlText({ name: 'modelpub', url: 'https://modelpub.dev', schema_version: '2.0.0' }), 1);
  for (const rel of maintained.remove) fs.rmSync(path.join(opts.data, rel));
  const manifest = {};
  for (const [rel, f] of [...plan].sort((a, b) => cmp(a[0], b[0]))) {
    if (f.untouched) continue;
    const rows = f.sort ? [...f.rows].sort(f.sort) : f.rows;
    const text =
      f.kind === 'model' ? yamlText(rows[0]) : f.kind === 'list' ? yamlText({ [f.list]: rows }) : jsonlText(rows);
    w.write(rel, text, rows.length);
  }
  for (const [rel, f] of [...plan].sort((a, b) => cmp(a[0], b[0]))) manifest[rel] = fingerprints(f.rows);
  fs.writeFileSync(path.join(opts.data, MANIFEST), `${JSON.stringify(manifest, null, 1)}\n`);

  return {
    w,
    maintained,
    modelCount: modelFiles.length,
    coerced,
    dropped,
    speedDropped,
    notes,
    priceSkipped: models.filter((m) => m.pricing).length - priceRows.length,
    resellerZero,
    renamed,
    snapshots,
    runStats,
    sentinelSamples,
    history: historyOut.counts,
  };
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.help) {
    console.log('usage: node scripts/convert-reference.mjs [--reference DIR] [--data DIR]');
    return;
  }
  const {
    w,
    maintained,
    modelCount,
    coerced,
    dropped,
    speedDropped,
    notes,
    priceSkipped,
    resellerZero,
    renamed,
    snapshots,
    runStats,
    sentinelSamples,
    history,
  } = convert(opts);
  const summary = new Map();
  for (const [rel, count] of w.counts) {
    const key = rel.startsWith('models/') ? 'models/*.yaml' : rel.startsWith('offers/') ? 'offers/*.jsonl' : rel;
    summary.set(key, (summary.get(key) ?? 0) + count);
  }
  console.log(`wrote ${w.counts.length} files under ${opts.data}`);
  for (const [rel, count] of summary) console.log(`  ${rel}: ${count}`);
  console.log(
    `models: ${modelCount}; release dates given as YYYY-MM: ${coerced.releaseMonth.length}; last_updated as YYYY-MM: ${coerced.updatedMonth.length}`,
  );
  if (coerced.temperature.length)
    console.log(`temperature unknown, written as null: ${coerced.temperature.join(', ')}`);
  if (coerced.maxOutput.length) console.log(`max_output_tokens unknown, written as 0: ${coerced.maxOutput.join(', ')}`);
  if (coerced.droppedModalities.length)
    console.log(`modalities outside text|image|audio|video|pdf dropped: ${coerced.droppedModalities.join('; ')}`);
  if (renamed.length) {
    console.log(`names cleaned (vendor prefix, stray spaces): ${renamed.length}`);
    for (const [slug, from, to] of renamed) console.log(`  ${slug}: ${JSON.stringify(from)} -> ${JSON.stringify(to)}`);
  }
  console.log(
    `prices: ${priceSkipped} priced catalog entries skipped (invalid); ${resellerZero} reseller listings of 0/0 kept with first_party: false (the build publishes them as no price)`,
  );
  for (const [k, n] of snapshots) {
    const [source, name, from, to] = k.split('|');
    console.log(`dated snapshot: ${source} ${JSON.stringify(name)} matched to ${to}, not ${from} (${n} rows)`);
  }
  for (const [id, st] of runStats)
    console.log(
      `runs: ${id}: ${st.runs} runs; ${st.multiRunKeys} (model, metric) keys and ${st.multiRunGroups} (model, run group) pairs with several runs`,
    );
  if (sentinelSamples)
    console.log(
      `speed: ${sentinelSamples} sample${sentinelSamples === 1 ? '' : 's'} at their source's tokens/s sentinel (kept; the build leaves them out of the tokens/s averages)`,
    );
  console.log(
    `benchmark rows dropped: ${dropped.unmatched} unmatched, ${dropped.unknownSlug} unknown slug, ${dropped.nonFinite} non-finite, ${dropped.unrecordedCost} Aider costs of 0 (not recorded), ${dropped.ambiguous.length} without metric/unit`,
  );
  for (const d of dropped.ambiguous) console.log(`  ${d}`);
  console.log(
    `speed rows dropped: ${speedDropped.unmatched} unmatched, ${speedDropped.unknownSlug} unknown slug, ${speedDropped.error} with an error code, ${speedDropped.invalid} with invalid numbers`,
  );
  console.log(
    `price history: ${history.emptyDropped} row${history.emptyDropped === 1 ? '' : 's'} with an empty range left out (${history.emptyShortLived} of them short-lived); ` +
      `${history.genaiTierLost.length} genai-prices tiered prices of keys without a card field kept at their base price only`,
  );
  for (const n of notes) console.log(`note: ${n}`);
  if (maintained.unchecked)
    console.log(`note: no data/${MANIFEST} (a first import): hand edits could not be checked; it is written now`);
  console.log(
    `maintained records kept: ${maintained.kept}; conflicts (the maintainer's value kept): ${maintained.conflicts.length}${maintained.conflicts.length ? ', on stderr' : ''}`,
  );
  for (const c of maintained.conflicts) console.error(`conflict: ${c}`);
}

try {
  main();
} catch (err) {
  console.error(`convert-reference: ${err.message}`);
  process.exitCode = err instanceof Refused ? 3 : 1;
}
