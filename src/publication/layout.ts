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
//   representations.pack                                                             br and gzip representations
//   manifest.json, publication.json, changes.json                                    the release's own files
// where <include> is `base` or the sorted includes joined by `+` (benchmarks+pricing).
import { INCLUDES, type Include, type QueryLane, type Sort } from '../schema/api.js';
import type { ApiRequest, ListRequest } from '../schema/requests.js';
import type { Locale } from '../schema/source.js';
import type { BodyRepresentations } from './files.js';

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
 * Every br and gzip representation of the release in one file, end to end: for each body in ascending order of its
 * identity sha256, its br bytes then its gzip bytes. Where one is follows from the sizes the manifest lists
 * (packedRepresentations). One file, not two per body: creating 60,000 small files cost a full build more than
 * compressing them (ext4 inode allocation), and an incremental build rewrites it in a fraction of a second where it
 * had to link 60,000 files.
 */
export const REPRESENTATIONS_FILE = 'representations.pack';

/** Bytes of a release: a whole file, or a range of one (a representation in REPRESENTATIONS_FILE). */
export interface StoredBytes {
  path: string;
  sha256: string;
  bytes: number;
  /** Where the bytes start in `path`; absent: the whole file. */
  offset?: number;
}

/**
 * Each body's representations and where they are in REPRESENTATIONS_FILE, in pack order. The order is the sorted
 * identity hashes whatever order the record's keys come in, so that writer and readers cannot disagree.
 */
export function* packedRepresentations(
  representations: Readonly<Record<string, BodyRepresentations>>,
): Generator<{ identity: string; br: StoredBytes; gzip: StoredBytes }> {
  let offset = 0;
  for (const identity of Object.keys(representations).sort()) {
    const r = representations[identity]!;
    const br = { path: REPRESENTATIONS_FILE, sha256: r.br.sha256, bytes: r.br.bytes, offset };
    offset += r.br.bytes;
    const gzip = { path: REPRESENTATIONS_FILE, sha256: r.gzip.sha256, bytes: r.gzip.bytes, offset };
    offset += r.gzip.bytes;
    yield { identity, br, gzip };
  }
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
