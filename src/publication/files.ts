// One zod schema per kind of file a release holds, each with its type: the writer produces these and the readers
// (the gateway, the next build) check what they read against them. JSON Schemas under schemas/ follow from here.
//   api/v1/**.json        envelopes: ListResponse, DetailResponse (src/schema/api.ts, the API contract)
//   manifest.json         Manifest: every path with its sha256, size, type, revision and Last-Modified
//   publication.json      PublicationMeta: what the gateway needs besides the manifest
//   changes.json          ChangeList: paths added, changed, removed against the previous release
//   artifacts/*.json      ListArtifact: what the gateway composes non-prebuilt list answers from
import { z } from 'zod';
import {
  Attribution,
  DetailResponse,
  ItemSections,
  LifecycleStatus,
  ListItemCore,
  ListResponse,
  SORTS,
} from '../schema/api.js';
import { Instant, RevisionId, Sha256Hex, Slug } from '../schema/primitives.js';
import { LOCALES } from '../schema/source.js';

export { DetailResponse, ListResponse };

export const ManifestEntry = z.strictObject({
  path: z.string(),
  /** The body's sha256: on a remote, its object's name, so never anything but 64 lowercase hex digits. */
  sha256: Sha256Hex,
  bytes: z.number().int().min(0),
  content_type: z.string(),
  /** Revision and time at which this body last changed (its Last-Modified). */
  revision: RevisionId,
  last_modified: Instant,
  /**
   * A digest of what the body is made from, its revision aside (the records it shows, the list order, the ranks,
   * the nearby models, the code that assembles it): the next build carries an entry whose digest it computes again
   * over, with its file, without making the body. Absent in releases of builds that did not record it.
   */
  inputs: z.string().optional(),
});
export type ManifestEntry = z.infer<typeof ManifestEntry>;

/** One compressed representation of a body, in one of the release's pack files (layout.ts). */
export const EncodedEntry = z.strictObject({ sha256: Sha256Hex, bytes: z.number().int().min(0) });
export type EncodedEntry = z.infer<typeof EncodedEntry>;
export const BodyRepresentations = z.strictObject({
  br: EncodedEntry,
  gzip: EncodedEntry,
  /** Which of the manifest's `packs` holds them (an index into it). Absent in manifests without `packs`. */
  pack: z.number().int().min(0).optional(),
  /** Where the br bytes start in that pack; the gzip bytes follow them. Absent in manifests without `packs`. */
  offset: z.number().int().min(0).optional(),
});
export type BodyRepresentations = z.infer<typeof BodyRepresentations>;
/**
 * A pack file of the release: a name of the release folder (never a path into another), and its size, which a
 * rebuild checks with stat before it links the file instead of writing its representations again.
 */
export const PackFile = z.strictObject({
  path: z.string().regex(/^representations[A-Za-z0-9._-]*\.pack$/),
  bytes: z.number().int().min(0),
});
export type PackFile = z.infer<typeof PackFile>;
/** The levels the representations were made at: a build reuses the previous release's only at the same levels. */
export const CompressionLevelsEntry = z.strictObject({
  brotliQuality: z.number().int().min(0).max(11),
  gzipLevel: z.number().int().min(1).max(9),
});

export const Manifest = z.strictObject({
  schemaVersion: z.string(),
  publicationRevision: RevisionId,
  publishedAt: Instant,
  files: z.array(ManifestEntry),
  /**
   * The files holding the representations' bytes. A rebuild links the previous release's packs it still uses and
   * writes one of its own for the rest, so a release may have several. Absent in releases of builds that wrote one
   * representations.pack, whose offsets follow from the sorted keys of `representations` (layout.ts).
   */
  packs: z.array(PackFile).optional(),
  /**
   * The br and gzip representations of every distinct body the API serves (not the list artifacts), keyed by the
   * identity body's sha256: listed once per body, not per path; each names its pack and offset when `packs` is there.
   * Absent in releases built with --no-compression, whose bodies the gateway serves as identity.
   */
  representations: z.record(Sha256Hex, BodyRepresentations).optional(),
  compression: CompressionLevelsEntry.optional(),
});
export type Manifest = z.infer<typeof Manifest>;

