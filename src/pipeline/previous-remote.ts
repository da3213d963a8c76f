// `build --previous URL`: the live publication of a remote (the root `modelpub publish --to` wrote to, or the http(s)
// URL a static host or CDN serves it at) as the release a build continues from. A CI runner starts without the
// previous dist/: with this, unchanged bodies keep their revision and Last-Modified, and the change list and the
// changes feed are against what is live. Nothing is downloaded but the pointer, the manifest and the objects the
// build reads (the semantic snapshot and the changes feed), each checked against its hash.
import { manifestRefOf } from '../publication/remote.js';
import type { PreviousRelease } from '../publication/writer.js';
import { readRemote } from '../publish/read-remote.js';
import type { RemoteOptions } from '../publish/targets/index.js';
import { readPrevious } from './publish.js';

export interface PreviousFrom {
  previous: PreviousRelease | null;
  /** Set when the URL has nothing published (no pointer): the build is a first publication. */
  nothingPublished: boolean;
  close(): Promise<void>;
}

/**
 * The live publication at `url`, or --out's own live release when it is that very publication (same manifest): its
 * files are then hard-linked as in any build over a kept dist/.
 */
export async function readPreviousFrom(url: string, out: string, o: RemoteOptions = {}): Promise<PreviousFrom> {
  const remote = await readRemote(url, o);
  const close = () => remote.close();
  try {
    const pointer = await remote.pointer();
    if (!pointer) return { previous: null, nothingPublished: true, close };
    const local = await readPrevious(out);
    if (local && local.meta.manifestSha256 === pointer.live.manifest.sha256)
      return { previous: local, nothingPublished: false, close };
    const { manifest } = await remote.manifest(manifestRefOf(pointer.live));
    const meta = pointer.live.publication;
    const previous: PreviousRelease = {
      dir: null,
      where: remote.description,
      meta,
      revision: manifest.publicationRevision,
      publishedAt: meta.publishedAt,
      entries: new Map(manifest.files.map((f) => [f.path, f])),
      readBody: (entry) => remote.object(entry.sha256, entry.bytes),
    };
    return { previous, nothingPublished: false, close };
  } catch (e) {
    await close();
    throw e;
  }
}
