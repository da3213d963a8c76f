// A web server over a folder (what any static host serves of the root a file:// publish wrote) whose answers a test
// turns into an origin's faults, per path: one that never answers, one that trickles a byte at a time (never the
// whole body), or the file as stored. Every connection is closed with the server, so a test ends whatever it left.
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';

export type Fault = 'silent' | 'trickle' | null;

export interface FaultyHost {
  /** http://127.0.0.1:PORT/ */
  url: string;
  /** The fault of a path ('/current.json'), or of every path (`*`); null serves the file again. */
  fault: Map<string, Fault>;
  /** Requests seen, by path. */
  seen: Map<string, number>;
  /** The most requests it has had under way at once (from their arrival to the end of their answer). */
  mostAtOnce: number;
  /** Resolves once a request for `pathname` has reached the host `n` times in all. */
  reached(pathname: string, n?: number): Promise<void>;
  /** How often a trickle sends its next byte, in ms (default 5). */
  trickleEveryMs: number;
  /** Basic auth the host asks for, as "user:password"; null (the default) asks for none. */
  auth: string | null;
  close(): Promise<void>;
}

export async function faultyHost(root: string): Promise<FaultyHost> {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const waiters: Array<{ pathname: string; n: number; resolve: () => void }> = [];
  const h = {} as FaultyHost;
  let atOnce = 0;
  const server = http.createServer(async (req, res) => {
    h.mostAtOnce = Math.max(h.mostAtOnce, ++atOnce);
    res.on('close', () => atOnce--);
    const pathname = decodeURIComponent(new URL(req.url!, 'http://h').pathname);
    h.seen.set(pathname, (h.seen.get(pathname) ?? 0) + 1);
    for (const w of [...waiters])
      if (w.pathname === pathname && h.seen.get(pathname)! >= w.n) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    if (h.auth !== null && req.headers.authorization !== `Basic ${Buffer.from(h.auth).toString('base64')}`)
      return void res.writeHead(401, { 'www-authenticate': 'Basic' }).end();
    const fault = h.fault.has(pathname) ? h.fault.get(pathname) : (h.fault.get('*') ?? null);
    if (fault === 'silent') return;
    if (fault === 'trickle') {
      // A body it promises and never finishes: a byte now and then, as a host on a failing link.
      res.writeHead(200); // chunked: no size that the reader could refuse it by before it trickles
      const timer = setInterval(() => res.write('x'), h.trickleEveryMs);
      timers.add(timer);
      res.on('close', () => {
        clearInterval(timer);
        timers.delete(timer);
      });
      return;
    }
    const file = path.join(root, pathname);
    const body = file.startsWith(root + path.sep) ? await readFile(file).catch(() => null) : null;
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-length': body.length }).end(body);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return Object.assign(h, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    fault: new Map<string, Fault>(),
    seen: new Map<string, number>(),
    mostAtOnce: 0,
    auth: null,
    trickleEveryMs: 5,
    reached: (pathname: string, n = 1) =>
      (h.seen.get(pathname) ?? 0) >= n
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiters.push({ pathname, n, resolve })),
    async close() {
      for (const t of timers) clearInterval(t);
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  });
}