export const ChangeList = z.strictObject({
  publicationRevision: RevisionId,
  previousRevision: RevisionId.nullable(),
  added: z.array(z.string()),
  changed: z.array(z.string()),
  removed: z.array(z.string()),
});
export type ChangeList = z.infer<typeof ChangeList>;

/** publication.json of a release: what the gateway needs besides the manifest. */
export const PublicationMeta = z.strictObject({
  schemaVersion: z.string(),
  publicationRevision: RevisionId,
  publishedAt: Instant,
  /** List page sizes prebuilt for every list variant and sort. */
  pageSizes: z.array(z.number().int().min(1).max(100)).min(1),
  /** Number of models per list variant, keyed by variantKey (`<lane>.<public|display>`). */
  totals: z.record(z.string(), z.number().int().min(0)),
  /** The attribution object every response repeats (SPEC 2.1): the gateway needs it to compose list pages. */
  attribution: Attribution,
  /**
   * SHA-256 of this release's manifest.json: what tells two builds of one revision apart (other page sizes, or a
   * --revision given again over other data), and a manifest changed after its build from its own.
   */
  manifestSha256: Sha256Hex,
});
export type PublicationMeta = z.infer<typeof PublicationMeta>;

const perLocale = <T extends z.ZodType>(t: T) =>
  z.strictObject(Object.fromEntries(LOCALES.map((l) => [l, t])) as Record<(typeof LOCALES)[number], T>);

/** Folded (NFKD, marks removed, lower case) search fields of a model. */
export const SearchFields = z.strictObject({ name: z.string(), slug: Slug, text: perLocale(z.string()) });
export type SearchFields = z.infer<typeof SearchFields>;

/** What the list filters read of a model that its list item does not show. */
export const ListFacets = z.strictObject({
  /** The providers of its offers, sorted (provider=). */
  providers: z.array(z.string()),
  /** Its lifecycle status (status=). */
  status: LifecycleStatus,
  /** The aliases that name it, when it is a dated snapshot (exclude_snapshots=true hides it when one is listed). */
  aliases: z.array(Slug),
});
export type ListFacets = z.infer<typeof ListFacets>;

/**
 * A model as the list artifact carries it: its list item per locale, the item's include sections, its search text,
 * what the filters read.
 */
export const ArtifactModel = z.strictObject({
  item: perLocale(ListItemCore),
  sections: ItemSections,
  search: SearchFields,
  /** Absent in the artifacts of builds that had no offers or lifecycle: such a model passes none of their filters. */
  facets: ListFacets.optional(),
});
export type ArtifactModel = z.infer<typeof ArtifactModel>;

/** artifacts/<variantKey>.json: what the gateway composes non-prebuilt list answers (q, other page sizes) from. */
export const ListArtifact = z.strictObject({
  kind: z.literal('modelpub.list-artifact'),
  publicationRevision: RevisionId,
  schemaVersion: z.string(),
  /**
   * As every page carries it (and publication.json): a composed page's publicationRevision is the artifact's, so
   * everything in the page must come from the artifact, or a change of attribution alone would give pages under the
   * old revision with the new attribution (bytes that no build wrote).
   */
  attribution: Attribution,
  /**
   * The list page sizes this publication prebuilds. Not read by the gateway: it is here so that a change of them
   * changes the artifact, and so its Last-Modified. A page size dropped leaves its pages composed from the artifact,
   * and their Last-Modified must come after every one the prebuilt pages had (If-Modified-Since), as for any body.
   */
  prebuiltPageSizes: z.array(z.number().int().min(1).max(100)),
  orders: z.strictObject(
    Object.fromEntries(SORTS.map((s) => [s, z.array(Slug)])) as Record<(typeof SORTS)[number], z.ZodArray<typeof Slug>>,
  ),
  models: z.record(Slug, ArtifactModel),
});
export type ListArtifact = z.infer<typeof ListArtifact>;
