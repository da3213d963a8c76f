// One commit of this repository, extracted and compiled on its own: a benchmark then measures a known commit (or an
// older one beside the working tree) while src/ and lib/ of the working tree change under it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Extracts `rev`'s src/, bin/ and tsconfig.json into <parent>/snapshot-<sha>/, links the repository's node_modules
 * and compiles it. Returns the commit, the folder and its launcher (bin/modelpub.js, whose ../lib/cli.js is the CLI).
 */
export function compileRevision(repo, rev, parent, log = console.error) {
  const git = (...args) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' }).trim();
  let sha;
  try {
    sha = git('rev-parse', '--verify', `${rev}^{commit}`);
  } catch {
    throw new Error(`${rev} is not a commit of ${repo}`);
  }
  const dir = path.join(parent, `snapshot-${sha.slice(0, 12)}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const tar = path.join(parent, `snapshot-${sha.slice(0, 12)}.tar`);
  execFileSync('git', ['-C', repo, 'archive', '--output', tar, sha, 'src', 'bin', 'tsconfig.json']);
  execFileSync('tar', ['-x', '-f', tar, '-C', dir]);
  fs.rmSync(tar);
  fs.symlinkSync(path.join(repo, 'node_modules'), path.join(dir, 'node_modules'));
  // lib/*.js are ES modules; the snapshot has no package.json of its own to say so.
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  log(`compiling ${rev} (${sha.slice(0, 12)}) into ${dir}/lib`);
  execFileSync(path.join(repo, 'node_modules', '.bin', 'tsc'), ['-p', dir], { stdio: 'inherit' });
  return { sha, dir, launcher: path.join(dir, 'bin', 'modelpub.js') };
}
