// Bad source data: every problem is reported at once, each naming file, line, record and field where the format
// allows, and nothing is published. Expected messages are stated in full (formatIssue of ValidationError.issues).
import { execFileSync } from 'node:child_process';
import { mkdir, open, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { constants } from 'node:buffer';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatIssue, ValidationError } from '../src/errors.js';
import { build, dataRevision, loadAndValidate } from '../src/pipeline/build.js';
import { parse as parseYaml } from 'yaml';
import { OverridesFile } from '../src/schema/source.js';
import { ROOT, ensureCompiled, runCli } from './helpers/cli.js';
import {
  DEFAULT_SOURCES,
  HASH,
  metric,
  model,
  prov,
  smallCatalog,
  withTemp,
  writeFixture,
  type FixtureSpec,
} from './helpers/fixture.js';

/** The formatted issue lines for a data folder; [] when it is valid. */
async function problems(dir: string): Promise<string[]> {
  try {
    await loadAndValidate(dir);
    return [];
  } catch (e) {
    if (!(e instanceof ValidationError)) throw e;
    return e.issues.map(formatIssue);
  }
}

/** smallCatalog (valid) plus extra raw files: every case below adds files of its own, so cases combine without shifting lines. */
async function issuesWith(files: Record<string, string>): Promise<string[]> {
  return withTemp(async (dir) => {
    await writeFixture(dir, { ...smallCatalog(), files });
    return problems(dir);
  });
}

/** A model file with known line numbers; `set` replaces whole lines by key (a value may span lines). */
function modelYaml(id: number, set: Record<string, string | null> = {}): string {
  const lines: [string, string][] = [
    ['id', `id: ${id}`],
    ['name', 'name: Test Model'],
    ['developer', 'developer: Lab'],
    ['release_date', 'release_date: 2025-01-01'], // line 4
    ['updated_at', 'updated_at: 2025-02-01'],
    ['context_window_tokens', 'context_window_tokens: 1000'], // line 6
    ['max_output_tokens', 'max_output_tokens: 100'],
    ['description', 'description:\n  en: A model.\n  zh: 一个模型。\n  ru: Модель.'], // lines 8-11
    [
      'capabilities',
      'capabilities:\n  input: [text]\n  output: [text]\n  reasoning: false\n  tool_call: true\n  structured_output: null\n  attachment: false\n  temperature: true\n  open_weights: false\n  knowledge_cutoff: null',
    ], // 12-21
    ['lane', 'lane: verified'], // line 22
    ['provenance', `provenance:\n  source: lab\n  evidence_sha256: "${HASH(id)}"`], // 23-25
  ];
  return `${lines
    .filter(([k]) => set[k] !== null)
    .map(([k, l]) => set[k] ?? l)
    .join('\n')}\n`;
}
const jsonl = (...rows: (Record<string, unknown> | string)[]) =>
  `${rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n')}\n`;
const run = (extra: Record<string, unknown> = {}) => ({
  model: 'alpha',
  lane: 'verified',
  tokens_per_second: 10,
  first_token_latency_ms: 100,
  measured_at: '2025-01-05T10:00:00Z',
  provenance: prov(900),
  ...extra,
});
const result = (extra: Record<string, unknown> = {}) => ({
  model: 'alpha',
  metric: 'code.pass',
  lane: 'verified',
  value: 50,
  stderr: null,
  confidence: 1,
  eval_date: '2025-01-10',
  provenance: prov(901),
  ...extra,
});
const price = (extra: Record<string, unknown> = {}) => ({
  model: 'alpha',
  lane: 'verified',
  input_per_million: 1,
  output_per_million: 2,
  observed_at: '2025-01-01T00:00:00Z',
  provenance: prov(902),
  ...extra,
});

// Observations may reach tomorrow (zones, clocks) but not a typo's year 2205: it would become the publication time.
const TOMORROW = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
const FUTURE = `is later than ${TOMORROW}, tomorrow: an observation cannot be in the future (a typo in the year?)`;
const NOW = new Date().toISOString();

