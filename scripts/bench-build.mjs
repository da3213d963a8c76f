#!/usr/bin/env node
// Build benchmark: builds the reference data (data/) and a synthetic catalog, and compares each build with the
// time `cp -r` needs to copy the produced release on the same disk (the raw-IO limit).
//
//   node scripts/bench-build.mjs [--models 2000] [--metrics 60] [--speed 500000] [--seed 1]
//                                [--root DIR] [--out DIR] [--rev GIT-REV] [--repeat 3] [--data DIR | --no-reference]
//                                [--keep]
//
// Goals: a build within 3x of the `cp -r` copy of what it produced, and peak RSS under 2 GB.
// This script only measures and prints; it never fails on a missed goal (timing goals don't belong in tests).
//
// What it does:
//   1. compiles src/ into lib/ if lib/ is missing (or, with --rev, compiles that git revision's src/ into
//      <root>/snapshot-<sha>/ so that the figures belong to a known commit while others edit src/);
//   2. builds data/ (or --data DIR) into a temporary out folder: wall time, peak RSS (/usr/bin/time, else
//      /proc/<pid>/status VmHWM), files and bytes (manifest.json and `du -sb`), then times `cp -r` and `cp -a` of the
//      release folder; this is repeated --repeat times (default 3: small trees are noisy on a shared disk) and the
//      table shows the medians;
//   3. generates the synthetic catalog (scripts/synthetic-catalog.mjs) and measures its build the same way;
//   4. changes one model's en description and rebuilds into the same out folder (the incremental build);
//   5. prints a table (plain and markdown), writes <out>/results-<pid>.json (--out, default bench-out/), and deletes
//      <root> unless --keep.
// Everything lives under <root> (default: bench-out/run-<pid> in the repository), so build output and copies
// are on the same disk; the script checks that with stat(2) and prints `df -h` first.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs as parseCliArgs } from 'node:util';
import YAML from 'yaml';
import { compileRevision } from './bench/snapshot.mjs';
import { wholeNumber } from './synthetic-catalog.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const USAGE =
  'usage: node scripts/bench-build.mjs [--models 2000] [--metrics 60] [--speed 500000] [--seed 1] [--root DIR] [--out DIR] [--rev GIT-REV] [--repeat 3] [--data DIR | --no-reference] [--keep]';
const GOAL_RATIO = 3;
const GOAL_RSS = 2 * 1024 ** 3;

// ---------------------------------------------------------------------------------------------
// Command line

