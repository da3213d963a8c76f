// The representations' packs across rebuilds: a rebuild links the previous release's packs it still uses and writes
// a pack of its own for what it made; a pack mostly garbage is compacted; a missing or damaged pack is never inherited;
// releases of builds that wrote one representations.pack (no `packs` in the manifest) are still read, served, linked
// and published.
import { readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createKey } from '../src/gateway/keys.js';
import { openStore } from '../src/gateway/stores/index.js';
import { build, type BuildResult } from '../src/pipeline/build.js';
import type { Manifest } from '../src/publication/files.js';
import { readStored } from '../src/publication/folder.js';
import {
  detailFile,
  packedRepresentations,
  REPRESENTATIONS_FILE,
  type StoredBytes,
} from '../src/publication/layout.js';
import { objectsOf } from '../src/publication/remote.js';
import { smallCatalog, withTemp, writeFixture } from './helpers/fixture.js';
import { withDescription } from './helpers/releases.js';
import { gatewayOver, request } from './helpers/request.js';
import { sha256 } from './helpers/tree.js';

const manifestOf = async (dir: string): Promise<Manifest> =>
  JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
const packsIn = async (dir: string) => (await readdir(dir)).filter((f) => f.endsWith('.pack')).sort();
const packBytes = (m: Manifest) => Object.values(m.representations!).reduce((n, r) => n + r.br.bytes + r.gzip.bytes, 0);
/** The bytes of every representation of `m`, by identity, read from the packs in `dir`. */
async function representationBytes(dir: string, m: Manifest): Promise<Map<string, [Buffer, Buffer]>> {
  const packs = new Map<string, Buffer>();
  for (const p of await packsIn(dir)) packs.set(p, await readFile(path.join(dir, p)));
  const at = (r: StoredBytes) => packs.get(r.path)!.subarray(r.offset, r.offset! + r.bytes);
  return new Map(
    [...packedRepresentations(m.representations!, m.packs)].map((p) => [p.identity, [at(p.br), at(p.gzip)]]),
  );
}
/** Every representation of `m` decompresses to its identity body (read from the release). */
async function expectIntact(dir: string, m: Manifest): Promise<void> {
  const bytes = await representationBytes(dir, m);
  const bodies = new Map(m.files.map((f) => [f.sha256, f.path]));
  expect(bytes.size).toBe(Object.keys(m.representations!).length);
  for (const [identity, [br, gz]] of bytes) {
    const body = await readFile(path.join(dir, bodies.get(identity)!));
    expect(brotliDecompressSync(br).equals(body), identity).toBe(true);
    expect(gunzipSync(gz).equals(body), identity).toBe(true);
  }
}
/** Rewrites a release's manifest.json, and the hash publication.json names of it. */
async function rewriteManifest(dir: string, m: unknown): Promise<void> {
  const bytes = Buffer.from(JSON.stringify(m));
  await writeFile(path.join(dir, 'manifest.json'), bytes);
  const meta = JSON.parse(await readFile(path.join(dir, 'publication.json'), 'utf8'));
  await writeFile(path.join(dir, 'publication.json'), JSON.stringify({ ...meta, manifestSha256: sha256(bytes) }));
}
/** A fixture built, then built again after one description changed. */
async function twoBuilds(
  tmp: string,
  between?: (r1: BuildResult, m1: Manifest) => Promise<void>,
): Promise<{ r1: BuildResult; r2: BuildResult; m1: Manifest; m2: Manifest }> {
  const dataDir = path.join(tmp, 'data');
  const outDir = path.join(tmp, 'out');
  await writeFixture(dataDir, smallCatalog());
  const r1 = await build({ dataDir, outDir });
  const m1 = await manifestOf(r1.releaseDir);
  await between?.(r1, m1);
  await writeFixture(dataDir, withDescription(smallCatalog(), 'beta', 'beta now reads long contracts quickly'));
  const r2 = await build({ dataDir, outDir });
  return { r1, r2, m1: await manifestOf(r1.releaseDir), m2: await manifestOf(r2.releaseDir) };
}

