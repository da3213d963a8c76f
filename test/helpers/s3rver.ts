// The S3 API on loopback for the publish tests: s3rver (npm) in a child process, behind a small proxy that records
// every request (method, key, status) and can fail chosen ones, as a throttled or flaky object store would.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT } from './cli.js';
import { tracked } from './children.js';

export const S3_ENV = {
  AWS_ACCESS_KEY_ID: 'S3RVER',
  AWS_SECRET_ACCESS_KEY: 'S3RVER',
  AWS_REGION: 'us-east-1',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  // Nothing from the machine's own AWS setup may take part.
  AWS_CONFIG_FILE: '/nonexistent',
  AWS_SHARED_CREDENTIALS_FILE: '/nonexistent',
  AWS_EC2_METADATA_DISABLED: 'true',
};

export interface S3Request {
  method: string;
  /** The object key without the bucket, '' for bucket-level requests (list, multi-delete). */
  key: string;
  query: string;
  status: number;
  /** A PUT's `If-None-Match` or `If-Match` header, as `If-None-Match: *`. */
  condition?: string;
}

/** What the proxy does with a request instead of forwarding it. */
export type Fault = { status: number; code: string } | 'reset';

export interface S3Server {
  /** The proxy's URL: give it as --endpoint. */
  endpoint: string;
  bucket: string;
  requests: S3Request[];
  /** Called for each request before it is forwarded; a Fault answers it instead. */
  fault: ((r: { method: string; key: string }) => Fault | undefined) | null;
  /**
   * s3rver 3.7.1 ignores `If-None-Match` and `If-Match` on a PUT (its putObject never reads them) and overwrites. While
   * this is true (the default) the proxy keeps them as S3 does: one conditional PUT per key at a time, 412
   * PreconditionFailed when the condition does not hold. False: s3rver as it is, a host that ignores them.
   */
  conditional: boolean;
  stop(): Promise<void>;
}

export async function startS3(bucket = 'modelpub'): Promise<S3Server> {
  const dir = await mkdtemp(path.join(tmpdir(), 'modelpub-s3rver-'));
  const child: ChildProcess = tracked(
    spawn(
      process.execPath,
      ['--openssl-legacy-provider', path.join(ROOT, 'test/helpers/s3rver-child.mjs'), dir, bucket],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    ),
  );
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const line = out.split('\n')[0]!;
      if (out.includes('\n')) resolve(JSON.parse(line).port);
    });
    child.once('exit', (code) => reject(new Error(`s3rver exited (${code}): ${err}`)));
  });
  // A connection per forwarded request: a kept-alive one can be reused just as s3rver closes it for idleness (after
  // 5 s), and the PUT on it then fails and is retried by the publish, which a test counting PUTs would see twice.
  const agent = new http.Agent({ keepAlive: false, maxSockets: 64 });
  const server: S3Server = {
    endpoint: '',
    bucket,
    requests: [],
    fault: null,
    conditional: true,
    async stop() {
      await new Promise((r) => proxy.close(r));
      proxy.closeAllConnections();
      agent.destroy();
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
  const proxy = http.createServer((req, res) => {
    const u = new URL(req.url!, 'http://proxy');
    const key = decodeURIComponent(u.pathname).replace(new RegExp(`^/${bucket}/?`), '');
    const record: S3Request = { method: req.method!, key, query: u.search, status: 0 };
    server.requests.push(record);
    const f = server.fault?.({ method: req.method!, key });
    if (f === 'reset') {
      record.status = -1;
      req.socket.destroy();
      return;
    }
    if (f) {
      record.status = f.status;
      req.resume();
      res
        .writeHead(f.status, { 'content-type': 'application/xml' })
        .end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${f.code}</Code><Message>injected</Message></Error>`);
      return;
    }
    const forward = () =>
      new Promise<void>((done) => {
        const up = http.request(
          { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers, agent },
          (r) => {
            record.status = r.statusCode ?? 0;
            res.writeHead(r.statusCode ?? 502, r.headers);
            r.pipe(res);
            r.on('end', done);
            r.on('error', done);
          },
        );
        up.on('error', () => {
          res.destroy();
          done();
        });
        req.pipe(up);
      });
    const noneMatch = req.headers['if-none-match'];
    const match = req.headers['if-match'];
    if (req.method !== 'PUT' || (noneMatch === undefined && match === undefined)) return void forward();
    record.condition = noneMatch !== undefined ? `If-None-Match: ${noneMatch}` : `If-Match: ${match}`;
    if (!server.conditional) return void forward();
    const turn = (queues.get(key) ?? Promise.resolve()).then(async () => {
      const etag = await headEtag(port, u.pathname);
      const holds = noneMatch !== undefined ? noneMatch === '*' && etag === null : etag !== null && etag === match;
      if (holds) return forward();
      record.status = 412;
      req.resume();
      res
        .writeHead(412, { 'content-type': 'application/xml' })
        .end(
          '<?xml version="1.0" encoding="UTF-8"?><Error><Code>PreconditionFailed</Code>' +
            '<Message>At least one of the pre-conditions you specified did not hold</Message></Error>',
        );
    });
    queues.set(
      key,
      turn.catch(() => {}),
    );
  });
  const queues = new Map<string, Promise<void>>();
  // The same race on the SDK's side: its idle connections are kept longer than any test runs.
  proxy.keepAliveTimeout = 600_000;
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  server.endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  return server;
}

/**
 * The keys of the PUTs the store answered 200 (S3's answer to a PUT that stored its object), in order: what was
 * written, a failed attempt's retry once.
 */
export function written(requests: S3Request[]): string[] {
  return requests.filter((q) => q.method === 'PUT' && q.status === 200).map((q) => q.key);
}

/** The ETag s3rver holds for a path (/bucket/key), or null when there is no such object. Unsigned: s3rver allows it. */
function headEtag(port: number, pathname: string): Promise<string | null> {
  return new Promise((resolve, reject) => {
    http
      .request({ host: '127.0.0.1', port, method: 'HEAD', path: pathname }, (r) => {
        r.resume();
        resolve(r.statusCode === 200 ? String(r.headers.etag) : null);
      })
      .on('error', reject)
      .end();
  });
}
