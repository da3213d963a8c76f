#!/usr/bin/env node
// Gateway benchmark: nginx (files), a bare node:http server (bodies from a Map: one Node process's ceiling), the same
// with the gateway's response headers (bare-hdr: what node:http charges for them), bare-hdr with the reference work
// the gateway is held to, a key check and quota counter in a Map (bare-quota), and `modelpub serve` on SQLite and on
// Redis (one process, then --workers 2), loaded in turn with wrk, several repetitions alternating between servers;
// then composed list answers (q=, other page sizes) against the prebuilt list pages. Prints req/s, p50, p99, RSS, CPU
// and the ratios, and checks the goals (docs/benchmarks/README.md).
//
//   node scripts/bench-gateway.mjs [--reps 3] [--duration 10] [--warmup 2] [--settle 15] [--connections 64]
//        [--threads 2] [--keys 200] [--mix-size 100000] [--seed 1] [--pub DIR] [--out DIR] [--only nginx,bare,...]
//        [--no-workers] [--no-composed] [--profile] [--keep-tmp] [--gateway-node-flags "--a --b"]
//        [--baseline-checkout DIR | --baseline-rev GIT-REV] [--baseline-pub DIR]
//
// Servers (--only takes a comma list of them): nginx, bare, bare-hdr, bare-quota, sqlite, redis, sqlite-w2, redis-w2.
// --pub: a folder `modelpub build --out` wrote (default: the default data, built into bench-out/gateway/pub when
// missing).
//
// Before and after: --baseline-checkout DIR adds a server "baseline", the gateway of another compiled checkout (its
// bin/modelpub.js and lib/, e.g. a `git worktree` of an older commit after `npx tsc -p .`) on its own SQLite store,
// alternated with the others in every repetition; --baseline-rev REV extracts and compiles that commit of this
// repository itself. The report gives sqlite / baseline per repetition (the paired ratios). The baseline reads the
// same publication unless --baseline-pub names one its own build wrote.
//
// Each `modelpub serve` runs as `./bin/modelpub.js serve` does: node with the flags of its bin/modelpub.js's #! line.
// --gateway-node-flags adds node (V8) options after those, e.g. "--memory-reducer" to measure without the launcher's
// "--no-memory-reducer" (the last one given wins).
//
// Everything listens on 127.0.0.1 only; every process it starts is stopped on exit (also on Ctrl-C). When wrk, nginx
// or redis-server is missing, it installs them with apt-get if run as root, and otherwise says which are missing.
// nginx's workers run as the invoking user, so they read the publication wherever it lives.
// Results: <out>/gateway-<time>.{txt,json}.
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { packedRepresentations } from '../lib/publication/layout.js';
import { compileRevision } from './bench/snapshot.mjs';
import { launcherOf } from './bench/launcher.mjs';
import { mulberry32 } from './synthetic-catalog.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BENCH = path.join(ROOT, 'scripts', 'bench');
const CLI = path.join(ROOT, 'bin', 'modelpub.js');
/** The wrk script every load runs: it replays a mix file (one request per line). */
const WRK_MIX = path.join(BENCH, 'wrk-mix.lua');

// ---------------------------------------------------------------------------------------------------- options
/**
 * Every option and its kind (count: a whole number >= 1; whole: >= 0). A value may start with a dash
 * (--gateway-node-flags "--a"), so the word after an option is always its value.
 */
const OPTIONS = {
  reps: 'count',
  duration: 'count',
  warmup: 'whole',
  settle: 'whole',
  connections: 'count',
  threads: 'count',
  keys: 'count',
  'mix-size': 'count',
  seed: 'whole',
  pub: 'string',
  out: 'string',
  only: 'string',
  'gateway-node-flags': 'string',
  'baseline-checkout': 'string',
  'baseline-rev': 'string',
  'baseline-pub': 'string',
  'no-workers': 'boolean',
  'no-composed': 'boolean',
  profile: 'boolean',
  'keep-tmp': 'boolean',
  help: 'boolean',
};
const SERVERS = ['nginx', 'bare', 'bare-hdr', 'bare-quota', 'sqlite', 'redis', 'sqlite-w2', 'redis-w2'];

/** The command line as { option: value }, or an error naming the option and what it needs. */
function parseOptions(argv) {
  const v = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] === '-h' ? '--help' : argv[i];
    const m = /^--([a-z0-9-]+)(?:=(.*))?$/s.exec(arg);
    const kind = m && OPTIONS[m[1]];
    if (!kind) throw new Error(`unknown option ${JSON.stringify(arg)} (--help lists them)`);
    if (kind === 'boolean') {
      if (m[2] !== undefined) throw new Error(`--${m[1]} takes no value`);
      v[m[1]] = true;
      continue;
    }
    const value = m[2] ?? argv[++i];
    if (value === undefined) throw new Error(`--${m[1]} needs a value`);
    if (kind !== 'string') {
      const n = Number(value);
      const min = kind === 'count' ? 1 : 0;
      if (!/^\d+$/.test(value) || n < min)
        throw new Error(`--${m[1]} must be a whole number >= ${min}, got ${JSON.stringify(value)}`);
      v[m[1]] = n;
    } else v[m[1]] = value;
  }
  const only = v.only ? v.only.split(',').filter(Boolean) : null;
  const unknown = (only ?? []).filter((n) => !SERVERS.includes(n));
  if (unknown.length) throw new Error(`--only: unknown server ${unknown.join(', ')} (servers: ${SERVERS.join(', ')})`);
  if (v['baseline-checkout'] && v['baseline-rev'])
    throw new Error('give --baseline-checkout or --baseline-rev, not both');
  if (v['baseline-pub'] && !v['baseline-checkout'] && !v['baseline-rev'])
    throw new Error('--baseline-pub needs --baseline-checkout or --baseline-rev');
  return { ...v, only };
}

let A;
try {
  A = parseOptions(process.argv.slice(2));
} catch (e) {
  console.error(`bench-gateway: ${e.message}`);
  process.exit(2);
}
if (A.help) {
  const lines = readFileSync(fileURLToPath(import.meta.url), 'utf8')
    .split('\n')
    .slice(1); // after the #! line
  console.log(
    lines
      .slice(
        0,
        lines.findIndex((l) => !l.startsWith('//')),
      )
      .join('\n'),
  );
  process.exit(0);
}
const O = {
  reps: A.reps ?? 3,
  duration: A.duration ?? 10,
  warmup: A.warmup ?? 2,
  settle: A.settle ?? 15,
  connections: A.connections ?? 64,
  threads: A.threads ?? 2,
  keys: A.keys ?? 200,
  mixSize: A['mix-size'] ?? 100_000,
  seed: A.seed ?? 1,
  pub: path.resolve(A.pub ?? path.join(ROOT, 'bench-out', 'gateway', 'pub')),
  out: path.resolve(A.out ?? path.join(ROOT, 'bench-out', 'gateway')),
  only: A.only,
  workers: !A['no-workers'],
  composed: !A['no-composed'],
  profile: A.profile ?? false,
  keepTmp: A['keep-tmp'] ?? false,
  /** Node flags given to every `modelpub serve` after its launcher's own. */
  extraNodeFlags: (A['gateway-node-flags'] ?? '').split(' ').filter(Boolean),
  baselineCheckout: A['baseline-checkout'] ? path.resolve(A['baseline-checkout']) : null,
  baselineRev: A['baseline-rev'] ?? null,
  baselinePub: A['baseline-pub'] ? path.resolve(A['baseline-pub']) : null,
  quota: 100_000_000,
};
const DETAIL_SHARE = 0.8;
const ZIPF_S = 1;

