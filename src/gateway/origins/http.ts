// A publication on a remote static host (a bucket or CDN prefix holding one release's files, e.g. .../current).
// The id is the publication revision in publication.json with the hash of the manifest it names (two builds of one
// revision can differ: other page sizes, or a --revision given again over other data); bodies are checked against
// the manifest's sha256 by the caller, so a host that switched publications mid-way is detected rather than served
// as a mix.
import type { Origin } from './types.js';

export function httpOrigin(base: string, { timeoutMs = 10_000 } = {}): Origin {
  const root = base.replace(/\/+$/, '');
  const get = async (file: string): Promise<Buffer> => {
    const url = `${root}/${file}`;
    // fetch's own messages are "fetch failed", or "terminated" for a body cut short: neither names the URL.
    const failed = (e: Error & { cause?: Error }) => {
      throw new Error(`origin ${url}: ${e.cause?.message ?? e.message}`, { cause: e });
    };
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) }).catch(failed);
    if (!res.ok) throw new Error(`origin ${url} answered ${res.status}`);
    return Buffer.from(await res.arrayBuffer().catch(failed));
  };
  return {
    description: root,
    async currentId() {
      const meta = JSON.parse((await get('publication.json')).toString('utf8')) as {
        publicationRevision: string;
        manifestSha256?: string;
      };
      return meta.manifestSha256 === undefined
        ? meta.publicationRevision
        : `${meta.publicationRevision}/${meta.manifestSha256}`;
    },
    read: (_id, file) => get(file),
  };
}