function parseArgs(argv) {
  const { values: v } = parseCliArgs({
    args: argv,
    options: {
      models: { type: 'string', default: '2000' },
      metrics: { type: 'string', default: '60' },
      speed: { type: 'string', default: '500000' },
      seed: { type: 'string', default: '1' },
      root: { type: 'string' },
      out: { type: 'string' },
      rev: { type: 'string' },
      repeat: { type: 'string', default: '3' },
      data: { type: 'string' },
      'no-reference': { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  return {
    models: wholeNumber('models', v.models),
    metrics: wholeNumber('metrics', v.metrics),
    speed: wholeNumber('speed', v.speed),
    seed: wholeNumber('seed', v.seed),
    root: v.root ? path.resolve(v.root) : null,
    out: path.resolve(v.out ?? path.join(REPO, 'bench-out')),
    rev: v.rev ?? null,
    repeat: Math.max(1, wholeNumber('repeat', v.repeat)),
    reference: !v['no-reference'],
    data: path.resolve(v.data ?? path.join(REPO, 'data')),
    keep: v.keep,
    help: v.help,
  };
}

// ---------------------------------------------------------------------------------------------
// Small helpers

const log = (...a) => console.log(...a);
const sh = (cmd, args, opts = {}) => execFileSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 26, ...opts });
const fmtBytes = (n) =>
  n == null
    ? '-'
    : n >= 1e9
      ? `${(n / 1e9).toFixed(2)} GB`
      : n >= 1e6
        ? `${(n / 1e6).toFixed(1)} MB`
        : `${(n / 1e3).toFixed(1)} kB`;
const fmtSecs = (s) => (s == null ? '-' : `${s.toFixed(1)} s`);
const fmtInt = (n) => (n == null ? '-' : n.toLocaleString('en-US'));
const rmrf = (p) => fs.rmSync(p, { recursive: true, force: true });

/** Run a command, time it (wall clock, monotonic), and return its duration in seconds. */
function timed(cmd, args) {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const secs = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return secs;
}

function machine(root) {
  const cpus = os.cpus();
  let disk = '';
  try {
    const dev = sh('df', ['--output=source', root]).trim().split('\n').pop();
    const name = path.basename(fs.realpathSync(dev)).replace(/\d+$/, '');
    const rot = fs.readFileSync(`/sys/block/${name}/queue/rotational`, 'utf8').trim();
    disk = `${dev} (${rot === '0' ? 'non-rotational' : 'rotational'})`;
  } catch {
    /* not Linux, or a virtual device without /sys/block entry */
  }
  let fstype = '';
  try {
    fstype = sh('df', ['--output=fstype', root]).trim().split('\n').pop();
  } catch {
    /* ignore */
  }
  return {
    nproc: os.availableParallelism?.() ?? cpus.length,
    cpu: cpus[0]?.model ?? 'unknown',
    memory: os.totalmem(),
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    disk: [disk, fstype].filter(Boolean).join(', '),
  };
}

// ---------------------------------------------------------------------------------------------
// The modelpub CLI to measure

/** Returns the path of a launcher (bin/modelpub.js-alike) whose ../lib/cli.js is the compiled CLI to measure. */
function prepareCli(o, root) {
  if (!o.rev) {
    if (!fs.existsSync(path.join(REPO, 'lib', 'cli.js'))) {
      log('lib/ is missing: compiling (npx tsc -p .)');
      sh('npx', ['tsc', '-p', '.'], { cwd: REPO, stdio: 'inherit' });
    }
    let commit = '';
    try {
      commit = sh('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO }).trim();
    } catch {
      /* not a git checkout */
    }
    let dirty = false;
    try {
      dirty = sh('git', ['status', '--porcelain', '--', 'src'], { cwd: REPO }).trim() !== '';
    } catch {
      /* ignore */
    }
    return {
      launcher: path.join(REPO, 'bin', 'modelpub.js'),
      label: `lib/ of the working tree (HEAD ${commit}${dirty ? ', src/ has uncommitted changes' : ''})`,
    };
  }
  // A snapshot of one revision, compiled on its own, so concurrent edits of src/ and lib/ cannot change the figures.
  const snap = compileRevision(REPO, o.rev, root, log);
  return { launcher: snap.launcher, label: `git ${o.rev} = ${snap.sha.slice(0, 12)} (compiled snapshot)` };
}

// ---------------------------------------------------------------------------------------------
// One measured build

const HAS_TIME = fs.existsSync('/usr/bin/time');

/**
 * Runs `modelpub build` as a child process. Wall time is measured here (spawn to exit, so it includes Node's start-up);
 * peak RSS comes from /usr/bin/time (%M, KB) when present, else from polling /proc/<pid>/status (VmHWM).
 * Progress lines on stderr are echoed (indented) and their "<phase>: done ... in X s" figures are collected.
 */
function runBuild(launcher, dataDir, outDir) {
  return new Promise((resolve, reject) => {
    const timeFile = path.join(path.dirname(outDir), `.time-${process.pid}-${Date.now()}`);
    // The same V8 heap cap as bin/modelpub.js's shebang and the npm scripts (spawning node directly bypasses the shebang).
    const nodeArgs = ['--max-old-space-size=1536', launcher, 'build', '--data', dataDir, '--out', outDir];
    const [cmd, args] = HAS_TIME
      ? ['/usr/bin/time', ['-o', timeFile, '-f', '%e %M', process.execPath, ...nodeArgs]]
      : [process.execPath, nodeArgs];
    const t0 = performance.now();
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CI: '1' } });
    let stdout = '';
    let errTail = '';
    const phases = {};
    let hwm = 0;
    const poll = HAS_TIME
      ? null
      : setInterval(() => {
          try {
            const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
            if (m) hwm = Math.max(hwm, Number(m[1]) * 1024);
          } catch {
            /* exited */
          }
        }, 50);
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    let partial = '';
    child.stderr.on('data', (d) => {
      const lines = (partial + d).split('\n');
      partial = lines.pop();
      for (const line of lines) {
        errTail = `${errTail + line}\n`.slice(-4000);
        process.stderr.write(`    | ${line}\n`);
        const m = /^(.+): done(?: \((\d+)\))? in ([\d.]+) s$/.exec(line);
        if (m) phases[m[1]] = Number(m[3]);
      }
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const wall = (performance.now() - t0) / 1000;
      if (poll) clearInterval(poll);
      let rss = hwm || null;
      let timeWall = null;
      if (HAS_TIME) {
        const t = fs.readFileSync(timeFile, 'utf8').trim().split('\n').pop().split(' ');
        fs.rmSync(timeFile, { force: true });
        timeWall = Number(t[0]);
        rss = Number(t[1]) * 1024;
      }
      if (code !== 0) return reject(new Error(`build of ${dataDir} failed (exit ${code}):\n${errTail}${stdout}`));
      const num = (re) => {
        const m = re.exec(stdout);
        return m ? m.slice(1).map(Number) : null;
      };
      const [files, distinct, mbWritten, kept] =
        num(/(\d+) files, (\d+) distinct bodies, ([\d.]+) MB written, (\d+) kept/) ?? [];
      const [added, changed, removed] = num(/changes: (\d+) added, (\d+) changed, (\d+) removed/) ?? [];
      const release = /at (\S+)\n/.exec(stdout)?.[1];
      resolve({
        wall,
        timeWall,
        rss,
        phases,
        release: release && path.resolve(release),
        stdout,
        reported: {
          files,
          distinct,
          bytesWritten: mbWritten == null ? null : Math.round(mbWritten * 1e6),
          kept,
          added,
          changed,
          removed,
        },
      });
    });
  });
}

