// The release a publish uploads: a build's --out (its `current` release) or one release folder.
import { readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { UsageError } from '../errors.js';
import { objectsOf, type ObjectSource, packManifest, type RemotePublication } from '../publication/remote.js';
import { Manifest, PublicationMeta } from '../publication/files.js';
import { readStored } from '../publication/folder.js';
import { parseJsonFile } from '../publication/reader.js';
import { IntegrityError, sha256Hex } from './read-remote.js';

export interface LocalRelease {
  dir: string;
  manifest: Manifest;
  manifestBytes: Buffer;
  /** The manifest as the remote stores it (packManifest). */
  storedManifest: Buffer;
  /** What the pointer will say of it. */
  entry: RemotePublication;
  objects: Map<string, ObjectSource>;
}

export async function readLocalRelease(from: string): Promise<LocalRelease> {
  const current = path.join(from, 'current');
  const st = await stat(current).catch(() => null);
  const dir = await realpath(st?.isDirectory() ? current : from).catch(() => {
    throw new UsageError(`--from ${from} does not exist: give a build's --out folder (run modelpub build first)`);
  });
  const read = async (name: string) =>
    readFile(path.join(dir, name)).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT') throw e;
      throw new UsageError(
        `--from ${from} holds no publication (no ${name} in ${dir}): give a build's --out folder, or one release folder`,
      );
    });
  const metaBytes = await read('publication.json');
  const manifestBytes = await read('manifest.json');
  const publication = parseJsonFile(PublicationMeta, metaBytes, path.join(dir, 'publication.json'));
  const manifest = parseJsonFile(Manifest, manifestBytes, path.join(dir, 'manifest.json'));
  const sha256 = sha256Hex(manifestBytes);
  if (publication.manifestSha256 !== undefined && publication.manifestSha256 !== sha256)
    throw new IntegrityError(
      `${path.join(dir, 'manifest.json')} has sha256 ${sha256}, not the ${publication.manifestSha256} ` +
        'publication.json names: the release was changed after its build',
    );
  if (manifest.publicationRevision !== publication.publicationRevision)
    throw new IntegrityError(
      `${dir}: manifest.json is of revision ${manifest.publicationRevision}, publication.json of ${publication.publicationRevision}`,
    );
  return {
    dir,
    manifest,
    manifestBytes,
    storedManifest: packManifest(manifestBytes),
    entry: { publication, manifest: { sha256, bytes: manifestBytes.length } },
    objects: objectsOf(manifest),
  };
}

/** One object's bytes from the release folder, checked against the manifest before they leave the machine. */
export async function readObject(release: LocalRelease, o: ObjectSource): Promise<Buffer> {
  const file =
    o.offset === undefined ? path.join(release.dir, o.path) : `${path.join(release.dir, o.path)} at ${o.offset}`;
  const b = await readStored(release.dir, o);
  if (b.length !== o.bytes || sha256Hex(b) !== o.sha256)
    throw new IntegrityError(
      `${file} is not the body manifest.json lists (sha256 ${o.sha256}, ${o.bytes} bytes): the release was changed after its build`,
    );
  return b;
}