describe('representation packs', () => {
  it('a rebuild after one changed description links the previous pack and writes a pack of only its new representations', async () => {
    await withTemp(async (tmp) => {
      const { r1, r2, m1, m2 } = await twoBuilds(tmp);
      const [old, own] = [`representations-${r1.revision}.pack`, `representations-${r2.revision}.pack`];
      expect(await packsIn(r1.releaseDir)).toEqual([old]);
      expect(await packsIn(r2.releaseDir)).toEqual([old, own].sort());
      // The previous pack is the same file (a hard link), not a copy; the manifest lists it with its size.
      const [s1, s2] = [await stat(path.join(r1.releaseDir, old)), await stat(path.join(r2.releaseDir, old))];
      expect(s2.ino).toBe(s1.ino);
      expect(s2.nlink).toBeGreaterThanOrEqual(2);
      expect(m2.packs!.find((p) => p.path === old)).toEqual({ path: old, bytes: s1.size });
      expect(r2.stats.packsLinked).toBe(1);
      // The new pack holds exactly the representations of the bodies new to this release, end to end.
      const fresh = Object.keys(m2.representations!).filter((h) => !(h in m1.representations!));
      expect(fresh.length).toBeGreaterThan(0);
      expect(r2.stats.encodedNew).toBe(fresh.length);
      const ownIndex = m2.packs!.findIndex((p) => p.path === own);
      const inOwn = Object.entries(m2.representations!).filter(([, r]) => r.pack === ownIndex);
      expect(inOwn.map(([h]) => h).sort()).toEqual(fresh.sort());
      const ownSize = (await stat(path.join(r2.releaseDir, own))).size;
      expect(ownSize).toBe(inOwn.reduce((n, [, r]) => n + r.br.bytes + r.gzip.bytes, 0));
      expect(m2.packs!.find((p) => p.path === own)!.bytes).toBe(ownSize);
      expect(ownSize).toBeLessThan(s1.size / 4);
      // The kept representations keep their place in the linked pack.
      for (const [h, r] of Object.entries(m2.representations!))
        if (r.pack !== ownIndex) expect({ ...r, pack: 0 }, h).toEqual(m1.representations![h]);
      await expectIntact(r2.releaseDir, m2);
      // (That they are byte for byte a full build's: test/incremental.test.ts.)
    });
  });

  it('a pack whose live representations are under half its size is compacted into the new pack; a damaged one among them is made again', async () => {
    await withTemp(async (tmp) => {
      let flipped = '';
      let original = Buffer.alloc(0);
      const { r1, r2, m2 } = await twoBuilds(tmp, async (r1, m1) => {
        // The pack grown past twice its representations (as if garbage of earlier builds), and one of them damaged
        // in place: a compacted pack is read, so the damage is seen.
        const name = m1.packs![0]!.path;
        const file = path.join(r1.releaseDir, name);
        const pack = await readFile(file);
        const rel = detailFile({ slug: 'alpha', locale: 'en', lane: 'verified', displayOnly: false, include: [] });
        flipped = m1.files.find((f) => f.path === rel)!.sha256;
        const place = [...packedRepresentations(m1.representations!, m1.packs)].find((p) => p.identity === flipped)!;
        original = Buffer.from(pack.subarray(place.gzip.offset, place.gzip.offset + place.gzip.bytes));
        pack[place.gzip.offset + 7]! ^= 0xff;
        const grown = Buffer.concat([pack, Buffer.alloc(pack.length + 1)]);
        await writeFile(file, grown);
        await rewriteManifest(r1.releaseDir, { ...m1, packs: [{ path: name, bytes: grown.length }] });
      });
      // Not linked: the build's own pack holds every representation, end to end.
      expect(await packsIn(r2.releaseDir)).toEqual([`representations-${r2.revision}.pack`]);
      expect(m2.packs).toEqual([{ path: `representations-${r2.revision}.pack`, bytes: packBytes(m2) }]);
      expect(r2.stats.packsLinked).toBe(0);
      expect(r2.stats.encodedReused).toBeGreaterThan(0);
      await expectIntact(r2.releaseDir, m2);
      const gz = (await representationBytes(r2.releaseDir, m2)).get(flipped)![1];
      expect(gz.equals(original)).toBe(true);
      // Copied, not compressed: only the new bodies and the damaged one were.
      const m1 = await manifestOf(r1.releaseDir);
      const fresh = Object.keys(m2.representations!).filter((h) => !(h in m1.representations!));
      expect(r2.stats.encodedNew).toBe(fresh.length + 1);
      expect(r2.stats.encodedReused).toBe(Object.keys(m2.representations!).length - fresh.length - 1);
    });
  });

  it('a missing pack is not linked: the representations it held are made again', async () => {
    await withTemp(async (tmp) => {
      const { r2, m2 } = await twoBuilds(tmp, async (r1, m1) => {
        await rm(path.join(r1.releaseDir, m1.packs![0]!.path));
      });
      expect(await packsIn(r2.releaseDir)).toEqual([`representations-${r2.revision}.pack`]);
      expect(r2.stats.encodedReused).toBe(0);
      expect(r2.stats.encodedNew).toBe(Object.keys(m2.representations!).length);
      await expectIntact(r2.releaseDir, m2);
    });
  });

  it('a release of an older build (one representations.pack, no packs listed) is read, served, linked and published', async () => {
    await withTemp(async (tmp) => {
      const { r1, r2, m2 } = await twoBuilds(tmp, async (r1, m1) => {
        // The form older builds wrote: the same pack (a full build's is in identity order from 0) under the old name.
        await rename(path.join(r1.releaseDir, m1.packs![0]!.path), path.join(r1.releaseDir, REPRESENTATIONS_FILE));
        const representations = Object.fromEntries(
          Object.entries(m1.representations!).map(([h, { br, gzip }]) => [h, { br, gzip }]),
        );
        const { packs: _, ...rest } = m1;
        await rewriteManifest(r1.releaseDir, { ...rest, representations });
        expect(objectsOf(await manifestOf(r1.releaseDir)).size).toBe(objectsOf(m1).size);
        await expectIntact(r1.releaseDir, await manifestOf(r1.releaseDir));
      });
      // The rebuild links the old pack under its name, and lists it.
      const [s1, s2] = await Promise.all([r1, r2].map((r) => stat(path.join(r.releaseDir, REPRESENTATIONS_FILE))));
      expect(s2!.ino).toBe(s1!.ino);
      expect(m2.packs!.map((p) => p.path)).toEqual(
        [REPRESENTATIONS_FILE, `representations-${r2.revision}.pack`].sort(),
      );
      await expectIntact(r2.releaseDir, m2);
      // Publish uploads each representation from its pack and offset: the bytes named by their sha256, both forms.
      const m1 = await manifestOf(r1.releaseDir);
      for (const [dir, m] of [
        [r1.releaseDir, m1],
        [r2.releaseDir, m2],
      ] as const) {
        const objects = objectsOf(m);
        expect(objects.size).toBe(
          new Set(m.files.map((f) => f.sha256)).size + 2 * Object.keys(m.representations!).length,
        );
        for (const [sha, o] of objects) expect(sha256((await readStored(dir, o))!), o.path).toBe(sha);
      }
      // The gateway serves br and gzip from the older release and from the one with two packs.
      const store = await openStore('memory:');
      try {
        const key = (await createKey(store, 'packs')).key;
        for (const [dir, m] of [
          [r1.releaseDir, m1],
          [r2.releaseDir, m2],
        ] as const) {
          const gw = await gatewayOver(dir, { storeInstance: store });
          try {
            for (const slug of ['alpha', 'beta']) {
              const rel = detailFile({ slug, locale: 'en', lane: 'verified', displayOnly: false, include: [] });
              const body = await readFile(path.join(dir, rel));
              expect(m.files.some((f) => f.path === rel)).toBe(true);
              for (const coding of ['br', 'gzip'] as const) {
                const r = await request(gw, `/api/v1/models/${slug}`, {
                  headers: { 'x-api-key': key, 'accept-encoding': coding },
                });
                expect(r.status, `${slug} ${coding}`).toBe(200);
                expect(r.headers.get('content-encoding')).toBe(coding);
                const bytes = Buffer.from(await r.arrayBuffer());
                const plain = coding === 'br' ? brotliDecompressSync(bytes) : gunzipSync(bytes);
                expect(plain.equals(body), `${slug} ${coding}`).toBe(true);
              }
            }
          } finally {
            await gw.close();
          }
        }
      } finally {
        await store.close();
      }
    });
  });
});
