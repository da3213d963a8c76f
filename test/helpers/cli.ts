// Running the compiled CLI (bin/modelpub.js -> lib/) from tests. lib/ is compiled on demand when a file under src/
// is newer than it, so `npx vitest run <file>` works without a prior `npm run compile`.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tracked } from './children.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(ROOT, 'bin/modelpub.js');

function newestMtime(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newestMtime(p) : e.name.endsWith('.ts') ? statSync(p).mtimeMs : 0);
  }
  return t;
}

/** Compile src/ to lib/ if lib/ is missing or older than a source file. tsc emits even when some file has type errors. */
export function ensureCompiled(): void {
  const cli = path.join(ROOT, 'lib/cli.js');
  const libTime = (() => {
    try {
      return statSync(cli).mtimeMs;
    } catch {
      return 0;
    }
  })();
  if (libTime >= newestMtime(path.join(ROOT, 'src'))) return;
  try {
    execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', ROOT], {
      cwd: ROOT,
      stdio: 'pipe',
    });
  } catch {
    /* type errors elsewhere still emit; the check below decides */
  }
  statSync(cli);
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Run `node bin/modelpub.js ...args` to completion. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawnCli(args, env);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => {
      stdout += d;
    });
    child.stderr!.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

export function spawnCli(args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
  return tracked(
    spawn(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: { ...process.env, CI: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
}
