// `publish --rollback` and HTTP validators (RFC 9110 13.1.3): a rolled-back body must never look unchanged to a
// client that holds the newer one. A small catalog is published as A, then as B with one price changed (no newer
// date in the data, so B's times are one second past A's), rolled back to A, and read through `serve --origin`
// with the validators a client kept from B. Then a CI runner builds C (another price, again no newer date) with
// `build --previous` from the remote and publishes it: a client holding B's or the rolled-back answer gets C's bytes.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../src/gateway/keys.js';
import { type Gateway, openGateway } from '../src/gateway/server.js';
import { openStore } from '../src/gateway/stores/index.js';
import type { QuotaStore } from '../src/gateway/stores/types.js';
import { build } from '../src/pipeline/build.js';
import type { Manifest, ManifestEntry } from '../src/publication/files.js';
import { remoteLayout } from '../src/publication/remote-source.js';
import { fileTarget } from '../src/publication/targets/file.js';
import { rolledBackTimes } from '../src/publication/times.js';
import { publish, rollback } from '../src/publish/publish.js';
import { type FixtureSpec, smallCatalog, writeFixture } from './helpers/fixture.js';
import { request } from './helpers/request.js';

let tmp: string;
let url: string;
let store: QuotaStore;
let key: string;
const revisions: Record<'A' | 'B' | 'C', string> = {} as never;

/** The small catalog with alpha's last verified price row at `input` per million (its date unchanged). */
const priced = (input: number): FixtureSpec => {
  const spec = smallCatalog();
  const rows = spec.prices!.filter((p) => p.model === 'alpha' && p.lane === 'verified');
  rows.at(-1)!.input_per_million = input;
  return spec;
};

/** Builds `spec` into a fresh --out (with --previous the remote, as a CI runner does) and publishes it. */
async function buildAndPublish(name: keyof typeof revisions, spec: FixtureSpec): Promise<void> {
  const data = path.join(tmp, `data-${name}`);
  const out = path.join(tmp, `dist-${name}`);
  await writeFixture(data, spec);
  const r = await build({ dataDir: data, outDir: out, previousUrl: url });
  revisions[name] = r.revision;
  await publish({ from: out, target: fileTarget(url), keep: 3, concurrency: 4, say: () => {}, progress: null });
}

const gatewayOn = () =>
  openGateway({
    origin: url,
    store: 'memory:',
    storeInstance: store,
    quota: 100_000,
    cacheBytes: 1 << 20,
    pollMs: 3_600_000,
    logLevel: 'silent',
  });

/** Answers that show alpha's price: stored bodies (detail, list page, catalog) and a composed one (a page size). */
const TARGETS = [
  '/api/v1/models/alpha?include=pricing',
  '/api/v1/models?include=pricing',
  '/api/v1/catalog',
  '/api/v1/models?include=pricing&page_size=7',
];

interface Seen {
  status: number;
  etag: string | null;
  lastModified: string | null;
  body: string;
}

async function get(gw: Gateway, target: string, headers: Record<string, string> = {}): Promise<Seen> {
  const r = await request(gw, target, { headers: { 'x-api-key': key, 'accept-encoding': 'identity', ...headers } });
  return {
    status: r.status,
    etag: r.headers.get('etag'),
    lastModified: r.headers.get('last-modified'),
    body: await r.text(),
  };
}

/** Every target's answer on the live publication of the remote. */
async function answers(): Promise<Map<string, Seen>> {
  const gw = await gatewayOn();
  try {
    const out = new Map<string, Seen>();
    for (const t of TARGETS) out.set(t, await get(gw, t));
    return out;
  } finally {
    await gw.close();
  }
}

/** A client that holds `held` asks again with its validators, each alone. */
async function revalidate(held: Map<string, Seen>) {
  const gw = await gatewayOn();
  try {
    const out: Array<{ target: string; by: string; status: number; body: string }> = [];
    for (const [target, h] of held) {
      const ims = await get(gw, target, { 'if-modified-since': h.lastModified! });
      const inm = await get(gw, target, { 'if-none-match': h.etag! });
      out.push({ target, by: 'if-modified-since', status: ims.status, body: ims.body });
      out.push({ target, by: 'if-none-match', status: inm.status, body: inm.body });
    }
    return out;
  } finally {
    await gw.close();
  }
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'modelpub-rollback-'));
  url = pathToFileURL(path.join(tmp, 'remote')).href;
  store = await openStore('memory:');
  key = (await createKey(store, 'rollback test')).key;
});
afterAll(async () => {
  await store?.close();
  await rm(tmp, { recursive: true, force: true });
});

