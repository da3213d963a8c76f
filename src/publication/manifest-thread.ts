// A release folder's manifest.json read into its tables (reader.ts), here or on a thread of its own: a rebuild reads
// its previous release's manifest while its main thread loads and checks the data (at 2,000 models, 157 MB and 3 s
// of the main thread, the build's critical path, that the second core otherwise spends idle).
import { open } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { namedReadError, readFileNamed } from '../write-file.js';
import { type IndexedManifest, parseManifestIndex } from './reader.js';
import { ManifestTable, RepresentationTable } from './tables.js';

/** What manifest.json is read in, a chunk at a time. */
const MANIFEST_CHUNK_BYTES = 4 * 1024 * 1024;

/** `file` a chunk at a time; a failed read names the file. */
async function* chunksOf(file: string): AsyncGenerator<Buffer> {
  const handle = await open(file, 'r').catch((e) => Promise.reject(namedReadError(e, file)));
  try {
    for (;;) {
      const buffer = Buffer.allocUnsafe(MANIFEST_CHUNK_BYTES);
      const { bytesRead } = await handle
        .read(buffer, 0, buffer.length, null)
        .catch((e) => Promise.reject(namedReadError(e, file)));
      if (bytesRead === 0) return;
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}

/** manifest.json at `file` read a chunk at a time into tables, on this thread; the text is not kept. */
export function readManifestIndex(file: string): Promise<IndexedManifest> {
  return parseManifestIndex(chunksOf(file), file, () => readFileNamed(file));
}

/** This module, which a thread runs; the TypeScript sources (under test) have no module a thread can run. */
const MODULE = fileURLToPath(import.meta.url);

export interface ManifestAside {
  /** Rejects only as readManifestIndex(file) here would, with its error, or once cancelled. */
  manifest: Promise<IndexedManifest>;
  /** Ends the thread: its read is not wanted. */
  cancel(): void;
  /** The thread that reads it; null where there is no module for one (the read is then this thread's). */
  thread: Worker | null;
}

/**
 * readManifestIndex(file) on a thread of its own. Its one answer is a manifest read; anything else (a read that
 * failed, a thread that could not start) is read again on this thread, so that an error is readManifestIndex's.
 */
export function readManifestIndexAside(file: string): ManifestAside {
  if (!MODULE.endsWith('.js')) {
    const manifest = readManifestIndex(file);
    manifest.catch(() => {}); // handled where it is awaited
    return { manifest, cancel: () => {}, thread: null };
  }
  let cancelled = false;
  const worker = new Worker(MODULE, { workerData: { manifestFile: file } });
  const manifest = new Promise<IndexedManifest | null>((resolve) => {
    worker.once('message', (m: IndexedManifest | null) => resolve(m && revived(m)));
    worker.once('error', () => resolve(null));
    worker.once('exit', () => resolve(null)); // after the message, when there was one: it is resolved by then
  }).then((m) => {
    if (cancelled) throw new Error(`the read of ${file} was cancelled`);
    return m ?? readManifestIndex(file);
  });
  manifest.catch(() => {}); // handled where it is awaited
  return {
    manifest,
    cancel: () => {
      cancelled = true;
      void worker.terminate();
    },
    thread: worker,
  };
}

/** A manifest as postMessage gives it: its tables' fields without their classes (tables.ts). */
function revived(m: IndexedManifest): IndexedManifest {
  ManifestTable.revive(m.files);
  if (m.representations) RepresentationTable.revive(m.representations);
  return m;
}

if (!isMainThread && (workerData as { manifestFile?: unknown })?.manifestFile) {
  const file = (workerData as { manifestFile: string }).manifestFile;
  readManifestIndex(file).then(
    (m) => parentPort!.postMessage(m),
    () => parentPort!.postMessage(null),
  );
}
