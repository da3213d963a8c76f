// The gateway's app.request(): a request through its real handler (openGateway), in-process with mock req/res
// (light-my-request, Fastify's inject), no socket or port, so test files share nothing and run in parallel. The
// answer is a fetch Response: a test reads status, headers and body as it would over HTTP. Real sockets stay where
// they matter (raw bytes and framing, pipelining, timeouts, workers, signals): startGateway, or the CLI.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inject } from 'light-my-request';
import { openGateway, type Gateway, type HandlerOptions } from '../../src/gateway/server.js';

export interface RequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

/** `target` is the request target, a path with its query ('/api/v1/models?lane=all'). */
export async function request(gw: Pick<Gateway, 'handler'>, target: string, init: RequestInit = {}): Promise<Response> {
  const method = init.method ?? 'GET';
  const r = await inject(gw.handler, {
    method: method as 'GET',
    url: target,
    headers: init.headers,
    ...(init.body === undefined ? {} : { payload: init.body }),
  });
  const headers = new Headers();
  for (const [name, value] of Object.entries(r.headers))
    for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined) headers.append(name, String(v));
  // A fetch Response refuses a body for these statuses; the handler sends none (and none for HEAD).
  const noBody = r.statusCode === 204 || r.statusCode === 304 || method === 'HEAD';
  return new Response(noBody ? null : new Uint8Array(r.rawPayload), {
    status: r.statusCode,
    statusText: r.statusMessage,
    headers,
  });
}

/** A gateway handler over a publication folder: the memory store unless given, silent, a 1 MB body cache. */
export function gatewayOver(dir: string, o: Partial<HandlerOptions> = {}): Promise<Gateway> {
  return openGateway({
    dir,
    store: 'memory:',
    quota: 1000,
    cacheBytes: 1 << 20,
    pollMs: 1000,
    logLevel: 'silent',
    ...o,
  });
}

/** The handler on a loopback port, for a client in another process (a generated client, a browser). */
export async function listen(gw: Pick<Gateway, 'handler'>): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(gw.handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
