// A small catalog built once per step, one English description changed at each, every release copied aside (a build
// keeps only two in its --out): the releases the publish, race, integrity and origin tests publish and serve.
import { cp, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Manifest } from '../../src/publication/files.js';
import { build } from '../../src/pipeline/build.js';
import { type FixtureSpec, smallCatalog, writeFixture } from './fixture.js';

export interface Built {
  revision: string;
  /** A copy of the release folder. */
  dir: string;
  manifest: Manifest;
  manifestBytes: Buffer;
  /** Every object: distinct bodies and their br and gzip representations. */
  objects: Set<string>;
}

export const withDescription = (spec: FixtureSpec, slug: string, en: string): FixtureSpec => ({
  ...spec,
  models: spec.models!.map((m) => (m.slug === slug ? { ...m, description: { ...(m.description as object), en } } : m)),
});

/** Builds each step in order under `tmp`: [name, the model whose description changes (null: none), its new text]. */
export async function buildReleases<N extends string>(
  tmp: string,
  steps: ReadonlyArray<readonly [N, string | null, string?]>,
): Promise<Record<N, Built>> {
  const data = path.join(tmp, 'data');
  const out = path.join(tmp, 'dist');
  const builds = {} as Record<N, Built>;
  let spec = smallCatalog();
  for (const [name, slug, text] of steps) {
    if (slug) spec = withDescription(spec, slug, text ?? `${slug} is a model, described again for build ${name}.`);
    await writeFixture(data, spec);
    const r = await build({ dataDir: data, outDir: out });
    const dir = path.join(tmp, 'releases', name);
    await cp(r.releaseDir, dir, { recursive: true });
    const manifestBytes = await readFile(path.join(dir, 'manifest.json'));
    const manifest = JSON.parse(manifestBytes.toString()) as Manifest;
    builds[name] = {
      revision: r.revision,
      dir,
      manifest,
      manifestBytes,
      objects: new Set([
        ...manifest.files.map((f) => f.sha256),
        ...Object.values(manifest.representations ?? {}).flatMap((x) => [x.br.sha256, x.gzip.sha256]),
      ]),
    };
  }
  return builds;
}
