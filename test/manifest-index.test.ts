// The previous release as a build keeps it (publication/tables.ts, reader.ts parseManifestIndex): manifest.json read a
// chunk at a time into compact tables gives the entries and representations parseManifest gives, wherever the chunks
// break, and a damaged manifest is refused with parseManifest's own error, naming the file.
import { createHash } from 'node:crypto';
import { expect, it } from 'vitest';
import type { BodyRepresentations, Manifest, ManifestEntry } from '../src/publication/files.js';
import { packedRepresentations } from '../src/publication/layout.js';
import { type IndexedManifest, parseManifest, parseManifestIndex } from '../src/publication/reader.js';
import { DigestTable, ManifestTable } from '../src/publication/tables.js';

const hex = (s: string) => createHash('sha256').update(s).digest('hex');
const b64 = (s: string) => createHash('sha256').update(s).digest('base64url');

/** A manifest of `n` entries, more than one slice (2,048 rows), with the odd cases a table must keep as given. */
function manifest(n: number): Manifest {
  const files: ManifestEntry[] = [];
  const representations: Record<string, BodyRepresentations> = {};
  for (let i = 0; i < n; i++) {
    const body = `body ${i % (n - 7)}`; // a few paths share a body
    const e: ManifestEntry = {
      path: `api/v1/models/m${i}/en.all.public.base.json${i === 5 ? 'é' : ''}`,
      sha256: hex(body),
      bytes: 100 + i,
      content_type: i === 0 ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8',
      revision: `r00000000000${i % 3}`,
      last_modified: `2026-01-0${1 + (i % 4)}T00:00:00.000Z`,
    };
    // Absent, a digest in base64url (as builds write), or any other string (the schema allows one).
    if (i % 5 === 1) e.inputs = b64(`inputs ${i}`);
    if (i === 2) e.inputs = 'not a digest, "quoted" \\ and long enough to be anything at all';
    files.push(e);
    representations[e.sha256] = {
      br: { sha256: hex(`br ${body}`), bytes: 10 + i },
      gzip: { sha256: hex(`gz ${body}`), bytes: 20 + i },
    };
  }
  return {
    schemaVersion: '1.0.0',
    publicationRevision: 'r000000000002',
    publishedAt: '2026-01-04T00:00:00.000Z',
    files,
    representations,
    compression: { brotliQuality: 5, gzipLevel: 6 },
  };
}

async function* chunks(b: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < b.length; i += size) yield b.subarray(i, i + size);
}

/** parseManifestIndex of `bytes` in chunks of `size`, and whether it fell back to parsing the file whole. */
async function indexed(bytes: Buffer, size: number): Promise<{ index: IndexedManifest; whole: boolean }> {
  let whole = false;
  const index = await parseManifestIndex(chunks(bytes, size), 'dist/manifest.json', async () => {
    whole = true;
    return bytes;
  });
  return { index, whole };
}

