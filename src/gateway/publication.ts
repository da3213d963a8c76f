// One loaded publication: its manifest (path -> sha256, size, revision, Last-Modified), its metadata, and access to
// bodies through a bounded cache shared by all publications (keyed by sha256, so an unchanged body stays cached
// across a switch). A request takes one Publication object at its start and uses only it: never a mix of two.
import { createHash } from 'node:crypto';
import { validateHeaderValue } from 'node:http';
import type { ManifestEntry, PublicationMeta } from '../publication/files.js';
import { artifactFile, fileFor, laneVariantKey, pageCount, type LaneVariant } from '../publication/layout.js';
import type { ApiRequest } from '../schema/requests.js';
import { parseArtifact } from '../publication/reader.js';
import { loadedArtifact, type LoadedArtifact } from './artifact.js';
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
/** A composed list page: its envelope and the items' shared bytes, sent one after the other (entry.bytes long). */
export interface ComposedFile extends FileInfo {
  body: readonly Buffer[];
}

/** One cached value; `hit` gives it a second chance at eviction. */
interface CacheSlot<V> {
  value: V;
  readonly bytes: number;
  hit: boolean;
}

/**
 * Values by key within a byte budget. Eviction is second-chance (CLOCK): a hit only sets a flag, so the request
 * path never reorders the map; eviction walks from the oldest insertion and re-queues entries hit since last time.
 */
export class ByteCache<V> {
  private map = new Map<string, CacheSlot<V>>();
  private bytes = 0;
  /** sizeOf: what an entry costs, key included (keys can be client-chosen, e.g. a search query). */
  constructor(
    readonly maxBytes: number,
    private readonly sizeOf: (v: V, key: string) => number,
  ) {}
  get(key: string): V | undefined {
    const slot = this.map.get(key);
    if (slot === undefined) return undefined;
    slot.hit = true;
    return slot.value;
  }
  set(key: string, value: V): void {
    const bytes = this.sizeOf(value, key);
    if (bytes > this.maxBytes || this.map.has(key)) return;
    this.map.set(key, { value, bytes, hit: false });
    this.bytes += bytes;
    while (this.bytes > this.maxBytes) {
      const [k, e] = this.map.entries().next().value!;
      this.map.delete(k);
      // The entry being added is never the one evicted (when every older entry was hit, the walk clears their flags
      // and comes round to it before the oldest of them); the loop ends since it fits the budget on its own.
      if (e.hit || k === key) {
        e.hit = false;
        this.map.set(k, e);
      } else {
        this.bytes -= e.bytes;
      }
    }
  }
  get size(): number {
    return this.bytes;
  }
}

/**
 * Which keys were offered recently, as fingerprints in a fixed table (no allocation per key, nothing for the
 * collector to trace). A cache that admits a value only on its key's second offer lets one-off values die young:
 * cached at once, a page asked for once is promoted to the old generation and evicted later, and under a stream of
 * one-off composed pages that garbage made V8's heap grow to several times the live data.
 * A collision only admits a value early; an overwritten slot only delays one.
 */
export class Doorkeeper {
  private readonly seen: Uint32Array;
  constructor(slotsLog2 = 18) {
    this.seen = new Uint32Array(1 << slotsLog2);
  }
  /** True when `key` (or a key with the same fingerprint) was offered before; remembers it either way. */
  offer(key: string): boolean {
    let h = 0x811c9dc5; // FNV-1a over UTF-16 code units
    for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
    const slot = h & (this.seen.length - 1);
    const print = (Math.imul(h, 0x9e3779b1) | 1) >>> 0; // never 0, the empty slot; unsigned, as the table reads back
    if (this.seen[slot] === print) return true;
    this.seen[slot] = print;
    return false;
  }
}

/**
 * Bodies by sha256, shared by every publication a gateway loads (an unchanged body stays cached across a switch).
 * Requests that miss on the same body share one read: at start-up, or when the publication outgrows --cache-mb, a
 * popular body is asked for by many connections before its first read is back.
 */
export class BodyCache extends ByteCache<Buffer> {
  private readonly reading = new Map<string, Promise<Buffer>>();
  constructor(maxBytes: number) {
    super(maxBytes, (b) => b.length);
  }

  /**
   * The cached body, or the read in flight for it, or a new read by `read` (cached once it succeeds). Many paths, in
   * one publication or several, have the same bytes: a read in flight may be another path's, or an older
   * publication's, and fail for its own reasons (a host that switched that path, a pruned release). A request that
   * joined such a read and saw it fail reads for itself.
   */
  load(sha256: string, read: () => Promise<Buffer>): Promise<Buffer> {
    const cached = this.get(sha256);
    if (cached !== undefined) return Promise.resolve(cached);
    const shared = this.reading.get(sha256);
    if (shared !== undefined) return shared.catch(() => this.readInto(sha256, read));
    const own = this.readInto(sha256, read).finally(() => this.reading.delete(sha256));
    this.reading.set(sha256, own);
    return own;
  }

  private async readInto(sha256: string, read: () => Promise<Buffer>): Promise<Buffer> {
    const body = await read();
    this.set(sha256, body);
    return body;
  }
}

const COMPOSED_CACHE_BYTES = 16 << 20;
/**
 * What a composed page holds on its own: its chunk list and its envelope, one buffer of its own that the first and
 * last chunks view (the items are shared with every other page and with the artifact).
 */
const composedCost = (f: ComposedFile) => 8 * f.body.length + f.body[0]!.buffer.byteLength + 64;
const SEARCH_CACHE_BYTES = 4 << 20;

export class Publication {
  private infos = new Map<string, FileInfo>();
  private prebuiltFiles = new WeakMap<ApiRequest, FileInfo | null>();
  private artifacts = new Map<string, Promise<LoadedArtifact>>();
  /** Composed answers (q, other page sizes), by canonical request: within a byte budget, dropped with the publication. */
  readonly composed = new ByteCache<ComposedFile>(
    COMPOSED_CACHE_BYTES,
    (f, key) => composedCost(f) + 2 * key.length + 512,
  );
  /** Composed answers are cached from their second request on (see Doorkeeper). */
  readonly composedSeen = new Doorkeeper();
  /** Composed answers compressed (br or gzip), by coding and canonical request, from their second request on. */
  readonly composedEncoded = new ByteCache<Buffer>(COMPOSED_CACHE_BYTES, (b, key) => b.length + 2 * key.length + 128);
  readonly composedEncodedSeen = new Doorkeeper(16);
  /** Search results (ordered slugs) by lane, variant, locale, sort and query: a query's pages and includes share one. */
  readonly searches = new ByteCache<string[]>(
    SEARCH_CACHE_BYTES,
    (order, key) => 200 + 2 * key.length + 8 * order.length,
  );

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

  /** The parsed list artifact of a lane and display variant (loaded once per publication). */
  artifact(variant: LaneVariant): Promise<LoadedArtifact> {
    const path = artifactFile(variant);
    let p = this.artifacts.get(path);
    if (!p) {
      p = (async () => {
        const entry = this.entries.get(path);
        if (!entry) throw new Error(`publication ${this.revision} has no ${path}`);
        const raw = await this.origin.read(this.id, entry);
        return loadedArtifact(
          parseArtifact(raw, `publication ${this.revision}: ${path}`),
          entry,
          this.meta.attribution,
        );
      })();
      p.catch(() => this.artifacts.delete(path));
      this.artifacts.set(path, p);
    }
    return p;
  }
}
