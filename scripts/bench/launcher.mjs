// What a bin/modelpub.js's `#!/usr/bin/env -S [VAR=value ...] node [--flag ...]` line gives every command: the
// environment it sets and node's flags. A benchmark that spawns node itself (to time it, or to add flags) gives both,
// so that it measures what `./bin/modelpub.js ...` runs.
import { readFileSync } from 'node:fs';

/** The launcher's environment assignments and node flags. */
export function launcherOf(cli) {
  const words = readFileSync(cli, 'utf8')
    .split('\n', 1)[0]
    .replace(/^#!\S*\s*(-S\s+)?/, '')
    .split(/\s+/)
    .filter(Boolean);
  const node = words.findIndex((w) => w === 'node' || w.endsWith('/node'));
  if (node < 0) throw new Error(`${cli}: its #! line runs no node`);
  const env = Object.fromEntries(
    words
      .slice(0, node)
      .filter((w) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(w))
      .map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]),
  );
  return { env, nodeFlags: words.slice(node + 1) };
}