interface Case {
  files: Record<string, string>;
  expected: string[];
}
const CASES: Record<string, Case> = {
  'duplicate slugs (same basename in two folders of models/)': {
    files: { 'models/vendor/alpha.yaml': modelYaml(11) },
    expected: [
      'models/vendor/alpha.yaml: Duplicate slug "alpha" used by both models/alpha.yaml and models/vendor/alpha.yaml. Slugs must be unique.',
    ],
  },
  'a developer with a comma (the list filter takes developers as a comma list)': {
    files: { 'models/comma.yaml': modelYaml(77, { developer: 'developer: Lab, Inc.' }) },
    expected: ['models/comma.yaml:3: model "comma": developer: must not contain a comma'],
  },
  'duplicate ids': {
    files: { 'models/epsilon.yaml': modelYaml(2) },
    expected: [
      'models/epsilon.yaml:1: Duplicate model id 2 used by both models/beta.yaml and models/epsilon.yaml. Ids must be unique.',
    ],
  },
  "a duplicate id written as an alias (id: *n): the schema reads the anchor's value, so does the check": {
    files: { 'models/eta.yaml': modelYaml(2, { id: null, max_output_tokens: 'max_output_tokens: &two 2\nid: *two' }) },
    expected: [
      'models/eta.yaml:7: Duplicate model id 2 used by both models/beta.yaml and models/eta.yaml. Ids must be unique.',
    ],
  },
  // JSON.parse keeps the last of two values without a word: 6170 tokens/s, not the 61.7 measured first.
  'a key written twice in a JSON Lines record (at any depth); `\\":` inside a string is no key': {
    files: {
      'measurements/speed/twice.jsonl': `${[
        JSON.stringify(run()).replace('"tokens_per_second":10', '"tokens_per_second":61.7,"tokens_per_second" :6170'),
        JSON.stringify(run({ private: { notes: 'quoted "a": b' } })),
        JSON.stringify(run()).replace('"source":"', '"source":"ghost","source":"'),
      ].join('\n')}\n`,
    },
    expected: [
      'measurements/speed/twice.jsonl:1: tokens_per_second: written twice in this record (JSON would keep the last one without a word): keep one',
      'measurements/speed/twice.jsonl:3: provenance.source: written twice in this record (JSON would keep the last one without a word): keep one',
    ],
  },
  'a duplicate id is found where one of the two files is also invalid (it was reported only once that was fixed)': {
    files: { 'models/zeta.yaml': modelYaml(2, { context_window_tokens: 'context_window_tokens: -5' }) },
    expected: [
      'models/zeta.yaml:6: model "zeta": context_window_tokens: cannot be negative',
      'models/zeta.yaml:1: Duplicate model id 2 used by both models/beta.yaml and models/zeta.yaml. Ids must be unique.',
    ],
  },
  'unknown metric keys': {
    files: {
      'measurements/benchmarks/unknown-metric.jsonl': jsonl(
        result({ eval_date: '2025-01-12' }),
        result({ metric: 'code.nope' }),
      ),
    },
    expected: [
      'measurements/benchmarks/unknown-metric.jsonl:2: metric: unknown metric key "code.nope": declare it in metrics.yaml',
    ],
  },
  'measurements and overrides for unknown models': {
    files: {
      'measurements/prices/ghost.jsonl': jsonl(price({ model: 'ghost' })),
      'measurements/speed/ghost.jsonl': jsonl(run(), run(), run({ model: 'ghost' })),
      'overrides/ghost.yaml':
        'overrides:\n  - model: beta\n    reason: fine\n    provenance: { source: lab, evidence_sha256: "' +
        HASH(5) +
        '" }\n  - model: ghost\n    reason: typo\n    provenance: { source: lab, evidence_sha256: "' +
        HASH(6) +
        '" }\n',
    },
    expected: [
      'overrides/ghost.yaml:5: override #2: model: unknown model "ghost": no data/models/ghost.yaml',
      'measurements/speed/ghost.jsonl:3: model: unknown model "ghost": no data/models/ghost.yaml',
      'measurements/prices/ghost.jsonl:1: model: unknown model "ghost": no data/models/ghost.yaml',
    ],
  },
  "measurements of a model whose own file is invalid: only that file's problems, no 'unknown model' for each line": {
    files: {
      'models/invalid.yaml': modelYaml(22, { context_window_tokens: 'context_window_tokens: -5' }),
      'measurements/speed/invalid.jsonl': jsonl(run({ model: 'invalid' }), run({ model: 'invalid' })),
      'measurements/prices/invalid.jsonl': jsonl(price({ model: 'invalid' })),
    },
    expected: ['models/invalid.yaml:6: model "invalid": context_window_tokens: cannot be negative'],
  },
  'bad dates': {
    files: {
      'models/bad-dates.yaml': modelYaml(20, {
        release_date: 'release_date: 2025-02-30',
        updated_at: 'updated_at: 2025-2-1',
      }),
      'measurements/speed/bad-dates.jsonl': jsonl(run({ measured_at: '2025-01-05T10:00:00' })),
      'measurements/benchmarks/bad-dates.jsonl': jsonl(result({ eval_date: '2025-13-01' })),
      'measurements/prices/bad-dates.jsonl': jsonl(price({ observed_at: 'yesterday' })),
    },
    expected: [
      'models/bad-dates.yaml:4: model "bad-dates": release_date: must be a date YYYY-MM-DD',
      'models/bad-dates.yaml:5: model "bad-dates": updated_at: must be a date YYYY-MM-DD',
      'measurements/speed/bad-dates.jsonl:1: measured_at: must be an ISO 8601 timestamp with a zone, e.g. 2024-04-15T08:04:59Z',
      'measurements/benchmarks/bad-dates.jsonl:1: eval_date: must be a date YYYY-MM-DD',
      'measurements/prices/bad-dates.jsonl:1: observed_at: must be an ISO 8601 timestamp with a zone, e.g. 2024-04-15T08:04:59Z',
    ],
  },
  'knowledge cutoffs that are no month or day of the calendar (they were published as they stood)': {
    files: {
      'models/cutoff-month.yaml': modelYaml(27, {
        capabilities:
          'capabilities:\n  input: [text]\n  output: [text]\n  reasoning: false\n  tool_call: true\n  structured_output: null\n  attachment: false\n  temperature: true\n  open_weights: false\n  knowledge_cutoff: "2025-13"',
      }),
      'models/cutoff-day.yaml': modelYaml(28, {
        capabilities:
          'capabilities:\n  input: [text]\n  output: [text]\n  reasoning: false\n  tool_call: true\n  structured_output: null\n  attachment: false\n  temperature: true\n  open_weights: false\n  knowledge_cutoff: "2024-02-30"',
      }),
      'models/cutoff-fine.yaml': modelYaml(29, {
        capabilities:
          'capabilities:\n  input: [text]\n  output: [text]\n  reasoning: false\n  tool_call: true\n  structured_output: null\n  attachment: false\n  temperature: true\n  open_weights: false\n  knowledge_cutoff: "2024-02-29"',
      }),
    },
    expected: [
      'models/cutoff-day.yaml:21: model "cutoff-day": capabilities.knowledge_cutoff: must be YYYY-MM or YYYY-MM-DD, a real month or day',
      'models/cutoff-month.yaml:21: model "cutoff-month": capabilities.knowledge_cutoff: must be YYYY-MM or YYYY-MM-DD, a real month or day',
    ],
  },
  'negative numbers': {
    files: {
      'models/negative.yaml': modelYaml(21, { context_window_tokens: 'context_window_tokens: -1' }),
      'measurements/speed/negative.jsonl': jsonl(run({ tokens_per_second: -3 })),
      'measurements/benchmarks/negative.jsonl': jsonl(result({ stderr: -0.1, confidence: -1 })),
      'measurements/prices/negative.jsonl': jsonl(price({ input_per_million: -0.5 })),
    },
    expected: [
      'models/negative.yaml:6: model "negative": context_window_tokens: cannot be negative',
      'measurements/speed/negative.jsonl:1: tokens_per_second: cannot be negative',
      'measurements/benchmarks/negative.jsonl:1: stderr: cannot be negative',
      'measurements/benchmarks/negative.jsonl:1: confidence: confidence is in [0, 1]',
      'measurements/prices/negative.jsonl:1: input_per_million: cannot be negative',
    ],
  },
  'non-finite numbers (JSON 1e999 and YAML .inf parse to Infinity)': {
    files: {
      'models/infinite.yaml': modelYaml(34, { max_output_tokens: 'max_output_tokens: .inf' }),
      'measurements/benchmarks/infinite.jsonl': `${JSON.stringify(result()).replace('"value":50', '"value":1e999')}\n`,
      'measurements/speed/infinite.jsonl': `${JSON.stringify(run()).replace('"first_token_latency_ms":100', '"first_token_latency_ms":-1e999')}\n`,
    },
    expected: [
      'models/infinite.yaml:7: model "infinite": max_output_tokens: must be a finite number, not Infinity',
      'measurements/speed/infinite.jsonl:1: first_token_latency_ms: must be a finite number, not -Infinity',
      'measurements/benchmarks/infinite.jsonl:1: value: must be a finite number, not Infinity',
    ],
  },
  'implausibly large numbers (sums, means and rounding would overflow them to Infinity, published as null); the bounds themselves are fine':
    {
      files: {
        'models/huge.yaml': modelYaml(26, {
          context_window_tokens: 'context_window_tokens: 2000000000',
          max_output_tokens: 'max_output_tokens: 1e308',
        }),
        'measurements/speed/huge.jsonl': jsonl(
          run({ tokens_per_second: 1.7e308 }),
          run({ first_token_latency_ms: 9e7 }),
          run({ tokens_per_second: 1e6, first_token_latency_ms: 86_400_000 }),
        ),
        'measurements/prices/huge.jsonl': jsonl(
          price({ output_per_million: 1e308 }),
          price({ input_per_million: 2e6 }),
          price({ input_per_million: 1e6, output_per_million: 1e6 }),
        ),
      },
      expected: [
        'models/huge.yaml:6: model "huge": context_window_tokens: cannot be more than 1,000,000,000 tokens: a typo or a unit mix-up?',
        'models/huge.yaml:7: model "huge": max_output_tokens: cannot be more than 1,000,000,000 tokens: a typo or a unit mix-up?',
        'measurements/speed/huge.jsonl:1: tokens_per_second: cannot be more than 1,000,000 tokens per second: a typo or a unit mix-up?',
        'measurements/speed/huge.jsonl:2: first_token_latency_ms: cannot be more than 86,400,000 ms (a day): a typo or a unit mix-up?',
        'measurements/prices/huge.jsonl:1: output_per_million: cannot be more than 1,000,000 USD per million tokens: a typo or a unit mix-up?',
        'measurements/prices/huge.jsonl:2: input_per_million: cannot be more than 1,000,000 USD per million tokens: a typo or a unit mix-up?',
      ],
    },
  'unknown lanes': {
    files: {
      'models/laneless.yaml': modelYaml(23, { lane: 'lane: beta' }),
      'measurements/speed/lanes.jsonl': jsonl(run({ lane: 'all' })),
    },
    expected: [
      'models/laneless.yaml:22: model "laneless": lane: unknown lane "beta": must be "verified" or "provisional"',
      'measurements/speed/lanes.jsonl:1: lane: unknown lane "all": must be "verified" or "provisional"',
    ],
  },
  'missing locale (zh) and an empty one (ru)': {
    files: { 'models/monolingual.yaml': modelYaml(24, { description: 'description:\n  en: A model.\n  ru: ""' }) },
    expected: [
      // A missing key has no line of its own: the line is where its parent's value starts.
      'models/monolingual.yaml:9: model "monolingual": description.zh: the zh description is required',
      'models/monolingual.yaml:10: model "monolingual": description.ru: the ru description is required',
    ],
  },
  'unknown provenance source': {
    files: {
      'models/unsourced.yaml': modelYaml(25, {
        provenance: `provenance:\n  source: nowhere\n  evidence_sha256: "${HASH(25)}"`,
      }),
      'measurements/benchmarks/unsourced.jsonl': jsonl(result({ provenance: prov(903, 'nowhere') })),
      // The source on its own line, below the record's first: the problem is reported there.
      'overrides/unsourced.yaml':
        'overrides:\n  - model: beta\n    reason: fine\n    provenance:\n      source: nowhere\n      evidence_sha256: "' +
        HASH(904) +
        '"\n',
    },
    expected: [
      'overrides/unsourced.yaml:5: override #1: provenance.source: unknown source "nowhere": declare it in sources.yaml',
      'models/unsourced.yaml:24: model "unsourced": provenance.source: unknown source "nowhere": declare it in sources.yaml',
      'measurements/benchmarks/unsourced.jsonl:1: provenance.source: unknown source "nowhere": declare it in sources.yaml',
    ],
  },
  'YAML syntax errors, with the line (and no "unknown model" for the records that name those models)': {
    files: {
      'models/broken.yaml': 'id: 40\nname: Broken\nname: Again\n',
      'models/tabbed.yaml': 'id: 41\nname: Tabbed\n\tdeveloper: Lab\n',
      'measurements/speed/broken.jsonl': jsonl(run({ model: 'broken' })),
    },
    expected: [
      'models/broken.yaml:3: YAML: Map keys must be unique',
      'models/tabbed.yaml:3: YAML: Tabs are not allowed as indentation',
    ],
  },
  'a YAML alias bomb (a few lines that expand to billions of nodes) is a problem of its file, not a crash': {
    files: {
      'models/bomb.yaml':
        'a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n',
      'measurements/speed/bomb.jsonl': jsonl(run({ model: 'bomb' })),
    },
    expected: [
      'models/bomb.yaml:2: YAML: too many aliases (*name): they would expand to a resource-exhausting size; write the values out',
    ],
  },
  'an empty file and a missing field say so in words (not "expected object, received null")': {
    files: {
      'models/blank.yaml': '# to do\n',
      'overrides/blank.yaml': '',
      'models/nameless.yaml': modelYaml(32, { name: null }),
      'measurements/prices/modelless.jsonl': jsonl(price({ model: undefined })),
    },
    expected: [
      'models/blank.yaml: model "blank": the file is empty (or holds only comments)',
      'models/nameless.yaml:1: model "nameless": name: required',
      'measurements/prices/modelless.jsonl:1: model: required',
      'overrides/blank.yaml: the file is empty (or holds only comments)',
    ],
  },
  'files outside the expected places, each named (with where it probably belongs); documentation (.md) at the top and in the data folders is fine':
    {
      files: {
        'README.md': '# notes on this data\n',
        'models/README.md': '# one file per model\n',
        'overrides.yaml':
          'overrides:\n  - model: gamma\n    reason: launch name\n    name: Gamma Prime\n    provenance: { source: lab, evidence_sha256: "' +
          HASH(7) +
          '" }\n',
        'override/gamma.yaml': 'overrides: []\n',
        'site.yml': 'name: typo\n',
        'speed.jsonl': jsonl(run()),
        'notes.txt': 'to do\n',
        'models/epsilon.json': '{}\n',
      },
      expected: [
        'models/epsilon.json: unexpected file: models and overrides are .yaml, offers are offers/*.jsonl, dated prices price-history/*.jsonl, measurements are measurements/{speed,benchmarks,prices}/*.jsonl',
        'notes.txt: unexpected file: the top of the data folder holds only site.yaml, sources.yaml, metrics.yaml, providers.yaml, documentation (.md) and the folders models/, overrides/, measurements/, offers/, price-history/',
        'override/gamma.yaml: unexpected file: override/ is not a folder of the data (models/, overrides/, measurements/, offers/, price-history/); it probably belongs in overrides/',
        'overrides.yaml: unexpected file: the top of the data folder holds only site.yaml, sources.yaml, metrics.yaml, providers.yaml, documentation (.md) and the folders models/, overrides/, measurements/, offers/, price-history/; it probably belongs in overrides/',
        'site.yml: unexpected file: the top of the data folder holds only site.yaml, sources.yaml, metrics.yaml, providers.yaml, documentation (.md) and the folders models/, overrides/, measurements/, offers/, price-history/; did you mean site.yaml?',
        'speed.jsonl: unexpected file: the top of the data folder holds only site.yaml, sources.yaml, metrics.yaml, providers.yaml, documentation (.md) and the folders models/, overrides/, measurements/, offers/, price-history/; it probably belongs in measurements/speed/',
      ],
    },
  'two values of one metric in one run: a run id, or without one, a source and a day': {
    files: {
      'measurements/benchmarks/runs.jsonl': jsonl(
        result({ run: { id: 'r1', variant: 'high' } }),
        result({ value: 60, run: { id: 'r1', variant: 'low' }, provenance: prov(904) }),
        result({ run: { id: 'r2' } }), // another run: fine
        result(), // lab on 2025-01-10, as alpha's 90 in results.jsonl
      ),
    },
    expected: [
      'measurements/benchmarks/runs.jsonl:2: run.id: run "r1" of "alpha" (source lab) already has a value of "code.pass" at measurements/benchmarks/runs.jsonl:1: give each run its own run.id',
      'measurements/benchmarks/runs.jsonl:4: run: the run of 2025-01-10 (no run id) of "alpha" (source lab) already has a value of "code.pass" at measurements/benchmarks/results.jsonl:1: give each run its own run.id',
    ],
  },
  'observations in the future (a typo in the year); today is fine': {
    files: {
      'models/future.yaml': modelYaml(40, { updated_at: 'updated_at: 2205-02-01' }),
      'measurements/speed/future.jsonl': jsonl(run({ measured_at: NOW }), run({ measured_at: '2205-02-03T08:04:59Z' })),
      'measurements/benchmarks/future.jsonl': jsonl(
        result({ eval_date: '2205-01-10' }),
        result({ eval_date: NOW.slice(0, 10) }),
      ),
      'measurements/prices/future.jsonl': jsonl(price({ observed_at: '2205-01-01T00:00:00+14:00' })),
    },
    expected: [
      `models/future.yaml:5: model "future": updated_at: ${FUTURE}`,
      `measurements/speed/future.jsonl:2: measured_at: ${FUTURE}`,
      `measurements/benchmarks/future.jsonl:1: eval_date: ${FUTURE}`,
      `measurements/prices/future.jsonl:1: observed_at: ${FUTURE}`,
    ],
  },
};

