// The gateway's commands through the real CLI: `keys create|list|revoke` on a SQLite store, and `serve`: its
// "listening on" line, one JSON log line per request with a key fingerprint and never the key, and --workers 2.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { openStore } from '../src/gateway/stores/index.js';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../src/pipeline/build.js';
import { ensureCompiled, runCli, spawnCli } from './helpers/cli.js';
import { smallCatalog, withTemp, writeFixture } from './helpers/fixture.js';
import { REDIS_MISSING, redisServerPath, startRedis } from './helpers/redis.js';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { tick, until } from './helpers/wait.js';

let tmp: string;
let out: string;
const store = () => `sqlite:${path.join(tmp, 'gw.db')}`;

beforeAll(async () => {
  ensureCompiled();
  tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-cli-gw-'));
  await writeFixture(path.join(tmp, 'data'), smallCatalog());
  out = path.join(tmp, 'dist');
  await build({ dataDir: path.join(tmp, 'data'), outDir: out });
});
afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

/** Starts `serve`, resolves with its URL once it printed `listening on`; collects stdout lines. */
async function serve(
  args: string[],
  storeUrl = store(),
): Promise<{ url: string; child: ChildProcess; lines: string[]; stop(): Promise<void> }> {
  const child = spawnCli(['serve', '--dir', out, '--port', '0', '--store', storeUrl, ...args]);
  const lines: string[] = [];
  let buf = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      buf += d;
      const parts = buf.split('\n');
      buf = parts.pop()!;
      lines.push(...parts);
      const m = /^listening on (http:\/\/\S+)/.exec(lines.find((l) => l.startsWith('listening on')) ?? '');
      if (m) resolve(m[1]!);
    });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d));
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
  return {
    url,
    child,
    lines,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

describe('keys', () => {
  it('create prints the key alone on the last line; the store and `list` hold only its id, label and hash', async () => {
    const created = await runCli(['keys', 'create', '--store', store(), '--label', 'docs team']);
    expect(created.code, created.stderr).toBe(0);
    const key = created.stdout.trim().split('\n').at(-1)!;
    expect(key).toMatch(/^mp_[A-Za-z0-9_-]{43}$/);
    const listed = await runCli(['keys', 'list', '--store', store()]);
    expect(listed.stdout).toContain('docs team');
    expect(listed.stdout).not.toContain(key);
    const db = await readFile(path.join(tmp, 'gw.db'));
    expect(db.includes(key)).toBe(false);
    expect(db.includes(key.slice(3, 20))).toBe(false);
  });

  it('revoke takes an id; a revoked key is refused with 401; an unknown id is an error naming it', async () => {
    const key = (await runCli(['keys', 'create', '--store', store(), '--label', 'to revoke'])).stdout
      .trim()
      .split('\n')
      .at(-1)!;
    const id = /^(k_[0-9a-f]{8})\tto revoke/m.exec((await runCli(['keys', 'list', '--store', store()])).stdout)![1]!;
    const revoked = await runCli(['keys', 'revoke', id, '--store', store()]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect((await runCli(['keys', 'list', '--store', store()])).stdout).toMatch(
      new RegExp(`^${id}\\tto revoke\\tcreated \\S+\\trevoked `, 'm'),
    );
    const gw = await serve(['--log', 'silent']);
    try {
      const r = await fetch(`${gw.url}/api/v1/models`, { headers: { 'x-api-key': key } });
      expect(r.status).toBe(401);
      expect((await r.json()).code).toBe('invalid_api_key');
    } finally {
      await gw.stop();
    }
    const again = await runCli(['keys', 'revoke', id, '--store', store()]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`^${id} \\(to revoke\\) was already revoked at \\S+Z$`, 'm'));
    const unknown = await runCli(['keys', 'revoke', 'k_00000000', '--store', store()]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^modelpub: no key has the id k_00000000 in sqlite:.*keys list/);
  });

  it('revoke takes the key itself too, says when gateways stop taking it, and never prints a key, even in an error', async () => {
    const key = (await runCli(['keys', 'create', '--store', store(), '--label', 'revoke by key'])).stdout
      .trim()
      .split('\n')
      .at(-1)!;
    const secret = key.slice(3);
    for (const typo of [key.slice(0, -1), `${key}x`, secret, `-${secret}`, ` ${key.slice(0, 20)}`]) {
      const r = await runCli(['keys', 'revoke', typo, '--store', store()]);
      // A secret that starts with '-' reads as an option: commander refuses it (exit 1), without echoing it.
      if (typo.startsWith('-')) expect(r.code, typo).toBe(1);
      else {
        expect(r.code, typo).toBe(2);
        expect(r.stderr).toMatch(/^modelpub: that (is neither a key id|starts as a key does \(mp_\) but is not one)/);
      }
      expect(r.stdout + r.stderr).not.toContain(secret.slice(0, 16));
    }
    const unknown = await runCli(['keys', 'revoke', `mp_${'A'.repeat(43)}`, '--store', store()]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^modelpub: no key matches the key given in sqlite:/);
    expect(unknown.stderr).not.toContain('A'.repeat(16));
    const revoked = await runCli(['keys', 'revoke', key, '--store', store()]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toMatch(
      /^revoked k_[0-9a-f]{8} \(revoke by key\); running gateways refuse it within 10 s \(their key cache\)$/m,
    );
    expect(revoked.stdout + revoked.stderr).not.toContain(secret.slice(0, 16));
    expect((await runCli(['keys', 'list', '--store', store()])).stdout).toMatch(
      /\trevoke by key\tcreated \S+\trevoked /,
    );
  });

  it('list and revoke never create a store at a mistyped path; create refuses memory: and an empty label', async () => {
    const typo = path.join(tmp, 'no-such-dir', 'gw.db');
    for (const args of [
      ['keys', 'list'],
      ['keys', 'revoke', 'k_00000000'],
    ]) {
      const r = await runCli([...args, '--store', `sqlite:${typo}`]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(`Store "sqlite:${typo}": there is no such file`);
    }
    expect(existsSync(path.dirname(typo))).toBe(false);
    const mem = await runCli(['keys', 'create', '--store', 'memory:']);
    expect([mem.code, mem.stdout]).toEqual([2, '']);
    expect(mem.stderr).toContain('--store memory: keeps keys for one process only');
    const blank = await runCli(['keys', 'create', '--store', store(), '--label', ' ']);
    expect([blank.code, blank.stdout]).toEqual([2, '']);
    expect(blank.stderr).toContain('--label is empty');
  });

  // Node's recursive mkdir loops forever at 100% CPU where mkdir(2) says ENOENT under a folder that exists: the CLI
  // hung on these until the test timed out.
  it.skipIf(!existsSync('/proc/self'))('a store or an --out under /proc fails at once, naming the folder', async () => {
    const keys = await runCli(['keys', 'create', '--store', 'sqlite:/proc/modelpub-test/gw.db']);
    expect(keys.code).toBe(1);
    expect(keys.stderr).toMatch(/^modelpub: .*ENOENT.*'\/proc\/modelpub-test'/);
    const built = await runCli([
      'build',
      '--data',
      path.join(tmp, 'data'),
      '--out',
      '/proc/modelpub-test/dist',
      '--quiet',
    ]);
    expect(built.code).toBe(1);
    expect(built.stderr).toMatch(/^modelpub: .*ENOENT.*'\/proc\/modelpub-test'/);
  });
});

describe('serve', () => {
  it('logs one JSON line per request with method, route, status, duration and a key fingerprint, never the key', async () => {
    const key = (await runCli(['keys', 'create', '--store', store(), '--label', 'logged'])).stdout
      .trim()
      .split('\n')
      .at(-1)!;
    const gw = await serve([]);
    try {
      const asked = [
        ['/api/v1/models?page_size=2', key, 200],
        ['/api/v1/models/alpha?locale=zh', key, 200],
        ['/api/v1/models/no-such-model', key, 404],
        ['/api/v1/models?page_size=1000', key, 400],
        ['/api/v1/models', `mp_${'x'.repeat(43)}`, 401],
      ] as const;
      for (const [p, k, status] of asked) {
        const r = await fetch(gw.url + p, { headers: { 'x-api-key': k } });
        await r.arrayBuffer();
        expect(r.status, p).toBe(status);
      }
      // pino writes asynchronously: wait for the lines.
      await until(() => gw.lines.filter((l) => l.startsWith('{')).length >= asked.length);
      const logs = gw.lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
      const requests = logs.filter((l) => 'status' in l);
      expect(requests.map((l) => [l.method, l.route, l.status])).toEqual([
        ['GET', 'list', 200],
        ['GET', 'detail', 200],
        ['GET', 'detail', 404],
        ['GET', 'list', 400],
        ['GET', 'list', 401],
      ]);
      for (const l of requests) {
        expect(typeof l.ms).toBe('number');
        expect(l.key).toMatch(/^[0-9a-f]{8}$/);
      }
      expect(requests[0]!.key).toBe(requests[1]!.key);
      expect(requests[4]!.key).not.toBe(requests[0]!.key);
      const all = gw.lines.join('\n');
      expect(all).not.toContain(key);
      expect(all).not.toContain(key.slice(3));
    } finally {
      await gw.stop();
    }
  });

  it('--workers 2: SIGTERM to the primary closes every worker, handing its unspent leases back to the store', async () => {
    const key = (await runCli(['keys', 'create', '--store', store(), '--label', 'workers-stop'])).stdout
      .trim()
      .split('\n')
      .at(-1)!;
    const get = (url: string) =>
      fetch(`${url}/api/v1/models/alpha`, { headers: { 'x-api-key': key, connection: 'close' } }).then(async (r) => {
        await r.arrayBuffer();
        return r.status;
      });
    const cluster = await serve(['--workers', '2', '--quota', '1000', '--log', 'silent']);
    const first = await Promise.all(Array.from({ length: 40 }, () => get(cluster.url)));
    expect(first.every((s) => s === 200)).toBe(true);
    await cluster.stop(); // SIGTERM to the primary; resolves when it exits
    // Every unit not spent by those 40 is back: exactly 960 more today (leases of ~100 per worker were lost before).
    const single = await serve(['--quota', '1000', '--log', 'silent']);
    try {
      const rest = await Promise.all(Array.from({ length: 1000 }, () => get(single.url)));
      expect(rest.filter((s) => s === 200)).toHaveLength(960);
    } finally {
      await single.stop();
    }
  });

  it('a --dir without a publication: a build is suggested only where a build may write; options out of range are refused', async () => {
    const foreign = path.join(tmp, 'foreign');
    await mkdir(foreign, { recursive: true });
    await writeFile(path.join(foreign, 'notes.txt'), 'mine');
    const cases: [string, RegExp][] = [
      [path.join(tmp, 'nothing-here'), /Run `modelpub build --out \S*nothing-here` first\.$/],
      [path.join(foreign, 'notes.txt'), /--dir names a file: give the folder a build wrote/],
      [foreign, /That folder holds other files: give the folder a build wrote/],
      // A path through a file, and a release whose manifest cannot be read: the error says it, no advice to build.
      [
        path.join(foreign, 'notes.txt', 'x'),
        /^modelpub: no publication to serve at \S+: \S+x holds no publication: [^`]*\.$/,
      ],
      [
        path.join(tmp, 'corrupt'),
        /^modelpub: no publication to serve at \S*corrupt: \S*corrupt\/manifest\.json: not JSON[^`]*$/,
      ],
    ];
    await mkdir(path.join(tmp, 'corrupt'), { recursive: true });
    await writeFile(path.join(tmp, 'corrupt', 'manifest.json'), '{"cut short');
    await writeFile(path.join(tmp, 'corrupt', 'publication.json'), '{}');
    for (const [dir, hint] of cases) {
      const r = await runCli(['serve', '--dir', dir, '--port', '0', '--store', 'memory:']);
      expect(r.code, dir).toBe(1);
      expect(r.stderr.trim(), dir).toMatch(hint);
    }
    const dev = await runCli([
      'dev',
      '--dir',
      foreign,
      '--data',
      path.join(tmp, 'data'),
      '--port',
      '0',
      '--store',
      store(),
    ]);
    expect(dev.code).toBe(2);
    expect(dev.stderr).toMatch(
      /^modelpub: modelpub dev \(npm start\) builds into --dir \S*foreign, and --out \S*foreign holds files that modelpub did not write/m,
    );
    // dev builds data/ and serves that build: with --origin it built dist and then served both at once.
    const devOrigin = await runCli([
      'dev',
      '--origin',
      'http://127.0.0.1:9/pub/current',
      '--dir',
      path.join(tmp, 'dev-origin'),
      '--data',
      path.join(tmp, 'data'),
      '--port',
      '0',
      '--store',
      store(),
    ]);
    expect(devOrigin.code).toBe(2);
    expect(devOrigin.stderr).toMatch(
      /^modelpub: npm start \(modelpub dev\) serves the build of --data in --dir; to serve a remote publication, run modelpub serve --origin$/m,
    );
    expect((await runCli(['dev', '--help'])).stdout).not.toContain('--origin'); // not offered where it is refused
    expect((await runCli(['serve', '--help'])).stdout).toContain('--origin <url>');
    for (const [option, value] of [
      ['--workers', '0'],
      ['--poll-ms', '0'],
      ['--quota', '0'],
    ]) {
      const r = await runCli(['serve', option!, value!, '--port', '0', '--store', 'memory:']);
      expect(r.code, option).toBe(1);
      expect(r.stderr, option).toMatch(new RegExp(`option '${option} <n>' argument '0' is invalid`));
    }
    // An --origin that is no remote root URL is told as such, not fetched ("Invalid URL", "unknown scheme", a 404 for
    // current.json appended to its query).
    for (const origin of [
      '127.0.0.1:9/pub/current',
      'ftp://127.0.0.1/pub',
      'http://127.0.0.1:9/pub/current?v=1',
      'http://127.0.0.1:9/pub#x',
    ]) {
      const r = await runCli(['serve', '--origin', origin, '--port', '0', '--store', 'memory:']);
      expect(r.code, origin).toBe(1);
      expect(r.stderr, origin).toContain(
        `option '--origin <url>' argument '${origin}' is invalid. the root \`modelpub publish --to\` wrote to`,
      );
    }
  });

  it('--workers 2 that cannot start (port in use, no publication) prints the error once and exits 1', async () => {
    const taken = await serve(['--log', 'silent']);
    try {
      const port = new URL(taken.url).port;
      for (const args of [
        ['--dir', out, '--port', port],
        ['--dir', path.join(tmp, 'no-such-dist'), '--port', '0'],
      ]) {
        const child = spawnCli(['serve', ...args, '--workers', '2', '--store', store(), '--log', 'silent']);
        let stderr = '';
        child.stderr!.on('data', (d: Buffer) => (stderr += d));
        // A primary that stayed alive serving nothing would fail this test at its timeout.
        const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
        expect(code, args.join(' ')).toBe(1);
        expect(stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
        expect(stderr).toMatch(
          args[1] === out
            ? /^modelpub: cannot listen on .*the address is in use/
            : /^modelpub: no publication to serve at /,
        );
      }
      // A mistake in the command exits 2, as it does without --workers.
      const usage = await runCli([
        'serve',
        '--dir',
        out,
        '--port',
        '0',
        '--workers',
        '2',
        '--store',
        'redis://127.0.0.1:1/abc',
      ]);
      expect(usage.code).toBe(2);
      expect(usage.stderr.trim()).toMatch(
        /^modelpub: Store "redis:\/\/127\.0\.0\.1:1\/abc": the database is a whole number/,
      );
    } finally {
      await taken.stop();
    }
  });

  it('--workers 2 serving: a worker that dies is replaced, and a replacement that cannot start leaves the others serving', async () => {
    const own = path.join(tmp, 'dist-workers');
    await build({ dataDir: path.join(tmp, 'data'), outDir: own });
    const key = (await runCli(['keys', 'create', '--store', store(), '--label', 'workers-replace'])).stdout
      .trim()
      .split('\n')
      .at(-1)!;
    const child = spawnCli([
      'serve',
      '--dir',
      own,
      '--port',
      '0',
      '--store',
      store(),
      '--workers',
      '2',
      '--log',
      'silent',
    ]);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d));
    child.stderr!.on('data', (d: Buffer) => (stderr += d));
    const waitFor = async (ok: () => boolean, what: string) => {
      await until(() => ok() || child.exitCode !== null);
      if (!ok()) throw new Error(`serve exited while waiting for ${what}; stderr: ${stderr}`);
    };
    try {
      await waitFor(() => /listening on http/.test(stdout), 'listening');
      const url = /listening on (http:\/\/\S+)/.exec(stdout)![1]!;
      const workerPids = execFileSync('pgrep', ['-P', String(child.pid)], { encoding: 'utf8' })
        .trim()
        .split('\n')
        .map(Number);
      expect(workerPids).toHaveLength(2);
      await rename(own, `${own}.gone`); // a replacement finds no publication
      process.kill(workerPids[0]!, 'SIGKILL');
      await waitFor(() => /could not start: no publication to serve/.test(stderr), 'the replacement failing');
      expect(child.exitCode).toBeNull();
      // The other worker still answers (from its loaded publication: a cached body, or 503 for one it must read).
      const r = await fetch(`${url}/api/v1/models/alpha`, { headers: { 'x-api-key': key } });
      expect([200, 503]).toContain(r.status);
      await rename(`${own}.gone`, own);
    } finally {
      const code =
        child.exitCode ??
        (await new Promise<number | null>((resolve) => {
          child.once('exit', (c) => resolve(c));
          child.kill('SIGTERM');
        }));
      expect(code).toBe(0);
    }
  });

  it('--workers 2 shares the port and the store: one key, exactly its quota across both processes', async () => {
    const key = (await runCli(['keys', 'create', '--store', store(), '--label', 'workers'])).stdout
      .trim()
      .split('\n')
      .at(-1)!;
    const gw = await serve(['--workers', '2', '--quota', '300', '--log', 'silent']);
    try {
      expect(gw.lines.some((l) => /listening on http:\/\/\S+ \(2 workers\)/.test(l))).toBe(true);
      const statuses = await Promise.all(
        Array.from({ length: 400 }, () =>
          fetch(`${gw.url}/api/v1/models/alpha`, { headers: { 'x-api-key': key, connection: 'close' } }).then(
            async (r) => {
              await r.arrayBuffer();
              return r.status;
            },
          ),
        ),
      );
      expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
      expect(statuses.filter((s) => s === 200)).toHaveLength(300);
      expect(statuses.filter((s) => s === 429)).toHaveLength(100);
    } finally {
      await gw.stop();
    }
  });
});

describe('shutdown', () => {
  /** A connection that sent half a request and then nothing: it keeps node:http's server.close() from ever ending. */
  const halfRequest = (url: string) =>
    new Promise<Socket>((resolve, reject) => {
      const u = new URL(url);
      const s = connect(Number(u.port), u.hostname, () => {
        s.write('GET /api/v1/models HTTP/1.1\r\nHost: x\r\nx-api-key: mp_');
        resolve(s);
      });
      s.on('error', () => {});
      s.once('error', reject);
    });
  const granted = async (label: string) => {
    const s = await openStore(store());
    try {
      const rec = (await s.listKeys()).find((k) => k.label === label)!;
      return await s.granted(rec.id, new Date().toISOString().slice(0, 10));
    } finally {
      await s.close();
    }
  };
  const newKey = async (label: string) =>
    (await runCli(['keys', 'create', '--store', store(), '--label', label])).stdout.trim().split('\n').at(-1)!;
  // One after another: the first take leases 1 unit, the next a full lease (quota.ts). Sent all at once, they could
  // all wait on the first take, and the next would lease just the 29 waiting: what is held would depend on timing.
  const served = async (url: string, key: string, n: number) => {
    let ok = 0;
    for (let i = 0; i < n; i++) {
      const r = await fetch(`${url}/api/v1/models/alpha`, { headers: { 'x-api-key': key, connection: 'close' } });
      await r.arrayBuffer();
      if (r.status === 200) ok++;
    }
    return ok;
  };

  for (const workers of [1, 2]) {
    it(`${workers === 1 ? 'one process' : '--workers 2'}: SIGTERM ends within the grace period although a connection holds a half-sent request, and hands the leases back`, async () => {
      const label = `shutdown-${workers}`;
      const key = await newKey(label);
      const gw = await serve(['--workers', String(workers), '--shutdown-grace', '1', '--log', 'warn']);
      const ok = await served(gw.url, key, 30);
      expect(ok).toBe(30);
      expect(await granted(label)).toBeGreaterThan(30); // leases of 1 and 100 are held
      // Several, so that every worker holds one (the kernel spreads connections over the workers).
      const sockets = await Promise.all(Array.from({ length: 6 }, () => halfRequest(gw.url)));
      // Its output read to the end ('close'): it used to run on indefinitely, which fails this test at its timeout.
      const exit = new Promise<number | null>((resolve) => gw.child.once('close', (code) => resolve(code)));
      gw.child.kill('SIGTERM');
      const code = await exit;
      for (const s of sockets) s.destroy();
      expect(code).toBe(0);
      // The grace period ended it, not the clients: each process says it closed the connections still open.
      const cut = gw.lines.filter((l) => l.includes('shutdown grace period over'));
      expect(cut).toHaveLength(workers);
      expect(await granted(label)).toBe(30); // every unspent unit is back in the store
    });
  }

  it('--shutdown-grace takes 0 to 30 seconds', async () => {
    const r = await runCli(['serve', '--dir', out, '--shutdown-grace', '31', '--store', 'memory:']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "option '--shutdown-grace <seconds>' argument '31' is invalid. a whole number from 0 to 30",
    );
  });
});

describe('SQLite store faults', () => {
  it('a store file deleted while serving: requests that need it fail (503) with a log line saying why, not silently', async () => {
    const file = path.join(tmp, 'deleted.db');
    const url = `sqlite:${file}`;
    const key = (await runCli(['keys', 'create', '--store', url, '--label', 'deleted'])).stdout
      .trim()
      .split('\n')
      .at(-1)!;
    const gw = await serve(['--log', 'warn'], url);
    try {
      const get = () => fetch(`${gw.url}/api/v1/models/alpha`, { headers: { 'x-api-key': key } }).then((r) => r.status);
      expect(await get()).toBe(200);
      for (const f of [file, `${file}-wal`, `${file}-shm`]) await rm(f, { force: true });
      // What the process holds of a lease was granted before; the next take needs the store.
      const statuses: number[] = [];
      for (let i = 0; i < 150 && statuses.at(-1) !== 503; i++) statuses.push(await get());
      expect(statuses.at(-1)).toBe(503);
      expect(statuses.length).toBeLessThanOrEqual(101);
      expect(await get()).toBe(503); // and it stays so
      // The log is written asynchronously: this waits for the line (without it, the test fails at its timeout).
      const logged = () =>
        gw.lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg?: string; err?: string });
      await until(() =>
        logged().some(
          (l) =>
            l.msg === 'request failed' &&
            /the SQLite store \S+deleted\.db was deleted while this gateway was serving/.test(l.err ?? ''),
        ),
      );
    } finally {
      await gw.stop();
    }
  });

  it('a single process survives a -shm file that cannot be written (SIGBUS): 503 with a log line, then serves again', async () => {
    const file = path.join(tmp, 'shm.db');
    const url = `sqlite:${file}`;
    const newKey = async () =>
      (await runCli(['keys', 'create', '--store', url, '--label', 'shm'])).stdout.trim().split('\n').at(-1)!;
    const first = await newKey();
    const gw = await serve(['--log', 'warn'], url);
    try {
      const get = (key: string) =>
        fetch(`${gw.url}/api/v1/models/alpha`, { headers: { 'x-api-key': key, connection: 'close' } }).then(
          (r) => r.status,
        );
      expect(await get(first)).toBe(200);
      const second = await newKey(); // unknown to the gateway: its first request reads the store
      await truncate(`${file}-shm`, 0); // the pages SQLite mapped now lie past the end of the file
      expect(await get(second)).toBe(503);
      expect(gw.child.exitCode).toBeNull();
      expect(gw.child.signalCode).toBeNull();
      // A new store process opens the file again (SQLite rebuilds the short -shm): the gateway serves again.
      let status = 503;
      while (status !== 200) {
        await tick(100);
        status = await get(second);
      }
      expect(await get(first)).toBe(200);
      const logged = gw.lines
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { msg?: string; err?: string });
      expect(
        logged.some(
          (l) =>
            l.msg === 'request failed' &&
            /the SQLite store process for \S+shm\.db died \(SIGBUS: its -shm file could not be written/.test(
              l.err ?? '',
            ),
        ),
      ).toBe(true);
    } finally {
      await gw.stop();
    }
    expect(gw.child.exitCode).toBe(0);
  });

  it('--workers: a worker killed by SIGBUS (a -shm file that cannot be written) is logged and replaced, and the others serve', async () => {
    const key = (await runCli(['keys', 'create', '--store', store(), '--label', 'sigbus'])).stdout
      .trim()
      .split('\n')
      .at(-1)!;
    const child = spawnCli([
      'serve',
      '--dir',
      out,
      '--port',
      '0',
      '--store',
      store(),
      '--workers',
      '2',
      '--log',
      'silent',
    ]);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d));
    child.stderr!.on('data', (d: Buffer) => (stderr += d));
    const waitFor = async (ok: () => boolean, what: string) => {
      await until(() => ok() || child.exitCode !== null);
      if (!ok()) throw new Error(`serve exited while waiting for ${what}; stderr: ${stderr}`);
    };
    try {
      await waitFor(() => /listening on http/.test(stdout), 'listening');
      const url = /listening on (http:\/\/\S+)/.exec(stdout)![1]!;
      const [victim] = execFileSync('pgrep', ['-P', String(child.pid)], { encoding: 'utf8' })
        .trim()
        .split('\n')
        .map(Number);
      process.kill(victim!, 'SIGBUS');
      await waitFor(
        () => new RegExp(`worker ${victim} exited \\(SIGBUS\\); starting another`).test(stderr),
        'the report',
      );
      const r = await fetch(`${url}/api/v1/models/alpha`, { headers: { 'x-api-key': key, connection: 'close' } });
      expect(r.status).toBe(200);
    } finally {
      const code = await new Promise<number | null>((resolve) => {
        child.once('exit', (c) => resolve(c));
        child.kill('SIGTERM');
      });
      expect(code).toBe(0);
    }
  });
});

