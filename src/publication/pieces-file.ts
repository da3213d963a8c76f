// Bytes a build makes long before the body they go into is written, kept in a file instead of memory: the catalog
// pieces in the models' parts (parts-store.ts), the semantic snapshot (snapshot.ts). The file is removed as soon as it
// is open, so nothing is left behind whatever happens to the build (the parts store is kept: its folder is the build's
// staging folder); it is closed once it and its pieces are let go (a body may be made after the generator that yielded
// it has moved on).
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { SizedPiece } from './assemble.js';

export class PiecesFile {
  private readonly fd: number;
  /** Its bytes so far. */
  size = 0;
  /** Where it is, when it is kept. */
  readonly path: string;

  /**
   * `dir`: where the file is made (on the publication's disk, not a /tmp held in memory); `name`: its prefix. `keep`:
   * the file is not removed (the build's parts store, which it moves out of its staging folder).
   */
  constructor(dir: string, name: string, keep = false) {
    mkdirSync(dir, { recursive: true }); // the staging folder is made as bodies are written: maybe not yet
    this.path = path.join(dir, keep ? name : `.${name}-${randomBytes(6).toString('hex')}`);
    this.fd = openSync(this.path, 'wx+');
    if (!keep) unlinkSync(this.path);
    closeWhenLetGo.register(this, this.fd);
  }

  /** Appends `bytes`; returns where they start. */
  append(bytes: Buffer): number {
    const at = this.size;
    for (let done = 0; done < bytes.length; ) done += writeSync(this.fd, bytes, done, bytes.length - done, at + done);
    this.size += bytes.length;
    return at;
  }

  /** The `size` bytes from `from` as a piece of a body; `what` names them if the file was cut short. */
  piece(from: number, size: number, what: string): SizedPiece {
    const file = this; // the piece keeps the file open
    return {
      size,
      copyTo(out: Buffer, at: number): void {
        readFully(file.fd, out, from, what, at, size);
      },
    };
  }
}

/**
 * Reads `size` bytes from `from` in the file into `buf` at `at`; `what` names the bytes if the file ends before (or
 * `from` is before its start).
 */
export function readFully(fd: number, buf: Buffer, from: number, what: string, at = 0, size = buf.length): void {
  if (from < 0) throw new Error(`${what} were cut short`);
  for (let done = 0; done < size; ) {
    const n = readSync(fd, buf, at + done, size - done, from + done);
    if (n === 0) throw new Error(`${what} were cut short`);
    done += n;
  }
}

const closeWhenLetGo = new FinalizationRegistry<number>((fd) => closeSync(fd));
