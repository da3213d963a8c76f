#!/usr/bin/env node
// Measures br and gzip levels over the distinct bodies of a built publication, to choose the build's levels
// (docs/publication.md "Compression"): for each level, the compressed bytes as a share of identity (all bodies, list
// pages, model details, list artifacts) and the CPU seconds on one thread; then, for pairs of levels, the wall and
// CPU seconds of the worker pool the build uses (src/publication/compress.ts) compressing every body to both.
//
//   node scripts/measure-compression.mjs --dist DIR [--gzip 4,5,6,7,8,9] [--brotli 4,5,6,7]
//                                        [--pairs 4:6,5:6,6:6,7:6] [--threads N] [--every K] [--repeat 3] [--fast]
//
// DIR is an out folder (its `current` release is read) or a release folder. Bodies are deduplicated by the sha256 the
// manifest lists. --every K measures every K-th distinct body only. Times are the median of --repeat runs (the
// machine is shared: the load average is printed before and after). --fast adds the levels the gateway may use for
// composed answers (gzip 1-3, brotli 1-4) with the time per answer for the largest list pages. Needs lib/ (npx tsc).
// Only measures and prints.
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import zlib from 'node:zlib';
import { brotliOptions, createCompressor, gzipOptions } from '../lib/publication/compress.js';

const USAGE =
  'usage: node scripts/measure-compression.mjs --dist DIR [--gzip 4,5,6,7,8,9] [--brotli 4,5,6,7] [--pairs 4:6,5:6,6:6,7:6] [--threads N] [--every K] [--repeat 3] [--fast]';

