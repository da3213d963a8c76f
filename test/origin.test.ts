// `serve --origin URL`: a gateway on the remote layout `modelpub publish` writes (pointer -> manifest -> objects by
// hash), read from a plain static server over a file:// remote, and from s3rver over s3://. One small catalog is
// built twice (one English description changed) and published to the same remote: A, then B.
import { readFileSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { brotliCompressSync, brotliDecompressSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../src/gateway/keys.js';
import { type Gateway, type HandlerOptions, openGateway } from '../src/gateway/server.js';
import { openStore } from '../src/gateway/stores/index.js';
import type { QuotaStore } from '../src/gateway/stores/types.js';
import { detailFile } from '../src/publication/layout.js';
import { sha256Hex } from '../src/publication/integrity.js';
import { manifestKey, objectKey, POINTER_KEY } from '../src/publication/remote.js';
import { publish, rollback } from '../src/publish/publish.js';
import { fileTarget } from '../src/publication/targets/file.js';
import { openTarget } from '../src/publication/targets/index.js';
import type { RemoteTarget } from '../src/publication/targets/types.js';
import { ensureCompiled, runCli } from './helpers/cli.js';
import { type FaultyHost, faultyHost } from './helpers/faulty-host.js';
import { type Built, buildReleases } from './helpers/releases.js';
import { S3_ENV, type S3Server, startS3 } from './helpers/s3rver.js';
import { until } from './helpers/wait.js';
import { request } from './helpers/request.js';

let tmp: string;
let remoteDir: string;
let host: Server;
let hostUrl: string;
let store: QuotaStore;
let key: string;
let builds: Record<'A' | 'B', Built>;
/** Requests the static host has answered, by path. */
const fetched = new Map<string, number>();

const publishTo = (target: RemoteTarget, b: Built) =>
  publish({ from: b.dir, target, keep: 3, concurrency: 4, say: () => {}, progress: null });

/** The gateway's handler over an origin, called in-process (helpers/request.ts). */
const gatewayOn = (origin: string, extra: Partial<HandlerOptions> = {}) =>
  openGateway({
    origin,
    store: 'memory:',
    storeInstance: store,
    quota: 100_000,
    cacheBytes: 1 << 20,
    pollMs: 3_600_000,
    logLevel: 'silent',
    ...extra,
  });

// Identity asked for: these tests count the origin's reads of each body's own object (fetch would accept br, gzip).
const getWithKey = (gw: Gateway, target: string) =>
  request(gw, target, { headers: { 'x-api-key': key, 'accept-encoding': 'identity' } });
const entryOf = (b: Built, rel: string) => b.manifest.files.find((f) => f.path === rel)!;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-origin-'));
  builds = await buildReleases(tmp, [
    ['A', null],
    ['B', 'alpha', 'alpha, described again.'],
  ]);
  remoteDir = path.join(tmp, 'remote');
  await publishTo(fileTarget(pathToFileURL(remoteDir).href), builds.A);
  // A static host that knows nothing about the API: path -> file under the remote folder.
  host = createServer(async (req, res) => {
    const pathname = decodeURIComponent(new URL(req.url!, 'http://h').pathname);
    fetched.set(pathname, (fetched.get(pathname) ?? 0) + 1);
    const file = path.join(remoteDir, pathname);
    if (!file.startsWith(remoteDir + path.sep)) return void res.writeHead(404).end();
    try {
      const body = await readFile(file); // before writeHead: a missing file is a 404, not a 200 that never ends
      res.writeHead(200).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
  hostUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}/`;
  store = await openStore('memory:');
  key = (await createKey(store, 'origin test')).key;
});
afterAll(async () => {
  await store?.close();
  await new Promise((r) => host?.close(r));
  await rm(tmp, { recursive: true, force: true });
});

describe('over http:// (a static server over a file:// remote)', () => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await gatewayOn(hostUrl);
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('serves the live publication: pointer, manifest, then each body as the object its hash names', async () => {
    expect(gw.publication().id).toMatch(new RegExp(`^${builds.A.revision}/[0-9a-f]{64}$`));
    const rel = detailFile({ slug: 'alpha', locale: 'ru', lane: 'verified', displayOnly: false, include: ['pricing'] });
    const r = await getWithKey(gw, `/api/v1/models/alpha?locale=ru&include=pricing`);
    expect(r.status).toBe(200);
    expect(r.headers.get('x-publication-revision')).toBe(builds.A.revision);
    expect(Buffer.from(await r.arrayBuffer()).equals(await readFile(path.join(builds.A.dir, rel)))).toBe(true);
    // Read as an object by its hash, never by its path in the release.
    const { sha256 } = entryOf(builds.A, rel);
    expect(fetched.get(`/${objectKey(sha256)}`)).toBe(1);
    expect([...fetched.keys()].filter((p) => p.includes('api/v1'))).toEqual([]);
    const list = await getWithKey(gw, `/api/v1/models?q=alpha&page_size=3`);
    expect((await list.json()).data.models.map((m: { slug: string }) => m.slug)).toEqual(['alpha']);
  });

  it('fetches a body once for many concurrent requests that miss on it', async () => {
    const rel = detailFile({
      slug: 'gamma',
      locale: 'en',
      lane: 'verified',
      displayOnly: false,
      include: ['benchmarks', 'pricing'],
    });
    const rs = await Promise.all(
      Array.from({ length: 24 }, () => getWithKey(gw, `/api/v1/models/gamma?include=pricing,benchmarks`)),
    );
    const want = await readFile(path.join(builds.A.dir, rel));
    for (const r of rs) {
      expect(r.status).toBe(200);
      expect(Buffer.from(await r.arrayBuffer()).equals(want)).toBe(true);
    }
    expect(fetched.get(`/${objectKey(entryOf(builds.A, rel).sha256)}`)).toBe(1);
  });

  // Every fault of a source is the source suite's (sources.test.ts); the gateway's part is the 503 instead of bytes.
  it('refuses a damaged object with 503, never its bytes', async () => {
    const rel = detailFile({ slug: 'beta', locale: 'zh', lane: 'verified', displayOnly: false, include: [] });
    const file = path.join(remoteDir, objectKey(entryOf(builds.A, rel).sha256));
    const good = await readFile(file);
    await writeFile(file, '{"tampered":true}');
    try {
      const r = await getWithKey(gw, `/api/v1/models/beta?locale=zh`);
      expect(r.status).toBe(503);
      expect(r.headers.get('content-type')).toBe('application/problem+json');
      expect(await r.text()).not.toContain('tampered');
    } finally {
      await writeFile(file, good);
    }
    expect((await getWithKey(gw, `/api/v1/models/beta?locale=zh`)).status).toBe(200);
  });

  it('refuses a damaged br representation object with 503', async () => {
    const rel = detailFile({ slug: 'beta', locale: 'ru', lane: 'verified', displayOnly: false, include: [] });
    const br = builds.A.manifest.representations![entryOf(builds.A, rel).sha256]!.br;
    const file = path.join(remoteDir, objectKey(br.sha256));
    const good = await readFile(file);
    await writeFile(file, brotliCompressSync('{"tampered":true}'));
    const ask = () =>
      request(gw, '/api/v1/models/beta?locale=ru', { headers: { 'x-api-key': key, 'accept-encoding': 'br' } });
    try {
      const r = await ask();
      expect(r.status).toBe(503);
      expect(await r.text()).not.toContain('tampered');
    } finally {
      await writeFile(file, good);
    }
    const again = await ask();
    expect(again.status).toBe(200);
    expect(again.headers.get('content-encoding')).toBe('br');
    // the bytes sent are the good representation's: they decode to its identity bytes
    expect(brotliDecompressSync(Buffer.from(await again.arrayBuffer())).equals(brotliDecompressSync(good))).toBe(true);
  });

  it('switches when the pointer moves (a publish, then a rollback), and only then', async () => {
    const own = await gatewayOn(hostUrl, { pollMs: 100 });
    try {
      const target = fileTarget(pathToFileURL(remoteDir).href);
      await publishTo(target, builds.B);
      const switched = async (revision: string) => {
        await until(() => own.publication().revision === revision);
        return own.publication().revision;
      };
      expect(await switched(builds.B.revision)).toBe(builds.B.revision);
      const r = await getWithKey(own, `/api/v1/models/alpha`);
      expect(r.headers.get('x-publication-revision')).toBe(builds.B.revision);
      expect(await r.text()).toContain('alpha, described again.');
      await rollback({ target, revision: builds.A.revision, say: () => {} });
      expect(await switched(builds.A.revision)).toBe(builds.A.revision);
      expect(await (await getWithKey(own, `/api/v1/models/alpha`)).text()).not.toContain('described again');
    } finally {
      await own.close();
    }
  });

  it('an origin with nothing published, or a pointer that is not one, is a start error naming it', async () => {
    const empty = createServer((_req, res) => res.writeHead(404).end());
    await new Promise<void>((r) => empty.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(empty.address() as AddressInfo).port}/pub/`;
    try {
      await expect(gatewayOn(url)).rejects.toThrow(
        `no publication to serve at ${url}: ${url}current.json is missing: nothing has been published there`,
      );
    } finally {
      await new Promise((r) => empty.close(r));
    }
    const bad = path.join(tmp, 'bad-remote');
    await cp(remoteDir, bad, { recursive: true });
    await writeFile(path.join(bad, POINTER_KEY), '{"format":"modelpub-remote/1","live":{}}');
    await expect(gatewayOn(pathToFileURL(bad).href)).rejects.toThrow(/current\.json: live\.publication: /);
  });
});

