// Gateway-like child processes for the cross-process quota tests, and the code that starts them.
//
// The child is this very file, run by plain `node`: compileWorker() transpiles it and the project modules it reaches
// through relative imports (found by following them: no list to keep by hand) (type-stripping only, with the
// TypeScript compiler the project already has) into a folder under node_modules/.cache,
// so the children run exactly the sources under test, need no prior `tsc` build, and resolve better-sqlite3 and
// ioredis from the project's node_modules.
//
// Child protocol: argv = <mode> <store URL> <key id> <limit> [n | log file]. It opens the store, prints `ready`, waits
// for a line on stdin, then:
//   burst   n concurrent admit() calls; prints {"ok":…,"refused":…,"takes":…}; closes the limiter and exits.
//   hold    n admit() calls one after another; prints {"ok":…,"takes":…}, then keeps its lease until killed.
//   stream  admit() in 8 concurrent loops until killed, appending a line to the log file for each admitted request
//           with a synchronous write (so a SIGKILL cannot lose a recorded line, and at most one admission per loop is
//           unrecorded), yielding to the event loop between requests as a server would; prints `done` if the limit is
//           reached. (Not stdout: a pipe to the parent is written asynchronously, so lines could be admitted but lost.)
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, readFileSync, realpathSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { QuotaLimiter } from '../../src/gateway/quota.js';
import { openStore } from '../../src/gateway/stores/index.js';
import { tracked } from './children.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** This file and every project source it reaches through relative imports (static or dynamic), from the root. */
function sourcesOf(ts: typeof import('typescript'), entry: string, read: (rel: string) => string): string[] {
  const seen = new Set([entry]);
  for (const rel of seen) {
    for (const { fileName } of ts.preProcessFile(read(rel), true, true).importedFiles) {
      if (fileName.startsWith('.'))
        seen.add(path.posix.join(path.posix.dirname(rel), fileName).replace(/\.js$/, '.ts'));
    }
  }
  return [...seen];
}

export interface CompiledWorker {
  script: string;
  cleanup(): Promise<void>;
}

export async function compileWorker(): Promise<CompiledWorker> {
  const ts = (await import('typescript')).default;
  const cache = path.join(ROOT, 'node_modules', '.cache');
  await mkdir(cache, { recursive: true });
  const out = await mkdtemp(path.join(cache, 'modelpub-quota-worker-'));
  // node_modules/ ends Node's search for a package.json "type": say ESM here.
  await writeFile(path.join(out, 'package.json'), '{"type":"module"}\n');
  const read = (rel: string) => readFileSync(path.join(ROOT, rel), 'utf8');
  for (const rel of sourcesOf(ts, 'test/helpers/quota-worker.ts', read)) {
    const { outputText, diagnostics } = ts.transpileModule(read(rel), {
      fileName: rel,
      reportDiagnostics: true,
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
    });
    if (diagnostics?.length)
      throw new Error(`${rel}: ${ts.flattenDiagnosticMessageText(diagnostics[0]!.messageText, '\n')}`);
    const dest = path.join(out, rel.replace(/\.ts$/, '.js'));
    await mkdir(path.dirname(dest), { recursive: true });
    await writeFile(dest, outputText);
  }
  return {
    script: path.join(out, 'test/helpers/quota-worker.js'),
    cleanup: () => rm(out, { recursive: true, force: true }),
  };
}

export type WorkerMode = 'burst' | 'hold' | 'stream';

export interface Worker {
  child: ChildProcess;
  /** Resolves once the child has opened the store. */
  ready: Promise<void>;
  /** Lets it start. */
  go(): void;
  /** Every line it printed so far. */
  lines: string[];
  /** Resolves on the first line that matches. */
  waitFor(match: (line: string) => boolean): Promise<string>;
  /** Resolves when it has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

export function startWorker(
  script: string,
  mode: WorkerMode,
  storeUrl: string,
  keyId: string,
  limit: number,
  n: number | string = 0,
): Worker {
  const child = tracked(
    spawn(process.execPath, [script, mode, storeUrl, keyId, String(limit), String(n)], {
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
  const lines: string[] = [];
  const waiters: { match: (l: string) => boolean; resolve: (l: string) => void }[] = [];
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, stderr })),
  );
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const w of waiters.splice(0)) w.match(line) ? w.resolve(line) : waiters.push(w);
  });
  const waitFor = (match: (l: string) => boolean) =>
    new Promise<string>((resolve, reject) => {
      const seen = lines.find(match);
      if (seen !== undefined) return resolve(seen);
      waiters.push({ match, resolve });
      void exited.then((e) =>
        reject(new Error(`worker exited (${e.code ?? e.signal}) before printing what was awaited:\n${e.stderr}`)),
      );
    });
  return {
    child,
    lines,
    ready: waitFor((l) => l === 'ready').then(() => undefined),
    go: () => child.stdin!.end('go\n'), // EOF too: an open stdin would keep the child alive after its work
    waitFor,
    exited,
  };
}

// ---- the child ----

async function main(argv: string[]): Promise<void> {
  const [mode, url, keyId, limitArg, nArg] = argv;
  if (!mode || !url || !keyId)
    throw new Error('usage: quota-worker <burst|hold|stream> <store URL> <key id> <limit> [n | log file]');
  const limit = Number(limitArg);
  const n = Number(nArg ?? 0);
  const store = await openStore(url);
  const limiter = new QuotaLimiter(store, { limit });
  const print = (s: string) => process.stdout.write(`${s}\n`);
  print('ready');
  await new Promise<void>((resolve) => createInterface({ input: process.stdin }).once('line', () => resolve()));

  if (mode === 'burst') {
    const results = await Promise.all(Array.from({ length: n }, () => limiter.admit(keyId)));
    const ok = results.filter((r) => r.ok).length;
    print(JSON.stringify({ ok, refused: n - ok, takes: limiter.takes }));
    await limiter.close();
    await store.close();
    return;
  }
  if (mode === 'hold') {
    let ok = 0;
    for (let i = 0; i < n; i++) if ((await limiter.admit(keyId)).ok) ok++;
    print(JSON.stringify({ ok, takes: limiter.takes }));
    setInterval(() => {}, 60_000); // hold the lease until SIGKILL
    return;
  }
  if (mode === 'stream') {
    const log = nArg!;
    const loop = async () => {
      for (;;) {
        const r = await limiter.admit(keyId);
        if (!r.ok) return;
        appendFileSync(log, 'ok\n');
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    await Promise.all(Array.from({ length: 8 }, loop));
    print('done');
    setInterval(() => {}, 60_000);
    return;
  }
  throw new Error(`unknown mode ${mode}`);
}

// Node gives the main module's URL with links resolved (node_modules may be a link, as in a git worktree).
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  main(process.argv.slice(2)).catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
}
