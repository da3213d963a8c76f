#!/usr/bin/env node
// What the br and gzip representations cost a build: the default data built with them and with --no-compression,
// side by side, run by run (A B A B ...), for a full build and for an incremental build after one description change.
//
//   node scripts/bench-compression-build.mjs [--runs 5] [--data data] [--scratch DIR]
//
// Full: each run builds into a folder of its own, and every folder is deleted only at the end. Deleting a release
// right before a build measures the file system instead: ext4 then spends its time skipping the freshly freed inodes
// when it allocates new ones (seen here: 30 s of system time for the same build that takes 4 s on a settled disk).
// Incremental: two copies of the data one English description apart; each run builds the copy its folder does not
// hold, so every run is the same incremental build (one description changed).
// Wall, user and system seconds are /usr/bin/time's; ratios are taken pair by pair and their median is printed.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: A } = parseArgs({
  options: { runs: { type: 'string', default: '5' }, data: { type: 'string' }, scratch: { type: 'string' } },
});
const RUNS = Number(A.runs);
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error(`--runs must be a positive integer, not ${A.runs}`);
const DATA = path.resolve(A.data ?? path.join(ROOT, 'data'));
const CLI = path.join(ROOT, 'bin', 'modelpub.js');
if (!existsSync(path.join(ROOT, 'lib', 'cli.js'))) throw new Error('lib/ is missing: run `npx tsc -p .` first');
if (!existsSync('/usr/bin/time')) throw new Error('/usr/bin/time is missing (Debian: apt-get install time)');
const scratch = mkdtempSync(path.join(A.scratch ?? os.tmpdir(), 'modelpub-bench-compression-'));

/** One build under /usr/bin/time: wall, user and system seconds. */
function timed(args) {
  const r = spawnSync(
    '/usr/bin/time',
    ['-f', 'TIME %e %U %S', process.execPath, '--max-old-space-size=1536', CLI, 'build', '--quiet', ...args],
    { encoding: 'utf8' },
  );
  const m = /TIME ([\d.]+) ([\d.]+) ([\d.]+)\s*$/.exec(r.stderr);
  if (r.status !== 0 || !m) throw new Error(`build ${args.join(' ')} failed:\n${r.stdout}${r.stderr}`);
  return { wall: Number(m[1]), user: Number(m[2]), sys: Number(m[3]) };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const f2 = (x) => x.toFixed(2);

function report(name, pairs) {
  console.log(`\n${name}: ${pairs.length} pairs`);
  console.log('run | with: wall user sys | without: wall user sys | wall ratio');
  for (const [i, [a, b]] of pairs.entries())
    console.log(
      `${i + 1} | ${f2(a.wall)} ${f2(a.user)} ${f2(a.sys)} | ${f2(b.wall)} ${f2(b.user)} ${f2(b.sys)} | ${f2(a.wall / b.wall)}`,
    );
  const ratios = pairs.map(([a, b]) => a.wall / b.wall);
  console.log(
    `median wall: with ${f2(median(pairs.map((p) => p[0].wall)))} s, without ${f2(median(pairs.map((p) => p[1].wall)))} s; ` +
      `median of the paired ratios ${f2(median(ratios))} (${f2(Math.min(...ratios))}-${f2(Math.max(...ratios))})`,
  );
}

try {
  console.log(`node ${process.version}, ${os.availableParallelism()} cores, data ${DATA}, scratch ${scratch}`);
  // Full builds, one folder each; a warm-up pair first (not counted).
  const full = [];
  for (let i = 0; i <= RUNS; i++) {
    const a = timed(['--data', DATA, '--out', path.join(scratch, `full-with-${i}`)]);
    const b = timed(['--data', DATA, '--out', path.join(scratch, `full-without-${i}`), '--no-compression']);
    if (i > 0) full.push([a, b]);
  }
  report('full build, with representations against --no-compression', full);

  // Incremental: data A and data B differ in one English description.
  const dataA = path.join(scratch, 'data-a');
  const dataB = path.join(scratch, 'data-b');
  cpSync(DATA, dataA, { recursive: true });
  cpSync(DATA, dataB, { recursive: true });
  // The first model whose English description is a line of its own: its text gets a few more words.
  const EN = /^(\s+en: .*?)\.\s*$/m;
  const models = path.join(dataB, 'models');
  const name = readdirSync(models)
    .sort()
    .find((n) => n.endsWith('.yaml') && EN.test(readFileSync(path.join(models, n), 'utf8')));
  if (!name) throw new Error(`${models}: no model with an English description line to edit`);
  const file = path.join(models, name);
  const edited = readFileSync(file, 'utf8').replace(EN, '$1, edited for the benchmark.');
  writeFileSync(file, edited);
  const outs = { with: path.join(scratch, 'inc-with'), without: path.join(scratch, 'inc-without') };
  timed(['--data', dataA, '--out', outs.with]);
  timed(['--data', dataA, '--out', outs.without, '--no-compression']);
  const inc = [];
  for (let i = 0; i <= RUNS; i++) {
    const data = i % 2 === 0 ? dataB : dataA;
    const a = timed(['--data', data, '--out', outs.with]);
    const b = timed(['--data', data, '--out', outs.without, '--no-compression']);
    if (i > 0) inc.push([a, b]);
  }
  report('incremental build after one description change, with representations against --no-compression', inc);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