describe('validation reports each kind of problem precisely', () => {
  it('the base catalog is valid', async () => {
    expect(await issuesWith({})).toEqual([]);
  });
  for (const [name, c] of Object.entries(CASES)) {
    it(name, async () => {
      expect(await issuesWith(c.files)).toEqual(c.expected);
    });
  }
  it('a bad JSON Lines line is named by its line number (blank lines count)', async () => {
    const lines = await issuesWith({
      'measurements/speed/garbled.jsonl': jsonl(run(), '', '{"model": "alpha", oops', run()),
    });
    expect(lines).toHaveLength(1);
    // The text after "not valid JSON:" is V8's JSON.parse message, which differs between Node versions.
    expect(lines[0]).toMatch(/^measurements\/speed\/garbled\.jsonl:3: not valid JSON: \S/);
  });
  it('bytes that are not UTF-8 are refused at the first bad byte (line, column, offset), not published as U+FFFD', async () => {
    await withTemp(async (tmp) => {
      const dir = path.join(tmp, 'data');
      await writeFixture(dir, smallCatalog());
      const bytes = (...parts: (string | number[])[]) =>
        Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));
      // "Caf\xc3(": a Latin-1 "é" cut short; line 2 of the file starts at byte 7 ("id: 30\n").
      const [before, after] = modelYaml(30).split('Test Model');
      await writeFile(path.join(dir, 'models/latin1.yaml'), bytes(`${before}Caf`, [0xc3, 0x28], after!));
      // A U+FFFD written in the file is a character like any other (line 1, and before the bad byte on line 2);
      // the stray continuation byte 0x80 is not.
      const line1 = JSON.stringify(run({ private: { notes: 'lossy \uFFFD upstream' } }));
      const [head, tail] = JSON.stringify(run({ private: { notes: 'Ж\uFFFD!' } })).split('!');
      await writeFile(
        path.join(dir, 'measurements/speed/lossy.jsonl'),
        bytes(`${line1}\n${head}`, [0x80], `${tail}\n`),
      );
      const col = [...head!].length + 1;
      const offset = Buffer.byteLength(`${line1}\n${head}`);
      expect(await problems(dir)).toEqual([
        `measurements/speed/lossy.jsonl:2: not valid UTF-8: byte 0x80 at column ${col} (byte offset ${offset}) starts no valid character; save the file as UTF-8`,
        'models/latin1.yaml:2: not valid UTF-8: byte 0xc3 at column 10 (byte offset 16) starts no valid character; save the file as UTF-8',
      ]);
      await expect(build({ dataDir: dir, outDir: path.join(tmp, 'out') })).rejects.toBeInstanceOf(ValidationError);
      expect(await readdir(tmp)).toEqual(['data']); // nothing published
    });
  });
  it('a JSON Lines file read in chunks: lines across chunk edges keep their numbers, a late bad byte is the only problem', async () => {
    await withTemp(async (dir) => {
      const spec = smallCatalog();
      await writeFixture(dir, spec);
      // ~2.6 MB of lines with two-byte characters, more than one read chunk (1 MiB): some character and some line
      // straddle a chunk edge.
      const row = (i: number, extra: Record<string, unknown> = {}) =>
        JSON.stringify(run({ private: { notes: `${i} ${'Жж'.repeat(100)}` }, ...extra }));
      const rows = Array.from({ length: 4000 }, (_, i) => row(i));
      const bigFile = path.join(dir, 'measurements/speed/big.jsonl');
      await writeFile(bigFile, `${rows.join('\n')}\n${row(4000, { tokens_per_second: 'fast' })}`); // no final newline
      // A bad byte on line 3999, after a record that fails its schema (line 2) and one that is no JSON (line 3): as if
      // the file were read whole, the bytes are the one problem.
      const lines = [...rows];
      lines[1] = row(1, { lane: 'nowhere' });
      lines[2] = '{"model": "alpha", oops';
      const [head, tail] = lines[3998]!.split('Жж');
      const late = Buffer.concat([
        Buffer.from(`${lines.slice(0, 3998).join('\n')}\n${head}`),
        Buffer.from([0x80]),
        Buffer.from(`${tail}\n`),
      ]);
      await writeFile(path.join(dir, 'measurements/speed/late.jsonl'), late);
      const offset = Buffer.byteLength(`${lines.slice(0, 3998).join('\n')}\n${head}`);
      const found = await problems(dir);
      expect(found).toHaveLength(2);
      // Problems of reading come before those of the schemas.
      expect(found[1]).toMatch(/^measurements\/speed\/big\.jsonl:4001: tokens_per_second: \S/);
      expect(found[0]).toBe(
        `measurements/speed/late.jsonl:3999: not valid UTF-8: byte 0x80 at column ${[...head!].length + 1} ` +
          `(byte offset ${offset}) starts no valid character; save the file as UTF-8`,
      );
      await rm(path.join(dir, 'measurements/speed/late.jsonl'));
      await writeFile(bigFile, `${rows.join('\n')}\n`);
      const data = await loadAndValidate(dir);
      expect(data.speed).toHaveLength(spec.speed!.length + 4000); // big.jsonl is read before runs.jsonl
      expect([data.speed.file(3999), data.speed.line(3999)]).toEqual(['measurements/speed/big.jsonl', 4000]);
      expect(data.speed.value(3999)).toEqual({ ...run(), measured_at: '2025-01-05T10:00:00.000Z' });
      expect(data.speed.file(4000)).toBe('measurements/speed/runs.jsonl');
    });
  });
  it('a stray file of any size is named from its first bytes (a 3 GiB one is not read whole)', async () => {
    await withTemp(async (tmp) => {
      const dir = path.join(tmp, 'data');
      await writeFixture(dir, smallCatalog());
      for (const stray of ['snapshot.tar', 'models/snapshot.tar']) {
        const fh = await open(path.join(dir, stray), 'w');
        await fh.truncate(3 * 2 ** 30); // sparse: no disk used
        await fh.close();
      }
      expect(await problems(dir)).toEqual([
        'models/snapshot.tar: unexpected file: models and overrides are .yaml, offers are offers/*.jsonl, dated prices price-history/*.jsonl, measurements are measurements/{speed,benchmarks,prices}/*.jsonl',
        'snapshot.tar: unexpected file: the top of the data folder holds only site.yaml, sources.yaml, metrics.yaml, providers.yaml, documentation (.md) and the folders models/, overrides/, measurements/, offers/, price-history/',
      ]);
    });
  });
  it('a data file too large to read as text is a problem of its own (it crashed the run naming no file)', async () => {
    await withTemp(async (tmp) => {
      const dir = path.join(tmp, 'data');
      await writeFixture(dir, smallCatalog());
      const fh = await open(path.join(dir, 'measurements/speed/dump.jsonl'), 'w');
      await fh.truncate(constants.MAX_STRING_LENGTH + 1); // sparse: no disk used
      await fh.close();
      const mb = ((constants.MAX_STRING_LENGTH + 1) / 2 ** 20).toFixed(0);
      expect(await problems(dir)).toEqual([
        `measurements/speed/dump.jsonl: too large: ${mb} MB, more than the ${(constants.MAX_STRING_LENGTH / 2 ** 20).toFixed(0)} MB a data file can hold; split it into several files`,
      ]);
    });
  });
  it('symbolic links: a loop (a link to a folder holding it) and a link to nothing are each one problem; a link to a file in the data folder is read', async () => {
    await withTemp(async (tmp) => {
      const dir = path.join(tmp, 'data');
      await writeFixture(dir, smallCatalog());
      await mkdir(path.join(dir, '.shared'));
      await writeFile(path.join(dir, '.shared/linked.yaml'), modelYaml(31));
      await symlink('../.shared/linked.yaml', path.join(dir, 'models/linked.yaml'));
      await symlink('..', path.join(dir, 'models/loop'));
      await symlink('nowhere.yaml', path.join(dir, 'models/dangling.yaml'));
      expect(await problems(dir)).toEqual([
        'models/dangling.yaml: a symbolic link to nothing (its target is missing): fix it or remove it',
        'models/loop: a symbolic link to a folder that holds it (a loop, never read): remove it',
      ]);
      await rm(path.join(dir, 'models/loop'));
      await rm(path.join(dir, 'models/dangling.yaml'));
      expect((await loadAndValidate(dir)).models.map((m) => m.slug)).toContain('linked');
    });
  });

  it('hostile data: links out of the folder, pipes, deep nesting, huge values and hidden characters are refused, each naming its place', async () => {
    await withTemp(async (tmp) => {
      const dir = path.join(tmp, 'data');
      const spec = smallCatalog();
      spec.models!.push(
        model('spoof', 40, {
          name: 'gpt\u202e4o',
          developer: 'Open\u200bAI',
          description: { en: 'Two lines\nand a\ttab are fine.', zh: '模型\u0007', ru: 'Модель.' },
        }),
      );
      await writeFixture(dir, spec);
      await writeFile(path.join(tmp, 'secret.jsonl'), 'root:$6$hash:19000:0:99999:7:::\n');
      await mkdir(path.join(tmp, 'elsewhere'));
      await writeFile(path.join(tmp, 'elsewhere/m.yaml'), modelYaml(41));
      await symlink(path.join(tmp, 'secret.jsonl'), path.join(dir, 'measurements/prices/shadow.jsonl'));
      await symlink('../../elsewhere', path.join(dir, 'models/more'));
      execFileSync('mkfifo', [path.join(dir, 'models/pipe.yaml')]); // a read would wait for a writer forever
      const deep = `${'['.repeat(5000)}1${']'.repeat(5000)}`;
      const huge = 'a'.repeat(2_000_000);
      await writeFile(
        path.join(dir, 'measurements/speed/hostile.jsonl'),
        jsonl(
          `{"model":"alpha","lane":"verified","tokens_per_second":${deep}}`,
          run({ model: huge }),
          run({ private: { validator_input: JSON.parse(`${'{"a":'.repeat(60)}1${'}'.repeat(60)}`) } }),
        ),
      );
      const found = await problems(dir);
      expect(found).toEqual([
        'measurements/prices/shadow.jsonl: a symbolic link that leads out of the data folder: refused, never read (copy the file in instead)',
        'models/more: a symbolic link that leads out of the data folder: refused, never read (copy the file in instead)',
        'models/pipe.yaml: a named pipe (FIFO), not a file: refused (data files are regular files)',
        'measurements/speed/hostile.jsonl:1: nested more than 64 levels deep (arrays and objects within each other): a record is a few levels deep',
        'models/spoof.yaml:2: model "spoof": name: contains U+202E (a bidirectional control) at character 4: names may not hold control or invisible characters',
        'models/spoof.yaml:3: model "spoof": developer: contains U+200B (an invisible character) at character 5: names may not hold control or invisible characters',
        'models/spoof.yaml:16: model "spoof": description.zh: contains U+0007 (a control character) at character 3: the zh description may not hold control or invisible characters but tabs and line breaks',
        `measurements/speed/hostile.jsonl:2: model: unknown model "${'a'.repeat(80)}…" (2,000,000 characters): no data/models/<that slug>.yaml`,
      ]);
      expect(found.join('\n').length).toBeLessThan(2_000);
      expect(found.join('\n')).not.toContain('root:');
    });
  });

  it('documentation (.md), at the top or in a data folder, is not part of the revision; any byte of data is', async () => {
    await withTemp(async (dir) => {
      await writeFixture(dir, smallCatalog());
      const revision = async () => dataRevision(await loadAndValidate(dir));
      const before = await revision();
      await writeFile(path.join(dir, 'README.md'), '# notes on this data\n');
      await writeFile(path.join(dir, 'models/README.md'), '# one file per model\n');
      await writeFile(path.join(dir, 'measurements/speed/NOTES.md'), 'how the runs were made\n');
      expect(await revision()).toBe(before);
      await writeFile(
        path.join(dir, 'models/alpha.yaml'),
        `${await readFile(path.join(dir, 'models/alpha.yaml'), 'utf8')}# reviewed\n`,
      );
      expect(await revision()).not.toBe(before);
    });
  });

  it('a duplicate source id or metric key is named at the line of the second one', async () => {
    await withTemp(async (dir) => {
      const spec = smallCatalog();
      spec.sources = [...DEFAULT_SOURCES, { ...DEFAULT_SOURCES[0]!, name: 'Lab again' }];
      spec.metrics = [...spec.metrics!, metric('code.pass', { label: 'again' })];
      await writeFixture(dir, spec);
      const lastLine = async (file: string, start: string) =>
        (await readFile(path.join(dir, file), 'utf8'))
          .split('\n')
          .map((l, i) => (l.startsWith(start) ? i + 1 : 0))
          .reduce((a, b) => Math.max(a, b));
      expect(await problems(dir)).toEqual([
        `sources.yaml:${await lastLine('sources.yaml', '  - id: lab')}: Duplicate source id "lab". Each source id must be unique.`,
        `metrics.yaml:${await lastLine('metrics.yaml', '  - key: code.pass')}: Duplicate metric key "code.pass". Each metric key must be unique.`,
      ]);
    });
  });

  it('references are checked against sources.yaml and metrics.yaml as written, also when an entry there is invalid', async () => {
    await withTemp(async (dir) => {
      const spec = smallCatalog();
      spec.sources = [DEFAULT_SOURCES[0]!, { ...DEFAULT_SOURCES[1]!, license: '' }];
      spec.metrics = [...spec.metrics!, metric('math.acc', { higher_is_better: 'yes' })];
      spec.speed = [...spec.speed!, run({ provenance: prov(910, 'typo') })];
      spec.benchmarks = [...spec.benchmarks!, result({ metric: 'math.ac' }), result({ metric: 'math.acc' })];
      await writeFixture(dir, spec);
      const got = await problems(dir);
      expect(got.filter((l) => !/^(sources|metrics)\.yaml:/.test(l))).toEqual([
        `measurements/speed/runs.jsonl:${spec.speed.length}: provenance.source: unknown source "typo": declare it in sources.yaml`,
        `measurements/benchmarks/results.jsonl:${spec.benchmarks.length - 1}: metric: unknown metric key "math.ac": declare it in metrics.yaml`,
      ]);
      expect(got.filter((l) => /^(sources|metrics)\.yaml:/.test(l))).toHaveLength(2); // the invalid licence and flag
    });
  });

  it('a source id or metric key written as an alias (id: *name) is declared, as the schema check reads it', async () => {
    await withTemp(async (dir) => {
      await writeFixture(dir, smallCatalog());
      // The first entry's id as an alias of its name's anchor: a valid file, each record naming it a valid reference.
      await writeFile(
        path.join(dir, 'sources.yaml'),
        'sources:\n  - name: &lab lab\n    id: *lab\n    url: https://example.org/lab\n    license: MIT\n    redistributable: true\n' +
          '  - id: closed\n    name: Closed\n    url: https://example.org/closed\n    license: NOASSERTION\n    redistributable: false\n',
      );
      expect(await problems(dir)).toEqual([]);
    });
  });

  it('a field of the wrong type, unknown fields (each on its own line) and a missing file are reported too', async () => {
    await withTemp(async (dir) => {
      const spec: FixtureSpec = smallCatalog();
      spec.models = [
        model('alpha', 1, { context_window_tokens: '1000', colour: 'red', private: { notes: 'x', note: 'typo' } }),
      ];
      spec.speed = [run({ tps: 1 })];
      spec.benchmarks = spec.prices = spec.overrides = [];
      await writeFixture(dir, spec);
      await rm(path.join(dir, 'metrics.yaml'));
      expect(await problems(dir)).toEqual([
        'metrics.yaml: missing: every data folder has one',
        'models/alpha.yaml:6: model "alpha": context_window_tokens: must be a number',
        'models/alpha.yaml:35: model "alpha": private.note: unknown field: not in the schema (a typo?)',
        'models/alpha.yaml:32: model "alpha": colour: unknown field: not in the schema (a typo?)',
        'measurements/speed/runs.jsonl:1: tps: unknown field: not in the schema (a typo?)',
      ]);
    });
  });
});