/** Files and bytes of a release folder: logical (every path, as a reader or `cp -r` sees it) and on disk (hard links once). */
function measureRelease(dir) {
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  let logical = 0;
  for (const f of manifest.files) logical += f.bytes;
  const meta = ['manifest.json', 'changes.json', 'publication.json'].filter((f) => fs.existsSync(path.join(dir, f)));
  for (const f of meta) logical += fs.statSync(path.join(dir, f)).size;
  const duApparent = Number(sh('du', ['-sb', dir]).split('\t')[0]); // apparent size, each inode counted once
  const duAllocated = Number(sh('du', ['-s', '-B1', dir]).split('\t')[0]); // allocated blocks, each inode counted once
  return { files: manifest.files.length + meta.length, logical, onDisk: duApparent, allocated: duAllocated };
}

/** Times `cp -r` (hard links become separate files: the bytes a plain copy of the publication writes) and `cp -a` (links preserved) of a release. */
function measureCopies(release, scratch) {
  const out = {};
  for (const [key, flags] of [
    ['cpR', ['-r']],
    ['cpA', ['-a']],
  ]) {
    const dest = path.join(scratch, `copy${flags[0]}`);
    rmrf(dest);
    timed('sync', []);
    out[key] = timed('cp', [...flags, release, dest]);
    out[`${key}Sync`] = timed('sync', []); // write-back the copy left in the page cache
    if (key === 'cpR') out.cpRBytes = Number(sh('du', ['-sb', dest]).split('\t')[0]);
    rmrf(dest);
  }
  return out;
}

