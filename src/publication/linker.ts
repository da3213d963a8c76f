// Hard links made on a worker thread. A rebuild carries most of its files over from the previous release, each a stat
// (is the old file still the size its manifest lists?), a folder and a link: at 2,000 models, 300,000 files and
// several seconds of system calls that the main thread, which renders, would otherwise wait on. The main thread asks
// for links one by one; they leave in batches, and each answers whether it was made.
import { Worker } from 'node:worker_threads';

export interface Linker {
  /**
   * Links the file at `file` (a relative path) in the target folder to the one in the source folder when that is a
   * file of `bytes` bytes, making its folder; resolves false when it is not, or the link fails (the caller then writes
   * the file itself). Never rejects.
   */
  link(file: string, bytes: number): Promise<boolean>;
  /** Answers the links asked for, then stops the thread. link() after close() resolves false. */
  close(): Promise<void>;
}

/** Links sent in one message: enough to spread a message's cost, few enough that the worker starts early. */
const BATCH = 128;

// CommonJS from a string, so that it runs the same from src/ under vitest and from lib/ (as compress.ts's pool). A
// batch is one string of paths and one array of sizes: an array of strings cost as much to send as the links
// themselves. It keeps the folders it made: a release has a folder per few files, and a mkdir still costs a call.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const path = require('node:path');
const made = new Set();
parentPort.on('message', ({ files, bytes }) => {
  const ok = new Uint8Array(bytes.length);
  files.split('\\n').forEach((file, i) => {
    try {
      const from = path.join(workerData.from, file);
      const to = path.join(workerData.to, file);
      const st = fs.statSync(from, { throwIfNoEntry: false });
      if (!st || !st.isFile() || st.size !== bytes[i]) return;
      const dir = path.dirname(to);
      if (!made.has(dir)) {
        fs.mkdirSync(dir, { recursive: true });
        made.add(dir);
      }
      fs.linkSync(from, to);
      ok[i] = 1;
    } catch {}
  });
  parentPort.postMessage(ok, [ok.buffer]);
});
`;

/** Links files of folder `from` into folder `to`, under the same relative paths (which hold no line feed). */
export function createLinker(from: string, to: string): Linker {
  let worker: Worker | null = null;
  let batch: { files: string[]; bytes: Float64Array; answers: ((ok: boolean) => void)[] } | null = null;
  // Batches sent and not yet answered, in order: the worker answers them in the order they came.
  const sent: ((ok: boolean) => void)[][] = [];
  let closing = false;
  let failed = false;
  let drained: (() => void) | null = null;

  const answer = (answers: ((ok: boolean) => void)[], ok: Uint8Array | null) => {
    for (const [i, resolve] of answers.entries()) resolve(ok?.[i] === 1);
  };
  const fail = () => {
    failed = true;
    for (const answers of sent.splice(0)) answer(answers, null);
    drained?.();
  };
  const start = (): Worker => {
    const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { from, to } });
    w.on('message', (ok: Uint8Array) => {
      answer(sent.shift()!, ok);
      if (sent.length === 0) {
        w.unref(); // an idle linker does not keep the process alive
        drained?.();
      }
    });
    // A thread that dies answers false for what it had: those files are written instead.
    w.on('error', fail);
    w.on('exit', () => {
      if (sent.length > 0) fail();
    });
    return w;
  };
  const flush = () => {
    const b = batch;
    batch = null;
    if (!b) return;
    if (failed) return answer(b.answers, null);
    worker ??= start();
    worker.ref();
    sent.push(b.answers);
    const bytes = b.bytes.subarray(0, b.files.length);
    worker.postMessage({ files: b.files.join('\n'), bytes }, [bytes.buffer as ArrayBuffer]);
  };

  return {
    link(file, bytes) {
      if (closing || failed || file.includes('\n')) return Promise.resolve(false);
      if (!batch) {
        batch = { files: [], bytes: new Float64Array(BATCH), answers: [] };
        setImmediate(flush); // once the caller has asked for what it has at hand
      }
      const b = batch;
      b.bytes[b.files.length] = bytes;
      b.files.push(file);
      const answered = new Promise<boolean>((resolve) => b.answers.push(resolve));
      if (b.answers.length >= BATCH) flush();
      return answered;
    },
    async close() {
      closing = true;
      flush();
      if (sent.length > 0 && !failed) await new Promise<void>((resolve) => (drained = resolve));
      await worker?.terminate();
    },
  };
}
