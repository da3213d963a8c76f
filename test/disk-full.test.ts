// A disk that fills up during a build: the error names the file being written. Node's own message for a failed
// write(2) names only the system call; the failure is injected here, into the one write chosen, as the kernel gives it.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { smallCatalog, withTemp, writeFixture } from './helpers/fixture.js';

/** The path whose write fails next (matched by its end), and how often it failed. */
const inject = vi.hoisted(() => ({ suffix: '', hits: 0 }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  const chosen = (file: unknown) => inject.suffix !== '' && typeof file === 'string' && file.endsWith(inject.suffix);
  const full = () => {
    inject.hits++;
    return Object.assign(new Error('ENOSPC: no space left on device, write'), {
      errno: -28,
      code: 'ENOSPC',
      syscall: 'write',
    });
  };
  const writeFile: typeof fs.writeFile = async (file, data, options) => {
    if (chosen(file)) throw full();
    return fs.writeFile(file, data, options);
  };
  // A file written through its handle (manifest.json is streamed): the handle's writes fail as the kernel's would.
  const open: typeof fs.open = async (file, flags, mode) => {
    const handle = await fs.open(file, flags, mode);
    if (!chosen(file)) return handle;
    return new Proxy(handle, {
      get(target, key) {
        if (key === 'write' || key === 'writeFile') return async () => Promise.reject(full());
        const value = Reflect.get(target, key);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  };
  const mocked = { ...fs, writeFile, open };
  return { ...mocked, default: mocked };
});

const { build } = await import('../src/pipeline/build.js');

afterEach(() => {
  inject.suffix = '';
  inject.hits = 0;
});

describe('ENOSPC during a build', () => {
  for (const file of ['api/v1/models/alpha/en.verified.public.base.json', 'manifest.json', '.modelpub-publication']) {
    it(`names the file being written: ${file}`, async () => {
      await withTemp(async (tmp) => {
        const dataDir = path.join(tmp, 'data');
        const outDir = path.join(tmp, 'out');
        await writeFixture(dataDir, smallCatalog());
        inject.suffix = file;
        const err = (await build({ dataDir, outDir }).catch((e: unknown) => e)) as Error & { code?: string };
        expect(inject.hits).toBe(1);
        expect(err.message).toMatch(
          new RegExp(
            `^cannot write ${outDir}/\\S*${file.replace(/\./g, '\\.')}: no space left on device \\(ENOSPC\\)$`,
          ),
        );
        expect(err.code).toBe('ENOSPC');
        // The staging folder is gone, and nothing was published.
        expect(
          (await readdir(outDir).catch(() => [])).filter((n) => n.startsWith('.staging-') || n === 'current'),
        ).toEqual([]);
      });
    });
  }
});