describe('a rollback never makes a changed body look unchanged', () => {
  let a: Map<string, Seen>;
  let b: Map<string, Seen>;
  let rolledBack: Map<string, Seen>;

  it("publish A, B (a price changed); roll back to A: B's validators get A's bytes with 200, never 304", async () => {
    await buildAndPublish('A', priced(4));
    a = await answers();
    for (const t of TARGETS) expect(a.get(t)!.status, t).toBe(200);
    await buildAndPublish('B', priced(5));
    b = await answers();
    for (const t of TARGETS) expect(b.get(t)!.body, t).not.toBe(a.get(t)!.body);

    const said: string[] = [];
    const r = await rollback({ target: fileTarget(url), revision: revisions.A, say: (l) => said.push(l) });
    expect(r.moved).toBe(true);
    expect(r.pointer.live.publication.publicationRevision).toBe(revisions.A);
    // The rolled-back publication replaces A among the kept ones; B stays kept for a roll forward.
    expect(r.pointer.previous.map((p) => p.publication.publicationRevision)).toEqual([revisions.B]);
    expect(r.pointer.live.publication.publishedAt > (await pointerOf()).previous[0]!.publication.publishedAt).toBe(
      true,
    );
    expect(said.join('\n')).toContain(`rolled back ${url} from ${revisions.B} to ${revisions.A}`);

    rolledBack = await answers();
    for (const t of TARGETS) {
      const now = rolledBack.get(t)!;
      expect([now.status, now.body, now.etag], t).toEqual([200, a.get(t)!.body, a.get(t)!.etag]);
      // Later than anything B showed, in whole seconds (HTTP dates).
      expect(Date.parse(now.lastModified!), t).toBeGreaterThan(Date.parse(b.get(t)!.lastModified!));
    }
    for (const r of await revalidate(b))
      expect([r.status, r.body], `${r.target} ${r.by}`).toEqual([200, a.get(r.target)!.body]);
    // Bytes that did not change are still validated: the rolled-back answers' own validators get 304.
    for (const r of await revalidate(rolledBack)) expect(r.status, `${r.target} ${r.by}`).toBe(304);
  });

  it('build --previous from the remote after the rollback, another price, publish: no client gets 304 for it', async () => {
    await buildAndPublish('C', priced(6));
    const c = await answers();
    for (const t of TARGETS) expect(c.get(t)!.body, t).not.toBe(b.get(t)!.body);
    for (const held of [a, b, rolledBack])
      for (const r of await revalidate(held))
        expect([r.status, r.body], `${r.target} ${r.by}`).toEqual([200, c.get(r.target)!.body]);
  });
});

/** The remote's pointer. */
async function pointerOf() {
  const p = await remoteLayout(fileTarget(url)).pointer();
  return p!;
}

describe('rolledBackTimes', () => {
  const entry = (p: string, sha: string, t: string): ManifestEntry => ({
    path: p,
    sha256: sha.repeat(64),
    bytes: 1,
    content_type: 'application/json',
    revision: 'r1',
    last_modified: t,
  });
  const manifest = (publishedAt: string, files: ManifestEntry[]): Manifest => ({
    schemaVersion: '1',
    publicationRevision: 'r1',
    publishedAt,
    files,
  });
  const T1 = '2025-01-01T00:00:01.000Z';
  const T2 = '2025-01-01T00:00:02.000Z';
  const T3 = '2025-01-01T00:00:03.000Z';
  const next = '2025-01-01T00:00:04.000Z';

  it('a body the live one serves keeps the later time; a changed, absent or contested one takes the next second', () => {
    const to = manifest(T1, [
      entry('same', 'a', T1),
      entry('back', 'a', T1),
      entry('gone', 'a', T1),
      entry('new', 'a', T1),
    ]);
    // Kept, live first: C reverted `back` to A's bytes after B changed it, and does not have `gone`.
    const c = manifest(T3, [entry('same', 'a', T1), entry('back', 'a', T3), entry('new', 'b', T3)]);
    const b = manifest(T2, [
      entry('same', 'a', T1),
      entry('back', 'b', T2),
      entry('gone', 'b', T2),
      entry('new', 'a', T1),
    ]);
    const again = rolledBackTimes(to, { live: c, others: [b, to], notBefore: [] });
    expect(again.publishedAt).toBe(next);
    expect(Object.fromEntries(again.files.map((f) => [f.path, f.last_modified]))).toEqual({
      same: T1, // never changed: a client holding it is still right
      back: T3, // C's time for these bytes, later than B's other bytes
      gone: next,
      new: next,
    });
    // Bytes a kept publication had, other than the live one's, at a time not earlier: the next second too.
    const odd = manifest(T3, [entry('p', 'a', T1)]);
    const later = manifest(T2, [entry('p', 'b', T3)]);
    const p = manifest(T1, [entry('p', 'a', T1)]);
    expect(rolledBackTimes(p, { live: odd, others: [later], notBefore: [] }).files[0]!.last_modified).toBe(next);
    // A live manifest that cannot be read: no body keeps its time, and the pointer's times bound the new one.
    const unread = rolledBackTimes(to, { live: null, others: [to], notBefore: [T3] });
    expect([unread.publishedAt, ...new Set(unread.files.map((f) => f.last_modified))]).toEqual([next, next]);
  });
});
