// One conformance suite, testSource(), run against every kind of place openSource() reads a publication from: a
// build's --out folder, the root a publish wrote over file://, a static http server over that root, and an S3 bucket
// (s3rver). Each passes the same reads and meets the same five faults: an object missing, truncated, or altered, a
// pointer that names a missing manifest, and an origin that does not answer. The consumers' tests (serve, build
// --previous, publish --from, diff --against) test only what each adds.
import { execFileSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../src/pipeline/build.js';
import type { ManifestEntry } from '../src/publication/files.js';
import { IntegrityError, sha256Hex } from '../src/publication/integrity.js';
import { packedRepresentations } from '../src/publication/layout.js';
import { MAX_POINTER_BYTES } from '../src/publication/remote-source.js';
import { objectKey, POINTER_KEY, type Pointer } from '../src/publication/remote.js';
import { openSource, type Source, type SourceOptions } from '../src/publication/source.js';
import { fileTarget } from '../src/publication/targets/file.js';
import { openTarget } from '../src/publication/targets/index.js';
import type { RemoteTarget } from '../src/publication/targets/types.js';
import { publish } from '../src/publish/publish.js';
import { type FaultyHost, faultyHost } from './helpers/faulty-host.js';
import { smallCatalog, writeFixture } from './helpers/fixture.js';
import { S3_ENV, type S3Server, startS3 } from './helpers/s3rver.js';

/** A body of every publication, read in each test: small, and in every build. */
const PATH = 'api/v1/metrics/en.json';

let tmp: string;
/** A build's --out, and the root a publish of it wrote to. */
let out: string;
let remoteDir: string;
let releaseDir: string;
let revision: string;
let manifestBytes: Buffer;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-sources-'));
  await writeFixture(path.join(tmp, 'data'), smallCatalog());
  out = path.join(tmp, 'out');
  const r = await build({ dataDir: path.join(tmp, 'data'), outDir: out });
  [revision, releaseDir] = [r.revision, r.releaseDir];
  manifestBytes = await readFile(path.join(releaseDir, 'manifest.json'));
  remoteDir = path.join(tmp, 'remote');
  const target = fileTarget(pathToFileURL(remoteDir).href);
  try {
    await publish({ from: out, target, keep: 3, concurrency: 4, say: () => {}, progress: null });
  } finally {
    await target.close();
  }
}, 120_000);

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

/** Where a source's bytes are stored, as the test changes them: by the key the source reads. */
interface Storage {
  read(key: string): Promise<Buffer | null>;
  /** Store `bytes` under `key`; null deletes it. */
  write(key: string, bytes: Buffer | null): Promise<void>;
}

interface Harness {
  where: string;
  options: SourceOptions;
  storage: Storage;
  /** The key an object (a body of the manifest) is stored under. */
  keyOf(entry: ManifestEntry): string;
  /** Where the same kind of source has nothing published. */
  empty: string;
  /** The change that makes the live publication's name point at a manifest that is not there. */
  missingManifest(): Promise<[key: string, bytes: Buffer | null]>;
  /** The same kind of source over a host that accepts a connection and never answers; null where none can be. */
  silent(): Promise<{ where: string; options: SourceOptions; error: RegExp; close(): Promise<void> } | null>;
  /**
   * For a source over a network: the same publication behind a host whose answers a test turns into faults
   * (helpers/faulty-host.ts), the request path of a key there, and the URL a message names a key by.
   */
  network?: {
    host(): Promise<FaultyHost>;
    over(hostUrl: string): { where: string; options: SourceOptions };
    pathOf(key: string): string;
    urlOf(hostUrl: string, key: string): string;
  };
  /** For a source on this disk: the folder a key is a file in. */
  localRoot?: string;
  close?(): Promise<void>;
}

const folderStorage = (root: string): Storage => ({
  read: (key) => readFile(path.join(root, key)).catch(() => null),
  async write(key, bytes) {
    const file = path.join(root, key);
    // Never through a hard link: a build links one body into many paths (and into other releases).
    await rm(file, { force: true });
    if (bytes) await writeFile(file, bytes);
  },
});