const { values: args } = parseArgs({
  options: {
    dist: { type: 'string' },
    gzip: { type: 'string', default: '4,5,6,7,8,9' },
    brotli: { type: 'string', default: '4,5,6,7' },
    pairs: { type: 'string', default: '4:6,5:6,6:6,7:6,5:4,5:9' },
    threads: { type: 'string', default: String(availableParallelism()) },
    every: { type: 'string', default: '1' },
    repeat: { type: 'string', default: '3' },
    fast: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (args.help || !args.dist) {
  console.log(USAGE);
  process.exit(args.help ? 0 : 2);
}
const numbers = (list) => list.split(',').filter(Boolean).map(Number);

// The distinct bodies, with their kind.
let release = path.resolve(args.dist);
try {
  readFileSync(path.join(release, 'manifest.json'));
} catch {
  release = path.join(release, 'current');
}
const manifest = JSON.parse(readFileSync(path.join(release, 'manifest.json'), 'utf8'));
const firstPath = new Map();
for (const file of manifest.files) if (!firstPath.has(file.sha256)) firstPath.set(file.sha256, file.path);
const every = Number(args.every);
const bodies = [...firstPath.values()]
  .filter((_, i) => i % every === 0)
  .map((p) => ({
    kind: p.startsWith('api/v1/list/') ? 'list' : p.startsWith('api/v1/models/') ? 'detail' : 'artifact',
    bytes: readFileSync(path.join(release, p)),
  }));
const KINDS = ['list', 'detail', 'artifact'];
const identity = { all: 0, list: 0, detail: 0, artifact: 0 };
for (const b of bodies) {
  identity.all += b.bytes.length;
  identity[b.kind] += b.bytes.length;
}
const count = (kind) => bodies.filter((b) => b.kind === kind).length;
console.log(
  `${release}: ${manifest.files.length} paths, ${firstPath.size} distinct bodies; measuring ${bodies.length} ` +
    `(${KINDS.map((k) => `${count(k)} ${k}`).join(', ')}), ${(identity.all / 1e6).toFixed(1)} MB`,
);

const repeat = Number(args.repeat);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const cpuSeconds = (since) => {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1e6;
};
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
console.log(`load average ${load()}; times are medians of ${repeat} runs`);

/** One coding at one level on this thread: shares of identity per kind, CPU seconds. */
function single(name, compress) {
  const out = { all: 0, list: 0, detail: 0, artifact: 0 };
  const runs = [];
  for (let r = 0; r < repeat; r++) {
    const cpu = process.cpuUsage();
    for (const b of bodies) {
      const n = compress(b.bytes).length;
      if (r > 0) continue;
      out.all += n;
      out[b.kind] += n;
    }
    runs.push(cpuSeconds(cpu));
  }
  const seconds = median(runs);
  const share = (k) => (identity[k] ? (out[k] / identity[k]).toFixed(3) : '-');
  return [name, share('all'), ...KINDS.map(share), seconds.toFixed(2), (identity.all / 1e6 / seconds).toFixed(0)];
}

function table(header, rows) {
  console.log(`\n| ${header.join(' | ')} |\n|${header.map(() => '---').join('|')}|`);
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
}

const levelRows = [];
for (const l of numbers(args.gzip)) levelRows.push(single(`gzip ${l}`, (b) => zlib.gzipSync(b, gzipOptions(l))));
for (const q of numbers(args.brotli)) {
  levelRows.push(single(`br ${q}`, (b) => zlib.brotliCompressSync(b, brotliOptions(q))));
}
table(
  ['coding', 'share of identity', 'list pages', 'details', 'artifacts', 'CPU s, 1 thread', 'MB/s (input)'],
  levelRows,
);

// The pool, compressing every body to both codings as the build will.
const threads = Number(args.threads);
const pairRows = [];
for (const pair of args.pairs.split(',').filter(Boolean)) {
  const [brotliQuality, gzipLevel] = pair.split(':').map(Number);
  const walls = [];
  const cpus = [];
  let br = 0;
  let gz = 0;
  for (let r = 0; r < repeat; r++) {
    const compressor = createCompressor({ threads, brotliQuality, gzipLevel });
    const cpu = process.cpuUsage();
    const start = performance.now();
    br = 0;
    gz = 0;
    await Promise.all(
      bodies.map(async (b) => {
        const reps = await compressor.compress(b.bytes);
        br += reps.br.size;
        gz += reps.gzip.size;
      }),
    );
    walls.push((performance.now() - start) / 1000);
    cpus.push(cpuSeconds(cpu));
    await compressor.close();
  }
  const wall = median(walls);
  const seconds = median(cpus);
  pairRows.push([
    `br ${brotliQuality} + gzip ${gzipLevel}`,
    (br / identity.all).toFixed(3),
    (gz / identity.all).toFixed(3),
    wall.toFixed(2),
    seconds.toFixed(2),
  ]);
}
table(['pool levels', 'br share', 'gzip share', `wall s, ${threads} threads`, 'CPU s (all threads)'], pairRows);

if (args.fast) {
  // Composed answers: the largest prebuilt list pages stand for them (50 models; page_size=100 doubles them).
  const pages = bodies
    .filter((b) => b.kind === 'list')
    .sort((a, b) => b.bytes.length - a.bytes.length)
    .slice(0, 200);
  const pageBytes = pages.reduce((n, b) => n + b.bytes.length, 0);
  const fastRows = [];
  const fast = (name, compress) => {
    let out = 0;
    const runs = [];
    for (let r = 0; r < repeat; r++) {
      out = 0;
      const cpu = process.cpuUsage();
      for (const p of pages) out += compress(p.bytes).length;
      runs.push((cpuSeconds(cpu) * 1000) / pages.length);
    }
    const ms = median(runs);
    fastRows.push([
      name,
      (out / pageBytes).toFixed(3),
      ms.toFixed(2),
      (pageBytes / pages.length / 1e3 / ms).toFixed(0),
    ]);
  };
  for (const l of [1, 2, 3, 6]) fast(`gzip ${l}`, (b) => zlib.gzipSync(b, gzipOptions(l)));
  for (const q of [1, 2, 3, 4, 5]) fast(`br ${q}`, (b) => zlib.brotliCompressSync(b, brotliOptions(q)));
  console.log(
    `\nComposed-answer candidates: the ${pages.length} largest list pages (mean ${(pageBytes / pages.length / 1e3).toFixed(0)} kB)`,
  );
  table(['coding', 'share of identity', 'CPU ms per page', 'MB/s'], fastRows);
}
console.log(`\nload average ${load()}`);
