#!/usr/bin/env node
// Build benchmark: for the default data and synthetic catalogs (scripts/synthetic-catalog.mjs), each of these next to
// a `cp -r` of the same release in the same run:
//   - full build: the first `modelpub build` into an empty out folder;
//   - peak RSS of the build process and its worker threads (/usr/bin/time -f %M), and of its process tree (sampled);
//   - rebuild after one description change: the first `  en:` line of one models/*.yaml edited, built into the same
//     out folder;
//   - rebuild after one benchmark value change: one published value of measurements/benchmarks/*.jsonl moved by 1 %;
// the largest synthetic catalogs get the full build and RSS only.
//
//   node scripts/bench-build.mjs [--models 2000,10000] [--metrics 60] [--speed N] [--seed 1] [--repeat 4]
//                                [--full-only-above 2000] [--data DIR | --no-reference] [--rev GIT-REV]
//                                [--root DIR] [--out DIR] [--keep]
//
// Goals (issue "The build at scale"), printed next to the figures; the script only measures and never fails on a
// missed goal (timing goals don't belong in tests): full build <= 1.5 x `cp -r` of its release, peak RSS < 1 GB,
// rebuild after one description change <= 10 % of the full build.
//
// How:
//   1. compiles src/ into lib/ if lib/ is missing, or with --rev compiles that git revision's src/ into
//      <root>/snapshot-<sha>/ so that the figures belong to a known commit while others edit src/;
//   2. per catalog and repetition: a full build into a new, empty folder (wall time from spawn to exit, so Node's
//      start-up counts; peak RSS), `sync`, `cp -r` of the release folder on the same disk, timed between two `sync`s
//      (hard links become separate files, as in a plain copy of the publication), then the two rebuilds;
//   3. prints every sample, the medians, the paired ratios and the goals, the load average before and after each
//      build (the machine is shared), and writes <out>/results-<pid>.json (--out, default bench-out/).
// Peak RSS: GNU time's %M is the kernel's ru_maxrss of the build process; worker threads are threads of that process,
// so their memory is in it. A child *process* is not added in: %M is then the largest of the process and its waited-for
// children, each alone. The sampled process-tree figure (every 200 ms, VmRSS summed over the tree) covers that case.
// Everything lives under <root> (default bench-out/run-<pid>), so builds and copies share one disk; a catalog whose
// build (or whose copy) the free space cannot hold is skipped with a line saying so.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs as parseCliArgs } from 'node:util';
import YAML from 'yaml';
import { launcherOf } from './bench/launcher.mjs';
import { compileRevision } from './bench/snapshot.mjs';
import { wholeNumber } from './synthetic-catalog.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const USAGE =
  'usage: node scripts/bench-build.mjs [--models 2000,10000] [--metrics 60] [--speed N] [--seed 1] [--repeat 4] ' +
  '[--full-only-above 2000] [--data DIR | --no-reference] [--rev GIT-REV] [--root DIR] [--out DIR] [--keep]';
const GOAL = { fullOverCp: 1.5, rss: 1e9, rebuildShare: 0.1 };
/** Speed runs per synthetic model unless --speed says otherwise: the issue's 2,000-model catalog has 500,000. */
const SPEED_PER_MODEL = 250;

// ---------------------------------------------------------------------------------------------
// Command line

