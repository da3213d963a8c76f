// A folder as the remote: what a static web server (nginx, a CDN's origin folder) serves. Headers cannot be stored
// per file here, so the server's configuration sets Cache-Control and Content-Type (docs/examples/nginx-remote.conf).
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tooLarge } from '../integrity.js';
import type { RemoteTarget } from './types.js';

/** Files being written: renamed into place when complete, so a killed publish leaves no partial object. */
const TMP = '.modelpub-tmp';

export function fileTarget(url: string): RemoteTarget {
  const root = fileURLToPath(url);
  const abs = (key: string) => path.join(root, ...key.split('/'));
  return {
    description: url,
    async get(key, o = {}) {
      const handle = await open(abs(key), 'r').catch((e: NodeJS.ErrnoException) => {
        if (e.code === 'ENOENT') return null;
        throw e;
      });
      if (!handle) return null;
      try {
        if (o.maxBytes !== undefined && (await handle.stat()).size > o.maxBytes)
          throw tooLarge(`${url.replace(/\/?$/, '/')}${key}`, o.maxBytes);
        return await handle.readFile();
      } finally {
        await handle.close();
      }
    },
    async put(key, body) {
      const tmpDir = path.join(root, TMP);
      await mkdir(tmpDir, { recursive: true });
      const tmp = path.join(tmpDir, `${process.pid}-${randomBytes(6).toString('hex')}`);
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
      for (const k of keys) {
        const st = await stat(abs(k)).catch(() => null);
        out.set(k, st?.isFile() ? st.size : null);
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
    async close() {
      await rm(path.join(root, TMP), { recursive: true, force: true }).catch(() => {});
    },
  };
}