describe('over s3:// (s3rver, path style)', () => {
  let s3: S3Server;
  const savedEnv = { ...process.env };
  beforeAll(async () => {
    Object.assign(process.env, S3_ENV); // the gateway in this process takes its credentials from the chain
    s3 = await startS3();
  });
  afterAll(async () => {
    await s3?.stop();
    process.env = savedEnv;
  });

  it('serves what a publish to s3:// wrote, and switches when it publishes again', async () => {
    const url = `s3://${s3.bucket}/site`;
    const o = { endpoint: s3.endpoint, region: 'us-east-1' };
    const target = await openTarget(url, o);
    try {
      await publishTo(target, builds.A);
      const gw = await gatewayOn(url, { originOptions: o, pollMs: 100 });
      try {
        const rel = detailFile({ slug: 'alpha', locale: 'en', lane: 'verified', displayOnly: false, include: [] });
        const r = await getWithKey(gw, `/api/v1/models/alpha`);
        expect(r.status).toBe(200);
        expect(Buffer.from(await r.arrayBuffer()).equals(await readFile(path.join(builds.A.dir, rel)))).toBe(true);
        const objectGets = s3.requests.filter((q) => q.method === 'GET' && q.key.startsWith('site/objects/'));
        expect(objectGets.map((q) => q.key)).toContain(`site/${objectKey(entryOf(builds.A, rel).sha256)}`);
        await publishTo(target, builds.B);
        // The switch loads the new manifest from s3rver: seconds on a loaded machine.
        await until(() => gw.publication().revision === builds.B.revision);
        const after = await getWithKey(gw, `/api/v1/models/alpha`);
        expect([after.status, after.headers.get('x-publication-revision')]).toEqual([200, builds.B.revision]);
        expect(await after.text()).toContain('alpha, described again.');
      } finally {
        await gw.close();
      }
    } finally {
      await target.close();
    }
  });

  it('serve --origin s3:// with --endpoint through the CLI; --endpoint with an http origin is refused', async () => {
    ensureCompiled();
    const wrong = await runCli(['serve', '--origin', hostUrl, '--endpoint', s3.endpoint, '--store', 'memory:']);
    expect([wrong.code, wrong.stderr.trim()]).toEqual([
      2,
      `modelpub: --endpoint is for an s3:// --origin, not ${hostUrl}`,
    ]);
    const none = await runCli(
      [
        'serve',
        '--origin',
        `s3://${s3.bucket}/nothing-here`,
        '--endpoint',
        s3.endpoint,
        '--port',
        '0',
        '--store',
        'memory:',
      ],
      S3_ENV,
    );
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(
      `at s3://${s3.bucket}/nothing-here: s3://${s3.bucket}/nothing-here/current.json is missing: nothing has been published there`,
    );
  });
});