/** Build, count, sync, copy: one row of the table. */
async function measure(name, cli, dataDir, outDir, scratch, { copies = true } = {}) {
  log(
    `\n== ${name}: modelpub build --data ${path.relative(REPO, dataDir) || '.'} --out ${path.relative(REPO, outDir)}`,
  );
  const loadBefore = os.loadavg()[0];
  log(
    `   load average before: ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')} (other work on this machine skews the figures)`,
  );
  const b = await runBuild(cli.launcher, dataDir, outDir);
  const buildSync = timed('sync', []);
  const size = measureRelease(b.release);
  const row = { name, ...b, ...size, buildSync, loadBefore, loadAfter: os.loadavg()[0] };
  delete row.stdout;
  log(
    b.stdout
      .trimEnd()
      .split('\n')
      .map((l) => `    > ${l}`)
      .join('\n'),
  );
  log(
    `   wall ${fmtSecs(b.wall)} (/usr/bin/time: ${fmtSecs(b.timeWall)}), peak RSS ${fmtBytes(b.rss)}, then sync ${fmtSecs(buildSync)}`,
  );
  log(
    `   ${fmtInt(size.files)} files, ${fmtBytes(size.logical)} logical, ${fmtBytes(size.onDisk)} on disk (du -sb), ${fmtBytes(size.allocated)} allocated`,
  );
  if (copies) {
    Object.assign(row, measureCopies(b.release, scratch));
    log(
      `   cp -r ${fmtSecs(row.cpR)} (+ sync ${fmtSecs(row.cpRSync)}, copy is ${fmtBytes(row.cpRBytes)}), cp -a ${fmtSecs(row.cpA)} (+ sync ${fmtSecs(row.cpASync)})`,
    );
  }
  return row;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Several runs of one build as one row: medians of the times, the highest peak RSS, every sample kept. */
function combine(name, runs) {
  if (runs.length === 1) return { ...runs[0], name };
  const row = {
    ...runs[runs.length - 1],
    name,
    samples: runs.map((r) => ({ wall: r.wall, rss: r.rss, cpR: r.cpR, cpA: r.cpA })),
  };
  for (const k of ['wall', 'timeWall', 'buildSync', 'cpR', 'cpRSync', 'cpA', 'cpASync'])
    row[k] = median(runs.map((r) => r[k]));
  row.rss = Math.max(...runs.map((r) => r.rss));
  row.phases = Object.fromEntries(
    Object.keys(runs[0].phases).map((p) => [p, median(runs.map((r) => r.phases[p] ?? 0))]),
  );
  return row;
}

/** Rewrites one model's en description (the smallest real edit a maintainer makes). Returns the model's slug. */
function editOneModel(dataDir) {
  const file = fs.readdirSync(path.join(dataDir, 'models')).sort()[0];
  const p = path.join(dataDir, 'models', file);
  const doc = YAML.parseDocument(fs.readFileSync(p, 'utf8'));
  doc.setIn(['description', 'en'], `${doc.getIn(['description', 'en'])} Edited for the incremental benchmark.`);
  fs.writeFileSync(p, doc.toString({ lineWidth: 0 }));
  return file.replace(/\.yaml$/, '');
}

// ---------------------------------------------------------------------------------------------
// Report

function table(rows) {
  const head = [
    'build',
    'wall',
    'peak RSS',
    'files',
    'logical bytes',
    'bytes on disk',
    'cp -r',
    'cp -a',
    'build / cp -r',
    `goal ≤${GOAL_RATIO}×`,
    'goal <2 GB',
  ];
  const body = rows.map((r) => {
    const ratio = r.cpR ? r.wall / r.cpR : null;
    return [
      r.name,
      fmtSecs(r.wall),
      fmtBytes(r.rss),
      fmtInt(r.files),
      fmtBytes(r.logical),
      fmtBytes(r.onDisk),
      fmtSecs(r.cpR),
      fmtSecs(r.cpA),
      ratio == null ? '-' : `${ratio.toFixed(1)}×`,
      ratio == null ? '-' : ratio <= GOAL_RATIO ? 'met' : 'MISSED',
      r.rss < GOAL_RSS ? 'met' : 'MISSED',
    ];
  });
  const md = [head, head.map(() => '---'), ...body].map((r) => `| ${r.join(' | ')} |`).join('\n');
  const widths = head.map((_, i) => Math.max(...[head, ...body].map((r) => String(r[i]).length)));
  const txt = [head, ...body].map((r) => r.map((c, i) => String(c).padEnd(widths[i])).join('  ')).join('\n');
  return { md, txt };
}

// ---------------------------------------------------------------------------------------------

async function main() {
  let o;
  try {
    o = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`bench-build: ${e.message}`);
    process.exit(2);
  }
  if (o.help) return log(USAGE);
  const root = o.root ?? path.join(REPO, 'bench-out', `run-${process.pid}`);
  if (fs.existsSync(root) && fs.readdirSync(root).length)
    throw new Error(`${root} is not empty; remove it or pass another --root`);
  fs.mkdirSync(root, { recursive: true });
  const t0 = performance.now();
  const results = {
    started: new Date().toISOString(),
    args: { models: o.models, metrics: o.metrics, speed: o.speed, seed: o.seed },
    rows: [],
  };
  try {
    results.machine = machine(root);
    const m = results.machine;
    log(
      `machine: ${m.nproc} CPUs (${m.cpu}), ${fmtBytes(m.memory)} RAM, ${m.platform}, Node ${m.node}, disk ${m.disk || 'unknown'}`,
    );
    log(sh('df', ['-h', root, os.tmpdir()]).trimEnd());
    // Estimate the space: ~0.2 MB per (model, metric) pair logical, measured at 200 models x 60 metrics; the build
    // keeps about that on disk and `cp -r` writes it all again (hard links expanded).
    const estimate = o.models * Math.max(1, o.metrics) * 0.2e6;
    const free = fs.statfsSync(root).bavail * fs.statfsSync(root).bsize;
    log(
      `estimated space: ~${fmtBytes(2.2 * estimate)} (synthetic build + its cp -r copy); free: ${fmtBytes(free)}${free < 2.5 * estimate ? '  ** TIGHT: the copies may fill the disk **' : ''}`,
    );

    const cli = prepareCli(o, root);
    results.cli = cli.label;
    log(`measuring: ${cli.label}`);
    const scratch = path.join(root, 'scratch');
    fs.mkdirSync(scratch);
    if (fs.statSync(scratch).dev !== fs.statSync(root).dev)
      throw new Error('scratch and build output are on different devices');

    if (o.reference) {
      const rel = path.relative(REPO, o.data);
      const refName = `reference (${rel.startsWith('..') ? o.data : rel}/)`;
      const runs = [];
      for (let i = 1; i <= o.repeat; i++) {
        runs.push(
          await measure(
            `${refName}${o.repeat > 1 ? ` run ${i}/${o.repeat}` : ''}`,
            cli,
            o.data,
            path.join(root, 'reference-out'),
            scratch,
          ),
        );
        rmrf(path.join(root, 'reference-out'));
      }
      results.rows.push(combine(`${refName}${o.repeat > 1 ? `, median of ${o.repeat}` : ''}`, runs));
    }

    const synthData = path.join(root, 'synthetic-data');
    log(
      `\n== generating the synthetic catalog: ${o.models} models x ${o.metrics} metrics x ${o.speed} speed runs (seed ${o.seed})`,
    );
    const g0 = performance.now();
    sh(
      process.execPath,
      [
        path.join(REPO, 'scripts', 'synthetic-catalog.mjs'),
        '--out',
        synthData,
        '--models',
        String(o.models),
        '--metrics',
        String(o.metrics),
        '--speed',
        String(o.speed),
        '--seed',
        String(o.seed),
      ],
      { stdio: 'inherit' },
    );
    results.generateSeconds = (performance.now() - g0) / 1000;
    results.syntheticDataBytes = Number(sh('du', ['-sb', synthData]).split('\t')[0]);
    log(`   ${fmtBytes(results.syntheticDataBytes)} of source data in ${fmtSecs(results.generateSeconds)}`);

    const name = `synthetic ${o.models}×${o.metrics}×${o.speed}`;
    const synthOut = path.join(root, 'synthetic-out');
    const full = await measure(name, cli, synthData, synthOut, scratch);
    results.rows.push(full);

    const slug = editOneModel(synthData);
    log(`\n== incremental: changed models/${slug}.yaml description.en`);
    const inc = await measure(`${name}, incremental (1 description)`, cli, synthData, synthOut, scratch, {
      copies: false,
    });
    inc.cpR = full.cpR; // compared with the copy of the full tree, which is what it republishes
    inc.editedModel = slug;
    results.rows.push(inc);
    log(
      `   changes printed by the build: ${inc.reported.added} added, ${inc.reported.changed} changed, ${inc.reported.removed} removed; ` +
        `${fmtInt(inc.reported.distinct)} distinct bodies, ${fmtBytes(inc.reported.bytesWritten)} written, ${fmtInt(inc.reported.kept)} kept from the previous publication`,
    );
    results.outDirOnDisk = Number(sh('du', ['-sb', synthOut]).split('\t')[0]);
    log(
      `   both releases together (the new one shares unchanged files with the old one): ${fmtBytes(results.outDirOnDisk)} on disk`,
    );

    results.seconds = (performance.now() - t0) / 1000;
    const t = table(results.rows);
    log(`\n== results (${cli.label})\n`);
    log(t.txt);
    log("\nphases (seconds, from the build's progress lines):");
    for (const r of results.rows)
      log(
        `  ${r.name}: ${Object.entries(r.phases)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}; sync after build ${r.buildSync.toFixed(1)}`,
      );
    for (const r of results.rows.filter((x) => x.samples)) {
      log(
        `\nsamples of ${r.name}: ` +
          r.samples
            .map(
              (x) =>
                `build ${x.wall.toFixed(1)} s / cp -r ${x.cpR.toFixed(1)} s / cp -a ${x.cpA.toFixed(1)} s / ${fmtBytes(x.rss)}`,
            )
            .join('; '),
      );
    }
    log(
      '\nsync after cp (write-back of the copy): ' +
        results.rows
          .filter((r) => r.cpRSync != null)
          .map((r) => `${r.name}: cp -r ${r.cpRSync.toFixed(1)} s, cp -a ${r.cpASync.toFixed(1)} s`)
          .join('; '),
    );
    log('\nmarkdown:\n');
    log(t.md);
    results.markdown = t.md;
    fs.mkdirSync(o.out, { recursive: true });
    const resultsFile = path.join(o.out, `results-${process.pid}.json`);
    fs.writeFileSync(resultsFile, `${JSON.stringify(results, null, 2)}\n`);
    const shown = path.relative(process.cwd(), resultsFile);
    log(`\nresults: ${shown.startsWith('..') ? resultsFile : shown}; total ${fmtSecs(results.seconds)}`);
  } finally {
    if (o.keep) log(`kept ${root}`);
    else rmrf(root);
  }
}

main().catch((e) => {
  console.error(`bench-build: ${process.env.MODELPUB_DEBUG ? (e.stack ?? e) : (e.message ?? e)}`);
  process.exit(1);
});
