// Where each body lives inside a release (docs/publication.md):
//   api/v1/models/<slug>/<locale>.<lane>.<public|display>.<include>.json             detail
//   api/v1/list/<locale>.<lane>.<public|display>.<include>/<sort>-<size>-<page>.json   list page (no q)
//   api/v1/changes/index.json, api/v1/changes/since/<revision>.json                  changes feed
//   api/v1/metrics/<locale>.json                                                     metrics list
//   api/v1/catalog/<locale>.<lane>.<public|display>.json                             catalog export
//   api/v1/openapi.json                                                              the OpenAPI document
//   api/v1/models/<slug>/prices.json                                                 dated prices (no at)
//   llms.txt                                                                         GET /llms.txt (text)
//   artifacts/<lane>.<public|display>.json                                           list artifact
//   artifacts/prices.json                                                            dated prices, for ?at=
//   representations-<revision>[-<n>].pack, representations.pack                      br and gzip representations
//   manifest.json, publication.json, changes.json                                    the release's own files
// where <include> is `base` or the sorted includes joined by `+` (benchmarks+pricing).
import { INCLUDES, type Include, type QueryLane, type Sort } from '../schema/api.js';
import type { ApiRequest, ListRequest } from '../schema/requests.js';
import type { Locale } from '../schema/source.js';
import type { BodyRepresentations, PackFile } from './files.js';

export const MANIFEST_FILE = 'manifest.json';
export const META_FILE = 'publication.json';
export const CHANGES_FILE = 'changes.json';

/** A lane with or without display-only overrides: the unit the build renders and the gateway composes from. */
export interface LaneVariant {
  lane: QueryLane;
  displayOnly: boolean;
}
export interface BodyVariant extends LaneVariant {
  locale: Locale;
  include: readonly Include[]; // sorted, unique
}

/** `<lane>.<public|display>`: names a lane variant in artifact paths and in publication.json's totals. */
export const laneVariantKey = (v: LaneVariant): string => `${v.lane}.${v.displayOnly ? 'display' : 'public'}`;
export const includeKey = (include: readonly Include[]): string => (include.length ? include.join('+') : 'base');
const bodyVariantKey = (v: BodyVariant): string => `${v.locale}.${laneVariantKey(v)}.${includeKey(v.include)}`;

/** Every canonical include subset, in a stable order. */
export const INCLUDE_SUBSETS: Include[][] = Array.from({ length: 1 << INCLUDES.length }, (_, mask) =>
  INCLUDES.filter((_, i) => mask & (1 << i)),
);

export const detailFile = (v: BodyVariant & { slug: string }): string =>
  `api/v1/models/${v.slug}/${bodyVariantKey(v)}.json`;
export const listFile = (v: BodyVariant & { sort: Sort; page: number; pageSize: number }): string =>
  `api/v1/list/${bodyVariantKey(v)}/${v.sort}-${v.pageSize}-${v.page}.json`;
export const artifactFile = (v: LaneVariant): string => `artifacts/${laneVariantKey(v)}.json`;

/** The number of pages a list of `total` items has at `pageSize`: an empty list still has its one (empty) page. */
export const pageCount = (total: number, pageSize: number): number => Math.max(1, Math.ceil(total / pageSize));

/** The prebuilt answer of GET /api/v1/changes (since: null) or ?since=<revision>. */
export const changesFile = (since: string | null): string =>
  since === null ? 'api/v1/changes/index.json' : `api/v1/changes/since/${since}.json`;
export const metricsFile = (v: { locale: Locale }): string => `api/v1/metrics/${v.locale}.json`;
export const catalogFile = (v: LaneVariant & { locale: Locale }): string =>
  `api/v1/catalog/${v.locale}.${laneVariantKey(v)}.json`;
export const OPENAPI_FILE = 'api/v1/openapi.json';
/** A model's dated prices, every row: GET /api/v1/models/{slug}/prices. */
export const pricesFile = (slug: string): string => `api/v1/models/${slug}/prices.json`;
/** Every model's dated prices and headline offer: what the gateway picks a day's rows from (?at=). */
export const PRICES_ARTIFACT = 'artifacts/prices.json';
export const LLMS_FILE = 'llms.txt';

/**
 * The one pack file of releases whose manifest has no `packs`: for each body in ascending order of its identity
 * sha256, its br bytes then its gzip bytes, where each is following from the sizes listed before it. Packs, not two
 * files per body: creating 60,000 small files cost a full build more than compressing them (ext4 inode allocation).
 */
export const REPRESENTATIONS_FILE = 'representations.pack';

