// GET /healthz (src/gateway/health.ts): no key, no quota, no request log line; 200 while a publication is loaded and
// the store answers in time, 503 with the reason otherwise.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler, type GatewayDeps } from '../src/gateway/app.js';
import { HEALTH_DEADLINE_MS, type Health } from '../src/gateway/health.js';
import { build } from '../src/pipeline/build.js';
import { smallCatalog, writeFixture } from './helpers/fixture.js';
import { gatewayOver, request } from './helpers/request.js';

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-health-'));
  await writeFixture(path.join(tmp, 'data'), smallCatalog());
  await build({ dataDir: path.join(tmp, 'data'), outDir: path.join(tmp, 'dist') });
});
afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

/** A handler whose key lookup and quota throw if reached, and whose log records every line. */
function probeOnly(health: Health) {
  const lines: object[] = [];
  const never = () => {
    throw new Error('reached');
  };
  const deps: GatewayDeps = {
    publication: never,
    keys: { lookup: never },
    quota: { admit: never, refund: never },
    log: { info: (o) => lines.push(o), error: (o) => lines.push(o) },
    fingerprint: () => 'x',
    health,
  };
  return { gw: { handler: createHandler(deps) }, lines };
}

describe('GET /healthz', () => {
  it('200 with the revision: no key, no quota, no log line', async () => {
    const { gw, lines } = probeOnly({ revision: () => 'r1', pingStore: async () => {} });
    const r = await request(gw, '/healthz');
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(await r.json()).toEqual({ status: 'ok', revision: 'r1' });
    expect((await request(gw, '/healthz', { method: 'HEAD' })).status).toBe(200);
    expect((await request(gw, '/healthz', { method: 'POST' })).status).toBe(405);
    await new Promise((r) => setTimeout(r, 0));
    expect(lines.filter((l) => (l as { route?: string }).route === 'healthz')).toEqual([]);
  });

  it('503 with the reason: no publication, a failing store (its URL redacted), a store slower than the deadline', async () => {
    const none = probeOnly({ revision: () => null, pingStore: async () => {} });
    const r1 = await request(none.gw, '/healthz');
    expect(r1.status).toBe(503);
    expect(await r1.json()).toEqual({ status: 'unavailable', reason: 'no publication is loaded' });

    const failing = probeOnly({
      revision: () => 'r1',
      pingStore: () => Promise.reject(new Error('Cannot reach Redis at redis://:***@10.0.0.1:6379')),
    });
    const r2 = await request(failing.gw, '/healthz');
    expect(r2.status).toBe(503);
    expect(await r2.json()).toEqual({
      status: 'unavailable',
      revision: 'r1',
      reason: 'store: Cannot reach Redis at redis://:***@10.0.0.1:6379',
    });

    const stalled = probeOnly({ revision: () => 'r1', pingStore: () => new Promise(() => {}) });
    const r3 = await request(stalled.gw, '/healthz');
    expect(r3.status).toBe(503);
    expect((await r3.json()).reason).toBe(
      `store: the key and quota store did not answer within ${HEALTH_DEADLINE_MS} ms`,
    );
  });

  it('through a real gateway: 200, then 503 once its SQLite file is deleted under it', async () => {
    const file = path.join(tmp, 'health.db');
    const gw = await gatewayOver(path.join(tmp, 'dist'), { store: `sqlite:${file}` });
    try {
      const ok = await request(gw, '/healthz');
      expect(ok.status).toBe(200);
      expect((await ok.json()).revision).toBe(gw.publication().revision);
      for (const f of [file, `${file}-wal`, `${file}-shm`]) await rm(f, { force: true });
      const gone = await request(gw, '/healthz');
      expect(gone.status).toBe(503);
      expect((await gone.json()).reason).toMatch(
        /^store: the SQLite store \S+health\.db was deleted while this gateway was serving/,
      );
      expect((await request(gw, '/healthz?x=1')).status).toBe(503); // a query string does not make it an API path
    } finally {
      await gw.close().catch(() => {});
    }
  });
});