export function parseArgs(argv) {
  const { values: v } = parseCliArgs({
    args: argv,
    options: {
      models: { type: 'string', default: '2000,10000' },
      metrics: { type: 'string', default: '60' },
      speed: { type: 'string' },
      seed: { type: 'string', default: '1' },
      repeat: { type: 'string', default: '4' },
      'full-only-above': { type: 'string', default: '2000' },
      root: { type: 'string' },
      out: { type: 'string' },
      rev: { type: 'string' },
      data: { type: 'string' },
      'no-reference': { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const models = v.models.trim() === '' ? [] : v.models.split(',').map((x) => wholeNumber('models', x.trim(), 1));
  return {
    models,
    metrics: wholeNumber('metrics', v.metrics, 1),
    speed: v.speed === undefined ? null : wholeNumber('speed', v.speed),
    seed: wholeNumber('seed', v.seed),
    repeat: wholeNumber('repeat', v.repeat, 1),
    fullOnlyAbove: wholeNumber('full-only-above', v['full-only-above']),
    root: v.root ? path.resolve(v.root) : null,
    out: path.resolve(v.out ?? path.join(REPO, 'bench-out')),
    rev: v.rev ?? null,
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
        ? `${(n / 1e6).toFixed(0)} MB`
        : `${(n / 1e3).toFixed(1)} kB`;
const fmtSecs = (s) => (s == null ? '-' : s >= 100 ? `${s.toFixed(0)} s` : `${s.toFixed(1)} s`);
const fmtInt = (n) => (n == null ? '-' : n.toLocaleString('en-US'));
const fmtRatio = (x) => (x == null ? '-' : `${x.toFixed(2)}×`);
const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
const rmrf = (p) => fs.rmSync(p, { recursive: true, force: true });
const freeBytes = (dir) => {
  const s = fs.statfsSync(dir);
  return s.bavail * s.bsize;
};
const median = (xs) => {
  const s = xs.filter((x) => x != null).sort((a, b) => a - b);
  if (!s.length) return null;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Runs a command to completion and returns its wall time in seconds. */
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
    const [dev, fstype] = sh('df', ['--output=source,fstype', root]).trim().split('\n').pop().split(/\s+/);
    let rot = '';
    try {
      const name = path.basename(fs.realpathSync(dev)).replace(/\d+$/, '');
      rot =
        fs.readFileSync(`/sys/block/${name}/queue/rotational`, 'utf8').trim() === '0' ? 'non-rotational' : 'rotational';
    } catch {
      /* a virtual device without a /sys/block entry */
    }
    disk = [dev, rot, fstype].filter(Boolean).join(', ');
  } catch {
    /* not Linux */
  }
  return {
    nproc: os.availableParallelism?.() ?? cpus.length,
    cpu: cpus[0]?.model ?? 'unknown',
    memory: os.totalmem(),
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    disk,
  };
}

// ---------------------------------------------------------------------------------------------
// The modelpub CLI to measure

/** The launcher (bin/modelpub.js, whose ../lib/cli.js is the compiled CLI) to measure, and a label for it. */
function prepareCli(o, root) {
  if (o.rev) {
    // A snapshot of one revision, compiled on its own, so concurrent edits of src/ and lib/ cannot change the figures.
    const snap = compileRevision(REPO, o.rev, root, log);
    return { launcher: snap.launcher, label: `git ${o.rev} = ${snap.sha.slice(0, 12)} (compiled snapshot)` };
  }
  if (!fs.existsSync(path.join(REPO, 'lib', 'cli.js'))) {
    log('lib/ is missing: compiling (npx tsc -p .)');
    sh('npx', ['tsc', '-p', '.'], { cwd: REPO, stdio: 'inherit' });
  }
  const git = (...args) => {
    try {
      return sh('git', args, { cwd: REPO }).trim();
    } catch {
      return ''; // not a git checkout
    }
  };
  const dirty = git('status', '--porcelain', '--', 'src') !== '';
  return {
    launcher: path.join(REPO, 'bin', 'modelpub.js'),
    label: `lib/ of the working tree (HEAD ${git('rev-parse', '--short', 'HEAD')}${dirty ? ', src/ has uncommitted changes' : ''})`,
  };
}

// ---------------------------------------------------------------------------------------------
// One measured build

const HAS_TIME = fs.existsSync('/usr/bin/time');

/** The process tree under `pid` (itself included), from /proc/<n>/stat's parent ids. */
function treeOf(pid) {
  const children = new Map();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(name));
    } catch {
      /* exited meanwhile */
    }
  }
  const out = [];
  const stack = [pid];
  while (stack.length) {
    const p = stack.pop();
    out.push(p);
    stack.push(...(children.get(p) ?? []));
  }
  return out;
}

/** VmRSS of the process tree under `pid`, summed, in bytes (0 once it is gone). */
function treeRss(pid) {
  let sum = 0;
  for (const p of treeOf(pid)) {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${p}/status`, 'utf8'));
      if (m) sum += Number(m[1]) * 1024;
    } catch {
      /* exited */
    }
  }
  return sum;
}

/**
 * Runs `modelpub build --data dataDir --out outDir` as a child process, with the environment and node flags of
 * bin/modelpub.js's `#!` line (spawning node directly bypasses the shebang: launcher.mjs). Resolves with wall time, peak RSS (%M), the sampled tree RSS
 * and the build's own summary, or with `failed` (exit code or signal and the last lines of its stderr).
 */
function runBuild(launcher, dataDir, outDir) {
  return new Promise((resolve, reject) => {
    const timeFile = path.join(path.dirname(outDir), `.time-${process.pid}-${Date.now()}`);
    const { env, nodeFlags } = launcherOf(launcher);
    const nodeArgs = [...nodeFlags, launcher, 'build', '--data', dataDir, '--out', outDir];
    const [cmd, args] = HAS_TIME
      ? ['/usr/bin/time', ['-o', timeFile, '-f', '%e %M', process.execPath, ...nodeArgs]]
      : [process.execPath, nodeArgs];
    const t0 = performance.now();
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env, CI: '1' } });
    let stdout = '';
    let errTail = '';
    let treePeak = 0;
    let hwm = 0;
    const poll = setInterval(() => {
      treePeak = Math.max(treePeak, treeRss(child.pid));
      if (!HAS_TIME)
        try {
          const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
          if (m) hwm = Math.max(hwm, Number(m[1]) * 1024);
        } catch {
          /* exited */
        }
    }, 200);
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    let partial = '';
    child.stderr.on('data', (d) => {
      const lines = (partial + d).split('\n');
      partial = lines.pop();
      for (const line of lines) {
        errTail = `${errTail + line}\n`.slice(-20000);
        process.stderr.write(`    | ${line}\n`);
      }
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearInterval(poll);
      const wall = (performance.now() - t0) / 1000;
      let rss = hwm || null;
      if (HAS_TIME) {
        try {
          const t = fs.readFileSync(timeFile, 'utf8').trim().split('\n');
          const [, kb] = t.pop().split(' ');
          rss = Number(kb) * 1024;
          // /usr/bin/time writes "Command exited with non-zero status N" or "Command terminated by signal N" first.
          if (t.length) errTail += `${t.join('\n')}\n`;
        } catch {
          /* time itself failed */
        }
        fs.rmSync(timeFile, { force: true });
      }
      const base = { wall, rss, treeRss: treePeak || null, loadAfter: load() };
      if (code !== 0) {
        // What failed, how far the build got, and how it ended; not the native stack an out-of-memory abort prints.
        const lines = errTail.trim().split('\n');
        const why = lines.find((l) => /FATAL ERROR|^modelpub: |Error:/.test(l));
        const progress = lines.findLast((l) => /: \d+\/\d+ \(\d+%\)/.test(l));
        const parts = [why, progress && `last progress: ${progress.trim()}`, lines.at(-1)].filter(Boolean);
        return resolve({ ...base, failed: `exit ${code ?? signal}: ${[...new Set(parts)].join(' / ')}` });
      }
      const num = (re) => re.exec(stdout)?.slice(1).map(Number) ?? null;
      const [files, distinct, mbWritten, kept] =
        num(/(\d+) files, (\d+) distinct bodies, ([\d.]+) MB written, (\d+) kept/) ?? [];
      const [added, changed, removed] = num(/changes: (\d+) added, (\d+) changed, (\d+) removed/) ?? [];
      const [made, twins, carried] =
        num(/(\d+) bodies made, (\d+) linked to a body of the same inputs made before them, (\d+) carried over/) ?? [];
      const release = / at (\S+)\n/.exec(stdout)?.[1];
      resolve({
        ...base,
        release: release && path.resolve(release),
        summary: stdout.trimEnd(),
        reported: { files, distinct, mbWritten, kept, added, changed, removed, made, twins, carried },
      });
    });
  });
}

/**
 * Files and bytes of a release folder: logical (each path counted, as `cp -r` copies it; find lists every hard link)
 * and on disk (du). Not from manifest.json, which at 10,000 models is longer than a string can be.
 */
function measureRelease(dir) {
  let [files, logical] = [0, 0];
  for (const size of sh('find', [dir, '-type', 'f', '-printf', '%s\n'], { maxBuffer: 1 << 28 }).split('\n')) {
    if (!size) continue;
    files++;
    logical += Number(size);
  }
  const onDisk = Number(sh('du', ['-sb', dir]).split('\t')[0]); // apparent size, each inode once
  return { files, logical, onDisk };
}

/** `cp -r` of a release on the same disk, between two `sync`s: the copy's wall time and the write-back after it. */
function copyRelease(release, scratch) {
  const dest = path.join(scratch, 'copy');
  rmrf(dest);
  timed('sync', []);
  const cp = timed('cp', ['-r', release, dest]);
  const cpSync = timed('sync', []);
  const bytes = Number(sh('du', ['-sb', dest]).split('\t')[0]);
  rmrf(dest);
  timed('sync', []);
  return { cp, cpSync, cpBytes: bytes };
}

// ---------------------------------------------------------------------------------------------
// The edits the rebuilds measure

/** Appends to the first `  en:` description line of the first models/*.yaml (sorted): the one-line edit of the issue. */
function editDescription(dataDir, n) {
  const file = fs
    .readdirSync(path.join(dataDir, 'models'))
    .filter((f) => f.endsWith('.yaml'))
    .sort()[0];
  const p = path.join(dataDir, 'models', file);
  const text = fs.readFileSync(p, 'utf8');
  const m = /^ {2}en: .*$/m.exec(text);
  if (!m) throw new Error(`${p}: no "  en:" description line to edit`);
  // A plain scalar stays one: the appended words hold no character YAML would read otherwise.
  const line = `${m[0]} Edited for the rebuild benchmark (${n}).`;
  fs.writeFileSync(p, text.slice(0, m.index) + line + text.slice(m.index + m[0].length));
  return `models/${file} description.en`;
}

/**
 * Moves one benchmark value by 1 %: the first verified row without a run id, from a source that may be published,
 * in the first benchmarks file (sorted) that has one. Its ranks and nearby models are what the rebuild redoes.
 */
function editBenchmark(dataDir, n) {
  const { sources } = YAML.parse(fs.readFileSync(path.join(dataDir, 'sources.yaml'), 'utf8'));
  const closed = new Set(sources.filter((x) => !x.redistributable).map((x) => x.id));
  const dir = path.join(dataDir, 'measurements', 'benchmarks');
  for (const file of fs.readdirSync(dir).sort()) {
    const p = path.join(dir, file);
    const lines = fs.readFileSync(p, 'utf8').split('\n');
    const i = lines.findIndex((l) => {
      if (!l) return false;
      const r = JSON.parse(l);
      return r.lane === 'verified' && !r.run && !closed.has(r.provenance?.source) && typeof r.value === 'number';
    });
    if (i === -1) continue;
    const r = JSON.parse(lines[i]);
    const before = r.value;
    // Alternate down and up, so that repeated edits stay near the original value.
    r.value = before === 0 ? 0.01 : Math.round(before * (n % 2 ? 0.99 : 1 / 0.99) * 1e6) / 1e6;
    lines[i] = JSON.stringify(r);
    fs.writeFileSync(p, lines.join('\n'));
    return `measurements/benchmarks/${file}:${i + 1} ${r.model} ${r.metric} ${before} -> ${r.value}`;
  }
  throw new Error(`${dir}: no published benchmark value to edit`);
}

// ---------------------------------------------------------------------------------------------
// One catalog

/**
 * Repetitions of: full build into an empty folder, `cp -r` of its release, then (unless fullOnly) the rebuild after
 * one description change and the rebuild after one benchmark value change, into the same folder.
 */
async function measureCatalog(cli, cat, root, scratch, estimate) {
  log(`\n== ${cat.name}: ${cat.reps} repetition(s)${cat.fullOnly ? ', full build and RSS only' : ''}`);
  const samples = [];
  let skipped = null;
  for (let rep = 1; rep <= cat.reps; rep++) {
    const out = path.join(root, `${cat.id}-out-${rep}`);
    const free = freeBytes(root);
    const need = samples[0]?.onDisk ?? estimate;
    if (need != null && free < need * 1.15) {
      skipped = `skipped: ${fmtBytes(free)} free on the disk, the build needs about ${fmtBytes(need)} (df)`;
      log(`   ${skipped}`);
      break;
    }
    const s = { rep };
    log(`-- ${cat.name}, repetition ${rep}/${cat.reps}: full build into an empty ${path.relative(REPO, out)}`);
    s.loadBefore = load();
    log(`   load average before: ${s.loadBefore}`);
    s.full = await runBuild(cli.launcher, cat.data, out);
    if (s.full.failed) {
      log(`   FULL BUILD FAILED after ${fmtSecs(s.full.wall)}, peak RSS ${fmtBytes(s.full.rss)}: ${s.full.failed}`);
      samples.push(s);
      rmrf(out);
      break;
    }
    log(s.full.summary.replace(/^/gm, '    > '));
    s.buildSync = timed('sync', []);
    Object.assign(s, measureRelease(s.full.release));
    log(
      `   full build ${fmtSecs(s.full.wall)}, peak RSS ${fmtBytes(s.full.rss)} (process tree, sampled: ${fmtBytes(s.full.treeRss)}), ` +
        `then sync ${fmtSecs(s.buildSync)}; ${fmtInt(s.files)} files, ${fmtBytes(s.logical)} logical, ${fmtBytes(s.onDisk)} on disk; load after ${s.full.loadAfter}`,
    );
    if (freeBytes(root) < s.logical * 1.1) {
      s.copySkipped = `cp -r skipped: the copy needs about ${fmtBytes(s.logical)}, ${fmtBytes(freeBytes(root))} free (df)`;
      log(`   ${s.copySkipped}`);
    } else {
      Object.assign(s, copyRelease(s.full.release, scratch));
      log(
        `   cp -r ${fmtSecs(s.cp)} (then sync ${fmtSecs(s.cpSync)}; the copy is ${fmtBytes(s.cpBytes)}): full build / cp -r = ${fmtRatio(s.full.wall / s.cp)}`,
      );
    }
    if (!cat.fullOnly) {
      for (const [key, edit] of [
        ['description', editDescription],
        ['benchmark', editBenchmark],
      ]) {
        const what = edit(cat.data, rep);
        log(`   rebuild after one ${key} change (${what}); load average before: ${load()}`);
        const b = await runBuild(cli.launcher, cat.data, out);
        s[key] = { ...b, edit: what };
        if (b.failed) {
          log(`   REBUILD FAILED after ${fmtSecs(b.wall)}: ${b.failed}`);
          continue;
        }
        const r = b.reported;
        log(
          `   rebuild ${fmtSecs(b.wall)} = ${((100 * b.wall) / s.full.wall).toFixed(1)} % of the full build, peak RSS ${fmtBytes(b.rss)}; ` +
            `${fmtInt(r.mbWritten == null ? null : Math.round(r.mbWritten))} MB written, ${fmtInt(r.kept)} bodies kept, ${r.made == null ? '' : `${fmtInt(r.made)} made, ${fmtInt(r.twins)} linked to a twin, ${fmtInt(r.carried)} carried over, `}changes ${r.added}/${r.changed}/${r.removed} (added/changed/removed)`,
        );
      }
    }
    for (const k of ['full', 'description', 'benchmark']) if (s[k]) delete s[k].summary;
    samples.push(s);
    rmrf(out);
    timed('sync', []);
  }
  return { ...cat, samples, skipped, summary: summarize(samples) };
}

/** Medians over the repetitions, and the paired ratios (each build against its own repetition's copy or full build). */
function summarize(samples) {
  const ok = samples.filter((s) => !s.full.failed);
  const pick = (f) => ok.map(f).filter((x) => x != null && !Number.isNaN(x));
  const fullOverCp = pick((s) => (s.cp ? s.full.wall / s.cp : null));
  const share = (k) => pick((s) => (s[k] && !s[k].failed ? s[k].wall / s.full.wall : null));
  return {
    reps: ok.length,
    failed: samples.find((s) => s.full.failed)?.full ?? null,
    full: median(pick((s) => s.full.wall)),
    fullRange: [Math.min(...pick((s) => s.full.wall)), Math.max(...pick((s) => s.full.wall))],
    cp: median(pick((s) => s.cp)),
    fullOverCp: median(fullOverCp),
    fullOverCpAll: fullOverCp,
    rss: median(pick((s) => s.full.rss)),
    rssMax: Math.max(
      0,
      ...pick((s) => s.full.rss),
      ...pick((s) => s.description?.rss),
      ...pick((s) => s.benchmark?.rss),
    ),
    rebuildRss: median([...pick((s) => s.description?.rss), ...pick((s) => s.benchmark?.rss)]),
    treeRssMax: Math.max(0, ...pick((s) => s.full.treeRss)),
    files: ok[0]?.full.reported.files ?? ok[0]?.files ?? null, // as the build counts them (manifest.json)
    logical: ok[0]?.logical ?? null,
    onDisk: ok[0]?.onDisk ?? null,
    description: median(pick((s) => (s.description?.failed ? null : s.description?.wall))),
    descriptionShare: median(share('description')),
    descriptionShareAll: share('description'),
    benchmark: median(pick((s) => (s.benchmark?.failed ? null : s.benchmark?.wall))),
    benchmarkShare: median(share('benchmark')),
    benchmarkShareAll: share('benchmark'),
    loads: samples.map((s) => s.loadBefore),
  };
}

// ---------------------------------------------------------------------------------------------
// Report

const goal = (ok) => (ok == null ? '' : ok ? ' met' : ' MISSED');
const list = (xs, f) => xs.map(f).join(', ');

function report(results) {
  const rows = [];
  for (const c of results.catalogs) {
    const s = c.summary;
    if (c.skipped && !s.reps) {
      rows.push([c.name, c.skipped, '', '', '', '', '', '']);
      continue;
    }
    if (s.failed && !s.reps) {
      const f = `FAILED after ${fmtSecs(s.failed.wall)}: ${s.failed.failed}`;
      rows.push([c.name, f, '', '', fmtBytes(s.failed.rss), '', '', '']);
      continue;
    }
    // The goals are the 2,000-model synthetic catalog's; the default data's figures are shown without a verdict.
    const judge = (ok) => (c.models ? goal(ok) : '');
    const pct = (x) => (x == null ? '-' : `${(100 * x).toFixed(1)} %`);
    rows.push([
      `${c.name}${s.reps > 1 ? ` (median of ${s.reps})` : ''}`,
      fmtSecs(s.full),
      s.cp == null ? 'skipped (disk)' : fmtSecs(s.cp),
      s.fullOverCp == null ? '-' : `${fmtRatio(s.fullOverCp)}${judge(s.fullOverCp <= GOAL.fullOverCp)}`,
      // A goal is met or missed by the median of the repetitions; the rebuilds' and the highest of all beside it.
      `${fmtBytes(s.rss)}${judge(s.rss < GOAL.rss)}${c.fullOnly ? '' : `; rebuilds ${fmtBytes(s.rebuildRss)}`}; ` +
        `highest ${fmtBytes(s.rssMax)}`,
      c.fullOnly
        ? 'not measured'
        : `${fmtSecs(s.description)} = ${pct(s.descriptionShare)}${s.descriptionShare == null ? '' : judge(s.descriptionShare <= GOAL.rebuildShare)}`,
      c.fullOnly ? 'not measured' : `${fmtSecs(s.benchmark)} = ${pct(s.benchmarkShare)}`,
      `${fmtInt(s.files)} files, ${fmtBytes(s.onDisk)} on disk`,
    ]);
  }
  const head = [
    'catalog',
    'full build',
    'cp -r of its release',
    `full / cp -r, median of pairs (goal ≤ ${GOAL.fullOverCp})`,
    'peak RSS, full builds (goal < 1 GB)',
    'rebuild, 1 description: s = % of full (goal ≤ 10 %)',
    'rebuild, 1 benchmark value',
    'release',
  ];
  const md = [head, head.map(() => '---'), ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
  const details = [];
  for (const c of results.catalogs) {
    const s = c.summary;
    if (!s.reps) continue;
    details.push(`${c.name}:`);
    details.push(
      `  full build s: ${list(
        c.samples.filter((x) => !x.full.failed),
        (x) => x.full.wall.toFixed(1),
      )}; cp -r s: ${list(
        c.samples.filter((x) => !x.full.failed),
        (x) => (x.cp == null ? (x.copySkipped ?? '-') : x.cp.toFixed(1)),
      )}; paired full / cp -r: ${list(s.fullOverCpAll, (x) => x.toFixed(2))}`,
    );
    details.push(
      `  peak RSS (time %M) of the full builds: ${list(
        c.samples.filter((x) => !x.full.failed),
        (x) => fmtBytes(x.full.rss),
      )}; ` +
        `process tree, sampled: up to ${fmtBytes(s.treeRssMax)}; median ${fmtBytes(s.rss)}, highest of every build ${fmtBytes(s.rssMax)}`,
    );
    if (!c.fullOnly) {
      details.push(
        `  rebuild after one description change s: ${list(c.samples, (x) => x.description?.wall?.toFixed(1) ?? '-')}; share of its full build: ${list(s.descriptionShareAll, (x) => `${(100 * x).toFixed(1)} %`)}`,
      );
      details.push(
        `  rebuild after one benchmark value change s: ${list(c.samples, (x) => x.benchmark?.wall?.toFixed(1) ?? '-')}; share: ${list(s.benchmarkShareAll, (x) => `${(100 * x).toFixed(1)} %`)}`,
      );
      const d = c.samples.find((x) => x.description?.reported)?.description.reported;
      const b = c.samples.find((x) => x.benchmark?.reported)?.benchmark.reported;
      if (d || b)
        details.push(
          `  what the rebuilds changed (added/changed/removed, of ${fmtInt(s.files)} files; bodies made): ` +
            `description ${d ? `${d.added}/${d.changed}/${d.removed}; ${d.made ?? '-'}` : '-'}, ` +
            `benchmark value ${b ? `${b.added}/${b.changed}/${b.removed}; ${b.made ?? '-'}` : '-'}`,
        );
    }
    details.push(`  load average (1, 5, 15 min) before each repetition: ${s.loads.join('; ')}`);
    if (s.failed) details.push(`  a full build FAILED: ${s.failed.failed}`);
    if (c.skipped) details.push(`  ${c.skipped}`);
  }
  return { md, details: details.join('\n') };
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
  const results = { started: new Date().toISOString(), args: o, catalogs: [] };
  try {
    results.machine = machine(root);
    const m = results.machine;
    log(
      `machine: ${m.nproc} CPUs (${m.cpu}), ${fmtBytes(m.memory)} RAM, ${m.platform}, Node ${m.node}, disk ${m.disk || 'unknown'}`,
    );
    log(`load average (1, 5, 15 min) at the start: ${load()}`);
    log(sh('df', ['-h', root]).trimEnd());
    const cli = prepareCli(o, root);
    results.cli = cli.label;
    log(`measuring: ${cli.label}`);
    const scratch = path.join(root, 'scratch');
    fs.mkdirSync(scratch);

    const catalogs = [];
    if (o.reference) {
      const rel = path.relative(REPO, o.data);
      // The rebuilds edit the data: measure a copy.
      const copy = path.join(root, 'default-data');
      fs.cpSync(o.data, copy, { recursive: true });
      catalogs.push({
        id: 'default',
        name: rel === 'data' ? 'default data (data/)' : `--data ${rel.startsWith('..') ? o.data : rel}`,
        data: copy,
        reps: o.repeat,
        fullOnly: false,
      });
    }
    for (const models of o.models)
      catalogs.push({
        id: `synthetic-${models}`,
        name: `synthetic ${fmtInt(models)} models`,
        models,
        reps: models > o.fullOnlyAbove ? 1 : o.repeat,
        fullOnly: models > o.fullOnlyAbove,
      });

    /** Bytes on disk per synthetic model, once one synthetic catalog was built: the next one's estimate. */
    let perModel = null;
    for (const cat of catalogs) {
      if (cat.models) {
        const speed = o.speed ?? cat.models * SPEED_PER_MODEL;
        cat.data = path.join(root, `${cat.id}-data`);
        cat.command = `node scripts/synthetic-catalog.mjs --out DIR --models ${cat.models} --metrics ${o.metrics} --speed ${speed} --seed ${o.seed}`;
        log(`\n== generating ${cat.name}: ${cat.command}`);
        const g0 = performance.now();
        sh(
          process.execPath,
          [
            path.join(REPO, 'scripts', 'synthetic-catalog.mjs'),
            ...[
              '--out',
              cat.data,
              '--models',
              cat.models,
              '--metrics',
              o.metrics,
              '--speed',
              speed,
              '--seed',
              o.seed,
            ].map(String),
          ],
          { stdio: 'inherit' },
        );
        cat.generateSeconds = (performance.now() - g0) / 1000;
      }
      const estimate = cat.models && perModel ? perModel * cat.models : null;
      const done = await measureCatalog(cli, cat, root, scratch, estimate);
      results.catalogs.push(done);
      if (cat.models && done.summary.onDisk) perModel = done.summary.onDisk / cat.models;
      if (cat.models) rmrf(cat.data);
    }

    results.seconds = (performance.now() - t0) / 1000;
    results.loadAtEnd = load();
    const r = report(results);
    results.markdown = r.md;
    log(`\n== results (${cli.label}; load average at the end ${results.loadAtEnd})\n`);
    log(r.md);
    log(`\n${r.details}`);
    log(
      `\nfull build: the first build into an empty folder; cp -r: its release folder copied on the same disk between two syncs;` +
        `\npeak RSS: /usr/bin/time %M of the build process (worker threads included); rebuild: into the same folder after the edit.`,
    );
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

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('bench-build.mjs')) {
  main().catch((e) => {
    console.error(`bench-build: ${process.env.MODELPUB_DEBUG ? (e.stack ?? e) : (e.message ?? e)}`);
    process.exit(1);
  });
}
