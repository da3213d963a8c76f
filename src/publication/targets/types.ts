// Where a publication is published to or read from: a folder (file://), an S3 bucket (s3://), or, for reading only,
// a static host (http(s)://). Keys are the remote layout's (remote.ts), relative to the root.

export interface PutOptions {
  contentType: string;
  cacheControl: string;
}

/**
 * How long a read may take and how slowly its bytes may come: a reader's defaults (RemoteOptions.bounds), overridden
 * per read. Unset fields take DEFAULT_READ_BOUNDS (bounds.ts): 60 s, and 1 KiB/s over each 10 s window.
 */
export interface ReadBounds {
  /** The whole read, retries and waits between them included, fails (ReadTimeoutError) past this many ms. */
  deadlineMs?: number;
  /**
   * A read that receives fewer bytes than this per second, averaged over each rateWindowMs from its start (waiting
   * for the answer included), fails: a host that answers nothing, or trickles, cannot hold a read until its deadline.
   * 0 turns the check off.
   */
  minBytesPerSecond?: number;
  rateWindowMs?: number;
}

/**
 * The bounds of one read, decided where the read is asked for (release.ts for bodies, remote-source.ts for the pointer
 * and manifests) and kept by every target's get().
 */
export interface GetOptions extends ReadBounds {
  /** A stored object larger than this is refused (IntegrityError) without being read in whole. */
  maxBytes?: number;
}

export interface RemoteReader {
  /** The root, for messages: never credentials. */
  readonly description: string;
  /** The bytes stored under `key`, as stored (never decoded); null when there is none. */
  get(key: string, o?: GetOptions): Promise<Buffer | null>;
  close(): Promise<void>;
}

/** A stored object and its version, as the host tells it (an S3 ETag; a folder: the sha256 of the bytes). */
export interface Tagged {
  body: Buffer;
  tag: string;
}

export interface RemoteTarget extends RemoteReader {
  /** Store `body` under `key`, all or nothing: a reader never sees part of it under that name. */
  put(key: string, body: Buffer, o: PutOptions): Promise<void>;
  /** The bytes under `key` with their version; null when there is none. */
  getTagged(key: string): Promise<Tagged | null>;
  /**
   * Store `body` under `key` only if nothing is there (`tag` null: S3's `If-None-Match: *`, a folder's exclusive
   * create) or what is there is still the version `tag` (S3's `If-Match`); false when that does not hold.
   */
  putIf(key: string, body: Buffer, o: PutOptions, tag: string | null): Promise<boolean>;
  /** The size of each key, or null for those that are not there. */
  sizes(keys: string[]): Promise<Map<string, number | null>>;
  /**
   * The sha256 of each key's bytes as stored, where the host tells it without a download (a folder: by reading its
   * disk); null for a key that is not there or not `bytes` long. Absent for hosts that cannot (S3: see publish).
   */
  hashes?(objects: Array<{ key: string; bytes: number }>): Promise<Map<string, string | null>>;
  /** Every key under `prefix`, with its size. */
  list(prefix: string): Promise<Array<{ key: string; bytes: number }>>;
  /** Delete keys; keys that are not there are not an error. */
  delete(keys: string[]): Promise<void>;
  /**
   * Names directly under the root that the remote layout does not use (LAYOUT_ROOT_NAMES), sorted; where a target
   * cannot tell cheaply (a bucket prefix), it has no such method.
   */
  foreignNames?(): Promise<string[]>;
}

/** Hooks a target calls for what the progress output shows. */
export interface TargetEvents {
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
}
