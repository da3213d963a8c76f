// One loaded publication: its manifest (path -> sha256, size, revision, Last-Modified), its metadata, and access to
// bodies through a bounded cache shared by all publications (keyed by sha256, so an unchanged body stays cached
// across a switch). A request takes one Publication object at its start and uses only it: never a mix of two.
import { createHash } from 'node:crypto';
import { Manifest, PublicationMeta, type ManifestEntry, type QueryLane } from '../schema/api.js';
import type { ListArtifact } from './compose.js';
import type { Origin } from './origins/types.js';

export interface ServedFile {
  entry: ManifestEntry;
  etag: string;
  lastModified: string; // HTTP date
  body: Buffer;
}

/** Bodies by sha256, least recently used evicted past a byte budget. */
export class BodyCache {
  private map = new Map<string, Buffer>();
  private bytes = 0;
  constructor(readonly maxBytes: number) {}
  get(sha: string): Buffer | undefined {
    const b = this.map.get(sha);
    if (b) { this.map.delete(sha); this.map.set(sha, b); }
    return b;
  }
  set(sha: string, body: Buffer): void {
    if (body.length > this.maxBytes || this.map.has(sha)) return;
    this.map.set(sha, body);
    this.bytes += body.length;
    for (const [k, v] of this.map) {
      if (this.bytes <= this.maxBytes) break;
      this.map.delete(k);
      this.bytes -= v.length;
    }
  }
  get size(): number { return this.bytes; }
}

export const etagOf = (sha256: string) => `"${sha256.slice(0, 32)}"`;
export const httpDate = (iso: string) => new Date(iso).toUTCString();

export class Publication {
  private headers = new Map<string, { etag: string; lastModified: string }>();
  private artifacts = new Map<string, Promise<ListArtifact>>();
  /** Composed answers (q, other page sizes), by canonical request: bounded, dropped with the publication. */
  readonly composed = new Map<string, ServedFile>();

  private constructor(
    readonly id: string,
    readonly meta: PublicationMeta,
    readonly entries: Map<string, ManifestEntry>,
    private readonly origin: Origin,
    private readonly cache: BodyCache,
    private readonly verify: boolean,
  ) {}

  static async load(origin: Origin, id: string, cache: BodyCache, { verify = false } = {}): Promise<Publication> {
    const [manifestBytes, metaBytes] = await Promise.all([origin.read(id, 'manifest.json'), origin.read(id, 'publication.json')]);
    const manifest = Manifest.parse(JSON.parse(manifestBytes.toString('utf8')));
    const meta = PublicationMeta.parse(JSON.parse(metaBytes.toString('utf8')));
    if (meta.publicationRevision !== manifest.publicationRevision) throw new Error(`publication ${id}: manifest and publication.json disagree on the revision`);
    return new Publication(id, meta, new Map(manifest.files.map((f) => [f.path, f])), origin, cache, verify);
  }

  get revision(): string { return this.meta.publicationRevision; }

  /** A file of this publication with its validators, or null when the manifest has no such path. */
  async file(path: string): Promise<ServedFile | null> {
    const entry = this.entries.get(path);
    if (!entry) return null;
    let h = this.headers.get(path);
    if (!h) this.headers.set(path, (h = { etag: etagOf(entry.sha256), lastModified: httpDate(entry.last_modified) }));
    let body = this.cache.get(entry.sha256);
    if (!body) {
      body = await this.origin.read(this.id, path);
      if (this.verify && createHash('sha256').update(body).digest('hex') !== entry.sha256) {
        throw new Error(`origin returned other bytes for ${path} than publication ${this.revision} lists: it has switched publications`);
      }
      this.cache.set(entry.sha256, body);
    }
    return { entry, etag: h.etag, lastModified: h.lastModified, body };
  }

  /** The parsed list artifact of a lane and display variant (loaded once per publication). */
  artifact(lane: QueryLane, displayOnly: boolean): Promise<ListArtifact> {
    const path = `artifacts/${lane}.${displayOnly ? 'display' : 'public'}.json`;
    let p = this.artifacts.get(path);
    if (!p) {
      p = (async () => {
        const entry = this.entries.get(path);
        if (!entry) throw new Error(`publication ${this.revision} has no ${path}`);
        const raw = await this.origin.read(this.id, path);
        return { ...(JSON.parse(raw.toString('utf8')) as Omit<ListArtifact, 'entry' | 'items'>), entry, items: new Map() };
      })();
      p.catch(() => this.artifacts.delete(path));
      this.artifacts.set(path, p);
    }
    return p;
  }
}
