import type { StoredBytes } from '../../publication/layout.js';
import type { ReleaseFiles } from '../../publication/reader.js';

/**
 * Where the gateway reads publications from: a local folder a build wrote, or a remote in the layout `modelpub
 * publish` writes (docs/publication.md, "Remote layout"). Bodies are asked for by manifest entry only.
 */
export interface Origin {
  readonly description: string;
  /** read() checks every body against its sha256 itself (a remote); else the publication checks what it reads. */
  readonly verifies: boolean;
  /** An id of the live publication, cheap to poll: a new id means a new publication was switched in. */
  currentId(): Promise<string>;
  /** The manifest and publication.json of publication `id`, checked against their schemas. */
  release(id: string): Promise<ReleaseFiles>;
  /**
   * The bytes of one body or representation of publication `id`'s manifest; a remote origin reads the object its
   * sha256 names and checks it.
   */
  read(id: string, stored: StoredBytes): Promise<Buffer>;
  close(): Promise<void>;
}