describe('every problem at once', () => {
  it('all the cases above in one data folder give the union of their messages', async () => {
    const files = Object.assign({}, ...Object.values(CASES).map((c) => c.files)) as Record<string, string>;
    const expected = Object.values(CASES).flatMap((c) => c.expected);
    const got = await issuesWith(files);
    expect([...got].sort()).toEqual([...expected].sort());
  });
});

describe('the CLI', () => {
  let bad: string[] = [];
  beforeAll(() => {
    ensureCompiled();
    bad = [...CASES['unknown metric keys']!.expected, ...CASES['negative numbers']!.expected];
  });
  const badFiles = () => ({ ...CASES['unknown metric keys']!.files, ...CASES['negative numbers']!.files });

  it('`validate` exits 1 and prints every issue line on stderr, nothing on stdout', async () => {
    await withTemp(async (dir) => {
      await writeFixture(dir, { ...smallCatalog(), files: badFiles() });
      const r = await runCli(['validate', '--data', dir]);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines[0]).toBe(`modelpub: ${bad.length} problems in the source data:`);
      expect(
        lines
          .slice(1)
          .map((l) => l.trim())
          .sort(),
      ).toEqual([...bad].sort());
    });
  });

  it('`validate` on good data exits 0', async () => {
    await withTemp(async (dir) => {
      await writeFixture(dir, smallCatalog());
      const r = await runCli(['validate', '--data', dir]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(
        `${dir}: valid. 4 models, 2 metrics, 3 speed runs, 7 benchmark results, 4 price observations, 0 offers at 0 providers, 1 display-only overrides`,
      );
    });
  });

  it('`build` on bad data exits 1 and leaves the existing publication untouched', async () => {
    await withTemp(async (tmp) => {
      const good = path.join(tmp, 'good');
      const badDir = path.join(tmp, 'bad');
      const out = path.join(tmp, 'out');
      await writeFixture(good, smallCatalog());
      await writeFixture(badDir, { ...smallCatalog(), files: badFiles() });
      await build({ dataDir: good, outDir: out });
      const before = await snapshot(out);
      const r = await runCli(['build', '--data', badDir, '--out', out, '--quiet']);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(
        r.stderr
          .trimEnd()
          .split('\n')
          .slice(1)
          .map((l) => l.trim())
          .sort(),
      ).toEqual([...bad].sort());
      expect(await snapshot(out)).toEqual(before);
      await expect(build({ dataDir: badDir, outDir: out })).rejects.toBeInstanceOf(ValidationError);
      expect(await snapshot(out)).toEqual(before);
    });
  });
});

