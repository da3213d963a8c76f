// One loaded publication: its manifest (path -> sha256, size, revision, Last-Modified), its metadata, and access to
// bodies through a bounded cache shared by all publications (keyed by sha256, so an unchanged body stays cached
// across a switch). A request takes one Publication object at its start and uses only it: never a mix of two.
// What composing list answers keeps (artifacts, pages, searches) is the composer's (compose.ts), one per publication.
import { validateHeaderValue } from 'node:http';
import type { ManifestEntry, PublicationMeta } from '../publication/files.js';
import { fileFor, laneVariantKey, pageCount } from '../publication/layout.js';
import type { ApiRequest } from '../schema/requests.js';
import type { BodyCache } from './caches.js';
import { type EncodedPair, ManifestIndex, RepresentationIndex } from './manifest-index.js';
import type { Release, Source } from '../publication/source.js';
import { codedEtag, etagOf, httpDate } from './validators.js';

/** What the gateway needs to answer with a file, besides its bytes. */
export interface FileInfo {
  entry: ManifestEntry;
  /** The identity body's ETag; etagBr and etagGzip those of its br and gzip representations (validators.ts). */
  etag: string;
  etagBr: string;
  etagGzip: string;
  lastModified: string; // HTTP date
  /**
   * Set where Last-Modified is a floor, not when these bytes last changed (an answer with q dated by its rules): two
   * different answers can carry it, so If-Modified-Since alone cannot tell a client it holds these bytes.
   */
  lastModifiedIsFloor?: true;
  /** Its stored representations; null for a body the publication has none of (built before them, or composed). */
  encoded: EncodedPair | null;
}
export class Publication {
  private infos = new Map<string, FileInfo>();
  private prebuiltFiles = new WeakMap<ApiRequest, FileInfo | null>();

  private constructor(
    readonly id: string,
    readonly meta: PublicationMeta,
    readonly entries: ManifestIndex,
    private readonly representations: RepresentationIndex | null,
    private readonly release: Release,
    private readonly cache: BodyCache,
  ) {}

  static async load(source: Source, id: string, cache: BodyCache): Promise<Publication> {
    const release = await source.release(id);
    const { manifest, meta } = release;
    // Both go out as response headers (the revision's schema allows only safe characters; the schema version is free
    // text): a value node:http would refuse must stop the publication here, not a response.
    for (const [name, value] of [
      ['X-Publication-Revision', meta.publicationRevision],
      ['X-Schema-Version', meta.schemaVersion],
    ] as const) {
      try {
        validateHeaderValue(name, value);
      } catch {
        throw new Error(
          `publication ${id}: publication.json's value for ${name}, ${JSON.stringify(value)}, cannot be sent as an HTTP header`,
        );
      }
    }
    // Indexed a slice at a time: the publication being served goes on answering while the next one loads.
    const entries = await ManifestIndex.of(manifest.files);
    const representations = await RepresentationIndex.of(manifest);
    return new Publication(id, meta, entries, representations, release, cache);
  }

  get revision(): string {
    return this.meta.publicationRevision;
  }

  /** A file's validators, or null when the manifest has no such path. Made once per path. */
  info(path: string): FileInfo | null {
    let info = this.infos.get(path);
    if (info === undefined) {
      const entry = this.entries.get(path);
      if (!entry) return null;
      const etag = etagOf(entry.sha256);
      info = {
        entry,
        etag,
        etagBr: codedEtag(etag, 'br'),
        etagGzip: codedEtag(etag, 'gzip'),
        lastModified: httpDate(entry.last_modified),
        encoded: this.representations?.get(entry.sha256) ?? null,
      };
      this.infos.set(path, info);
    }
    return info;
  }

  /**
   * The prebuilt file that answers a request, or null when it is composed (lists) or unknown (details). Remembered
   * per request object: the gateway's parsed URLs are kept, so a URL asked again costs one WeakMap lookup.
   */
  prebuilt(request: ApiRequest): FileInfo | null {
    let file = this.prebuiltFiles.get(request);
    if (file === undefined) {
      const path = fileFor(request, {
        pageSizes: this.meta.pageSizes,
        pages: (r) => pageCount(this.meta.totals[laneVariantKey(r)] ?? 0, r.pageSize),
      });
      file = path === null ? null : this.info(path);
      this.prebuiltFiles.set(request, file);
    }
    return file;
  }

  /** The body when it is in memory (the request path then stays synchronous), else undefined. */
  cachedBody(info: FileInfo): Buffer | undefined {
    return this.cache.get(info.entry.sha256);
  }

  /**
   * The body, read when it is not in memory. Bytes enter the cache only as the release checked them against the
   * manifest: a damaged file is answered 503, never served under the strong ETag of the intact bytes.
   */
  body(info: FileInfo): Promise<Buffer> {
    return this.cache.load(info.entry.sha256, () => this.release.read(info.entry));
  }

  /** A stored representation when it is in memory, else undefined. The body cache keys it by its own sha256. */
  cachedEncoded(info: FileInfo, coding: 'br' | 'gzip'): Buffer | undefined {
    return this.cache.get(info.encoded![coding].sha256);
  }

  /** A stored representation, read and checked when it is not in memory: a range of the pack, or an object. */
  encodedBody(info: FileInfo, coding: 'br' | 'gzip'): Promise<Buffer> {
    const rep = info.encoded![coding];
    return this.cache.load(rep.sha256, () => this.release.read(rep));
  }

  /** A file's bytes, read and checked (release.ts), not cached: what is parsed once and kept (list artifacts). */
  read(entry: ManifestEntry): Promise<Buffer> {
    return this.release.read(entry);
  }
}