// Faults of an origin seen by a gateway: a host that trickles or never answers (helpers/faulty-host.ts) over a remote
// where A was published, then B (live B, A kept). Faults are set once the gateway has started, so its start reads
// (pointer, manifest) are never cut by the short deadlines these tests give.
describe('an origin that fails: the gateway answers, switches and starts all the same', () => {
  let dir: string;
  let host: FaultyHost;
  let target: RemoteTarget;
  const manifestFile = (b: Built) =>
    path.join(
      dir,
      manifestKey({ revision: b.revision, sha256: sha256Hex(readFileSync(path.join(b.dir, 'manifest.json'))) }),
    );
  beforeAll(async () => {
    dir = path.join(tmp, 'remote-faults');
    target = fileTarget(pathToFileURL(dir).href);
    await publishTo(target, builds.A);
    await publishTo(target, builds.B);
    host = await faultyHost(dir);
  });
  afterAll(async () => {
    await host?.close();
    await target?.close();
  });

  it('a truncated live manifest: serves the newest kept publication, says why, and switches once it can be read', async () => {
    const file = manifestFile(builds.B);
    const good = await readFile(file);
    await writeFile(file, good.subarray(0, good.length >> 1));
    let gw: Gateway | undefined;
    try {
      gw = await gatewayOn(host.url, { pollMs: 100 });
      expect(gw.publication().revision).toBe(builds.A.revision);
      expect(gw.warnings.join('\n')).toMatch(
        new RegExp(`the live publication ${builds.B.revision}/[0-9a-f]{64} cannot be read \\(.*manifest.*\\); serving`),
      );
      const r = await getWithKey(gw, '/api/v1/models/alpha');
      expect([r.status, r.headers.get('x-publication-revision')]).toEqual([200, builds.A.revision]);
      // None readable: then, and only then, it does not start.
      const fileA = manifestFile(builds.A);
      const goodA = await readFile(fileA);
      await writeFile(fileA, goodA.subarray(0, 10));
      try {
        await expect(gatewayOn(host.url)).rejects.toThrow(`no publication to serve at ${host.url}`);
      } finally {
        await writeFile(fileA, goodA);
      }
      await writeFile(file, good);
      await until(() => gw!.publication().revision === builds.B.revision);
    } finally {
      await writeFile(file, good);
      await gw?.close();
    }
  });

  it('a body the origin trickles: 503 by the deadline, the quota unit given back, and the next request reads again', async () => {
    const quotaKey = (await createKey(store, 'refund test')).key;
    const gw = await gatewayOn(host.url, {
      quota: 2,
      originOptions: { retryAttempts: 1, bounds: { deadlineMs: 5_000, minBytesPerSecond: 0 } },
    });
    const ask = () =>
      request(gw, '/api/v1/models/alpha', { headers: { 'x-api-key': quotaKey, 'accept-encoding': 'identity' } });
    const rel = detailFile({ slug: 'alpha', locale: 'en', lane: 'verified', displayOnly: false, include: [] });
    const objectPath = `/${objectKey(entryOf(builds.B, rel).sha256)}`;
    try {
      // A byte a second: more often than any idle timeout, and never more than the body's size before its deadline.
      host.trickleEveryMs = 1000;
      host.fault.set(objectPath, 'trickle');
      // Two requests share one read; both fail with it, and neither is counted.
      expect((await Promise.all([ask(), ask()])).map((r) => r.status)).toEqual([503, 503]);
      host.fault.set(objectPath, null);
      const again = await ask();
      expect(again.status).toBe(200);
      expect(await again.text()).toContain('alpha, described again.');
      expect((await ask()).status).toBe(200);
      expect((await ask()).status).toBe(429); // the quota of 2 holds: the two 503s were given back
    } finally {
      host.trickleEveryMs = 5;
      host.fault.set(objectPath, null);
      await gw.close();
    }
  });

  it('a pointer that trickles cuts the poll at its deadline: the gateway switches once the origin recovers', async () => {
    const gw = await gatewayOn(host.url, { pollMs: 100, originOptions: { pointerDeadlineMs: 1_000 } });
    try {
      expect(gw.publication().revision).toBe(builds.B.revision);
      host.fault.set(`/${POINTER_KEY}`, 'trickle');
      // A second trickled read of the pointer means the first poll was cut and polling went on.
      await host.reached(`/${POINTER_KEY}`, (host.seen.get(`/${POINTER_KEY}`) ?? 0) + 2);
      await rollback({ target, revision: builds.A.revision, say: () => {} });
      host.fault.set(`/${POINTER_KEY}`, null);
      await until(() => gw.publication().revision === builds.A.revision);
    } finally {
      host.fault.set(`/${POINTER_KEY}`, null);
      await gw.close();
    }
  });
});