/** Every path under a folder with its bytes (as text) or symlink target. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const p = path.join(e.parentPath, e.name);
    const rel = path.relative(dir, p);
    if (e.isSymbolicLink()) out[rel] = `-> ${await readlink(p)}`;
    else if (e.isFile()) out[rel] = await readFile(p, 'utf8');
    else out[rel] = '<dir>';
  }
  return out;
}

/** smallCatalog, a speed source that writes 999 when it cannot measure, and one implausible value of each kind. */
function implausibleCatalog(): FixtureSpec {
  const probe = {
    id: 'probe',
    name: 'Probe',
    url: 'https://example.org/probe',
    license: 'MIT',
    redistributable: true,
    tokens_per_second_sentinel: 999,
  };
  return {
    ...smallCatalog(),
    sources: [...DEFAULT_SOURCES, probe],
    files: {
      'models/prefixed.yaml': modelYaml(50, { name: 'name: "Lab: Test Model"' }),
      'models/spaced.yaml': modelYaml(51, { name: 'name: " Test  Model"' }),
      'measurements/speed/odd.jsonl': jsonl(
        run({ first_token_latency_ms: 0.35 }),
        run({ tokens_per_second: 1200, provenance: prov(905, 'probe') }),
        run({ tokens_per_second: 999, provenance: prov(906, 'probe') }), // the sentinel itself: "not measured", fine
      ),
      'measurements/benchmarks/odd.jsonl': jsonl(
        result({ value: 104, eval_date: '2025-01-11' }),
        result({ value: -3, eval_date: '2025-01-12' }),
        result({ metric: 'cost.usd', value: 250, eval_date: '2025-01-13' }), // USD: no range
      ),
    },
  };
}
const IMPLAUSIBLE = [
  'models/prefixed.yaml:2: model "prefixed": name: "Lab: Test Model" starts with its developer ("Lab: "): lists sort it under the developer; the developer has a field of its own',
  'models/spaced.yaml:2: model "spaced": name: " Test  Model" has leading, trailing or repeated spaces',
  'measurements/speed/odd.jsonl:1: first_token_latency_ms: 0.35 ms is under 1 ms: a latency in seconds written as milliseconds?',
  'measurements/speed/odd.jsonl:2: tokens_per_second: 1200 is above 999, the value probe writes when it could not measure (sources.yaml tokens_per_second_sentinel): more than it can report',
  'measurements/benchmarks/odd.jsonl:1: value: 104 is outside 0-100, the range of a percentage (metric "code.pass"): a fraction, or a count?',
  'measurements/benchmarks/odd.jsonl:2: value: -3 is outside 0-100, the range of a percentage (metric "code.pass"): a fraction, or a count?',
];

