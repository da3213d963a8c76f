// Bounded caches of the gateway: values within a byte budget (ByteCache), the bodies of every publication by sha256
// (BodyCache), and a doorkeeper that admits a value on its key's second offer. The publication and the composer each
// own theirs.
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
