#!/usr/bin/env node
// MCP benchmark: a get_model tool call (POST /mcp, one JSON-RPC tools/call per request, as a stateless client sends
// it) against the REST detail it answers from (GET /api/v1/models/<slug>), on one `modelpub serve` (SQLite store,
// logging off), loaded with wrk in alternating repetitions (rest, mcp, rest, mcp, ...) so that both see the same
// machine. Prints req/s, p50 and p99 of each repetition, the medians and the ratio mcp / rest (paired per repetition
// and of the medians). Every request must answer 200, and the tool call's result must be a success (checked before
// the load).
//
//   node scripts/bench-mcp.mjs [--reps 4] [--duration 8] [--warmup 2] [--connections 32] [--threads 2]
//        [--slug gpt-4o] [--pub DIR] [--out DIR]
//
// --slug: the model both load (default gpt-4o, or the publication's most popular model when it has no gpt-4o).
//
// --pub: a folder `modelpub build --out` wrote (default: the default data, built into bench-out/mcp/pub when
// missing). Needs wrk (apt-get install wrk). Everything listens on 127.0.0.1; the server is stopped on exit.
// Results: <out>/mcp-<time>.{txt,json}.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(ROOT, 'bin', 'modelpub.js');
const { values: o } = parseArgs({
  options: {
    reps: { type: 'string', default: '4' },
    duration: { type: 'string', default: '8' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
    threads: { type: 'string', default: '2' },
    slug: { type: 'string' },
    pub: { type: 'string' },
    out: { type: 'string', default: path.join(ROOT, 'bench-out') },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (o.help) {
  console.log(
    'usage: node scripts/bench-mcp.mjs [--reps 4] [--duration 8] [--warmup 2] [--connections 32] [--threads 2]\n' +
      '       [--slug gpt-4o] [--pub DIR] [--out DIR]',
  );
  process.exit(0);
}
const int = (name) => {
  const n = Number(o[name]);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`bench-mcp: --${name} must be a whole number of at least 1, not ${JSON.stringify(o[name])}`);
    process.exit(2);
  }
  return n;
};
const reps = int('reps');
const duration = int('duration');
const warmup = int('warmup');
const connections = int('connections');
const threads = int('threads');
if (spawnSync('wrk', ['--version']).error) {
  console.error('bench-mcp: wrk is not installed (apt-get install wrk)');
  process.exit(2);
}

const children = new Set();
const tmp = mkdtempSync(path.join(os.tmpdir(), 'modelpub-bench-mcp-'));
const cleanup = () => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
};
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130));

const pub = o.pub ?? path.join(o.out, 'mcp', 'pub');
if (!existsSync(path.join(pub, 'current'))) {
  console.log(`building the default data into ${pub} ...`);
  execFileSync(process.execPath, [CLI, 'build', '--data', path.join(ROOT, 'data'), '--out', pub, '--quiet'], {
    stdio: 'inherit',
  });
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

const store = `sqlite:${path.join(tmp, 'gateway.db')}`;
const key = execFileSync(process.execPath, [CLI, 'keys', 'create', '--label', 'bench-mcp', '--store', store], {
  encoding: 'utf8',
})
  .trim()
  .split('\n')
  .at(-1);
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const server = spawn(
  process.execPath,
  [CLI, 'serve', '--dir', pub, '--port', String(port), '--store', store, '--quota', '1000000000', '--log', 'silent'],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
children.add(server);
await new Promise((resolve, reject) => {
  let out = '';
  server.stdout.on('data', (d) => {
    out += d;
    if (out.includes('listening on')) resolve();
  });
  server.once('exit', (code) => reject(new Error(`modelpub serve exited (${code}) before listening`)));
});

// gpt-4o unless --slug names another; a publication without it gives its most popular model.
if (o.slug === undefined) {
  const has = await fetch(`${base}/api/v1/models/gpt-4o`, { headers: { 'x-api-key': key } });
  await has.arrayBuffer();
  o.slug =
    has.status === 200
      ? 'gpt-4o'
      : (await fetch(`${base}/api/v1/models?page_size=1`, { headers: { 'x-api-key': key } }).then((r) => r.json())).data
          .models[0].slug;
}
const detailPath = `/api/v1/models/${o.slug}`;
const call = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'get_model', arguments: { slug: o.slug } },
});
const mcpHeaders = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'x-api-key': key,
};
// The two answer the same model: checked once before the load.
const restBody = await fetch(base + detailPath, { headers: { 'x-api-key': key } }).then(async (r) => {
  if (r.status !== 200)
    throw new Error(`GET ${detailPath} answered ${r.status}: pass --slug a model of the publication`);
  return r.json();
});
const mcpAnswer = await fetch(`${base}/mcp`, { method: 'POST', headers: mcpHeaders, body: call }).then((r) => r.json());
if (
  mcpAnswer.result?.isError !== undefined ||
  JSON.stringify(mcpAnswer.result?.structuredContent?.model) !== JSON.stringify(restBody.data)
)
  throw new Error(`the get_model call does not answer the REST detail: ${JSON.stringify(mcpAnswer).slice(0, 300)}`);

