// The live publication a build continues from: --out's live release, or with `build --previous URL` the live
// publication of a remote (the root `modelpub publish --to` wrote to, or the http(s) URL a static host or CDN serves
// it at). A CI runner starts without the previous dist/: with --previous, unchanged bodies keep their revision and
// Last-Modified, and the change list and the changes feed are against what is live. Nothing is downloaded but the
// pointer, the manifest and the bodies the build reads (the semantic snapshot and the changes feed), each checked.
import { UsageError } from '../errors.js';
import { folderSource } from '../publication/folder.js';
import { type IndexedRelease, openSource } from '../publication/source.js';
import type { RemoteOptions } from '../publication/targets/index.js';

export interface Previous {
  release: IndexedRelease | null;
  /** Set when --previous has nothing published (no pointer): the build is a first publication. */
  nothingPublished: boolean;
  close(): Promise<void>;
}

/** --out's live release; null before its first build. */
async function liveOfOut(out: string): Promise<IndexedRelease | null> {
  try {
    return await folderSource(out, { out: true }).liveIndexed();
  } catch (e) {
    if (e instanceof UsageError) throw e;
    // A release this build cannot read (damaged, or changed after its build) cannot be continued.
    throw new UsageError(
      `the live release of --out ${out} cannot be read: ${(e as Error).message}. Build into a new --out.`,
    );
  }
}

/** The revision of the live release of a build's --out; null when it has none. */
export async function liveRevision(out: string): Promise<string | null> {
  return (await liveOfOut(out))?.meta.publicationRevision ?? null;
}

/**
 * The previous publication: `url`'s live one when given, else --out's. --out's own live release is taken instead of
 * a remote one that is that very publication (same manifest): its files are then hard-linked as in any build over a
 * kept dist/.
 */
export async function openPrevious(out: string, url?: string, o: RemoteOptions = {}): Promise<Previous> {
  if (url === undefined) return { release: await liveOfOut(out), nothingPublished: false, close: async () => {} };
  const source = await openSource(url, o);
  const close = () => source.close();
  try {
    const remote = await source.liveIndexed();
    if (!remote) return { release: null, nothingPublished: true, close };
    const local = await liveOfOut(out);
    const same = local && local.manifestSha256 === remote.manifestSha256;
    return { release: same ? local : remote, nothingPublished: false, close };
  } catch (e) {
    await close();
    throw e;
  }
}
