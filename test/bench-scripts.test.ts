// Each benchmark script runs once at a tiny size, so a change that breaks one fails here instead of waiting for the
// next person who measures. Timing goals do not belong in tests: this checks that each script finishes, prints its
// tables and results file, and that every server it measured answered every request of the mix.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ensureCompiled, ROOT } from './helpers/cli.js';
import { tracked } from './helpers/children.js';

const onPath = (name: string) =>
  (process.env.PATH ?? '').split(path.delimiter).some((dir) => dir && existsSync(path.join(dir, name)));
const missingTools = ['wrk', 'nginx'].filter((t) => !onPath(t));
const GATEWAY_SKIPPED = `${missingTools.join(' and ')} not installed: the gateway benchmark's test skipped (CI installs them)`;
if (missingTools.length) console.warn(GATEWAY_SKIPPED);
const haveRedis = onPath('redis-server');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs node with `args` in the repository; the stack of a failure is printed (MODELPUB_DEBUG). */
function run(args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = tracked(
      spawn(process.execPath, args, {
        cwd: ROOT,
        env: { ...process.env, MODELPUB_DEBUG: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      resolve({ code, stdout, stderr });
    });
  });
}

const failure = (r: Run) =>
  `exit ${r.code}\n--- stdout\n${r.stdout.slice(-3000)}\n--- stderr\n${r.stderr.slice(-3000)}`;

let dir: string;
/** A tiny synthetic catalog: the build benchmark's reference data and the gateway benchmark's publication. */
let data: string;