const lua = path.join(tmp, 'post.lua');
writeFileSync(
  lua,
  [
    'wrk.method = "POST"',
    `wrk.body = ${JSON.stringify(call)}`,
    ...Object.entries(mcpHeaders).map(([h, v]) => `wrk.headers[${JSON.stringify(h)}] = ${JSON.stringify(v)}`),
    '',
  ].join('\n'),
);

const LOADS = {
  rest: (secs) => ['-H', `x-api-key: ${key}`, `${base}${detailPath}`, '-d', `${secs}s`],
  mcp: (secs) => ['-s', lua, `${base}/mcp`, '-d', `${secs}s`],
};
const ms = (v, unit) => Number(v) * { us: 0.001, ms: 1, s: 1000 }[unit];
function wrk(kind, secs) {
  const out = execFileSync(
    'wrk',
    ['-t', String(threads), '-c', String(connections), '--latency', ...LOADS[kind](secs)],
    {
      encoding: 'utf8',
    },
  );
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const lat = (p) => {
    const m = new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s)`, 'm').exec(out);
    return m ? ms(m[1], m[2]) : Number.NaN;
  };
  const bad = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const errors = /Socket errors: (.*)/.exec(out)?.[1] ?? null;
  if (bad || errors)
    throw new Error(`${kind}: ${bad} answers were not 2xx/3xx${errors ? `; socket errors ${errors}` : ''}`);
  return { rps, p50: lat(50), p99: lat(99) };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const runs = { rest: [], mcp: [] };
console.log(
  `${reps} repetitions of ${duration} s each (after ${warmup} s of warm-up), ` +
    `${connections} connections, ${threads} threads, slug ${o.slug}`,
);
for (const kind of ['rest', 'mcp']) wrk(kind, warmup);
for (let i = 0; i < reps; i++) {
  for (const kind of ['rest', 'mcp']) {
    const r = wrk(kind, duration);
    runs[kind].push(r);
    console.log(
      `rep ${i + 1} ${kind.padEnd(4)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms`,
    );
  }
}
const paired = runs.mcp.map((m, i) => m.rps / runs.rest[i].rps);
const summary = {
  slug: o.slug,
  reps,
  duration,
  connections,
  threads,
  rest: { rps: median(runs.rest.map((r) => r.rps)), p99: median(runs.rest.map((r) => r.p99)) },
  mcp: { rps: median(runs.mcp.map((r) => r.rps)), p99: median(runs.mcp.map((r) => r.p99)) },
  pairedRatios: paired,
  runs,
};
const ratio = summary.mcp.rps / summary.rest.rps;
const text = [
  `REST GET ${detailPath}: median ${summary.rest.rps.toFixed(0)} req/s, p99 ${summary.rest.p99.toFixed(2)} ms`,
  `MCP get_model {slug: ${o.slug}}: median ${summary.mcp.rps.toFixed(0)} req/s, p99 ${summary.mcp.p99.toFixed(2)} ms`,
  `ratio mcp / rest: ${ratio.toFixed(3)} (medians); per repetition ${paired.map((r) => r.toFixed(3)).join(', ')}`,
].join('\n');
console.log(text);
mkdirSync(o.out, { recursive: true });
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
writeFileSync(path.join(o.out, `mcp-${stamp}.txt`), `${text}\n`);
writeFileSync(path.join(o.out, `mcp-${stamp}.json`), `${JSON.stringify(summary, null, 2)}\n`);
console.log(`results: ${path.join(o.out, `mcp-${stamp}.{txt,json}`)}`);
