// The file a build's representations spill to once those held in memory reach their bound: appended to as they come,
// read back by offset when the pack is written.
import { type FileHandle, open, rm } from 'node:fs/promises';
import { namedWriteError } from '../write-file.js';

/** What is gathered before one write to the file. */
const SPILL_CHUNK_BYTES = 8 * 1024 * 1024;

/** An append-only file of representations, written in chunks of SPILL_CHUNK_BYTES and read back by offset. */
export function spillFile(file: string) {
  let handle: Promise<FileHandle> | null = null;
  let size = 0;
  let chunk: Buffer[] = [];
  let chunkStart = 0;
  let chunkBytes = 0;
  let written: Promise<void> = Promise.resolve();
  const flush = (): Promise<void> => {
    if (!chunkBytes) return written;
    const [bytes, at] = [Buffer.concat(chunk), chunkStart];
    [chunk, chunkStart, chunkBytes] = [[], size, 0];
    handle ??= open(file, 'w+');
    const h = handle;
    written = written.then(async () => {
      await (await h).write(bytes, 0, bytes.length, at).catch((e) => Promise.reject(namedWriteError(e, file)));
    });
    return written;
  };
  return {
    /** Where `parts`, end to end, will be in the file (joined only when the chunk is written: no copy per body). */
    append(...parts: Buffer[]): number {
      const at = size;
      for (const bytes of parts) {
        size += bytes.length;
        chunk.push(bytes);
        chunkBytes += bytes.length;
      }
      if (chunkBytes >= SPILL_CHUNK_BYTES) void flush().catch(() => {}); // the error is thrown again by reader()
      return at;
    },
    /** The file with everything appended written, or null when nothing was. */
    async reader(): Promise<FileHandle | null> {
      await flush();
      return handle ? await handle : null;
    },
    async remove(): Promise<void> {
      await written.catch(() => {});
      const h = handle;
      handle = null;
      if (!h) return;
      await (await h).close();
      await rm(file, { force: true });
    },
  };
}
