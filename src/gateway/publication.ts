// One loaded publication: its manifest (path -> sha256, size, revision, Last-Modified), its metadata, and access to
// bodies through a bounded cache shared by all publications (keyed by sha256, so an unchanged body stays cached
// across a switch). A request takes one Publication object at its start and uses only it: never a mix of two.
// What composing list answers keeps (artifacts, pages, searches) is the composer's (compose.ts), one per publication.
import { createHash } from 'node:crypto';
import { validateHeaderValue } from 'node:http';
import type { ManifestEntry, PublicationMeta } from '../publication/files.js';
import { fileFor, laneVariantKey, pageCount } from '../publication/layout.js';
import type { ApiRequest } from '../schema/requests.js';
import type { BodyCache } from './caches.js';
import { type EncodedPair, ManifestIndex, RepresentationIndex } from './manifest-index.js';
import { codedEtag, etagOf, httpDate } from './validators.js';
import type { Origin } from './origins/types.js';

/** What the gateway needs to answer with a file, besides its bytes. */
export interface FileInfo {
  entry: ManifestEntry;
  /** The identity body's ETag; etagBr and etagGzip those of its br and gzip representations (validators.ts). */
  etag: string;
  etagBr: string;
  etagGzip: string;
  lastModified: string; // HTTP date
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
    private readonly origin: Origin,
    private readonly cache: BodyCache,
  ) {}

  static async load(origin: Origin, id: string, cache: BodyCache): Promise<Publication> {
    const { manifest, meta } = await origin.release(id);
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
    const entries = new ManifestIndex(manifest.files);
    const representations = manifest.representations ? new RepresentationIndex(manifest.representations) : null;
    return new Publication(id, meta, entries, representations, origin, cache);
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

  /** The body, read from the origin (a remote one checks it against the manifest) when it is not in memory. */
  body(info: FileInfo): Promise<Buffer> {
    return this.cache.load(info.entry.sha256, async () => {
      const body = await this.origin.read(this.id, info.entry);
      this.checkBytes(body, info.entry);
      return body;
    });
  }

  /** A stored representation when it is in memory, else undefined. The body cache keys it by its own sha256. */
  cachedEncoded(info: FileInfo, coding: 'br' | 'gzip'): Buffer | undefined {
    return this.cache.get(info.encoded![coding].sha256);
  }

  /** A stored representation, read and checked against the manifest's sha256 of it when it is not in memory. */
  encodedBody(info: FileInfo, coding: 'br' | 'gzip'): Promise<Buffer> {
    const rep = info.encoded![coding];
    return this.cache.load(rep.sha256, async () => {
      // A folder origin reads its range of the pack, a remote one the object its sha256 names.
      const bytes = await this.origin.read(this.id, rep);
      this.checkBytes(bytes, { path: `${rep.path} at ${rep.offset}`, sha256: rep.sha256 });
      return bytes;
    });
  }

  /**
   * Bytes enter the cache only if they are the manifest's: a damaged file (truncated on disk) is answered 503, never
   * served under the strong ETag of the intact bytes. A remote origin checks its objects as it reads them (verifies),
   * so they are not hashed twice; a local folder's bytes are checked here.
   */
  private checkBytes(bytes: Buffer, entry: Pick<ManifestEntry, 'path' | 'sha256'>): void {
    if (this.origin.verifies) return; // hashed once, where it was read
    if (createHash('sha256').update(bytes).digest('hex') !== entry.sha256) {
      throw new Error(
        `${entry.path} of publication ${this.revision} does not hold the bytes its manifest lists (damaged?): not served`,
      );
    }
  }

  /** A file's bytes, read from the origin and checked, not cached: what is parsed once and kept (list artifacts). */
  async read(entry: ManifestEntry): Promise<Buffer> {
    const bytes = await this.origin.read(this.id, entry);
    this.checkBytes(bytes, entry);
    return bytes;
  }
}
