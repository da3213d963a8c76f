#!/usr/bin/env node
// Publish benchmark: `modelpub publish` of a build to a file:// remote and to the S3 API of s3rver (on loopback),
// first into an empty remote, then the same revision again, then the incremental publish after one model's English
// description changed. Prints, for each: objects and bytes uploaded, other requests, seconds.
//
//   node scripts/bench-publish.mjs [--data data] [--tiny] [--only file,s3] [--concurrency 16] [--root DIR] [--keep]
//
// --tiny publishes the first 20 models of --data (with their measurements) instead of all (for CI: seconds).
// s3rver is the only S3-compatible server that installs here; it stores each object as files and takes about 290
// PUT/s on this machine, so the s3 figures measure s3rver as much as the client. It runs in a child process under
// --openssl-legacy-provider (its list continuation tokens use DES). Credentials: s3rver's fixed pair, in the
// environment, as for any AWS host.
// This script only measures and prints; it never fails on a figure.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import YAML from 'yaml';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const USAGE =
  'usage: node scripts/bench-publish.mjs [--data data] [--tiny] [--only file,s3] [--concurrency 16] [--root DIR] [--keep]';

const { values: args } = parseArgs({
  options: {
    data: { type: 'string', default: 'data' },
    tiny: { type: 'boolean', default: false },
    only: { type: 'string', default: 'file,s3' },
    concurrency: { type: 'string', default: '16' },
    root: { type: 'string' },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (args.help) {
  console.log(USAGE);
  process.exit(0);
}
const targets = args.only.split(',');
if (targets.some((t) => t !== 'file' && t !== 's3')) throw new Error(`--only: file, s3 or both, not ${args.only}`);
const concurrency = Number(args.concurrency);
if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error('--concurrency must be a whole number >= 1');

const log = (...a) => console.log(...a);
const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;

// lib/ from src/ when it is missing or older (the benchmark measures the code as it is).
function compile() {
  const newest = (dir) =>
    Math.max(
      0,
      ...fs.readdirSync(dir, { withFileTypes: true }).map((e) => {
        const p = path.join(dir, e.name);
        return e.isDirectory() ? newest(p) : fs.statSync(p).mtimeMs;
      }),
    );
  const lib = path.join(REPO, 'lib/cli.js');
  if (!fs.existsSync(lib) || fs.statSync(lib).mtimeMs < newest(path.join(REPO, 'src')))
    execFileSync(process.execPath, [path.join(REPO, 'node_modules/typescript/bin/tsc'), '-p', REPO], {
      stdio: 'inherit',
    });
}

function buildInto(data, out) {
  const t = performance.now();
  const stdout = execFileSync(
    process.execPath,
    ['--max-old-space-size=1536', path.join(REPO, 'bin/modelpub.js'), 'build', '--data', data, '--out', out, '--quiet'],
    { encoding: 'utf8' },
  );
  log(stdout.trimEnd().replace(/^/gm, '  '));
  return (performance.now() - t) / 1000;
}

/** Drops every model but the first n, and the measurements and overrides of the dropped ones. */
function keepFirstModels(data, n) {
  const files = fs.readdirSync(path.join(data, 'models')).sort();
  const kept = new Set(files.slice(0, n).map((f) => f.replace(/\.yaml$/, '')));
  for (const f of files.slice(n)) fs.rmSync(path.join(data, 'models', f));
  for (const file of fs.readdirSync(data, { recursive: true })) {
    const p = path.join(data, file);
    if (file.endsWith('.jsonl')) {
      const rows = fs
        .readFileSync(p, 'utf8')
        .split('\n')
        .filter((l) => l && kept.has(JSON.parse(l).model));
      fs.writeFileSync(p, rows.length ? `${rows.join('\n')}\n` : '');
    } else if (file.startsWith('overrides') && file.endsWith('.yaml')) {
      const doc = YAML.parse(fs.readFileSync(p, 'utf8'));
      doc.overrides = (doc.overrides ?? []).filter((o) => kept.has(o.model));
      fs.writeFileSync(p, YAML.stringify(doc));
    }
  }
}

/** The first model's en description, edited (the smallest real change a maintainer makes). */
function editOneDescription(data) {
  const file = fs.readdirSync(path.join(data, 'models')).sort()[0];
  const p = path.join(data, 'models', file);
  const doc = YAML.parseDocument(fs.readFileSync(p, 'utf8'));
  doc.setIn(['description', 'en'], `${doc.getIn(['description', 'en'])} Edited for the publish benchmark.`);
  fs.writeFileSync(p, doc.toString({ lineWidth: 0 }));
  return file.replace(/\.yaml$/, '');
}

async function startS3rver(dir) {
  const child = spawn(
    process.execPath,
    ['--openssl-legacy-provider', path.join(REPO, 'test/helpers/s3rver-child.mjs'), dir, 'bench'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const port = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]).port);
    });
    child.once('exit', (code) => reject(new Error(`s3rver exited with ${code}`)));
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise((r) => {
        child.once('exit', r);
        child.kill('SIGTERM');
      }),
  };
}