/** A server that accepts every request and never answers it. */
async function silentServer() {
  const sockets = new Set<Socket>();
  const server = http.createServer(() => {});
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/** A static file server over `root`, as any web server over the folder a file:// publish wrote. */
async function staticServer(root: string) {
  const server = http.createServer(async (req, res) => {
    const body = await readFile(path.join(root, decodeURIComponent(new URL(req.url!, 'http://x').pathname))).catch(
      () => null,
    );
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-length': body.length }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** The pointer, naming a manifest that is not there: another sha256 under the same revision. */
const pointerToMissingManifest = (storage: Storage) => async (): Promise<[string, Buffer]> => {
  const pointer = JSON.parse(String(await storage.read(POINTER_KEY))) as Pointer;
  pointer.live.manifest.sha256 = '0'.repeat(64);
  return [POINTER_KEY, Buffer.from(JSON.stringify(pointer))];
};

/**
 * A source over a host that accepts the connection and never answers. Its deadline (the time it waits for the next
 * bytes) is made small, and the host never sends any: the read fails on that event, whatever the machine's speed.
 */
async function silentHost(at: (url: string) => { where: string; options?: SourceOptions; error: RegExp }) {
  const s = await silentServer();
  const { where, options, error } = at(s.url);
  return { where, options: { ...options, retryAttempts: 1, timeoutMs: 50 }, error, close: s.close };
}

function testSource(name: string, setup: () => Promise<Harness>) {
  describe(`source conformance: ${name}`, () => {
    let h: Harness;
    let source: Source | null = null;
    /** What the test changed, put back after it (whether it passed or not). */
    const changed = new Map<string, Buffer | null>();
    const change = async (key: string, bytes: Buffer | null) => {
      if (!changed.has(key)) changed.set(key, await h.storage.read(key));
      await h.storage.write(key, bytes);
    };
    beforeAll(async () => {
      h = await setup();
    }, 120_000);
    afterAll(async () => {
      await h?.close?.();
    });
    afterEach(async () => {
      await source?.close();
      source = null;
      for (const [key, bytes] of changed) await h.storage.write(key, bytes);
      changed.clear();
    });
    const open = async (where = h.where, options = h.options) => (source = await openSource(where, options));
    const entryOf = async (p = PATH) => (await (await open()).live())!.files.get(p)!;

    it('names the live publication with a stable id, and opens it checked', async () => {
      const s = await open();
      const id = await s.currentId();
      expect(id).not.toBeNull();
      expect(await s.currentId()).toBe(id);
      const live = (await s.live())!;
      expect([live.id, live.meta.publicationRevision, live.manifest.publicationRevision]).toEqual([
        id,
        revision,
        revision,
      ]);
      expect(live.manifestBytes.equals(manifestBytes)).toBe(true);
      expect(live.manifestSha256).toBe(sha256Hex(manifestBytes));
      expect((await s.release(id!)).manifestSha256).toBe(live.manifestSha256);
    });

    it('reads every body and representation as built, by path or by entry', async () => {
      const live = (await (await open()).live())!;
      expect((await live.file(PATH))!.equals(await readFile(path.join(releaseDir, PATH)))).toBe(true);
      expect(await live.file('api/v1/nothing.json')).toBeNull();
      // A sample of the bodies (every tenth), and one body's br and gzip representations.
      const files = live.manifest.files.filter((_, i) => i % 10 === 0);
      for (const f of files) expect(sha256Hex(await live.read(f)), f.path).toBe(f.sha256);
      const packed = [...packedRepresentations(live.manifest.representations!, live.manifest.packs)].at(-1)!;
      const body = await live.read({ ...live.manifest.files.find((f) => f.sha256 === packed.identity)! });
      expect(gunzipSync(await live.read(packed.gzip)).equals(body)).toBe(true);
      expect(brotliDecompressSync(await live.read(packed.br)).equals(body)).toBe(true);
    });

    it('fault: an object that is missing is refused, naming it', async () => {
      const entry = await entryOf();
      await change(h.keyOf(entry), null);
      const err = await (await open()).live().then((l) => l!.read(entry).catch((e: unknown) => e));
      expect(err).toBeInstanceOf(IntegrityError);
      expect(String(err)).toMatch(new RegExp(`${h.keyOf(entry)} is missing`));
    });

    it('fault: an object that is truncated is refused', async () => {
      const entry = await entryOf();
      const key = h.keyOf(entry);
      await change(key, (await h.storage.read(key))!.subarray(0, entry.bytes - 1));
      await expect((await (await open()).live())!.read(entry)).rejects.toThrow(
        `holds ${entry.bytes - 1} bytes, not the ${entry.bytes} it was published with`,
      );
    });

    it('fault: an object whose bytes are altered is refused; one larger than published is refused unread', async () => {
      const entry = await entryOf();
      const key = h.keyOf(entry);
      const bytes = Buffer.from((await h.storage.read(key))!);
      bytes[bytes.length - 2]! ^= 1; // same size, other bytes
      await change(key, bytes);
      const live = (await (await open()).live())!;
      await expect(live.read(entry)).rejects.toThrow(`has sha256 ${sha256Hex(bytes)}, not ${entry.sha256}`);
      await change(key, Buffer.concat([bytes, Buffer.alloc(64 * 1024)]));
      await expect(live.read(entry)).rejects.toThrow(`holds more than the ${entry.bytes} bytes it was published with`);
    });

    it('fault: a pointer that names a missing manifest opens no release', async () => {
      await change(...(await h.missingManifest()));
      const s = await open();
      expect(await s.currentId()).not.toBeNull();
      await expect(s.live()).rejects.toThrow(/manifest/);
    });

    it('fault: an origin that does not answer is an error, not a wait', async (ctx) => {
      const silent = await h.silent();
      if (!silent) return ctx.skip(); // a local folder always answers
      try {
        await expect((await open(silent.where, silent.options)).currentId()).rejects.toThrow(silent.error);
      } finally {
        await silent.close();
      }
    });

    describe('an origin that trickles or does not answer: every read ends by its bounds', () => {
      let host: FaultyHost | undefined;
      afterEach(async () => {
        await host?.close();
        host = undefined;
      });
      /** The source over a faulty host (its idle timeout out of the way: the bounds under test end the read). */
      const openOver = async (o: SourceOptions = {}) => {
        const n = h.network!;
        host = await n.host();
        const { where, options } = n.over(host.url);
        return open(where, { ...options, retryAttempts: 2, timeoutMs: 3_600_000, ...o });
      };

      it('a body that trickles fails at its minimum rate, naming the URL; the next read, once it recovers, succeeds', async (ctx) => {
        if (!h.network) return ctx.skip(); // a local folder does not trickle: see the local faults below
        const live = (await (await openOver()).live())!;
        const entry = live.files.get(PATH)!;
        host!.fault.set(h.network.pathOf(h.keyOf(entry)), 'trickle');
        await expect(live.read(entry, { minBytesPerSecond: 1_000_000, rateWindowMs: 50 })).rejects.toThrow(
          `GET ${h.network.urlOf(host!.url, h.keyOf(entry))}: slower than the minimum rate of 1000000 bytes/s`,
        );
        host!.fault.set(h.network.pathOf(h.keyOf(entry)), null);
        expect(sha256Hex(await live.read(entry))).toBe(entry.sha256);
      });

      it('a body that never comes fails at its deadline, retries included', async (ctx) => {
        if (!h.network) return ctx.skip();
        const live = (await (await openOver()).live())!;
        const entry = live.files.get(PATH)!;
        host!.fault.set(h.network.pathOf(h.keyOf(entry)), 'silent');
        await expect(live.read(entry, { deadlineMs: 100, minBytesPerSecond: 0 })).rejects.toThrow(
          `GET ${h.network.urlOf(host!.url, h.keyOf(entry))}: no complete answer within 100 ms`,
        );
      });

      it("a pointer that trickles fails at the pointer's own deadline, however long a body may take", async (ctx) => {
        if (!h.network) return ctx.skip();
        // Long enough for the read after the recovery on a loaded machine: the trickle never ends, so it still fails.
        const s = await openOver({ pointerDeadlineMs: 5_000, bounds: { deadlineMs: 3_600_000, minBytesPerSecond: 0 } });
        host!.fault.set(h.network.pathOf(POINTER_KEY), 'trickle');
        await expect(s.currentId()).rejects.toThrow(
          `GET ${h.network.urlOf(host!.url, POINTER_KEY)}: no complete answer within 5000 ms`,
        );
        host!.fault.set(h.network.pathOf(POINTER_KEY), null);
        expect(await s.currentId()).not.toBeNull();
      });
    });

    describe('a file that is not a regular file of the publication is refused, unread and without a wait', () => {
      const fifo = (file: string) => execFileSync('mkfifo', [file]);
      const cases: Array<[string, (file: string, bytes: Buffer) => Promise<void>, RegExp]> = [
        ['a FIFO', async (file) => void fifo(file), /is a FIFO, not a regular file/],
        ['a link to /dev/zero', (file) => symlink('/dev/zero', file), /leads out of .* \(to \/dev\/zero\)/],
        ['a folder', (file) => mkdir(file).then(() => {}), /is a folder, not a regular file/],
        [
          'a link to the same bytes outside the root',
          async (file, bytes) => {
            const outside = path.join(tmp, `outside-${path.basename(file)}`);
            await writeFile(outside, bytes);
            await symlink(outside, file);
          },
          /leads out of/,
        ],
      ];
      for (const [what, make, error] of cases)
        it(what, async (ctx) => {
          if (!h.localRoot) return ctx.skip(); // a host over a network serves bytes, not files
          const live = (await (await open()).live())!;
          const entry = live.files.get(PATH)!;
          const file = path.join(h.localRoot, h.keyOf(entry));
          const bytes = (await h.storage.read(h.keyOf(entry)))!;
          await change(h.keyOf(entry), null); // put back after the test, as any change
          try {
            await make(file, bytes);
            const err = await live.read(entry).catch((e: unknown) => e);
            expect(err).toBeInstanceOf(IntegrityError);
            expect(String(err)).toMatch(error);
          } finally {
            await rm(file, { recursive: true, force: true });
          }
        });
    });

    it('nothing published there: no id, no live release, and a sentence that says so', async () => {
      const s = await open(h.empty);
      expect(await s.currentId()).toBeNull();
      expect(await s.live()).toBeNull();
      expect(s.nothingPublished).toMatch(/holds no publication|nothing has been published there/);
    });
  });
}

testSource('folder (a build --out)', async () => {
  const storage = folderStorage(releaseDir);
  return {
    where: out,
    options: { out: true },
    storage,
    keyOf: (e) => e.path,
    empty: await mkdtemp(path.join(tmp, 'empty-')),
    // `current` names a release whose manifest.json is gone.
    missingManifest: async () => ['manifest.json', null],
    silent: async () => null,
    localRoot: releaseDir,
  };
});

testSource('file:// (the root a publish wrote)', async () => {
  const storage = folderStorage(remoteDir);
  return {
    where: pathToFileURL(remoteDir).href,
    options: {},
    storage,
    keyOf: (e) => objectKey(e.sha256),
    empty: pathToFileURL(await mkdtemp(path.join(tmp, 'empty-'))).href,
    missingManifest: pointerToMissingManifest(storage),
    silent: async () => null,
    localRoot: remoteDir,
  };
});

testSource('http:// (a static server over that root)', async () => {
  const server = await staticServer(remoteDir);
  const storage = folderStorage(remoteDir);
  return {
    where: server.url,
    options: {},
    storage,
    keyOf: (e) => objectKey(e.sha256),
    empty: `${server.url}nothing/`,
    missingManifest: pointerToMissingManifest(storage),
    silent: () => silentHost((url) => ({ where: `${url}/`, error: /current\.json: no answer in 50 ms/ })),
    network: {
      host: () => faultyHost(remoteDir),
      over: (url) => ({ where: url, options: {} }),
      pathOf: (key) => `/${key}`,
      urlOf: (hostUrl, key) => `${hostUrl}${key}`,
    },
    close: server.close,
  };
});

describe('s3://', () => {
  let s3: S3Server;
  let target: RemoteTarget;
  const savedEnv = { ...process.env };
  beforeAll(async () => {
    Object.assign(process.env, S3_ENV);
    s3 = await startS3();
    target = await openTarget(`s3://${s3.bucket}/pub`, { endpoint: s3.endpoint, region: 'us-east-1' });
    await publish({ from: out, target, keep: 3, concurrency: 8, say: () => {}, progress: null });
  }, 120_000);
  afterAll(async () => {
    await target?.close();
    await s3?.stop();
    process.env = savedEnv;
  });
  testSource('s3:// (s3rver)', async () => {
    const storage: Storage = {
      read: (key) => target.get(key),
      write: (key, bytes) =>
        bytes
          ? target.put(key, bytes, { contentType: 'application/octet-stream', cacheControl: 'no-store' })
          : target.delete([key]),
    };
    return {
      where: `s3://${s3.bucket}/pub`,
      options: { endpoint: s3.endpoint, region: 'us-east-1' },
      storage,
      keyOf: (e) => objectKey(e.sha256),
      empty: `s3://${s3.bucket}/nothing`,
      missingManifest: pointerToMissingManifest(storage),
      silent: () =>
        silentHost((url) => ({
          where: `s3://${s3.bucket}/pub`,
          options: { endpoint: url, region: 'us-east-1' },
          error: new RegExp(`GET s3://${s3.bucket}/pub/current\\.json: .*(timeout|timed out)`, 'i'),
        })),
      network: {
        // A plain web server answers GetObject as S3 would, path style: /BUCKET/pub/KEY is remoteDir/KEY.
        async host() {
          const root = await mkdtemp(path.join(tmp, 's3-host-'));
          await mkdir(path.join(root, s3.bucket));
          await symlink(remoteDir, path.join(root, s3.bucket, 'pub'));
          return faultyHost(root);
        },
        over: (url) => ({
          where: `s3://${s3.bucket}/pub`,
          options: { endpoint: url.slice(0, -1), region: 'us-east-1' },
        }),
        pathOf: (key) => `/${s3.bucket}/pub/${key}`,
        urlOf: (_, key) => `s3://${s3.bucket}/pub/${key}`,
      },
    };
  });
});

describe('a release is checked once when opened', () => {
  const copyOf = async (name: string) => {
    const dir = path.join(tmp, name);
    await cp(releaseDir, dir, { recursive: true });
    return dir;
  };
  const edit = async (file: string, fn: (doc: Record<string, unknown>) => void) => {
    const doc = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    fn(doc);
    await writeFile(file, JSON.stringify(doc));
  };

  it('refuses a manifest.json that is not the one publication.json names', async () => {
    const dir = await copyOf('other-manifest');
    await edit(path.join(dir, 'manifest.json'), (m) => (m.files = (m.files as unknown[]).slice(1)));
    const s = await openSource(dir);
    await expect(s.live()).rejects.toThrow(
      /manifest\.json has sha256 [0-9a-f]{64}, not the [0-9a-f]{64} publication\.json/,
    );
  });

  it('refuses two files of two revisions, and names the file and field that does not fit its schema', async () => {
    const dir = await copyOf('two-revisions');
    await edit(path.join(dir, 'publication.json'), (m) => (m.publicationRevision = 'other'));
    await expect((await openSource(dir)).live()).rejects.toThrow(
      `${dir}: manifest.json and publication.json disagree on the revision (${revision}, other)`,
    );
    await edit(path.join(dir, 'manifest.json'), (m) => (m.files = [{ path: 1 }]));
    await expect((await openSource(dir)).live()).rejects.toThrow(`${path.join(dir, 'manifest.json')}: files.0.path`);
  });

  it('refuses a pointer larger than any a publish writes, unread', async () => {
    const dir = path.join(tmp, 'big-pointer');
    await cp(remoteDir, dir, { recursive: true });
    await writeFile(path.join(dir, POINTER_KEY), Buffer.alloc(MAX_POINTER_BYTES + 1, ' '));
    const s = await openSource(pathToFileURL(dir).href);
    try {
      await expect(s.currentId()).rejects.toThrow(`holds more than the ${MAX_POINTER_BYTES} bytes`);
    } finally {
      await s.close();
    }
  });
});

describe('credentials in an http(s) origin URL (a static host behind basic auth) reach no message', () => {
  const TOKEN = 's3cr3t-t0ken';
  let host: FaultyHost;
  beforeAll(async () => {
    host = await faultyHost(remoteDir);
    host.auth = `user:${TOKEN}`;
  });
  afterAll(async () => {
    await host?.close();
  });
  const withAuth = (url: string, password = TOKEN) => url.replace('http://', `http://user:${password}@`);

  it('reads with them, and describes, fails and retries without them', async () => {
    const retried: unknown[] = [];
    const s = await openSource(withAuth(host.url), { retryAttempts: 2, onRetry: (e) => retried.push(e) });
    const said: string[] = [s.description, s.nothingPublished];
    try {
      const live = (await s.live())!;
      said.push(live.where);
      const entry = live.files.get(PATH)!;
      expect(sha256Hex(await live.read(entry))).toBe(entry.sha256);
      const key = objectKey(entry.sha256);
      for (const fault of ['trickle', 'silent'] as const) {
        host.fault.set(`/${key}`, fault);
        said.push(String(await live.read(entry, { deadlineMs: 100, minBytesPerSecond: 0 }).catch((e) => e)));
      }
      host.fault.set(`/${key}`, null);
      await rm(path.join(remoteDir, key));
      try {
        said.push(String(await live.read(entry).catch((e) => e)));
      } finally {
        await writeFile(path.join(remoteDir, key), await readFile(path.join(releaseDir, PATH)));
      }
    } finally {
      await s.close();
    }
    // A wrong password: the host answers 401, and the retries of a refused connection over https.
    for (const where of [withAuth(host.url, `wrong-${TOKEN}`), `https://user:${TOKEN}@127.0.0.1:1/`]) {
      const other = await openSource(where, { retryAttempts: 2, onRetry: (e) => retried.push(e) });
      said.push(other.description, String(await other.currentId().catch((e) => e)));
      await other.close();
    }
    said.push(...retried.map(String));
    expect(
      said.filter((m) => /no complete answer|is missing|answered 401|ECONNREFUSED/.test(m)).length,
    ).toBeGreaterThanOrEqual(5);
    expect(retried.length).toBeGreaterThan(0);
    for (const m of said) expect(m).not.toContain(TOKEN);
    expect(said[0]).toBe(withAuth(host.url, '***'));
  });
});