function expectSame(index: IndexedManifest, m: Manifest, bytes: Buffer) {
  const { files, representations, packs, ...head } = m;
  expect(index.head).toEqual(head);
  expect(index.representations!.packs).toEqual(packs ?? null);
  expect(index.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
  expect(index.files.size).toBe(files.length);
  // In the manifest's order, each with its keys in the schema's order (a carried entry is written back as it is).
  expect([...index.files.values()].map((e) => JSON.stringify(e))).toEqual(files.map((e) => JSON.stringify(e)));
  for (const f of files) expect(index.files.get(f.path)).toEqual(f);
  expect(index.files.get('api/v1/none.json')).toBeUndefined();
  expect(index.representations!.size).toBe(Object.keys(representations!).length);
  expect([...index.representations!.packed()].map(({ row: _, ...p }) => p)).toEqual([
    ...packedRepresentations(representations!, packs),
  ]);
  expect([...index.representations!]).toEqual(Object.entries(representations!).sort(([a], [b]) => (a < b ? -1 : 1)));
}

it('reads a manifest into tables as parseManifest reads it, wherever the chunks break', async () => {
  const m = manifest(5000);
  const bytes = Buffer.from(JSON.stringify(m));
  expect(await parseManifest(bytes, 'x')).toEqual(m);
  for (const size of [bytes.length, 65536, 4093]) {
    const { index, whole } = await indexed(bytes, size);
    expect(whole).toBe(false);
    expectSame(index, m, bytes);
  }
  // A byte at a time: every token cut somewhere.
  const small = manifest(40);
  const smallBytes = Buffer.from(JSON.stringify(small));
  const one = await indexed(smallBytes, 1);
  expect(one.whole).toBe(false);
  expectSame(one.index, small, smallBytes);
  // Whitespace, and the fields in another order: still read a chunk at a time.
  const { files, ...rest } = m;
  const spaced = Buffer.from(JSON.stringify({ compression: rest.compression, files, ...rest }, null, 2));
  const { index, whole } = await indexed(spaced, 777);
  expect(whole).toBe(false);
  expectSame(index, m, spaced);
  // No representations (--no-compression) and no entries.
  const bare = { ...m, files: [], representations: undefined, compression: undefined };
  const b = await indexed(Buffer.from(JSON.stringify(bare)), 5);
  expect([b.index.files.size, b.index.representations, b.whole]).toEqual([0, null, false]);
});

it('refuses a damaged manifest with the error parseManifest gives, naming the file and the row', async () => {
  const m = manifest(5000);
  const text = JSON.stringify(m);
  const damaged: [string, string][] = [
    ['cut short', text.slice(0, text.length / 2)],
    ['trailing bytes', `${text}x`],
    ['a row with a bad hash', text.replace(m.files[4321]!.sha256, 'f00')],
    ['a row with a field too many', text.replace('"bytes":1200,', '"bytes":1200,"extra":1,')],
    ['a row that is not JSON', text.replace('"bytes":1200,', '"bytes":12 00,')],
    ['a comma with no row after it', text.replace(']', ',]')],
    ['a bad representation', text.replace(`"${m.files[10]!.sha256}":{"br"`, `"${m.files[10]!.sha256}":{"bz"`)],
    ['an unknown field', text.replace('{"schemaVersion"', '{"extra":[1,{"a":"]"}],"schemaVersion"')],
    [
      'a bad head and a bad row (the head is named)',
      text.replace('"bytes":1200', '"bytes":-1').replace('"1.0.0"', '1'),
    ],
    [
      'files not an array',
      text.replace('"files":[', '"files":{"a":[').replace('],"representations"', ']},"representations"'),
    ],
    ['not an object', '[]'],
  ];
  for (const [what, t] of damaged) {
    const bytes = Buffer.from(t);
    const expected = await parseManifest(bytes, 'dist/manifest.json').then(
      () => null,
      (e: Error) => e.message,
    );
    expect(expected, what).toMatch(/^dist\/manifest\.json: /);
    await expect(indexed(bytes, 4096), what).rejects.toThrow(expected!);
  }
  // A field given twice is valid JSON (the last one counts): read whole, with the same result.
  const twice = Buffer.from(text.replace('{"schemaVersion"', '{"files":[],"schemaVersion"'));
  const { index, whole } = await indexed(twice, 4096);
  expect(whole).toBe(true);
  expectSame(index, m, twice);
  // The row is named by its place in the whole file, not in its slice.
  await expect(indexed(Buffer.from(damaged[2]![1]), 65536)).rejects.toThrow(
    'dist/manifest.json: files.4321.sha256: must be a sha256',
  );
});

it('keeps digests and paths compactly, found again after the tables grow', () => {
  const digests = new DigestTable();
  const t = new ManifestTable();
  for (let i = 0; i < 20000; i++) {
    expect(digests.add(hex(String(i)))).toBe(i);
    expect(digests.add(hex(String(i)))).toBe(i);
  }
  for (let i = 0; i < 20000; i += 7) expect(digests.find(hex(String(i)))).toBe(i);
  expect(digests.find(hex('none'))).toBe(-1);
  expect([...digests.sorted()].map((r) => digests.hexOf(r))).toEqual(
    Array.from({ length: 20000 }, (_, i) => hex(String(i))).sort(),
  );
  const m = manifest(3000);
  for (const f of m.files) t.add(f);
  // A path given again replaces its entry (as a Map would).
  t.add({ ...m.files[7]!, bytes: 1 });
  expect(t.size).toBe(3000);
  expect(t.get(m.files[7]!.path)!.bytes).toBe(1);
  expect([...t.keys()]).toEqual(m.files.map((f) => f.path));
  expect(t.latestLastModified()).toBe('2026-01-04T00:00:00.000Z');
});

it('finds every row again once its tables have let go of their spare room, and grows again past it', () => {
  const digests = new DigestTable();
  const empty = new DigestTable();
  const t = new ManifestTable();
  for (let i = 0; i < 5000; i++) digests.add(hex(String(i)));
  const m = manifest(3000);
  for (const f of m.files.slice(0, 2000)) t.add(f);
  digests.fit();
  empty.fit();
  t.fit();
  for (let i = 0; i < 5000; i += 3) expect(digests.find(hex(String(i)))).toBe(i);
  expect(t.get(m.files[1999]!.path)).toEqual(m.files[1999]);
  for (let i = 5000; i < 7000; i++) expect(digests.add(hex(String(i)))).toBe(i);
  expect(empty.add(hex('first'))).toBe(0);
  for (const f of m.files.slice(2000)) t.add(f);
  expect([digests.find(hex('0')), digests.find(hex('6999')), empty.find(hex('first'))]).toEqual([0, 6999, 0]);
  expect([...t.values()]).toEqual(m.files);
});

/** manifest(n) as a build with two packs writes it: each representation with its pack and offset. */
function placed(n: number): Manifest {
  const m = manifest(n);
  const offsets = [0, 0];
  const representations: Record<string, BodyRepresentations> = {};
  for (const [i, h] of Object.keys(m.representations!).sort().entries()) {
    const r = m.representations![h]!;
    const pack = i % 3 === 0 ? 1 : 0;
    representations[h] = { ...r, pack, offset: offsets[pack]! };
    offsets[pack]! += r.br.bytes + r.gzip.bytes + (i % 7); // garbage between some of them (compacted later)
  }
  const { representations: _, compression, ...rest } = m;
  const packs = [
    { path: 'representations-r000000000001.pack', bytes: offsets[0]! },
    { path: 'representations-r000000000002.pack', bytes: offsets[1]! + 10 },
  ];
  return { ...rest, packs, representations, ...(compression ? { compression } : {}) };
}

it('reads a manifest that lists its packs, each representation with its pack and offset; refuses one that contradicts them', async () => {
  const m = placed(5000);
  const bytes = Buffer.from(JSON.stringify(m));
  expect(await parseManifest(bytes, 'x')).toEqual(m);
  for (const size of [bytes.length, 4093]) {
    const { index, whole } = await indexed(bytes, size);
    expect(whole).toBe(false);
    expectSame(index, m, bytes);
  }
  const first = Object.keys(m.representations!).sort()[0]!;
  const r = m.representations![first]!;
  const text = JSON.stringify(m);
  const entry = JSON.stringify(r);
  const without = (o: object) => JSON.stringify(o);
  const damaged: [string, string, RegExp][] = [
    [
      'a pack the list has not',
      text.replace(entry, without({ ...r, pack: 2 })),
      /\.pack: 2, but the manifest lists 2 packs/,
    ],
    ['no place', text.replace(entry, without({ br: r.br, gzip: r.gzip })), /no pack or offset/],
    ['past the end', text.replace(entry, without({ ...r, offset: 1e9 })), /runs past the end of representations-/],
    [
      'a place but no packs',
      text.replace(/"packs":\[[^\]]*\],/, ''),
      /a pack and offset, in a manifest that lists no packs/,
    ],
    ['a pack name that is a path', text.replace('representations-r000000000001.pack', '../x.pack'), /packs\.0\.path/],
  ];
  for (const [what, t, error] of damaged) {
    const b = Buffer.from(t);
    expect(t, what).not.toBe(text);
    const expected = await parseManifest(b, 'dist/manifest.json').then(
      () => null,
      (e: Error) => e.message,
    );
    expect(expected, what).toMatch(/^dist\/manifest\.json: /);
    expect(expected, what).toMatch(error);
    await expect(indexed(b, 4096), what).rejects.toThrow(expected!);
  }
});