describe('warnings: valid values that look implausible', () => {
  it('each kind is reported with file, line, record and field, and the data stays valid', async () => {
    await withTemp(async (dir) => {
      await writeFixture(dir, implausibleCatalog());
      expect((await loadAndValidate(dir)).warnings.map(formatIssue)).toEqual(IMPLAUSIBLE);
    });
  });
  it('the base catalog has none', async () => {
    await withTemp(async (dir) => {
      await writeFixture(dir, smallCatalog());
      expect((await loadAndValidate(dir)).warnings).toEqual([]);
    });
  });
  it('two metrics deciding the run of one run group is a problem, at the second', async () => {
    await withTemp(async (dir) => {
      const spec = smallCatalog();
      spec.metrics = [
        metric('suite.a', { run_group: 'suite', decides_run: true }),
        metric('suite.b', { run_group: 'suite', decides_run: true }),
      ];
      spec.benchmarks = [];
      await writeFixture(dir, spec);
      expect(await problems(dir)).toEqual([
        'metrics.yaml:21: metric #2: decides_run: run group "suite" already has "suite.a" deciding its run: one metric per group picks the run',
      ]);
    });
  });

  describe('the CLI', () => {
    beforeAll(() => ensureCompiled());
    it('`validate` prints them on stderr and exits 0; `--strict` refuses them with exit code 1', async () => {
      await withTemp(async (dir) => {
        await writeFixture(dir, implausibleCatalog());
        const r = await runCli(['validate', '--data', dir]);
        expect(r.code).toBe(0);
        expect(r.stdout).toContain(`  ${IMPLAUSIBLE.length} warnings (on stderr): valid values that look implausible`);
        expect(r.stderr.trimEnd().split('\n')).toEqual(IMPLAUSIBLE.map((w) => `warning: ${w}`));
        const strict = await runCli(['validate', '--data', dir, '--strict']);
        expect(strict.code).toBe(1);
        expect(strict.stdout).toBe('');
        expect(strict.stderr.trimEnd().split('\n')).toEqual([
          `modelpub: ${IMPLAUSIBLE.length} warnings, refused by --strict, in the source data:`,
          ...IMPLAUSIBLE.map((w) => `  ${w}`),
        ]);
      });
    });
    it('`build` publishes, says how many sentinel samples and reseller 0/0 prices it left out, and prints the warnings', async () => {
      await withTemp(async (tmp) => {
        const spec = implausibleCatalog();
        spec.prices = [
          ...spec.prices!,
          price({ model: 'beta', input_per_million: 0, output_per_million: 0, first_party: false }),
        ];
        await writeFixture(path.join(tmp, 'data'), spec);
        const r = await runCli(['build', '--data', path.join(tmp, 'data'), '--out', path.join(tmp, 'out'), '--quiet']);
        expect(r.code).toBe(0);
        expect(r.stdout).toContain(
          '  1 sentinel speed sample left out of the tokens/s averages (their source could not measure them); 1 reseller price of 0/0 published as no price',
        );
        expect(r.stderr.trimEnd().split('\n')).toEqual(IMPLAUSIBLE.map((w) => `warning: ${w}`));
      });
    });
  });
});

