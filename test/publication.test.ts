// The publication format's own rules, tested where they live: body enumeration (pipeline/bodies.ts), the
// Last-Modified policy (publication/times.ts), and the artifact reader (publication/reader.ts);
// a release's checks are the source suite's (sources.test.ts).
import { beforeAll, describe, expect, it } from 'vitest';
import { bodies, countBodies } from '../src/pipeline/bodies.js';
import { loadAndValidate } from '../src/pipeline/build.js';
import { type Computed, compute } from '../src/pipeline/compute/index.js';
import type { ManifestEntry } from '../src/publication/files.js';
import { bodyBytes } from '../src/publication/assemble.js';
import { parseArtifact } from '../src/publication/reader.js';
import { partsOf } from '../src/publication/writer.js';
import { timePolicy } from '../src/publication/times.js';
import { smallCatalog, withTemp, writeFixture } from './helpers/fixture.js';

let c: Computed;
beforeAll(async () => {
  c = await withTemp(async (dir) => {
    await writeFixture(dir, smallCatalog());
    return compute(await loadAndValidate(dir));
  });
});

describe('body enumeration', () => {
  it.each([[[50]], [[1, 50]], [[2, 3, 50, 100]]])('counts exactly the bodies it yields (page sizes %j)', (sizes) => {
    const paths = [...bodies(c, sizes)].map((b) => b.path);
    expect(countBodies(c, sizes)).toBe(paths.length);
    expect(new Set(paths).size).toBe(paths.length); // no path twice
  });

  it('yields one artifact per lane variant, after that variant’s pages, the largest lane first (by benchmark entries)', () => {
    const paths = [...bodies(c, [50])].map((b) => b.path);
    const artifacts = paths.filter((p) => p.startsWith('artifacts/'));
    // the dated prices' artifact is one for the whole publication, not a lane's
    expect(artifacts.filter((p) => p === 'artifacts/prices.json')).toHaveLength(1);
    const entries = (l: (typeof c.lanes)['all']) => [...l.boards.values()].reduce((n, b) => n + b.rows.length, 0);
    const weights = [c.lanes.all, c.lanes.verified, c.lanes.provisional].map(entries);
    expect(weights).toEqual([...weights].sort((a, b) => b - a)); // the lane of the most benchmark entries first
    expect(artifacts.filter((p) => p !== 'artifacts/prices.json')).toEqual([
      'artifacts/all.public.json',
      'artifacts/all.display.json',
      'artifacts/verified.public.json',
      'artifacts/verified.display.json',
      'artifacts/provisional.public.json',
      'artifacts/provisional.display.json',
    ]);
  });
});

const entry = (path: string, last_modified: string): ManifestEntry => ({
  path,
  sha256: 'a'.repeat(64),
  bytes: 1,
  content_type: 'application/json',
  revision: 'r1',
  last_modified,
});
const previous = {
  revision: 'r1',
  publishedAt: '2025-03-01T00:00:00.000Z',
  entries: new Map([['a.json', entry('a.json', '2025-03-01T00:00:00.500Z')]]),
};

describe('Last-Modified policy', () => {
  it('a first build takes the newest date in the data for everything', () => {
    const t = timePolicy(undefined, '2025-02-01T10:00:00.000Z', null, 'r1');
    expect(t.changedAt).toBe('2025-02-01T10:00:00.000Z');
    expect(t.publishedAt(5)).toBe('2025-02-01T10:00:00.000Z');
  });

  it('a changed body moves to a later whole second than any time the previous release shows', () => {
    const t = timePolicy(undefined, '2025-01-01T00:00:00.000Z', previous, 'r2');
    expect(t.changedAt).toBe('2025-03-01T00:00:01.000Z');
    expect(t.refuseChange('a.json')).toBeNull();
    expect(t.publishedAt(1)).toBe('2025-03-01T00:00:01.000Z');
  });

  it('a rebuild of the same revision that changed nothing keeps the previous publication time', () => {
    const t = timePolicy(undefined, '2025-01-01T00:00:00.000Z', previous, 'r1');
    expect(t.publishedAt(0)).toBe('2025-03-01T00:00:00.000Z');
  });

  it('a forced time in the same second as the previous latest time may publish, but refuses a changed body', () => {
    const t = timePolicy('2025-03-01T00:00:00.900Z', '2025-01-01T00:00:00.000Z', previous, 'r2');
    expect(t.refuseChange('a.json')).toMatch(
      /--published-at 2025-03-01T00:00:00.900Z is not in a later second.*a\.json/,
    );
    expect(t.refuseChange('a.json')).toMatch(/Give --published-at 2025-03-01T00:00:01.000Z or later/);
  });

  it('a forced time before the previous publication is refused outright', () => {
    expect(() => timePolicy('2025-02-01T00:00:00Z', '2025-01-01T00:00:00.000Z', previous, 'r2')).toThrow(
      /before the previous publication's time/,
    );
  });
});

describe('reader', () => {
  it('checks an artifact against its schema and keeps the key order it was written in', () => {
    expect(() => parseArtifact(Buffer.from('{"kind":"other"}'), 'artifacts/a.json')).toThrow(/artifacts\/a.json: /);
    const written = [...bodies(c, [50])].find((b) => b.path === 'artifacts/all.public.json')!;
    const bytes = bodyBytes(partsOf(written), 'r1').toString();
    expect(JSON.stringify(parseArtifact(Buffer.from(bytes), 'a'))).toBe(bytes);
  });
});
