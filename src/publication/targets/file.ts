// A folder as the remote: what a static web server (nginx, a CDN's origin folder) serves. Headers cannot be stored
// per file here, so the server's configuration sets Cache-Control and Content-Type (docs/examples/nginx-remote.conf).
import { createHash, randomBytes } from 'node:crypto';
import { constants, readFileSync, statSync } from 'node:fs';
import { link, mkdir, open, readdir, readFile, realpath, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { IntegrityError, sha256Hex, tooLarge } from '../integrity.js';
import { LAYOUT_ROOT_NAMES, TMP_FOLDER } from '../remote.js';
import { bounded } from './bounds.js';
import { checkedKey } from './keys.js';
import type { ReadBounds, RemoteTarget } from './types.js';

/**
 * Opened without blocking (a FIFO with no writer would hold a thread of libuv's pool, and then the process's exit)
 * and without following a link in its last part: what fstat then says is what is read.
 */
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;

const kindOf = (st: { isDirectory(): boolean; isFIFO(): boolean; isCharacterDevice(): boolean }) =>
  st.isDirectory() ? 'a folder' : st.isFIFO() ? 'a FIFO' : st.isCharacterDevice() ? 'a device' : 'not a regular file';

/**
 * The bytes of a regular file under `root` (a real path): `length` bytes from `offset`, or the whole file when
 * `length` is not given, refused unread when it is larger than `maxBytes`. Null when there is no such file. Anything
 * else (a folder, a FIFO, a device, a link out of `root`) is an IntegrityError naming `where`: no read of a
 * publication waits on a pipe or reads a device without end.
 */
export async function readRegularFile(
  file: string,
  root: string,
  where: string,
  o: { maxBytes?: number; offset?: number; length?: number } = {},
): Promise<Buffer | null> {
  const real = await realpath(file).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT' || e.code === 'ENOTDIR') return null;
    throw e;
  });
  if (real === null) return null;
  if (real !== root && !real.startsWith(root + path.sep))
    throw new IntegrityError(`${where} leads out of ${root} (to ${real}): a publication reads only its own files`);
  const handle = await open(real, READ_FLAGS).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return null;
    if (e.code === 'ELOOP') throw new IntegrityError(`${where} was replaced by a link while it was read`);
    throw e;
  });
  if (!handle) return null;
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new IntegrityError(`${where} is ${kindOf(st)}, not a regular file`);
    if (o.length === undefined && st.size > (o.maxBytes ?? Infinity)) throw tooLarge(where, o.maxBytes!);
    // Never more than the stated size (or the size seen): a file that grows while it is read is cut, then refused.
    const out = Buffer.allocUnsafe(o.length ?? st.size);
    const { bytesRead } = await handle.read(out, 0, out.length, o.offset ?? 0);
    return out.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

export interface FileTargetOptions {
  /** The deadline and minimum rate of every read (bounds.ts), unless a read asks for its own. */
  bounds?: ReadBounds;
}

/** Files stat'ed or read with synchronous calls between two turns of the event loop. */
const SYNC_BATCH = 256;

/** A regular file's size; null when there is none (or something else is there). */
function sizeOf(file: string): number | null {
  try {
    const st = statSync(file, { throwIfNoEntry: false });
    return st?.isFile() ? st.size : null;
  } catch {
    return null;
  }
}