// ---------------------------------------------------------------------------------------------------- process bookkeeping
const started = []; // { name, child }
let tmp = null;
function descendants(pid) {
  const kids = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]);
      if (!kids.has(ppid)) kids.set(ppid, []);
      kids.get(ppid).push(Number(d));
    } catch {
      /* gone */
    }
  }
  const out = [];
  const walk = (p) => {
    for (const c of kids.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}
function cleanup() {
  for (const { child } of started.reverse()) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const tree = [child.pid, ...descendants(child.pid)];
    for (const p of tree) {
      try {
        process.kill(p, 'SIGTERM');
      } catch {
        /* gone */
      }
    }
  }
  const until = Date.now() + 3000;
  for (const { child } of started) {
    while (child.exitCode === null && child.signalCode === null && Date.now() < until) {
      try {
        process.kill(child.pid, 0);
      } catch {
        break;
      }
      spawnSync('sleep', ['0.05']);
    }
    try {
      process.kill(child.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  started.length = 0;
  if (tmp && !O.keepTmp) rmSync(tmp, { recursive: true, force: true });
}
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'])
  process.on(sig, () => {
    console.error(`\n${sig}: stopping`);
    process.exit(130);
  });

const log = (...a) => console.error('[bench]', ...a);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------------- setup helpers
/** Installs the tools the chosen servers need with apt-get when run as root; otherwise says which are missing. */
function ensureTools(tools) {
  const missing = tools.filter((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0);
  if (!missing.length) return;
  if (process.getuid?.() !== 0)
    throw new Error(
      `${missing.join(', ')} not found and not root to install: apt-get install ${missing.join(' ')}, or leave the servers that need them out with --only`,
    );
  log(`installing ${missing.join(', ')} (apt-get)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  let r = spawnSync('apt-get', ['install', '-y', ...missing], { stdio: 'inherit', env });
  if (r.status !== 0) {
    spawnSync('apt-get', ['update'], { stdio: 'inherit', env });
    r = spawnSync('apt-get', ['install', '-y', ...missing], { stdio: 'inherit', env });
  }
  if (r.status !== 0) throw new Error(`could not install ${missing.join(', ')}`);
}

function ensureCompiled() {
  if (existsSync(path.join(ROOT, 'lib', 'cli.js'))) return;
  log('compiling (npx tsc -p .)');
  execFileSync('npx', ['tsc', '-p', '.'], { cwd: ROOT, stdio: 'inherit' });
}

function ensurePublication() {
  if (existsSync(path.join(O.pub, 'current', 'manifest.json'))) return;
  log(`building the default publication into ${O.pub}`);
  execFileSync(process.execPath, [CLI, 'build', '--data', path.join(ROOT, 'data'), '--out', O.pub, '--quiet'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
}

/** The gateway under test: this checkout's launcher, its #! flags plus --gateway-node-flags, and the publication. */
const CURRENT = {
  cli: CLI,
  env: launcherOf(CLI).env,
  nodeFlags: [...launcherOf(CLI).nodeFlags, ...O.extraNodeFlags],
  pub: O.pub,
};

/**
 * The gateway of --baseline-checkout (a compiled checkout) or --baseline-rev (compiled here into `tmp`), measured beside
 * this one; null without either option.
 */
function prepareBaseline() {
  if (!O.baselineCheckout && !O.baselineRev) return null;
  let dir;
  let label;
  if (O.baselineRev) {
    const snap = compileRevision(ROOT, O.baselineRev, tmp, log);
    dir = snap.dir;
    label = `git ${O.baselineRev} = ${snap.sha.slice(0, 12)}, compiled`;
  } else {
    dir = O.baselineCheckout;
    if (!existsSync(path.join(dir, 'bin', 'modelpub.js')))
      throw new Error(`--baseline-checkout ${dir}: no bin/modelpub.js there (a checkout of this repository?)`);
    if (!existsSync(path.join(dir, 'lib', 'cli.js')))
      throw new Error(
        `--baseline-checkout ${dir}: lib/cli.js is missing; compile it first: (cd ${dir} && npx tsc -p .)`,
      );
    label = `${dir} at ${gitIn(dir, ['rev-parse', '--short', 'HEAD'])}${gitIn(dir, ['status', '--porcelain', '--', 'src']) ? ' + uncommitted changes in src/' : ''}`;
  }
  const pub = O.baselinePub ?? O.pub;
  if (!existsSync(path.join(pub, 'current', 'manifest.json')))
    throw new Error(`--baseline-pub ${pub}: no current/manifest.json there (a folder modelpub build --out wrote?)`);
  const cli = path.join(dir, 'bin', 'modelpub.js');
  return { label, cli, env: launcherOf(cli).env, nodeFlags: [...launcherOf(cli).nodeFlags, ...O.extraNodeFlags], pub };
}

/** `git ARGS` in a folder, '?' when that fails (not a checkout, no git). */
function gitIn(dir, args) {
  try {
    return execFileSync('git', ['-C', dir, ...args], { stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    return '?';
  }
}

/** node's arguments for one `modelpub serve` of the benchmark: the launcher's flags (and --gateway-node-flags), quiet. */
function serveArgs(port, store, extra = [], gw = CURRENT) {
  return [
    ...gw.nodeFlags,
    gw.cli,
    'serve',
    '--dir',
    gw.pub,
    '--port',
    String(port),
    '--store',
    store,
    '--quota',
    String(O.quota),
    '--log',
    'silent',
    ...extra,
  ];
}

/**
 * nginx started by root hands its workers to an unprivileged user (nobody or www-data), who answers 404 for a
 * publication under a private home folder; so they run as the invoking user. Without root they do anyway.
 */
function nginxUser() {
  if (process.getuid?.() !== 0) return '# not started as root: the workers run as the invoking user';
  const group = execFileSync('id', ['-gn']).toString().trim();
  return `user ${os.userInfo().username} ${group};`;
}

/** What to check when nginx does not answer a file of the publication, with its error log's last lines. */
function nginxHint() {
  let errors = '';
  try {
    errors = readFileSync(path.join(tmp, 'nginx-error.log'), 'utf8').trim().split('\n').slice(-3).join('\n');
  } catch {
    /* no log */
  }
  return `\nnginx's workers run as ${os.userInfo().username}: can that user read every folder down to ${O.pub}?${errors ? `\nnginx's error log:\n${errors}` : ''}`;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitPort(port, ms = 20_000) {
  const until = Date.now() + ms;
  for (;;) {
    const ok = await new Promise((r) => {
      const c = net.connect(port, '127.0.0.1', () => {
        c.end();
        r(true);
      });
      c.on('error', () => r(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`nothing listening on 127.0.0.1:${port} after ${ms} ms`);
    await sleep(100);
  }
}

/** Starts a long-running process; resolves once `ready` matches its stdout (or its port accepts connections). */
function startProcess(name, cmd, args, { ready, port, env } = {}) {
  const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push({ name, child });
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    out += d;
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start in 30 s:\n${out}`)), 30_000);
    child.once('exit', (code, sig) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${sig ?? code}):\n${out}`));
    });
    const check = () => {
      if (ready?.test(out)) {
        clearTimeout(timer);
        child.stdout.off('data', check);
        resolve(child);
      }
    };
    if (ready) child.stdout.on('data', check);
    else
      waitPort(port).then(() => {
        clearTimeout(timer);
        resolve(child);
      }, reject);
  });
}

function runCapture(cmd, args, { timeoutMs = 60_000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '',
      err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} ${args.join(' ')} exited ${code}:\n${err || out}`));
    });
  });
}

async function createKeys(store, n, cli = CLI) {
  const keys = [];
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const out = await runCapture(process.execPath, [
        cli,
        'keys',
        'create',
        '--store',
        store,
        '--label',
        `bench-${i}`,
      ]);
      const key = out.trim().split('\n').pop().trim();
      if (!/^mp_/.test(key)) throw new Error(`keys create printed no key: ${out}`);
      keys[i] = key;
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return keys;
}

// ---------------------------------------------------------------------------------------------------- the request mix
function shuffle(a, rnd) {
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}
/** A sampler drawing items with Zipf(s) weights over their (already shuffled) order: rank r has weight 1/r^s. */
function zipf(items, rnd, s = ZIPF_S) {
  const cum = new Float64Array(items.length);
  let t = 0;
  for (let i = 0; i < items.length; i++) cum[i] = t += 1 / (i + 1) ** s;
  return () => {
    const x = rnd() * t;
    let lo = 0,
      hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return items[lo];
  };
}

const INCLUDE_ORDER = ['benchmarks', 'capabilities', 'pricing'];
function query(params) {
  const q = Object.entries(params)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  return q ? `?${q}` : '';
}
const incParam = (inc) => (inc === 'base' ? undefined : inc.split('+').join(','));
const locParam = (loc) => (loc === 'en' ? undefined : loc);

function buildMixes(manifest, release, keys) {
  const rnd = mulberry32(O.seed);
  const details = [];
  const lists = [];
  const variants = new Set();
  for (const f of manifest.files) {
    let m = /^api\/v1\/models\/([a-z0-9-]+)\/([a-z]+)\.verified\.public\.([a-z+]+)\.json$/.exec(f.path);
    if (m) {
      details.push({
        url: `/api/v1/models/${m[1]}${query({ locale: locParam(m[2]), include: incParam(m[3]) })}`,
        file: f.path,
        sha256: f.sha256,
        bytes: f.bytes,
        slug: m[1],
      });
      continue;
    }
    m = /^api\/v1\/list\/([a-z]+)\.verified\.public\.([a-z+]+)\/([a-z]+)-50-(\d+)\.json$/.exec(f.path);
    if (m) {
      variants.add(`${m[1]}|${m[2]}`);
      lists.push({
        url: `/api/v1/models${query({ page: m[4], sort: m[3], locale: locParam(m[1]), include: incParam(m[2]) })}`,
        file: f.path,
        sha256: f.sha256,
        bytes: f.bytes,
      });
    }
  }
  if (!details.length || !lists.length)
    throw new Error('the manifest has no verified.public details or page_size 50 lists');
  const reps = manifest.representations ?? {};
  for (const r of [...details, ...lists]) {
    r.brBytes = reps[r.sha256]?.br.bytes ?? r.bytes;
    r.gzBytes = reps[r.sha256]?.gzip.bytes ?? r.bytes;
  }
  const pickDetail = zipf(shuffle(details, rnd), rnd);
  const pickList = zipf(shuffle(lists, rnd), rnd);
  const pickKey = zipf(shuffle([...keys.keys()], rnd), rnd);

  // The prebuilt mix: 80% details, 20% list pages. `key` is an index into the keys of the store in use.
  const mix = [];
  for (let i = 0; i < O.mixSize; i++)
    mix.push({ ...(rnd() < DETAIL_SHARE ? pickDetail() : pickList()), key: pickKey() });
  const listMix = mix.filter((r) => !r.url.includes('/api/v1/models/'));

  // The composed mix: list requests no build prebuilds. Half free-text searches (q = a word or two of model slugs,
  // Zipf over the most common ones; default or 20 page size), half other page sizes (7, 20, 100) without q.
  const words = new Map();
  const pairs = new Map();
  for (const d of details) {
    if (d.url.includes('?')) continue;
    const parts = d.slug.split('-').filter((w) => /[a-z]/.test(w) && w.length >= 2);
    for (const w of parts) words.set(w, (words.get(w) ?? 0) + 1);
    for (let i = 0; i + 1 < parts.length; i++) {
      const p = `${parts[i]} ${parts[i + 1]}`;
      pairs.set(p, (pairs.get(p) ?? 0) + 1);
    }
  }
  const top = (m, n) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, n)
      .map(([w]) => w);
  const terms = shuffle([...top(words, 200), ...top(pairs, 100)], rnd);
  const pickTerm = zipf(terms, rnd);
  const pickVariant = zipf(shuffle([...variants].sort(), rnd), rnd);
  const pickSort = zipf(['popular', 'newest', 'alphabetical', 'recent'], rnd);
  const total = manifest.__total ?? 674;
  const pagePickers = new Map();
  const pickPage = (size) => {
    if (!pagePickers.has(size))
      pagePickers.set(
        size,
        zipf(
          Array.from({ length: Math.max(1, Math.ceil(total / size)) }, (_, k) => k + 1),
          rnd,
        ),
      );
    return pagePickers.get(size)();
  };
  const composed = [];
  for (let i = 0; i < O.mixSize; i++) {
    const [locale, inc] = pickVariant().split('|');
    const base = { sort: pickSort(), locale: locParam(locale), include: incParam(inc) };
    let params;
    if (rnd() < 0.5)
      params = {
        q: encodeURIComponent(pickTerm()).replace(/%20/g, '+'),
        page_size: rnd() < 0.5 ? undefined : 20,
        ...base,
      };
    else {
      const size = [7, 20, 100][Math.floor(rnd() * 3)];
      params = { page: pickPage(size), page_size: size, ...base };
    }
    composed.push({ url: `/api/v1/models${query(params)}`, key: pickKey() });
  }
  return { mix, listMix, composed, release };
}

/** What the mix asks in the compressed loads: what browsers send, in the order most send it. */
const ACCEPT_COMPRESSED = 'br, gzip';
function writeTsv(file, reqs, keys, acceptEncoding = '') {
  writeFileSync(
    file,
    `${reqs.map((r) => `${r.url}\t${keys ? keys[r.key] : ''}${acceptEncoding ? `\t${acceptEncoding}` : ''}`).join('\n')}\n`,
  );
}

// ---------------------------------------------------------------------------------------------------- measuring
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;
function cpuTotals() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - f[3] - (f[4] ?? 0), total };
}
function procCpu(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]); // utime + stime, ticks
  } catch {
    return 0;
  }
}
function treeCpu(pid) {
  return [pid, ...descendants(pid)].reduce((a, p) => a + procCpu(p), 0);
}
function treeMem(pid) {
  let rss = 0,
    hwm = 0;
  for (const p of [pid, ...descendants(pid)]) {
    try {
      const st = readFileSync(`/proc/${p}/status`, 'utf8');
      rss += Number(/VmRSS:\s+(\d+)/.exec(st)?.[1] ?? 0);
      hwm += Number(/VmHWM:\s+(\d+)/.exec(st)?.[1] ?? 0);
    } catch {
      /* gone */
    }
  }
  return { rssMB: rss / 1024, hwmMB: hwm / 1024 };
}

const toMs = (v, unit) => Number(v) * ({ us: 0.001, ms: 1, s: 1000, m: 60000 }[unit] ?? NaN);
function parseWrk(out) {
  const lat = (p) => {
    const m = new RegExp(`^\\s*${p}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(out);
    return m ? toMs(m[1], m[2]) : NaN;
  };
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const tr = /Transfer\/sec:\s+([\d.]+)(B|KB|MB|GB)/.exec(out);
  const mbps = tr ? Number(tr[1]) * { B: 1 / 1048576, KB: 1 / 1024, MB: 1, GB: 1024 }[tr[2]] : NaN;
  const total = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const se = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const sockErrors = se ? se.slice(1).reduce((a, b) => a + Number(b), 0) : 0;
  return { rps, p50: lat(50), p90: lat(90), p99: lat(99), mbps, total, non2xx, sockErrors };
}

/** GNU time gives wrk's own CPU time (to tell the machine's other load from ours); without it that column is blank. */
const HAS_TIME = existsSync('/usr/bin/time');

async function wrk(url, tsv, seconds, { latency = true } = {}) {
  const timeFile = path.join(tmp, 'wrk.time');
  const args = [`-t${O.threads}`, `-c${O.connections}`, `-d${seconds}s`, '--timeout', '5s'];
  if (latency) args.push('--latency');
  args.push('-s', WRK_MIX, url, '--', tsv);
  const timeoutMs = (seconds + 60) * 1000;
  if (!HAS_TIME) return { out: await runCapture('wrk', args, { timeoutMs }), wrkCpuSec: Number.NaN };
  const out = await runCapture('/usr/bin/time', ['-f', '%U %S', '-o', timeFile, 'wrk', ...args], { timeoutMs });
  const [u, s] = readFileSync(timeFile, 'utf8').trim().split('\n').pop().split(' ').map(Number);
  return { out, wrkCpuSec: u + s };
}

/** One measured load: warm-up, then a measured run, with CPU (server, wrk, everything else on the machine) and memory. */
async function load(server, tsv, label) {
  if (O.warmup > 0) await wrk(server.url, tsv, O.warmup, { latency: false });
  const mine = () => server.pids().reduce((a, p) => a + treeCpu(p), 0);
  const allMine = () => started.reduce((a, s) => a + treeCpu(s.child.pid), 0);
  const c0 = cpuTotals(),
    s0 = mine(),
    a0 = allMine(),
    t0 = process.hrtime.bigint();
  const { out, wrkCpuSec } = await wrk(server.url, tsv, O.duration);
  const c1 = cpuTotals(),
    s1 = mine(),
    a1 = allMine(),
    t1 = process.hrtime.bigint();
  const wall = Number(t1 - t0) / 1e9;
  const r = parseWrk(out);
  const mem = server
    .pids()
    .map(treeMem)
    .reduce((a, m) => ({ rssMB: a.rssMB + m.rssMB, hwmMB: a.hwmMB + m.hwmMB }), { rssMB: 0, hwmMB: 0 });
  const ncpu = os.cpus().length;
  const serverCpu = (s1 - s0) / CLK_TCK / wall; // cores
  const otherCpu = Math.max(0, (c1.busy - c0.busy - (a1 - a0)) / CLK_TCK - wrkCpuSec) / wall; // cores, not ours
  const row = { server: server.name, label, ...r, ...mem, serverCpu, wrkCpu: wrkCpuSec / wall, otherCpu, ncpu };
  log(
    `${label.padEnd(16)} ${fmt(r.rps, 0).padStart(7)} req/s  p50 ${fmt(r.p50, 2)} ms  p99 ${fmt(r.p99, 2)} ms  ${fmt(r.mbps, 0)} MB/s  RSS ${fmt(mem.rssMB, 0)} MB  cpu server ${fmt(serverCpu, 2)} wrk ${fmt(wrkCpuSec / wall, 2)} other ${fmt(otherCpu, 2)}${r.non2xx || r.sockErrors ? `  !! non-2xx ${r.non2xx}, socket errors ${r.sockErrors}` : ''}`,
  );
  return row;
}

/** Requests every distinct URL of a mix once (16 at a time), so caches are warm before anything is measured. */
async function prime(server, reqs, keys) {
  const urls = [...new Map(reqs.map((r) => [r.url, r])).values()];
  let next = 0;
  const worker = async () => {
    while (next < urls.length) {
      const r = urls[next++];
      const res = await fetch(`${server.url}${r.url}`, { headers: keys ? { 'x-api-key': keys[r.key] } : {} });
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

/** Fetches a sample of the mix from a server and checks status and bytes against the manifest. */
async function verify(server, reqs, keys, { checkSha = true } = {}) {
  const sample = reqs.filter((_, i) => i % Math.max(1, Math.floor(reqs.length / 40)) === 0).slice(0, 40);
  for (const r of sample) {
    const res = await fetch(`${server.url}${r.url}`, { headers: keys ? { 'x-api-key': keys[r.key] } : {} });
    const body = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200)
      throw new Error(
        `${server.name}: ${r.url} answered ${res.status}: ${body.toString().slice(0, 300)}${server.name === 'nginx' ? nginxHint() : ''}`,
      );
    if (checkSha && createHash('sha256').update(body).digest('hex') !== r.sha256)
      throw new Error(`${server.name}: ${r.url} answered other bytes than ${r.file}`);
  }
}

// ---------------------------------------------------------------------------------------------------- reporting
const fmt = (v, d = 0) => (Number.isFinite(v) ? v.toFixed(d) : '-');
const median = (xs) => {
  const a = xs.filter(Number.isFinite).sort((x, y) => x - y);
  if (!a.length) return NaN;
  const m = a.length >> 1;
  return a.length % 2 ? a[m] : (a[m - 1] + a[m]) / 2;
};
function summarize(rows, name) {
  const rs = rows.filter((r) => r.server === name);
  if (!rs.length) return null;
  const pick = (k) => median(rs.map((r) => r[k]));
  return {
    name,
    runs: rs.length,
    usPerReq: median(rs.map((r) => (1e6 * r.serverCpu) / r.rps)),
    rps: pick('rps'),
    p50: pick('p50'),
    p99: pick('p99'),
    mbps: pick('mbps'),
    rssMB: Math.max(...rs.map((r) => r.rssMB)),
    hwmMB: Math.max(...rs.map((r) => r.hwmMB)),
    serverCpu: pick('serverCpu'),
    wrkCpu: pick('wrkCpu'),
    otherCpu: pick('otherCpu'),
    non2xx: rs.reduce((a, r) => a + r.non2xx + r.sockErrors, 0),
    all: rs.map((r) => r.rps),
  };
}
/** Per-repetition ratios a/b (runs side by side), for the spread. */
function paired(rows, a, b, k = 'rps') {
  const A = rows.filter((r) => r.server === a),
    B = rows.filter((r) => r.server === b);
  return A.map((r, i) => (B[i] ? r[k] / B[i][k] : NaN)).filter(Number.isFinite);
}
function table(head, lines) {
  const w = head.map((h, i) => Math.max(h.length, ...lines.map((l) => String(l[i]).length)));
  const row = (l) => l.map((c, i) => (i === 0 ? String(c).padEnd(w[i]) : String(c).padStart(w[i]))).join('  ');
  return [row(head), w.map((n) => '-'.repeat(n)).join('  '), ...lines.map(row)].join('\n');
}

// ---------------------------------------------------------------------------------------------------- profile
/**
 * Self time per function from a .cpuprofile. With a window (monotonic microseconds, the clock V8's profiler and
 * process.hrtime share on Linux), only samples inside it count: the measured load, not start-up or warm-up.
 */
function summarizeProfile(file, { from = -Infinity, to = Infinity, top = 25 } = {}) {
  const p = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  if (p.endTime < from || p.startTime > to) {
    from = -Infinity;
    to = Infinity;
  } // clocks not comparable: whole profile
  const windowed = Number.isFinite(from);
  const self = new Map();
  let total = 0;
  let ts = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i] ?? 0;
    ts += dt;
    if (ts < from || ts > to) continue;
    total += dt;
    const n = byId.get(p.samples[i]);
    const cf = n.callFrame;
    const where = cf.url ? `${cf.url.replace(/^file:\/\//, '').replace(`${ROOT}/`, '')}:${cf.lineNumber + 1}` : '';
    const key = `${cf.functionName || '(anonymous)'} ${where}`.trim();
    self.set(key, (self.get(key) ?? 0) + dt);
  }
  return {
    windowed,
    totalMs: total / 1000,
    top: [...self.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => ({ fn: k, ms: us / 1000, pct: (100 * us) / total })),
  };
}

// ---------------------------------------------------------------------------------------------------- main
async function main() {
  const t0 = Date.now();
  const want = (n) => !O.only || O.only.includes(n);
  const needRedis = want('redis') || (O.workers && want('redis-w2'));
  ensureTools(['wrk', ...(want('nginx') ? ['nginx'] : []), ...(needRedis ? ['redis-server'] : [])]);
  ensureCompiled();
  ensurePublication();
  mkdirSync(O.out, { recursive: true });
  tmp = mkdtempSync(path.join(os.tmpdir(), 'modelpub-bench-'));
  for (const d of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(path.join(tmp, d));
  const baseline = prepareBaseline();

  const release = realpathRelease();
  const manifest = JSON.parse(readFileSync(path.join(release, 'manifest.json'), 'utf8'));
  const meta = JSON.parse(readFileSync(path.join(release, 'publication.json'), 'utf8'));
  manifest.__total = meta.totals?.['verified.public'];

  // Stores and keys first (the keys' order is the same in both stores, so one mix serves both).
  const redisPort = await freePort();
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  const sqliteUrl = `sqlite:${path.join(tmp, 'gateway.db')}`;
  // The baseline keeps its keys in a store of its own, made by its own CLI: the two checkouts' stores need not agree.
  const baselineUrl = `sqlite:${path.join(tmp, 'baseline.db')}`;
  if (needRedis) {
    await startProcess(
      'redis-server',
      'redis-server',
      [
        '--port',
        String(redisPort),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--daemonize',
        'no',
        '--protected-mode',
        'yes',
      ],
      { port: redisPort },
    );
  }
  log(`creating ${O.keys} keys in each store (modelpub keys create)`);
  const sqliteKeys = await createKeys(sqliteUrl, O.keys);
  const redisKeys = needRedis ? await createKeys(redisUrl, O.keys) : null;
  const baselineKeys = baseline ? await createKeys(baselineUrl, O.keys, baseline.cli) : null;

  const { mix, listMix, composed } = buildMixes(manifest, release, sqliteKeys);
  const meanBody = mix.reduce((a, r) => a + r.bytes, 0) / mix.length;
  const distinct = new Map(mix.map((r) => [r.url, r]));
  log(
    `mix: ${mix.length} requests, ${distinct.size} distinct URLs, ${fmt(100 * (1 - listMix.length / mix.length), 1)}% details, mean body ${fmt(meanBody / 1024, 1)} KB; composed mix: ${new Set(composed.map((r) => r.url)).size} distinct URLs`,
  );
  const files = {
    nokey: path.join(tmp, 'mix-nokey.tsv'),
    sqlite: path.join(tmp, 'mix-sqlite.tsv'),
    redis: path.join(tmp, 'mix-redis.tsv'),
    baseline: path.join(tmp, 'mix-baseline.tsv'),
    lists: path.join(tmp, 'lists-sqlite.tsv'),
    composed: path.join(tmp, 'composed-sqlite.tsv'),
  };
  // nginx and the bare server get the same requests with the same header bytes (a key they ignore).
  writeTsv(files.nokey, mix, sqliteKeys);
  writeTsv(files.sqlite, mix, sqliteKeys);
  if (redisKeys) writeTsv(files.redis, mix, redisKeys);
  if (baselineKeys) writeTsv(files.baseline, mix, baselineKeys);
  // The same requests with Accept-Encoding: br, gzip (a .br.tsv beside each).
  const compressedTsv = (f) => f.replace(/\.tsv$/, '.br.tsv');
  writeTsv(compressedTsv(files.nokey), mix, sqliteKeys, ACCEPT_COMPRESSED);
  writeTsv(compressedTsv(files.sqlite), mix, sqliteKeys, ACCEPT_COMPRESSED);
  if (redisKeys) writeTsv(compressedTsv(files.redis), mix, redisKeys, ACCEPT_COMPRESSED);
  if (baselineKeys) writeTsv(compressedTsv(files.baseline), mix, baselineKeys, ACCEPT_COMPRESSED);
  const bodyBytes = { identity: 0, br: 0, gzip: 0 };
  for (const r of mix) {
    bodyBytes.identity += r.bytes;
    bodyBytes.br += r.brBytes;
    bodyBytes.gzip += r.gzBytes;
  }
  log(
    `mix bodies (manifest sizes): br ${fmt(bodyBytes.br / bodyBytes.identity, 3)} of identity, gzip ${fmt(bodyBytes.gzip / bodyBytes.identity, 3)}`,
  );
  // nginx's folder: each body the mix asks for, hard-linked from the release where the file system allows (never
  // written into the release itself), and its build's gzip representation as <file>.gz (gzip_static), cut from the
  // release's pack that holds it.
  const nginxRoot = path.join(tmp, 'nginx-root');
  const gzipPlaces = new Map();
  const packs = new Map();
  const packOf = (name) => {
    if (!packs.has(name)) packs.set(name, readFileSync(path.join(release, name)));
    return packs.get(name);
  };
  for (const { identity, gzip } of packedRepresentations(manifest.representations ?? {}, manifest.packs))
    gzipPlaces.set(identity, gzip);
  // nginx's workers (user nobody) must reach it: the temporary folder is made 0700; let them pass through, not list.
  chmodSync(tmp, 0o711);
  for (const r of distinct.values()) {
    const target = path.join(nginxRoot, r.file);
    mkdirSync(path.dirname(target), { recursive: true });
    const place = (from, to) => {
      try {
        linkSync(from, to);
      } catch {
        copyFileSync(from, to);
      }
    };
    place(path.join(release, r.file), target);
    const gz = gzipPlaces.get(r.sha256);
    if (gz) writeFileSync(`${target}.gz`, packOf(gz.path).subarray(gz.offset, gz.offset + gz.bytes));
  }
  writeTsv(files.lists, listMix, sqliteKeys);
  writeTsv(files.composed, composed, sqliteKeys);
  writeFileSync(
    path.join(tmp, 'urls.json'),
    JSON.stringify([...distinct.values()].map((r) => [r.url, path.join(release, r.file)])),
  );
  writeFileSync(
    path.join(tmp, 'map.conf'),
    `${[...distinct.values()].map((r) => `"${r.url}" "/${r.file}";`).join('\n')}\n`,
  );

  // Servers: all up at once, loaded one at a time.
  const servers = [];
  const add = async (name, start) => {
    if (want(name)) servers.push({ name, ...(await start()) });
  };
  const stores = {
    [sqliteUrl]: { tsv: files.sqlite, keys: sqliteKeys },
    [redisUrl]: { tsv: files.redis, keys: redisKeys },
    [baselineUrl]: { tsv: files.baseline, keys: baselineKeys },
  };
  const gateway = async (name, store, extra = [], gw = CURRENT) => {
    const port = await freePort();
    const child = await startProcess(name, process.execPath, serveArgs(port, store, extra, gw), {
      ready: /listening on http/,
      env: gw.env,
    });
    return { url: `http://127.0.0.1:${port}`, pids: () => [child.pid], ...stores[store] };
  };
  await add('nginx', async () => {
    const port = await freePort();
    const conf = readFileSync(path.join(BENCH, 'nginx.conf.template'), 'utf8')
      .replaceAll('{{USER}}', nginxUser())
      .replaceAll('{{WORKERS}}', String(os.cpus().length))
      .replaceAll('{{TMP}}', tmp)
      .replaceAll('{{PORT}}', String(port))
      .replaceAll('{{ROOT}}', nginxRoot)
      .replaceAll('{{MAP_HASH_MAX}}', String(2 ** Math.ceil(Math.log2(distinct.size * 2 + 1024))));
    const confFile = path.join(tmp, 'nginx.conf');
    writeFileSync(confFile, conf);
    const child = await startProcess(
      'nginx',
      'nginx',
      ['-p', tmp, '-e', path.join(tmp, 'nginx-error.log'), '-c', confFile],
      { port },
    );
    return { url: `http://127.0.0.1:${port}`, pids: () => [child.pid], tsv: files.nokey, keys: sqliteKeys };
  });
  await add('bare', async () => {
    const port = await freePort();
    const child = await startProcess(
      'bare',
      process.execPath,
      [path.join(BENCH, 'bare-server.mjs'), String(port), path.join(tmp, 'urls.json')],
      { ready: /listening on http/ },
    );
    return { url: `http://127.0.0.1:${port}`, pids: () => [child.pid], tsv: files.nokey, keys: sqliteKeys };
  });
  await add('bare-hdr', async () => {
    const port = await freePort();
    const child = await startProcess(
      'bare-hdr',
      process.execPath,
      [path.join(BENCH, 'bare-server.mjs'), String(port), path.join(tmp, 'urls.json'), 'headers'],
      { ready: /listening on http/ },
    );
    return { url: `http://127.0.0.1:${port}`, pids: () => [child.pid], tsv: files.nokey, keys: sqliteKeys };
  });
  await add('bare-quota', async () => {
    const port = await freePort();
    const child = await startProcess(
      'bare-quota',
      process.execPath,
      [path.join(BENCH, 'bare-server.mjs'), String(port), path.join(tmp, 'urls.json'), 'quota'],
      { ready: /listening on http/ },
    );
    return { url: `http://127.0.0.1:${port}`, pids: () => [child.pid], tsv: files.sqlite, keys: sqliteKeys };
  });
  await add('sqlite', () => gateway('sqlite', sqliteUrl));
  // Given on purpose, so measured whatever --only says.
  if (baseline) servers.push({ name: 'baseline', ...(await gateway('baseline', baselineUrl, [], baseline)) });
  await add('redis', () => gateway('redis', redisUrl));
  if (O.workers) {
    await add('sqlite-w2', () => gateway('sqlite-w2', sqliteUrl, ['--workers', '2']));
    await add('redis-w2', () => gateway('redis-w2', redisUrl, ['--workers', '2']));
  }
  for (const s of servers) {
    // A baseline reading a publication of its own build may write other bytes (the format is what may have changed).
    await verify(s, mix, s.keys, { checkSha: !(s.name === 'baseline' && O.baselinePub) });
    await prime(s, mix, s.keys);
  }
  // Then each carries the load, unmeasured, past its start-up: a fresh Node process answers its first seconds of load
  // at half speed or less (JIT compilation, heap growth), which would otherwise land in whichever repetition 1 it is.
  if (O.settle > 0) for (const s of servers) await wrk(s.url, s.tsv, O.settle, { latency: false });
  log(`servers up and answering the manifest's bytes: ${servers.map((s) => `${s.name} ${s.url}`).join(', ')}`);

  // Alternate: every repetition loads every server once, starting one further along each time.
  const rows = [];
  // Each server twice a repetition: without Accept-Encoding, then (or first, every other repetition) with br, gzip.
  for (let rep = 0; rep < O.reps; rep++) {
    for (let i = 0; i < servers.length; i++) {
      const s = servers[(i + rep) % servers.length];
      const br = { ...s, name: `${s.name} br` };
      const runs = [
        [s, s.tsv],
        [br, compressedTsv(s.tsv)],
      ];
      if (rep % 2) runs.reverse();
      for (const [server, tsv] of runs) rows.push({ rep, ...(await load(server, tsv, `${server.name} #${rep + 1}`)) });
    }
  }

  // Composed answers against prebuilt list pages, same gateway (sqlite, one process), alternating.
  const crow = [];
  const sq = servers.find((s) => s.name === 'sqlite');
  if (O.composed && sq) {
    await verify({ ...sq, name: 'sqlite composed' }, composed, sqliteKeys, { checkSha: false });
    await prime(sq, composed, sqliteKeys);
    for (let rep = 0; rep < O.reps; rep++) {
      const order = rep % 2 ? ['composed', 'lists'] : ['lists', 'composed'];
      for (const k of order)
        crow.push({
          rep,
          ...(await load(
            { ...sq, name: k === 'lists' ? 'prebuilt lists' : 'composed lists' },
            files[k],
            `${k} #${rep + 1}`,
          )),
        });
    }
  }

  // Memory after every list variant: one composed page of each lane x display variant x locale x include set (144),
  // on top of everything the SQLite gateway has served so far. Each variant has its own items, so this is the most
  // list data one process can be made to hold.
  let sweep = null;
  if (O.composed && sq) {
    const reqs = [];
    for (const lane of ['verified', 'provisional', 'all'])
      for (const d of [false, true])
        for (const locale of ['en', 'zh', 'ru'])
          for (let m = 0; m < 8; m++)
            reqs.push({
              url: `/api/v1/models${query({ lane, includeDisplayOnly: d, locale, include: INCLUDE_ORDER.filter((_, i) => m & (1 << i)).join(',') || undefined, page_size: 7 })}`,
              key: 0,
            });
    const before = sq.pids().map(treeMem)[0];
    await prime(sq, reqs, sqliteKeys);
    await sleep(1000);
    sweep = { requests: reqs.length, before, after: sq.pids().map(treeMem)[0] };
    log(
      `every list variant (${reqs.length} composed pages): RSS ${fmt(before.rssMB)} -> ${fmt(sweep.after.rssMB)} MB, peak ${fmt(sweep.after.hwmMB)} MB`,
    );
  }

  // Optional: profile the SQLite gateway under the same load (after the measurements: a profiled server is slower).
  let profile = null;
  if (O.profile) {
    const dir = path.join(O.out, `prof-${stamp()}`);
    const port = await freePort();
    const child = await startProcess(
      'sqlite-prof',
      process.execPath,
      ['--cpu-prof', `--cpu-prof-dir=${dir}`, ...serveArgs(port, sqliteUrl)],
      { ready: /listening on http/, env: CURRENT.env },
    );
    const ps = { name: 'sqlite (profiled)', url: `http://127.0.0.1:${port}`, pids: () => [child.pid] };
    await prime(ps, mix, sqliteKeys);
    const from = Number(process.hrtime.bigint() / 1000n);
    await load(ps, files.sqlite, 'profiled sqlite');
    const to = Number(process.hrtime.bigint() / 1000n);
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGINT');
    await Promise.race([exited, sleep(10_000)]);
    const f = readdirSync(dir).find((n) => n.endsWith('.cpuprofile'));
    if (f) profile = { file: path.join(dir, f), ...summarizeProfile(path.join(dir, f), { from, to }) };
  }

  report({
    bodyBytes,
    rows,
    crow,
    sweep,
    profile,
    meanBody,
    distinct: distinct.size,
    composedDistinct: new Set(composed.map((r) => r.url)).size,
    elapsed: (Date.now() - t0) / 1000,
    baseline,
  });
}

function realpathRelease() {
  const cur = path.join(O.pub, 'current');
  return statSync(cur).isDirectory() ? execFileSync('realpath', [cur]).toString().trim() : O.pub;
}
const stamp = () => new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19);

function report({ bodyBytes, rows, crow, sweep, profile, meanBody, distinct, composedDistinct, elapsed, baseline }) {
  const names = [...new Set(rows.map((r) => r.server))];
  const S = Object.fromEntries(names.map((n) => [n, summarize(rows, n)]));
  const bare = S.bare,
    nginx = S.nginx;
  const L = [];
  const p = (s = '') => L.push(s);
  const cpuModel = os.cpus()[0]?.model ?? '?';
  p(`modelpub gateway benchmark, ${new Date().toISOString()}`);
  p(
    `machine: ${os.cpus().length} x ${cpuModel}, ${fmt(os.totalmem() / 2 ** 30, 1)} GB, Linux ${os.release()}, Node ${process.version}; load average at the end ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  const git = (a) => gitIn(ROOT, a);
  p(
    `code: commit ${git(['rev-parse', '--short', 'HEAD'])}${git(['status', '--porcelain', '--', 'src']) ? ' + uncommitted changes in src/' : ''}, lib/ as compiled; publication ${O.pub}; modelpub serve run as node ${CURRENT.nodeFlags.join(' ')}`,
  );
  if (baseline)
    p(
      `baseline: ${baseline.label}; publication ${baseline.pub}; run as node ${baseline.nodeFlags.join(' ')}; SQLite store, one process`,
    );
  p(
    `load: wrk -t${O.threads} -c${O.connections} -d${O.duration}s --latency (after a ${O.warmup} s warm-up; each server first loaded ${O.settle} s unmeasured), ${O.reps} repetitions alternating between servers; medians`,
  );
  p(
    `mix: ${O.mixSize} requests (seed ${O.seed}), ${distinct} distinct URLs, 80% details / 20% list pages (Zipf s=${ZIPF_S}), mean body ${fmt(meanBody / 1024, 1)} KB, ${O.keys} keys (Zipf), quota ${O.quota}/key/day`,
  );
  p();
  const ratio = (s, b) => (s && b ? fmt(s.rps / b.rps, 2) : '-');
  const range = (a, b) => {
    const r = paired(rows, a, b);
    return r.length ? `${fmt(Math.min(...r), 2)}-${fmt(Math.max(...r), 2)}` : '-';
  };
  p(
    table(
      [
        'server',
        'req/s',
        'p50 ms',
        'p99 ms',
        'MB/s',
        'RSS MB',
        'HWM MB',
        'x bare',
        '(per rep)',
        'x nginx',
        'us cpu/req',
        'cpu srv',
        'cpu wrk',
        'cpu other',
        'errors',
      ],
      names.map((n) => {
        const s = S[n];
        return [
          n,
          fmt(s.rps),
          fmt(s.p50, 2),
          fmt(s.p99, 2),
          fmt(s.mbps),
          fmt(s.rssMB),
          fmt(s.hwmMB),
          ratio(s, bare),
          n === 'bare' ? '' : range(n, 'bare'),
          ratio(s, nginx),
          fmt(s.usPerReq, 1),
          fmt(s.serverCpu, 2),
          fmt(s.wrkCpu, 2),
          fmt(s.otherCpu, 2),
          String(s.non2xx),
        ];
      }),
    ),
  );
  p(
    "(us cpu/req: CPU time of the server process tree per answered request, user + system; cpu columns: cores used during the measured run by the server tree, by wrk, and by everything else on the machine (other engineers' jobs: noise); RSS summed over the process tree after the last run, HWM the peak; nginx = master + workers; errors = non-2xx answers + socket errors)",
  );
  p();
  p(
    `compression: the mix's bodies (manifest sizes) with br are ${fmt(bodyBytes.br / bodyBytes.identity, 3)} of identity, with gzip ${fmt(bodyBytes.gzip / bodyBytes.identity, 3)}; on the wire (wrk's bytes, headers included, per response):`,
  );
  p(
    table(
      [
        'server',
        'B/resp',
        'B/resp br,gzip',
        'share',
        'req/s',
        'req/s br,gzip',
        'x',
        'p99 ms',
        'p99 br,gzip',
        '(x per rep)',
      ],
      names
        .filter((n) => S[`${n} br`])
        .map((n) => {
          const a = S[n];
          const b = S[`${n} br`];
          const perResp = (x) => (x.mbps * 1048576) / x.rps;
          const r = paired(rows, `${n} br`, n);
          return [
            n,
            fmt(perResp(a)),
            fmt(perResp(b)),
            fmt(perResp(b) / perResp(a), 3),
            fmt(a.rps),
            fmt(b.rps),
            fmt(b.rps / a.rps, 2),
            fmt(a.p99, 2),
            fmt(b.p99, 2),
            r.length ? `${fmt(Math.min(...r), 2)}-${fmt(Math.max(...r), 2)}` : '-',
          ];
        }),
    ),
  );
  p("(nginx answers gzip: gzip_static, the build's .gz files; the gateway answers br)");
  p();
  p('every run, in order:');
  p(
    table(
      ['run', 'req/s', 'p50 ms', 'p99 ms', 'RSS MB', 'us cpu/req', 'cpu srv', 'cpu other', 'errors'],
      [...rows, ...crow].map((r) => [
        r.label,
        fmt(r.rps),
        fmt(r.p50, 2),
        fmt(r.p99, 2),
        fmt(r.rssMB),
        fmt((1e6 * r.serverCpu) / r.rps, 1),
        fmt(r.serverCpu, 2),
        fmt(r.otherCpu, 2),
        String(r.non2xx + r.sockErrors),
      ]),
    ),
  );
  p();

  const C = { lists: summarize(crow, 'prebuilt lists'), composed: summarize(crow, 'composed lists') };
  if (C.lists && C.composed) {
    p(
      `composed answers (sqlite gateway, one process): ${composedDistinct} distinct URLs (q=, page_size 7/20/100) vs the prebuilt list pages of the mix`,
    );
    p(
      table(
        ['requests', 'req/s', 'p50 ms', 'p99 ms', 'MB/s', 'RSS MB', 'us cpu/req', 'x prebuilt', '(per rep)'],
        [C.lists, C.composed].map((s) => [
          s.name,
          fmt(s.rps),
          fmt(s.p50, 2),
          fmt(s.p99, 2),
          fmt(s.mbps),
          fmt(s.rssMB),
          fmt(s.usPerReq, 1),
          fmt(s.rps / C.lists.rps, 2),
          s === C.lists
            ? ''
            : (() => {
                const r = paired(crow, 'composed lists', 'prebuilt lists');
                return r.length ? `${fmt(Math.min(...r), 2)}-${fmt(Math.max(...r), 2)}` : '-';
              })(),
        ]),
      ),
    );
    p();
  }

  const goals = [];
  const goal = (text, ok, detail) => goals.push({ text, status: ok === null ? 'n/a' : ok ? 'PASS' : 'MISS', detail });
  if (bare) {
    for (const [n, min] of [
      ['sqlite', 0.8],
      ['redis', 0.75],
    ]) {
      if (!S[n]) continue;
      goal(
        `${n}: req/s >= ${min} x bare`,
        S[n].rps / bare.rps >= min,
        `${fmt(S[n].rps / bare.rps, 2)} (per rep ${range(n, 'bare')})`,
      );
      goal(
        `${n}: p99 <= 1.5 x bare's p99`,
        S[n].p99 <= 1.5 * bare.p99,
        `${fmt(S[n].p99, 2)} ms vs ${fmt(bare.p99, 2)} ms = ${fmt(S[n].p99 / bare.p99, 2)}x`,
      );
    }
  }
  const hdr = S['bare-hdr'];
  if (hdr)
    for (const n of ['sqlite', 'redis'])
      if (S[n])
        goal(
          `${n}: req/s vs bare-hdr (info: same response headers, no gateway work)`,
          null,
          `${fmt(S[n].rps / hdr.rps, 2)} (per rep ${range(n, 'bare-hdr')}); bare-hdr = ${fmt(hdr.rps / (bare?.rps ?? NaN), 2)} x bare`,
        );
  const ref = S['bare-quota'];
  if (ref)
    for (const n of ['sqlite', 'redis'])
      if (S[n])
        goal(
          `${n}: req/s vs bare-quota (info: the reference work, key check + counter in a Map, same headers)`,
          null,
          `${fmt(S[n].rps / ref.rps, 2)} (per rep ${range(n, 'bare-quota')}); bare-quota = ${fmt(ref.rps / (bare?.rps ?? NaN), 2)} x bare`,
        );
  if (C.lists && C.composed)
    goal(
      'composed lists >= 0.5 x prebuilt list rate',
      C.composed.rps / C.lists.rps >= 0.5,
      fmt(C.composed.rps / C.lists.rps, 2),
    );
  for (const n of ['sqlite', 'redis'])
    if (S[n]) goal(`${n}: RSS < 400 MB (peak, one process)`, S[n].hwmMB < 400, `${fmt(S[n].hwmMB)} MB`);
  if (sweep)
    goal(
      'sqlite: RSS < 400 MB after lists, composed and every list variant',
      sweep.after.hwmMB < 400,
      `${fmt(sweep.after.rssMB)} MB (peak ${fmt(sweep.after.hwmMB)} MB; ${fmt(sweep.before.rssMB)} MB before the ${sweep.requests} variant pages)`,
    );
  for (const n of ['sqlite-w2', 'redis-w2'])
    if (S[n])
      goal(`${n}: RSS (info: primary + 2 workers, each its own cache)`, null, `${fmt(S[n].hwmMB)} MB peak, summed`);
  p('goals:');
  for (const g of goals) p(`  ${g.status.padEnd(4)}  ${g.text.padEnd(55)} ${g.detail}`);
  p();
  for (const [w2, w1] of [
    ['sqlite-w2', 'sqlite'],
    ['redis-w2', 'redis'],
  ]) {
    if (S[w2] && S[w1])
      p(
        `--workers 2 (${w1}): ${fmt(S[w2].rps)} req/s = ${fmt(S[w2].rps / S[w1].rps, 2)} x one process (per rep ${range(w2, w1)})${bare ? `, ${fmt(S[w2].rps / bare.rps, 2)} x bare` : ''}, p99 ${fmt(S[w2].p99, 2)} ms, RSS ${fmt(S[w2].rssMB)} MB`,
      );
  }
  const before = S.baseline;
  const after = S.sqlite;
  if (before && after) {
    const ratios = paired(rows, 'sqlite', 'baseline');
    p();
    p(`before and after: sqlite (this checkout) / baseline (${baseline.label}), paired by repetition`);
    p(
      `  req/s ${fmt(after.rps)} / ${fmt(before.rps)} = ${fmt(after.rps / before.rps, 2)}; paired ratios ${ratios.map((r) => fmt(r, 2)).join(' ')} (median ${fmt(median(ratios), 2)})`,
    );
    p(
      `  us cpu/req ${fmt(after.usPerReq, 1)} / ${fmt(before.usPerReq, 1)}; p50 ${fmt(after.p50, 2)} / ${fmt(before.p50, 2)} ms; p99 ${fmt(after.p99, 2)} / ${fmt(before.p99, 2)} ms; RSS peak ${fmt(after.hwmMB)} / ${fmt(before.hwmMB)} MB`,
    );
  }
  if (profile) {
    p();
    p(
      `profile of the sqlite gateway under the mix (self time, top ${profile.top.length}, ${profile.windowed ? `warm-up and measured run only` : 'whole process'}, ${fmt(profile.totalMs)} ms sampled): ${profile.file}`,
    );
    p(
      table(
        ['self %', 'self ms', 'function'],
        profile.top.map((t) => [fmt(t.pct, 1), fmt(t.ms), t.fn]),
      ),
    );
  }
  p();
  p(`elapsed ${fmt(elapsed)} s`);
  const text = L.join('\n');
  console.log(text);
  const base = path.join(O.out, `gateway-${stamp()}`);
  writeFileSync(`${base}.txt`, `${text}\n`);
  writeFileSync(
    `${base}.json`,
    JSON.stringify(
      {
        options: O,
        baseline: baseline && { label: baseline.label, pub: baseline.pub, nodeFlags: baseline.nodeFlags },
        rows,
        composed: crow,
        sweep,
        summary: S,
        composedSummary: C,
        goals,
        profile,
        pairedWithBaseline: before && after ? paired(rows, 'sqlite', 'baseline') : null,
      },
      null,
      2,
    ),
  );
  console.log(`results: ${base}.txt, ${base}.json`);
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(`bench-gateway: ${process.env.MODELPUB_DEBUG ? (e?.stack ?? e) : (e?.message ?? e)}`);
    process.exit(1);
  },
);