/** A target that counts what it is asked to do. */
function counting(target) {
  const c = {
    puts: 0,
    putBytes: 0,
    objectPuts: 0,
    objectBytes: 0,
    manifests: 0,
    pointer: 0,
    sized: 0,
    lists: 0,
    deleted: 0,
  };
  return {
    counts: c,
    target: {
      ...target,
      async put(key, body, o) {
        await target.put(key, body, o);
        c.puts++;
        c.putBytes += body.length;
        if (key.startsWith('objects/')) {
          c.objectPuts++;
          c.objectBytes += body.length;
        } else if (key.startsWith('revisions/')) c.manifests++;
        else c.pointer++;
      },
      async sizes(keys) {
        c.sized += keys.length;
        return target.sizes(keys);
      },
      async list(prefix) {
        c.lists++;
        return target.list(prefix);
      },
      async delete(keys) {
        c.deleted += keys.length;
        return target.delete(keys);
      },
    },
  };
}

async function main() {
  compile();
  const { publish } = await import(pathToFileURL(path.join(REPO, 'lib/publish/publish.js')).href);
  const { openTarget } = await import(pathToFileURL(path.join(REPO, 'lib/publication/targets/index.js')).href);
  const root = args.root
    ? path.resolve(args.root)
    : fs.mkdtempSync(path.join(args.tiny ? os.tmpdir() : path.join(REPO, 'bench-out'), 'publish-'));
  fs.mkdirSync(root, { recursive: true });
  const data = path.join(root, 'data');
  log(`# publish benchmark, ${new Date().toISOString()}, node ${process.version}, ${os.cpus().length} cores`);
  log(`root: ${root}`);
  fs.cpSync(path.resolve(REPO, args.data), data, { recursive: true });
  if (args.tiny) keepFirstModels(data, 20);
  log(`data: a copy of ${args.data}${args.tiny ? ', its first 20 models only' : ''}`);
  const dist = path.join(root, 'dist');
  log('\n== build');
  buildInto(data, dist);

  const s3 = targets.includes('s3') ? await startS3rver(path.join(root, 's3rver')) : null;
  Object.assign(process.env, {
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    AWS_EC2_METADATA_DISABLED: 'true',
  });
  const remotes = {
    file: pathToFileURL(path.join(root, 'remote')).href,
    s3: 's3://bench/site',
  };
  const rows = [];
  const run = async (phase, name) => {
    const { target, counts } = counting(
      await openTarget(remotes[name], { endpoint: s3?.endpoint, region: 'us-east-1', concurrency }),
    );
    const t = performance.now();
    const r = await publish({ from: dist, target, keep: 3, concurrency, say: () => {}, progress: null });
    const seconds = (performance.now() - t) / 1000;
    await target.close();
    const row = { phase, target: name, revision: r.revision, seconds, ...counts };
    rows.push(row);
    log(
      `${phase.padEnd(12)} ${name.padEnd(5)} ${String(counts.objectPuts).padStart(6)} objects ${mb(counts.objectBytes).padStart(9)}, ${counts.manifests} manifest (${mb(counts.putBytes - counts.objectBytes)} with the pointer), ${counts.sized} keys looked up, ${counts.lists} listings, ${counts.deleted} deleted: ${seconds.toFixed(1)} s`,
    );
  };
  try {
    log('\n== first publish, then the same revision again');
    for (const t of targets) {
      await run('first', t);
      await run('same again', t);
    }
    log(`\n== incremental: models/${editOneDescription(data)}.yaml description.en changed`);
    buildInto(data, dist);
    for (const t of targets) await run('incremental', t);
  } finally {
    await s3?.stop();
  }
  fs.mkdirSync(path.join(REPO, 'bench-out'), { recursive: true });
  const out = path.join(REPO, 'bench-out', `publish-${process.pid}.json`);
  fs.writeFileSync(out, `${JSON.stringify({ tiny: args.tiny, concurrency, rows }, null, 2)}\n`);
  log('\n| publish | target | objects | bytes | manifest + pointer | seconds |');
  log('|---|---|---|---|---|---|');
  for (const r of rows)
    log(
      `| ${r.phase} | ${r.target === 's3' ? 's3 (s3rver)' : 'file://'} | ${r.objectPuts} | ${mb(r.objectBytes)} | ${r.manifests} + ${r.pointer} (${mb(r.putBytes - r.objectBytes)}) | ${r.seconds.toFixed(1)} |`,
    );
  log(`\nresults: ${out}`);
  if (!args.keep) fs.rmSync(root, { recursive: true, force: true });
}

await main();
