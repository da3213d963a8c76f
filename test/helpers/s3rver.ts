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
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const server: S3Server = {
    endpoint: '',
    bucket,
    requests: [],
    fault: null,
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
    const up = http.request(
      { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers, agent },
      (r) => {
        record.status = r.statusCode ?? 0;
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  server.endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  return server;
}
