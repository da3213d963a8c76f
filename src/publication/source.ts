// `openSource(where)`: the one way to open a publication for reading, wherever it is. `where` is a build's --out
// folder, one release folder, or a URL: file:// (the root a publish wrote to, or either folder), http(s):// (a static
// host, public bucket or CDN serving that root) or s3://. Every consumer (serve, build's previous, publish --from,
// diff --against) reads through the Source and Release this returns (release.ts), so every check is made once.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CURRENT, folderSource } from './folder.js';
import { META_FILE } from './layout.js';
import type { Source } from './release.js';
import { remoteSource } from './remote-source.js';
import type { RemoteOptions } from './targets/index.js';

export type { IndexedRelease, Release, Source } from './release.js';

export interface SourceOptions extends RemoteOptions {
  /** A folder is a build's --out: its `current` must be the link a build makes (folder.ts, currentRelease). */
  out?: boolean;
}

const isUrl = (where: string) => /^[a-z][a-z0-9+.-]*:\/\//i.test(where);
const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  );

export async function openSource(where: string, o: SourceOptions = {}): Promise<Source> {
  if (!isUrl(where)) return folderSource(where, { out: o.out });
  if (where.startsWith('file:')) {
    // A file:// URL of a folder a build wrote (its --out, or a release) rather than the root a publish wrote to.
    const dir = fileURLToPath(where);
    if ((await exists(path.join(dir, CURRENT))) || (await exists(path.join(dir, META_FILE)))) return folderSource(dir);
  }
  return remoteSource(where, o);
}