describe('data/README.md', () => {
  it('its override example is a valid overrides file for a model of the default data', async () => {
    const readme = await readFile(path.join(ROOT, 'data/README.md'), 'utf8');
    const example = /```yaml\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('## Overrides')))![1]!;
    const file = OverridesFile.parse(parseYaml(example));
    expect(file.overrides).toHaveLength(1);
    await readFile(path.join(ROOT, 'data/models', `${file.overrides[0]!.model}.yaml`)); // the model exists
  });
});

describe('offers, providers and lifecycle: each rule', () => {
  const PROVIDERS = `providers:\n  - id: groq\n    name: Groq\n    api: https://api.groq.example/v1\n    provenance:\n      source: lab\n      evidence_sha256: "${HASH(800)}"\n`;
  const offer = (extra: Record<string, unknown> = {}) => ({
    model: 'alpha',
    provider: 'groq',
    provider_model_id: 'alpha-1',
    first_party: false,
    input_price_per_million: 1,
    output_price_per_million: 2,
    updated_at: '2025-01-05',
    provenance: prov(700),
    ...extra,
  });
  /** Errors (formatted) or, when the data is valid, its warnings; smallCatalog with providers.yaml and `files`. */
  async function check(files: Record<string, string>): Promise<{ errors: string[]; warnings: string[] }> {
    return withTemp(async (dir) => {
      await writeFixture(dir, { ...smallCatalog(), files: { 'providers.yaml': PROVIDERS, ...files } });
      try {
        return { errors: [], warnings: (await loadAndValidate(dir)).warnings.map(formatIssue) };
      } catch (e) {
        if (!(e instanceof ValidationError)) throw e;
        return { errors: e.issues.map(formatIssue), warnings: [] };
      }
    });
  }

  it('two offers (one first-party), a tier, a mode and an unpriced offer are valid, sorted and typed as written', async () => {
    await withTemp(async (dir) => {
      const rows = jsonl(
        offer({
          provider_model_id: 'alpha-big',
          tiers: [{ above_context_tokens: 200000, input_price_per_million: 2, output_price_per_million: 4 }],
          modes: { fast: { input_price_per_million: 6, output_price_per_million: 30 } },
          cache_read_price_per_million: 0.1,
        }),
        offer({ provider: 'lab-cloud', provider_model_id: 'alpha', first_party: true }),
        offer({ model: 'beta', input_price_per_million: null, output_price_per_million: null }),
      );
      const labCloud = `  - id: lab-cloud\n    name: Lab Cloud\n    doc: https://lab.example/docs\n    provenance:\n      source: lab\n      evidence_sha256: "${HASH(801)}"\n`;
      await writeFixture(dir, {
        ...smallCatalog(),
        files: { 'providers.yaml': PROVIDERS + labCloud, 'offers/groq.jsonl': rows },
      });
      const data = await loadAndValidate(dir);
      expect(data.warnings).toEqual([]);
      expect(data.providers.map((p) => [p.id, p.api, p.doc])).toEqual([
        ['groq', 'https://api.groq.example/v1', null],
        ['lab-cloud', null, 'https://lab.example/docs'],
      ]);
      expect(data.offers.map((o) => [o.model, o.provider, o.provider_model_id, o.first_party])).toEqual([
        ['alpha', 'groq', 'alpha-big', false],
        ['alpha', 'lab-cloud', 'alpha', true],
        ['beta', 'groq', 'alpha-1', false],
      ]);
      expect(data.offers[0]).toMatchObject({
        cache_write_price_per_million: null,
        tiers: [{ above_context_tokens: 200000, cache_read_price_per_million: null }],
        modes: { fast: { input_price_per_million: 6, output_price_per_million: 30 } },
        other_prices: {},
        status: null,
      });
      expect(data.offers[2]).toMatchObject({ input_price_per_million: null, output_price_per_million: null });
    });
  });

  it('an unknown provider or model in an offer, and a provider listing one id twice, are errors', async () => {
    const { errors } = await check({
      'offers/groq.jsonl': jsonl(offer({ provider: 'nope' }), offer({ model: 'ghost' }), offer()),
    });
    expect(errors).toEqual([
      'offers/groq.jsonl:2: offer "groq/alpha-1": model: unknown model "ghost": no data/models/ghost.yaml',
      'offers/groq.jsonl:1: offer "nope/alpha-1": provider: unknown provider "nope": declare it in providers.yaml',
      'offers/groq.jsonl:3: offer "groq/alpha-1": provider_model_id: groq already has an offer of this id at offers/groq.jsonl:2: one offer per provider and provider_model_id',
    ]);
  });

  it('a negative price, on the card, in a tier or a mode, is an error', async () => {
    const { errors } = await check({
      'offers/groq.jsonl': jsonl(
        offer({
          cache_write_price_per_million: -1,
          tiers: [{ above_context_tokens: 10, input_price_per_million: -2 }],
          modes: { fast: { output_price_per_million: -3 } },
        }),
      ),
    });
    expect(errors).toEqual([
      'offers/groq.jsonl:1: cache_write_price_per_million: cannot be negative',
      'offers/groq.jsonl:1: tiers[0].input_price_per_million: cannot be negative',
      'offers/groq.jsonl:1: modes.fast.output_price_per_million: cannot be negative',
    ]);
  });

  it('tier thresholds that do not ascend are an error', async () => {
    const tier = (n: number) => ({ above_context_tokens: n, input_price_per_million: 2 });
    const { errors } = await check({
      'offers/groq.jsonl': jsonl(offer({ tiers: [tier(200000), tier(128000), tier(128000)] })),
    });
    expect(errors).toEqual([
      'offers/groq.jsonl:1: offer "groq/alpha-1": tiers[1].above_context_tokens: 128000 is not above the tier before it (200000): tier thresholds ascend',
      'offers/groq.jsonl:1: offer "groq/alpha-1": tiers[2].above_context_tokens: 128000 is not above the tier before it (128000): tier thresholds ascend',
    ]);
  });

  it("a price's offer that does not exist, or offers another model, is an error", async () => {
    const price = (model: string, id: string) => ({
      model,
      lane: 'verified',
      input_per_million: 1,
      output_per_million: 2,
      observed_at: '2025-01-05T00:00:00Z',
      offer: { provider: 'groq', provider_model_id: id },
      provenance: prov(710),
    });
    const { errors } = await check({
      'offers/groq.jsonl': jsonl(offer()),
      'measurements/prices/linked.jsonl': jsonl(
        price('alpha', 'alpha-1'),
        price('alpha', 'missing'),
        price('beta', 'alpha-1'),
      ),
    });
    expect(errors).toEqual([
      'measurements/prices/linked.jsonl:2: offer: unknown offer "groq/missing": no such offer in offers/',
      'measurements/prices/linked.jsonl:3: offer: offer "groq/alpha-1" is an offer of "alpha", not of "beta"',
    ]);
  });

  it('a link to a missing model and a link cycle are errors, at the line of the link', async () => {
    const links = (...slugs: string[]) => `lane: verified\nsnapshots:\n${slugs.map((s) => `  - ${s}`).join('\n')}`;
    const { errors } = await check({
      'models/loop-a.yaml': modelYaml(51, { lane: links('loop-b') }),
      'models/loop-b.yaml': modelYaml(52, { lane: links('gamma', 'loop-a') }),
      'models/lost.yaml': modelYaml(53, { lane: links('nowhere') }),
      'models/self.yaml': modelYaml(54, { lane: links('self') }),
    });
    expect(errors).toEqual([
      'models/lost.yaml:24: model "lost": snapshots[0]: unknown model "nowhere": no data/models/nowhere.yaml',
      'models/loop-b.yaml:25: model "loop-b": snapshots[1]: alias and snapshot links form a cycle: loop-a -> loop-b -> loop-a',
      'models/self.yaml:24: model "self": snapshots[0]: alias and snapshot links form a cycle: self -> self',
    ]);
  });

  it('a retirement date before the deprecation date, and an unknown successor, are errors', async () => {
    const { errors } = await check({
      'models/old.yaml': modelYaml(61, {
        lane: 'lane: verified\nstatus: retired\ndeprecation_date: 2025-06-01\nretirement_date: 2025-05-31\nsuccessor: newer',
      }),
      'models/fine.yaml': modelYaml(62, {
        lane: 'lane: verified\nstatus: deprecated\ndeprecation_date: 2025-06-01\nretirement_date: 2025-06-01\nsuccessor: alpha',
      }),
      'models/selfish.yaml': modelYaml(63, { lane: 'lane: verified\nsuccessor: selfish' }),
    });
    expect(errors).toEqual([
      'models/old.yaml:26: model "old": successor: unknown successor "newer": no data/models/newer.yaml',
      'models/selfish.yaml:23: model "selfish": successor: a model is not its own successor',
      'models/old.yaml:25: model "old": retirement_date: 2025-05-31 is before the deprecation_date 2025-06-01: a model is retired after it is deprecated',
    ]);
  });

  it('warns about a cache-read price above the input price and about each cost key outside the card', async () => {
    const { errors, warnings } = await check({
      'offers/groq.jsonl': jsonl(
        offer({
          cache_read_price_per_million: 1.5,
          tiers: [{ above_context_tokens: 1000, input_price_per_million: 2, cache_read_price_per_million: 0.2 }],
          modes: { fast: { input_price_per_million: 3, cache_read_price_per_million: 4 } },
          other_prices: { request: 0.01, cached_input: 0.1 },
        }),
      ),
    });
    expect(errors).toEqual([]);
    const card = 'input, output, cache_read, cache_write, reasoning, input_audio, output_audio';
    expect(warnings).toEqual([
      'offers/groq.jsonl:1: offer "groq/alpha-1": cache_read_price_per_million: 1.5 is above the input price 1: a cache read costs less than input (swapped, or a typo?)',
      'offers/groq.jsonl:1: offer "groq/alpha-1": modes.fast.cache_read_price_per_million: 4 is above the input price 3: a cache read costs less than input (swapped, or a typo?)',
      `offers/groq.jsonl:1: offer "groq/alpha-1": other_prices.request: "request" is no price of the card (${card}): published as written`,
      `offers/groq.jsonl:1: offer "groq/alpha-1": other_prices.cached_input: "cached_input" is no price of the card (${card}): published as written`,
    ]);
  });
});

describe('dated prices (price-history/*.jsonl)', () => {
  const offerLine = (model: string, id: string) =>
    JSON.stringify({
      model,
      provider: 'acme',
      provider_model_id: id,
      first_party: true,
      updated_at: '2025-01-01',
      provenance: prov(900),
    });
  const row = (from: string | null, to: string | null, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      model: 'alpha',
      provider: 'acme',
      provider_model_id: 'alpha-1',
      effective_from: from,
      effective_to: to,
      input_price_per_million: 1,
      output_price_per_million: 2,
      precision: 'announced',
      provenance: prov(901),
      ...extra,
    });
  const files = (lines: string[]) => ({
    'providers.yaml': `providers:\n  - id: acme\n    name: Acme\n    provenance:\n      source: lab\n      evidence_sha256: "${HASH(902)}"\n`,
    'offers/acme.jsonl': `${offerLine('alpha', 'alpha-1')}\n${offerLine('beta', 'beta-1')}\n`,
    'price-history/manual.jsonl': `${lines.join('\n')}\n`,
  });

  it('a maintainer-added history is valid: a start-less first price, a gap, a current price, an announced future one', async () => {
    expect(
      await issuesWith(
        files([
          row(null, '2025-01-01'),
          row('2025-02-01', '2099-01-01'),
          row('2099-01-01', null, { announced_future: true }),
          row('2025-01-01', null, { provenance: prov(903, 'closed') }), // another source may overlap
        ]),
      ),
    ).toEqual([]);
  });

  it('an empty range, overlapping ranges of one offer and source, an unannounced future start and an unknown offer are named at their lines', async () => {
    const f = 'price-history/manual.jsonl';
    expect(
      await issuesWith(
        files([
          row('2025-01-01', '2025-01-01'),
          row(null, '2025-03-01'),
          row('2025-02-01', '2025-04-01'),
          row('2025-05-01', null),
          row('2025-06-01', '2025-07-01'),
          row('2205-01-01', null, { provider_model_id: 'alpha-2' }),
          row('2025-01-01', null, { model: 'beta', provenance: prov(904, 'closed') }),
        ]),
      ),
    ).toEqual([
      `${f}:6: provider_model_id: no offer acme/alpha-2 in offers/acme.jsonl: a dated price belongs to an offer`,
      `${f}:7: model: the offer acme/alpha-1 is of "alpha", not "beta"`,
      `${f}:1: effective_to: 2025-01-01 is not after effective_from 2025-01-01: the range holds no day (effective_to is exclusive)`,
      `${f}:3: effective_from: overlaps ${f}:2 (no start to 2025-03-01), a price of the same offer acme/alpha-1 from the same source (lab)`,
      `${f}:5: effective_from: overlaps ${f}:4 (2025-05-01 to no end), a price of the same offer acme/alpha-1 from the same source (lab)`,
      expect.stringMatching(
        new RegExp(
          `^${f}:6: effective_from: 2205-01-01 is after \\d{4}-\\d\\d-\\d\\d, tomorrow: a future start needs announced_future: true`,
        ),
      ),
    ]);
  });
});
