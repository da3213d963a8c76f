// Bytes a build makes long before the body they go into is written, kept in a file instead of memory: the catalog
// pieces in the models' parts (parts-store.ts), the semantic snapshot (snapshot.ts). The file is removed as soon as it
// is open, so nothing is left behind whatever happens to the build (the parts store is kept: a new one is made in the
// build's staging folder, a kept one reopened); it is closed once it and its pieces are let go (a body may be made
// after the generator that yielded it has moved on).
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import type { SizedPiece } from './assemble.js';

export class PiecesFile {
  private readonly fd: number;
  /** Its bytes so far. */
  size = 0;
  /** Where it is, when it is kept. */
  readonly path: string;

  /**
   * `dir`: where the file is made (on the publication's disk, not a /tmp held in memory); `name`: its prefix, or its
   * name when kept or reopened. `keep`: the file is not removed (the build's parts store); `reopen`: it is the kept
   * file `dir/name`, appended to after its last byte (the parts store a rebuild adds to).
   */
  constructor(dir: string, name: string, how: 'scratch' | 'keep' | 'reopen' = 'scratch') {
    if (how !== 'reopen') mkdirSync(dir, { recursive: true }); // the staging folder is made as bodies are written
    this.path = path.join(dir, how === 'scratch' ? `.${name}-${randomBytes(6).toString('hex')}` : name);
    // A kept file is opened as itself, never through a link: what a link names is not the build's to append to.
    this.fd = openSync(this.path, how === 'reopen' ? constants.O_RDWR | constants.O_NOFOLLOW : 'wx+');
    if (how === 'scratch') unlinkSync(this.path);
    if (how === 'reopen') this.size = fstatSync(this.fd).size;
    closeWhenLetGo.register(this, this.fd);
  }

  /** Appends `bytes`; returns where they start. */
  append(bytes: Buffer): number {
    const at = this.size;
    this.write(bytes, at);
    this.size += bytes.length;
    return at;
  }

  /** Writes `bytes` at `at`, over what is there (the parts store's header) or at the end (append). */
  write(bytes: Buffer, at: number): void {
    for (let done = 0; done < bytes.length; ) done += writeSync(this.fd, bytes, done, bytes.length - done, at + done);
  }

  /** Cuts the file back to its first `size` bytes. */
  truncate(size: number): void {
    ftruncateSync(this.fd, size);
    this.size = size;
  }

  /** The `size` bytes from `from`; `what` names them if the file was cut short. */
  read(from: number, size: number, what: string): Buffer {
    const buf = Buffer.allocUnsafe(size);
    readFully(this.fd, buf, from, what);
    return buf;
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
function readFully(fd: number, buf: Buffer, from: number, what: string, at = 0, size = buf.length): void {
  if (from < 0) throw new Error(`${what} were cut short`);
  for (let done = 0; done < size; ) {
    const n = readSync(fd, buf, at + done, size - done, from + done);
    if (n === 0) throw new Error(`${what} were cut short`);
    done += n;
  }
}

const closeWhenLetGo = new FinalizationRegistry<number>((fd) => closeSync(fd));
