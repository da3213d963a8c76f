// A publication in the remote layout `modelpub publish` writes (docs/publication.md, "Remote layout"): a static host
// or public bucket over http(s) (a CDN in front, or any web server over the folder a file:// publish wrote), a
// private bucket over s3:// (the SDK is loaded only then), or that folder itself (file://). The pointer names the
// live publication; its id is the revision with its manifest's sha256, so a switch (or a rollback) is a new id.
// Objects are immutable and uploaded before the pointer moves: a publication, once named by the pointer, stays whole
// while a publish is under way, and every read is checked against the hash that names it (read-remote.ts).
import { keptOf, POINTER_KEY, manifestRefOf, publicationId, type RemotePublication } from '../../publication/remote.js';
import { IntegrityError, readRemote } from '../../publish/read-remote.js';
import type { RemoteOptions } from '../../publish/targets/index.js';
import type { Origin } from './types.js';

/**
 * `o`: the s3:// options (--endpoint, --region, path style) and, for a reader on the request path, fewer tries and a
 * shorter timeout than a publish's (a request should fail within the gateway's own 30 s, not wait out six backoffs).
 */
export async function remoteOrigin(url: string, o: RemoteOptions = {}): Promise<Origin> {
  const remote = await readRemote(url, { retryAttempts: 3, timeoutMs: 10_000, ...o });
  const where = remote.description.replace(/\/?$/, '/');
  /** The publications the last pointer read names: what release(id) loads, without reading the pointer again. */
  let named = new Map<string, RemotePublication>();
  const readPointer = async () => {
    const pointer = await remote.pointer();
    if (!pointer)
      throw new Error(
        `${where}${POINTER_KEY} is missing: nothing has been published there (modelpub publish writes it)`,
      );
    named = new Map(keptOf(pointer).map((p) => [publicationId(p), p]));
    return pointer;
  };
  return {
    description: remote.description,
    verifies: true, // objects are read through getVerified

    currentId: async () => publicationId((await readPointer()).live),
    async release(id) {
      // A pointer that moved since currentId() still keeps the publication it named (unless --keep 1): look again.
      if (!named.has(id)) await readPointer();
      const p = named.get(id);
      if (!p) throw new Error(`${remote.description} no longer keeps publication ${id}`);
      const { manifest } = await remote.manifest(manifestRefOf(p));
      const meta = p.publication;
      if (meta.manifestSha256 !== undefined && meta.manifestSha256 !== p.manifest.sha256)
        throw new IntegrityError(
          `${where}${POINTER_KEY}: publication ${id} names manifest ${p.manifest.sha256} but its publication.json ` +
            `names ${meta.manifestSha256}`,
        );
      return { manifest, meta };
    },
    read: (_id, entry) => remote.object(entry.sha256, entry.bytes),
    close: () => remote.close(),
  };
}