// The acceptance case, end to end: two `modelpub serve` processes sharing one store, 1,500 concurrent requests
// with one fresh key, the default quota of 1,000. An acceptance test: the even split passed before the burst rule of
// quota.ts too (it failed 2 in 25 loaded runs at the limiter level); test/quota.test.ts guards that rule itself.
/** Starts `dev` and resolves once it printed its example curl command (or rejects with what it printed if it exits). */
async function dev(args: string[]): Promise<{ lines: string[]; url: string; key: string; stop(): Promise<void> }> {
  const child = spawnCli(['dev', '--port', '0', '--store', store(), '--log', 'silent', ...args]);
  const lines: string[] = [];
  let buf = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      buf += d;
      const parts = buf.split('\n');
      buf = parts.pop()!;
      lines.push(...parts);
      if (lines.some((l) => l.startsWith('try: curl'))) resolve();
    });
    child.once('exit', (code) => reject(new Error(`dev exited with ${code}: ${lines.join('\n')}\n${err}`)));
  });
  const url = /^listening on (\S+)$/m.exec(lines.join('\n'))![1]!;
  const key = /^development key: (\S+)$/m.exec(lines.join('\n'))![1]!;
  return {
    lines,
    url,
    key,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

describe('dev (npm start)', () => {
  it('builds when there is no publication or the data changed since, not otherwise; prints a key and a curl command that work', async () => {
    const data = path.join(tmp, 'dev-data');
    const dist = path.join(tmp, 'dev-dist');
    await writeFixture(data, smallCatalog());
    const releases = async () => (await readdir(path.join(dist, 'releases'))).length;
    const description = async (d: Awaited<ReturnType<typeof dev>>) => {
      const res = await fetch(`${d.url}/api/v1/models/alpha`, { headers: { 'x-api-key': d.key } });
      expect(res.status).toBe(200);
      return ((await res.json()) as { data: { description: string } }).data.description;
    };

    const first = await dev(['--dir', dist, '--data', data]);
    try {
      expect(first.lines[0]).toBe(`no publication in ${dist}: building it from ${data}`);
      expect(first.lines.at(-1)).toBe(
        `try: curl -s -H 'x-api-key: ${first.key}' '${first.url}/api/v1/models?page_size=2&include=pricing'`,
      );
      const res = await fetch(`${first.url}/api/v1/models?page_size=2&include=pricing`, {
        headers: { 'x-api-key': first.key },
      });
      expect(res.status).toBe(200);
      expect(await description(first)).toBe('alpha is a model.');
    } finally {
      await first.stop();
    }

    const same = await dev(['--dir', dist, '--data', data]);
    try {
      expect(same.lines[0]).toMatch(/^listening on /); // nothing built
      expect(await releases()).toBe(1);
      expect(same.key).not.toBe(first.key);
    } finally {
      await same.stop();
    }

    const file = path.join(data, 'models', 'alpha.yaml');
    await writeFile(file, (await readFile(file, 'utf8')).replace('alpha is a model.', 'alpha, edited.'));
    const edited = await dev(['--dir', dist, '--data', data]);
    try {
      expect(edited.lines[0]).toMatch(
        new RegExp(
          `^the publication in ${dist} \\(r[0-9a-f]{12}\\) is not a build of ${data} as it is now: building it again$`,
        ),
      );
      expect(await releases()).toBe(2);
      expect(await description(edited)).toBe('alpha, edited.');
    } finally {
      await edited.stop();
    }

    // Data that does not validate: its problems, and nothing served (not the old publication, silently).
    await writeFile(file, 'id: [\n');
    const broken = await runCli(['dev', '--dir', dist, '--data', data, '--port', '0', '--store', store()]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('models/alpha.yaml');
    expect(broken.stdout).not.toContain('listening on');
    expect(await releases()).toBe(2);
  });
});

const redisBin = redisServerPath();
if (!redisBin) console.warn(REDIS_MISSING);
it.skipIf(!redisBin)(
  'serve warns once, on stderr, when its Redis runs without the append-only file (also under --workers)',
  async () => {
    const redis = await startRedis();
    try {
      for (const workers of ['1', '2']) {
        const child = spawnCli(['serve', '--dir', out, '--port', '0', '--store', redis.url, '--workers', workers]);
        let stdout = '';
        let stderr = '';
        child.stdout!.on('data', (d: Buffer) => (stdout += d));
        child.stderr!.on('data', (d: Buffer) => (stderr += d));
        await until(() => /listening on/.test(stdout) || child.exitCode !== null);
        const code = await new Promise<number | null>((resolve) => {
          child.once('exit', (c) => resolve(c));
          child.kill('SIGTERM');
        });
        expect(code).toBe(0);
        expect(stderr.trim().split('\n'), workers).toEqual([
          expect.stringMatching(
            /^modelpub: warning: Redis at redis:\/\/127\.0\.0\.1:\d+ runs with appendonly no and no snapshots: .*set appendonly yes \(docs\/quota\.md\)$/,
          ),
        ]);
      }
    } finally {
      await redis.stop();
    }
  },
);

// Exact quotas end to end: two `modelpub serve` processes sharing one store, 1,500 concurrent requests with one fresh
// key, the default quota of 1,000. A load test can pass by luck; test/quota.test.ts checks the burst rule of quota.ts
// itself, deterministically.
describe('two serve processes sharing one store', () => {
  for (const kind of ['sqlite', 'redis'] as const) {
    it.skipIf(kind === 'redis' && !redisBin)(
      `${kind}: 1,500 concurrent requests with one fresh key: exactly 1,000 admitted when spread evenly, never more and at most one lease fewer when not`,
      async () => {
        const redis = kind === 'redis' ? await startRedis() : undefined;
        const url = redis ? `${redis.url}?prefix=http2:` : `sqlite:${path.join(tmp, 'two.db')}`;
        const gws = await Promise.all([serve(['--log', 'silent'], url), serve(['--log', 'silent'], url)]);
        try {
          // Even (what load balancers aim for), then lopsided, with a new key each time. A small share that reaches its
          // instance one request at a time can end inside a lease that instance took: the bound of docs/quota.md.
          for (const toFirst of [750, 200, 40]) {
            const key = (await runCli(['keys', 'create', '--store', url, '--label', `two-${toFirst}`])).stdout
              .trim()
              .split('\n')
              .at(-1)!;
            const statuses = await Promise.all(
              Array.from({ length: 1500 }, (_, i) => {
                const gw = gws[i < toFirst * 2 && i % 2 === 0 ? 0 : 1]!; // the first's share interleaved with the second's
                return fetch(`${gw.url}/api/v1/models/alpha`, {
                  headers: { 'x-api-key': key, connection: 'close' },
                }).then(async (r) => {
                  await r.arrayBuffer();
                  return r.status;
                });
              }),
            );
            const ok = statuses.filter((s) => s === 200).length;
            expect(
              statuses.filter((s) => s !== 200 && s !== 429),
              'only 200 and 429',
            ).toEqual([]);
            if (toFirst === 750) expect(ok).toBe(1000);
            else {
              expect(ok, `${toFirst} to the first`).toBeLessThanOrEqual(1000);
              expect(ok, `${toFirst} to the first`).toBeGreaterThanOrEqual(1000 - 100);
            }
          }
        } finally {
          await Promise.all(gws.map((g) => g.stop()));
          await redis?.stop();
        }
      },
    );
  }
});

it('serve without a publication says what to do, in one line without a stack', async () => {
  await withTemp(async (dir) => {
    const r = await runCli(['serve', '--dir', dir, '--port', '0', '--store', 'memory:']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^modelpub: no publication to serve at ${dir}: .*modelpub build`));
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});

it('serve: a port in use, --dir with --origin and an unknown --log level are errors that name the option', async () => {
  const gw = await serve(['--log', 'silent']);
  try {
    const port = new URL(gw.url).port;
    const busy = await runCli(['serve', '--dir', out, '--port', port, '--store', 'memory:']);
    expect(busy.code).toBe(1);
    expect(busy.stderr.trim()).toBe(
      `modelpub: cannot listen on 127.0.0.1:${port} (--host, --port): the address is in use`,
    );
  } finally {
    await gw.stop();
  }
  const both = await runCli(['serve', '--dir', 'x', '--origin', 'http://127.0.0.1:1/', '--store', 'memory:']);
  expect([both.code, both.stderr.trim()]).toEqual([2, 'modelpub: give --dir or --origin, not both']);
  const log = await runCli(['serve', '--log', 'bogus', '--store', 'memory:']);
  expect(log.code).toBe(1);
  expect(log.stderr).toContain("argument 'bogus' is invalid. Allowed choices are info, warn, silent");
  const origin = await runCli(['serve', '--origin', 'http://127.0.0.1:1/', '--port', '0', '--store', 'memory:']);
  expect(origin.code).toBe(1);
  expect(origin.stderr).toMatch(
    /^modelpub: no publication to serve at http:\/\/127\.0\.0\.1:1\/: GET http:\/\/127\.0\.0\.1:1\/current\.json: \S.*\.\n$/,
  );
});
