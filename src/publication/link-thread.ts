// Hard links of carried-over files, made on a thread of their own. A rebuild carries almost every body over by linking
// its previous file (a stat to check its size, then a link): 308,000 of each at 2,000 models, 6 s of system calls
// that the main thread, the rebuild's critical path, then does not make.
import { Worker } from 'node:worker_threads';

/** Jobs sent in one message; more wait for the next, so that the thread works while the next batch gathers. */
const BATCH = 32;

// The thread links each path of a batch (one string, the paths a line each, and their sizes) from the previous release
// to the new one, and answers a byte per path: 1 linked, 0 not (missing, another size, or the link failed). It makes
// the new path's folder first, once per folder.
const SOURCE = `
const { linkSync, mkdirSync, statSync } = require('node:fs');
const path = require('node:path');
const { parentPort, workerData: { from, to } } = require('node:worker_threads');
const made = new Set();
parentPort.on('message', ({ id, paths, sizes }) => {
  const linked = new Uint8Array(sizes.length);
  paths.split('\\n').forEach((file, i) => {
    const old = path.join(from, file);
    const st = statSync(old, { throwIfNoEntry: false });
    if (!st || !st.isFile() || st.size !== sizes[i]) return;
    try {
      const target = path.join(to, file);
      const dir = path.dirname(target);
      if (!made.has(dir)) {
        mkdirSync(dir, { recursive: true });
        made.add(dir);
      }
      linkSync(old, target);
      linked[i] = 1;
    } catch {}
  });
  parentPort.postMessage({ id, linked });
});
`;

export interface LinkThread {
  /**
   * Links `file` of the previous release into the new one (making its folder) when it is there with `bytes` bytes;
   * false when it is not linked. `file` is a release path: no line feed.
   */
  link(file: string, bytes: number): Promise<boolean>;
  /** Ends the thread; the writer has awaited every link it asked for. */
  close(): Promise<void>;
}

/** Links files of the release folder `from` into the release folder `to`. */
export function linkThread(from: string, to: string): LinkThread {
  // Its garbage is a batch's strings: a small young generation keeps the thread's memory small (V8's default grows
  // it to tens of MB).
  const worker = new Worker(SOURCE, {
    eval: true,
    workerData: { from, to },
    resourceLimits: { maxYoungGenerationSizeMb: 2 },
  });
  const answers = new Map<number, (linked: Uint8Array) => void>();
  let failure: Error | null = null;
  let batch: { paths: string[]; sizes: number[]; done: ((ok: boolean) => void)[] } | null = null;
  let nextId = 0;
  worker.unref();
  const fail = (e: Error) => {
    failure ??= e;
    for (const answer of answers.values()) answer(new Uint8Array(0));
    answers.clear();
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`the link thread ended (exit code ${code})`)));
  worker.on('message', ({ id, linked }: { id: number; linked: Uint8Array }) => {
    answers.get(id)?.(linked);
    answers.delete(id);
    if (!answers.size) worker.unref();
  });
  const send = () => {
    if (!batch) return;
    const { paths, sizes, done } = batch;
    batch = null;
    const id = nextId++;
    answers.set(id, (linked) => {
      for (const [i, d] of done.entries()) d(linked[i] === 1);
    });
    worker.ref();
    worker.postMessage({ id, paths: paths.join('\n'), sizes: Float64Array.from(sizes) });
  };
  return {
    link(file, bytes) {
      if (failure) return Promise.reject(failure);
      if (!batch) {
        batch = { paths: [], sizes: [], done: [] };
        setImmediate(send); // the links asked for in one turn of the event loop leave together
      }
      const b = batch;
      b.paths.push(file);
      b.sizes.push(bytes);
      const linked = new Promise<boolean>((resolve) => b.done.push(resolve));
      if (b.paths.length >= BATCH) send();
      return linked.then((ok) => (failure ? Promise.reject(failure) : ok));
    },
    async close() {
      worker.removeAllListeners('exit');
      fail(new Error('the link thread is closed')); // a link still awaited (none, once the writer is done) fails
      await worker.terminate();
    },
  };
}