/**
 * The pack a build writes: the representations it made (and those it copied out of packs it compacted), in ascending
 * order of identity sha256, each br then gzip. The other packs of its release are hard links to the previous release's,
 * and a linked pack keeps its name, so this one must differ from each of them: the revision names it (a linked pack
 * was written by an earlier revision), and a counter follows when a build of the same revision left one of that name
 * (a rebuild with --revision given again). Never the name of a linked pack: writing it would write into the previous
 * release's file.
 */
export function newPackName(revision: string, taken: ReadonlySet<string>): string {
  let name = `representations-${revision}.pack`;
  for (let n = 2; taken.has(name); n++) name = `representations-${revision}-${n}.pack`;
  return name;
}

/** Bytes of a release: a whole file, or a range of one (a representation in a pack). */
export interface StoredBytes {
  path: string;
  sha256: string;
  bytes: number;
  /** Where the bytes start in `path`; absent: the whole file. */
  offset?: number;
}

/** Where a body's representations are: their pack (an index into the pack list), and each one's place in it. */
export interface PlacedRepresentations {
  pack: number;
  br: StoredBytes & { offset: number };
  gzip: StoredBytes & { offset: number };
}

/**
 * Where a manifest's representations are, for both forms of manifest: the one place that says it. `packs` is the
 * manifest's list; without it, the one REPRESENTATIONS_FILE, whose offsets follow from the sizes, so place() must then
 * be called in ascending order of identity sha256 (packFiles() gives its size once every body is placed). An entry
 * naming a pack the list does not have, or lacking its place when there is a list (or having one when there is none),
 * throws an error naming it.
 */
export function representationPlacer(packs: readonly PackFile[] | null | undefined) {
  let implied = 0;
  return {
    place(identity: string, r: BodyRepresentations): PlacedRepresentations {
      let pack = 0;
      let offset = implied;
      if (packs) {
        if (r.pack === undefined || r.offset === undefined)
          throw new Error(`representations.${identity}: no pack or offset, in a manifest that lists its packs`);
        if (r.pack >= packs.length)
          throw new Error(`representations.${identity}.pack: ${r.pack}, but the manifest lists ${packs.length} packs`);
        [pack, offset] = [r.pack, r.offset];
        if (offset + r.br.bytes + r.gzip.bytes > packs[pack]!.bytes)
          throw new Error(`representations.${identity}.offset: ${offset} runs past the end of ${packs[pack]!.path}`);
      } else {
        if (r.pack !== undefined || r.offset !== undefined)
          throw new Error(`representations.${identity}: a pack and offset, in a manifest that lists no packs`);
        implied += r.br.bytes + r.gzip.bytes;
      }
      const path = packs ? packs[pack]!.path : REPRESENTATIONS_FILE;
      return {
        pack,
        br: { path, sha256: r.br.sha256, bytes: r.br.bytes, offset },
        gzip: { path, sha256: r.gzip.sha256, bytes: r.gzip.bytes, offset: offset + r.br.bytes },
      };
    },
    /** The pack files: the manifest's list, or the one REPRESENTATIONS_FILE as long as the bodies placed so far. */
    packFiles(): PackFile[] {
      return packs ? [...packs] : [{ path: REPRESENTATIONS_FILE, bytes: implied }];
    },
  };
}

/** Each body's representations and where they are, in ascending order of identity sha256 (whatever the record's). */
export function* packedRepresentations(
  representations: Readonly<Record<string, BodyRepresentations>>,
  packs: readonly PackFile[] | null | undefined,
): Generator<{ identity: string } & PlacedRepresentations> {
  const placer = representationPlacer(packs);
  for (const identity of Object.keys(representations).sort())
    yield { identity, ...placer.place(identity, representations[identity]!) };
}

/** List artifacts are read by the gateway, never sent: they get no representations. */
export const isArtifactFile = (p: string): boolean => p.startsWith('artifacts/');

/**
 * The prebuilt file that answers a canonical request, or null when it must be composed
 * (a free-text query, a filter, a page size that was not prebuilt, or a page past the last one).
 */
export function fileFor(
  r: ApiRequest,
  prebuilt: { pageSizes: readonly number[]; pages: (r: ListRequest) => number },
): string | null {
  if (r.kind === 'detail') return detailFile(r);
  if (r.kind === 'metrics') return metricsFile(r);
  if (r.kind === 'catalog') return catalogFile(r);
  if (r.kind === 'changes') return changesFile(r.since);
  if (r.kind === 'prices') return r.at === null ? pricesFile(r.slug) : null;
  if (r.kind === 'prices-all') return null;
  if (r.q !== null || r.filter !== null || !prebuilt.pageSizes.includes(r.pageSize) || r.page > prebuilt.pages(r))
    return null;
  return listFile(r);
}
