// Where each body lives inside a release (docs/publication.md):
//   api/v1/models/<slug>/<locale>.<lane>.<public|display>.<include>.json             detail
//   api/v1/list/<locale>.<lane>.<public|display>.<include>/<sort>-<size>-<page>.json   list page (no q)
//   api/v1/changes/index.json, api/v1/changes/since/<revision>.json                  changes feed
//   api/v1/metrics/<locale>.json                                                     metrics list
//   api/v1/catalog/<locale>.<lane>.<public|display>.json                             catalog export
//   api/v1/openapi.json                                                              the OpenAPI document
//   artifacts/<lane>.<public|display>.json                                           list artifact
//   encoded/<hh>/<sha256>.br, encoded/<hh>/<sha256>.gz   (hh: its first two hex digits)  compressed representations
//   manifest.json, publication.json, changes.json                                    the release's own files
// where <include> is `base` or the sorted includes joined by `+` (benchmarks+pricing).
import { INCLUDES, type Include, type QueryLane, type Sort } from '../schema/api.js';
import type { Locale } from '../schema/source.js';

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

/**
 * The br or gzip representation of the body whose identity bytes have this sha256 (one per distinct body), in a
 * folder per first two hex digits: 60,000 files in one folder made each file creation several times slower on ext4.
 */
export const encodedFile = (identitySha256: string, coding: 'br' | 'gzip'): string =>
  `encoded/${identitySha256.slice(0, 2)}/${identitySha256}.${coding === 'br' ? 'br' : 'gz'}`;
/** List artifacts are read by the gateway, never sent: they get no representations. */
export const isArtifactFile = (p: string): boolean => p.startsWith('artifacts/');