export function fileTarget(url: string, fo: FileTargetOptions = {}): RemoteTarget {
  const root = fileURLToPath(url);
  const abs = (key: string) => {
    const p = path.resolve(root, ...checkedKey(key, url).split('/'));
    // Defence in depth: whatever a key says, nothing outside the root is ever read, written or deleted.
    const rel = path.relative(root, p);
    if (rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel))
      throw new Error(`${url}: refused the key ${JSON.stringify(key)}: it resolves outside the root, to ${p}`);
    return p;
  };
  let realRoot: string | undefined;
  // Files being written go under TMP_FOLDER and are renamed into place when complete, so a killed publish leaves no
  // partial object. Each target (one publish) has a folder of its own there, made at its first put, and removes only
  // that: publishes, dry runs and readers of one folder never remove each other's files.
  const ownTmp = path.join(root, TMP_FOLDER, `${process.pid}-${randomBytes(6).toString('hex')}`);
  let tmpMade = false;
  let tmpCount = 0;
  const tmpFile = async () => {
    if (!tmpMade) {
      await mkdir(ownTmp, { recursive: true });
      tmpMade = true;
    }
    return path.join(ownTmp, String(tmpCount++));
  };
  const tagOf = (body: Buffer) => createHash('sha256').update(body).digest('hex');
  /**
   * `body` under `key` if nothing is there: link(2) fails with EEXIST as an O_EXCL open does, and the name appears
   * with its bytes complete, so a reader never sees part of it (what NFS locks have long used).
   */
  const create = async (key: string, body: Buffer) => {
    const tmp = await tmpFile();
    await writeFile(tmp, body);
    try {
      await mkdir(path.dirname(abs(key)), { recursive: true });
      await link(tmp, abs(key));
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw e;
    } finally {
      await rm(tmp, { force: true });
    }
  };
  return {
    description: url,
    get(key, o = {}) {
      const where = `${url.replace(/\/?$/, '/')}${key}`;
      return bounded(`GET ${where}`, o, fo.bounds, async () => {
        realRoot ??= await realpath(root).catch(() => undefined);
        return realRoot === undefined ? null : readRegularFile(abs(key), realRoot, where, { maxBytes: o.maxBytes });
      });
    },
    async getTagged(key) {
      realRoot ??= await realpath(root).catch(() => undefined);
      const where = `${url.replace(/\/?$/, '/')}${key}`;
      // The lock is under a kilobyte: a larger file there is not one.
      const body =
        realRoot === undefined ? null : await readRegularFile(abs(key), realRoot, where, { maxBytes: 1 << 20 });
      return body && { body, tag: tagOf(body) };
    },
    async putIf(key, body, _o, tag) {
      if (tag === null) return create(key, body);
      // Replace only the version read: move it aside in one rename (so no two processes both take the same one),
      // then look at what was moved. Not that version: it goes back where it was, and nothing is written.
      const aside = await tmpFile();
      try {
        await rename(abs(key), aside);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
        throw e;
      }
      try {
        if (tagOf(await readFile(aside)) !== tag) {
          // EEXIST: yet another process created one meanwhile; the one moved aside is its holder's to miss (the lock
          // holder checks it still holds the lock before it moves the pointer).
          await link(aside, abs(key)).catch(() => {});
          return false;
        }
      } finally {
        await rm(aside, { force: true });
      }
      return create(key, body);
    },
    async put(key, body) {
      const tmp = await tmpFile();
      await writeFile(tmp, body);
      try {
        await mkdir(path.dirname(abs(key)), { recursive: true });
        await rename(tmp, abs(key));
      } catch (e) {
        await rm(tmp, { force: true });
        throw e;
      }
    },
    async sizes(keys) {
      const out = new Map<string, number | null>();
      // Synchronous calls, a batch at a time: for the 92,000 objects of a publication a promise each cost several
      // times the CPU of the calls themselves; the pause between batches keeps signals and timers served.
      for (let i = 0; i < keys.length; i += SYNC_BATCH) {
        for (const k of keys.slice(i, i + SYNC_BATCH)) out.set(k, sizeOf(abs(k)));
        await new Promise(setImmediate);
      }
      return out;
    },
    async hashes(objects) {
      const out = new Map<string, string | null>();
      // A local disk: reading is what checking costs (sha256 runs at about 1 GB/s here), batched as in sizes().
      for (let i = 0; i < objects.length; i += SYNC_BATCH) {
        for (const { key, bytes } of objects.slice(i, i + SYNC_BATCH)) {
          const file = abs(key);
          out.set(key, sizeOf(file) === bytes ? sha256Hex(readFileSync(file)) : null);
        }
        await new Promise(setImmediate);
      }
      return out;
    },
    async list(prefix) {
      const out: Array<{ key: string; bytes: number }> = [];
      const walk = async (rel: string): Promise<void> => {
        const entries = await readdir(abs(rel), { withFileTypes: true }).catch((e: NodeJS.ErrnoException) => {
          if (e.code === 'ENOENT' || e.code === 'ENOTDIR') return [];
          throw e;
        });
        for (const e of entries) {
          const key = `${rel}${e.name}`;
          if (e.isDirectory()) await walk(`${key}/`);
          else if (e.isFile()) out.push({ key, bytes: (await stat(abs(key))).size });
        }
      };
      // The prefix is a folder ('revisions/') in every use; a partial name would need a filter on top.
      await walk(prefix.endsWith('/') ? prefix : `${prefix}/`);
      return out.sort((a, b) => (a.key < b.key ? -1 : 1));
    },
    async delete(keys) {
      const dirs = new Set<string>();
      for (const k of keys) {
        await rm(abs(k), { force: true });
        dirs.add(path.dirname(abs(k)));
      }
      // Folders a deletion emptied (a revision's, a shard's): rmdir refuses any that still hold something.
      for (const d of dirs) if (d.startsWith(root + path.sep)) await rmdir(d).catch(() => {});
    },
    async foreignNames() {
      const names = await readdir(root).catch((e: NodeJS.ErrnoException) => {
        if (e.code === 'ENOENT') return [] as string[];
        throw e;
      });
      return names.filter((n) => !LAYOUT_ROOT_NAMES.includes(n)).sort();
    },
    async close() {
      if (!tmpMade) return;
      await rm(ownTmp, { recursive: true, force: true }).catch(() => {});
      // The shared parent goes only when no other publish has a folder in it (rmdir refuses one that is not empty).
      await rmdir(path.join(root, TMP_FOLDER)).catch(() => {});
    },
  };
}