beforeAll(async () => {
  ensureCompiled();
  dir = mkdtempSync(path.join(tmpdir(), 'modelpub-bench-test-'));
  data = path.join(dir, 'data');
  const gen = await run([
    'scripts/synthetic-catalog.mjs',
    '--out',
    data,
    '--models',
    '8',
    '--metrics',
    '3',
    '--speed',
    '50',
    '--seed',
    '2',
  ]);
  expect(gen.code, failure(gen)).toBe(0);
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('benchmark scripts at a tiny size', () => {
  it('bench-build measures full builds next to cp -r, peak RSS and both rebuilds, and a full-only synthetic catalog', async () => {
    const out = path.join(dir, 'build-results');
    const r = await run([
      'scripts/bench-build.mjs',
      '--models',
      '12',
      '--full-only-above',
      '10',
      '--metrics',
      '3',
      '--speed',
      '100',
      '--repeat',
      '2',
      '--data',
      data,
      '--root',
      path.join(dir, 'build-root'),
      '--out',
      out,
    ]);
    expect(r.code, failure(r)).toBe(0);
    expect(r.stdout).toContain('| catalog | full build | cp -r of its release |');
    expect(r.stdout).toMatch(/^\| --data \S+ \(median of 2\) \| \d+\.\d s \| \d+\.\d s \| \d+\.\d\d× \|/m);
    expect(r.stdout).toMatch(/^\| synthetic 12 models \| \d+\.\d s \| .* \| not measured \| not measured \|/m);
    expect(r.stdout).toMatch(/^load average \(1, 5, 15 min\) at the start: [\d.]+ [\d.]+ [\d.]+$/m);

    const [file] = readdirSync(out);
    const results = JSON.parse(readFileSync(path.join(out, file!), 'utf8'));
    const [small, synthetic] = results.catalogs;
    expect(results.catalogs).toHaveLength(2);
    expect(small.samples).toHaveLength(2);
    for (const s of small.samples) {
      expect(s.full.wall).toBeGreaterThan(0);
      expect(s.full.rss).toBeGreaterThan(0);
      expect(s.cp).toBeGreaterThan(0);
      expect(s.files).toBeGreaterThan(0);
      // Each rebuild publishes its one change, and keeps the other bodies.
      expect(s.description.edit).toMatch(/^models\/.+\.yaml description\.en$/);
      expect(s.benchmark.edit).toMatch(/^measurements\/benchmarks\/.+\.jsonl:\d+ /);
      for (const k of ['description', 'benchmark']) {
        expect(s[k].failed, k).toBeUndefined();
        expect(s[k].reported.changed, k).toBeGreaterThan(0);
        expect(s[k].reported.kept, k).toBeGreaterThan(0);
      }
    }
    expect(small.summary.descriptionShare).toBeGreaterThan(0);
    expect(synthetic.fullOnly).toBe(true);
    expect(synthetic.samples).toHaveLength(1);
    expect(synthetic.samples[0].description).toBeUndefined();
    expect(synthetic.summary.rssMax).toBeGreaterThan(0);
    // The working folder is removed without --keep, and the measured copy of --data leaves it as it was.
    expect(existsSync(path.join(dir, 'build-root'))).toBe(false);
    expect(
      readFileSync(path.join(data, 'models', readdirSync(path.join(data, 'models')).sort()[0]!), 'utf8'),
    ).not.toContain('Edited for the rebuild benchmark');
  });

  it('bench-compression-build pairs builds with and without representations, full and incremental', async () => {
    const scratch = path.join(dir, 'compression-scratch');
    mkdirSync(scratch);
    const r = await run(['scripts/bench-compression-build.mjs', '--runs', '1', '--data', data, '--scratch', scratch]);
    expect(r.code, failure(r)).toBe(0);
    const medians = [
      ...r.stdout.matchAll(/^median wall: with ([\d.]+) s, without ([\d.]+) s; median of the paired ratios ([\d.]+)/gm),
    ];
    expect(medians).toHaveLength(2); // full, incremental
    for (const m of medians) for (const x of m.slice(1)) expect(Number(x), m[0]).toBeGreaterThan(0);
    expect(r.stdout).toMatch(/^incremental build after one description change/m);
    expect(readdirSync(scratch)).toEqual([]); // its folders are removed
  });

  it('bench-publish publishes a tiny build to file:// and s3rver, again, and after one description changed', async () => {
    const r = await run(['scripts/bench-publish.mjs', '--tiny', '--root', path.join(dir, 'publish-root')]);
    expect(r.code, failure(r)).toBe(0);
    // Its table: | phase | target | objects | bytes | manifest + pointer | seconds |
    const rows = [
      ...r.stdout.matchAll(
        /^\| (first|same again|incremental) \| (file:\/\/|s3 \(s3rver\)) \| (\d+) \| .* \| ([\d.]+) \|$/gm,
      ),
    ];
    expect(rows.map((m) => `${m[1]} ${m[2]}`).sort()).toEqual(
      ['first', 'same again', 'incremental'].flatMap((p) => [`${p} file://`, `${p} s3 (s3rver)`]).sort(),
    );
    for (const [line, phase, , objects] of rows) {
      // The same revision again uploads nothing; the first and the incremental publish upload something.
      if (phase === 'same again') expect(Number(objects), line).toBe(0);
      else expect(Number(objects), line).toBeGreaterThan(0);
    }
    // Its results file lands in the repository's bench-out/ (git-ignored): read it, then leave no trace.
    const results = /^results: (.+\.json)$/m.exec(r.stdout)?.[1];
    expect(results, r.stdout).toBeDefined();
    expect(JSON.parse(readFileSync(results!, 'utf8')).rows).toHaveLength(6);
    rmSync(results!);
  });

  it.skipIf(missingTools.length > 0)(
    'bench-gateway loads every server, composed lists and a baseline checkout, and reports paired ratios',
    async () => {
      const pub = path.join(dir, 'pub');
      const build = await run([BIN, 'build', '--data', data, '--out', pub, '--quiet']);
      expect(build.code, failure(build)).toBe(0);

      const servers = ['nginx', 'bare', 'bare-hdr', 'bare-quota', 'sqlite', 'sqlite-w2'];
      if (haveRedis) servers.push('redis', 'redis-w2');
      else console.warn('redis-server not installed: the gateway benchmark runs without its Redis servers');
      const out = path.join(dir, 'gateway-results');
      const r = await run([
        'scripts/bench-gateway.mjs',
        '--pub',
        pub,
        '--out',
        out,
        '--only',
        servers.join(','),
        '--reps',
        '1',
        '--duration',
        '1',
        '--warmup',
        '0',
        '--settle',
        '0',
        '--keys',
        '2',
        '--mix-size',
        '300',
        '--connections',
        '4',
        '--threads',
        '1',
        '--profile',
        // This checkout as its own baseline: the before-and-after machinery runs without compiling another commit.
        '--baseline-checkout',
        ROOT,
      ]);
      expect(r.code, failure(r)).toBe(0);
      expect(r.stdout).toMatch(/^server +req\/s +p50 ms +p99 ms/m);
      expect(r.stdout).toMatch(/^goals:/m);
      expect(r.stdout).toMatch(/paired ratios \d+\.\d\d \(median \d+\.\d\d\)/);

      const json = readdirSync(out).find((f) => f.endsWith('.json'));
      const results = JSON.parse(readFileSync(path.join(out, json!), 'utf8'));
      // Every server is loaded twice: without Accept-Encoding, and with br, gzip (`<server> br`).
      const loaded = [...servers, 'baseline'];
      expect(Object.keys(results.summary).sort()).toEqual([...loaded, ...loaded.map((n) => `${n} br`)].sort());
      for (const [name, s] of Object.entries<{ rps: number; non2xx: number }>(results.summary)) {
        expect(s.rps, name).toBeGreaterThan(0);
        expect(s.non2xx, `${name}: non-2xx answers or socket errors`).toBe(0);
      }
      for (const k of ['lists', 'composed']) {
        expect(results.composedSummary[k].rps, k).toBeGreaterThan(0);
        expect(results.composedSummary[k].non2xx, k).toBe(0);
      }
      expect(results.sweep.requests).toBe(144);
      expect(results.pairedWithBaseline).toHaveLength(1);
      expect(results.profile.top.length).toBeGreaterThan(0);
    },
  );
});

describe('the launcher a benchmark runs', () => {
  it("gives what bin/modelpub.js's #! line sets, its environment as well as node's flags", async () => {
    // @ts-expect-error: a script of the repository, JavaScript without types
    const { launcherOf } = await import('../scripts/bench/launcher.mjs');
    const dir = mkdtempSync(path.join(tmpdir(), 'modelpub-launcher-'));
    try {
      const cli = path.join(dir, 'modelpub.js');
      writeFileSync(cli, '#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-old-space-size=64 --no-memory-reducer\n');
      expect(launcherOf(cli)).toEqual({
        env: { MALLOC_ARENA_MAX: '2' },
        nodeFlags: ['--max-old-space-size=64', '--no-memory-reducer'],
      });
      // This checkout's own launcher runs node with at least its heap cap.
      expect(launcherOf(BIN).nodeFlags).toContain('--no-memory-reducer');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
