#!/usr/bin/env node
// Checks the figures README.md and docs/ state about the default publication against a build of it, so that a change
// of data/ (or of what a build writes) that makes them stale fails here instead of going unnoticed: file and body
// counts, the distinct bytes, the representations, and what a first `modelpub publish` uploads (every distinct body
// and representation, once). Figures that are timings or measurements of a run (seconds, RSS) are not checked: they
// are dated by the run they come from.
//
//   node scripts/check-doc-figures.mjs --dist DIR    a build of data/ (`modelpub build --data data --out DIR`)
//
// Prints each figure with where it is stated; exits 1 naming each one that differs (what the docs say, what the
// build has), 2 on a usage error. test/conformance.test.ts runs it over the default build it makes.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: { dist: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } },
});
if (args.help || !args.dist) {
  console.log('usage: node scripts/check-doc-figures.mjs --dist DIR (a build of the default data/)');
  process.exit(args.help ? 0 : 2);
}

/** The figures of the build at `dist` (its current release's manifest). */
function figuresOf(dist) {
  const release = fs.realpathSync(path.join(dist, 'current'));
  const manifest = JSON.parse(fs.readFileSync(path.join(release, 'manifest.json'), 'utf8'));
  const bodies = new Map();
  const slugs = new Set();
  for (const f of manifest.files) {
    bodies.set(f.sha256, f.bytes);
    const m = /^api\/v1\/models\/([^/]+)\//.exec(f.path);
    if (m) slugs.add(m[1]);
  }
  const objects = new Map(bodies);
  let representationBytes = 0;
  for (const r of Object.values(manifest.representations ?? {}))
    for (const e of [r.br, r.gzip]) {
      objects.set(e.sha256, e.bytes);
      representationBytes += e.bytes;
    }
  const sum = (m) => [...m.values()].reduce((a, b) => a + b, 0);
  return {
    files: manifest.files.length,
    bodies: bodies.size,
    bodyMB: sum(bodies) / 1e6,
    pathMB: manifest.files.reduce((a, f) => a + f.bytes, 0) / 1e6,
    representationMB: representationBytes / 1e6,
    publishObjects: objects.size,
    publishMB: sum(objects) / 1e6,
    models: slugs.size,
  };
}

const count = (s) => Number(s.replace(/,/g, ''));
/**
 * Where each figure is stated: a file, a pattern whose groups are figures, and which figure each group is. MB
 * figures match when they round to what is written (0 decimals: whole MB; 1: tenths).
 */
const CLAIMS = [
  { file: 'README.md', re: /real catalog of (\d+) models/, groups: ['models'] },
  { file: 'README.md', re: /build of the default data \((\d+) models, ([\d,]+) files/, groups: ['models', 'files'] },
  {
    file: 'README.md',
    re: /`modelpub publish` of the default data to a file:\/\/ remote \| [^(]*\(([\d,]+) objects, ([\d.]+) MB:/,
    groups: ['publishObjects', 'publishMB'],
  },
  {
    file: 'docs/publication.md',
    re: /For the default data, ([\d,]+) files hold ([\d,]+) distinct bodies/,
    groups: ['files', 'bodies'],
  },
  { file: 'docs/publication.md', re: /the default publication has ([\d,]+) distinct bodies/, groups: ['bodies'] },
  {
    file: 'docs/publication.md',
    re: /the representations are ([\d.]+) MB for the default\s+data's ([\d.]+) MB of distinct bodies/,
    groups: ['representationMB', 'bodyMB'],
  },
  {
    file: 'docs/publication.md',
    re: /hard links do not survive an upload \(([\d.]+) MB for ([\d.]+) MB of\s+distinct bodies\)/,
    groups: ['pathMB', 'bodyMB'],
  },
  {
    file: 'docs/publication.md',
    re: /\| first \| file:\/\/ \| ([\d,]+) \(every distinct body and representation once\) \| ([\d.]+) MB/,
    groups: ['publishObjects', 'publishMB'],
  },
  {
    file: 'docs/publication.md',
    re: /\| first \| s3rver \| ([\d,]+) \| ([\d.]+) MB/,
    groups: ['publishObjects', 'publishMB'],
  },
];

const actual = figuresOf(path.resolve(args.dist));
let wrong = 0;
for (const claim of CLAIMS) {
  const text = fs.readFileSync(path.join(REPO, claim.file), 'utf8');
  const m = claim.re.exec(text);
  if (!m) {
    console.log(
      `${claim.file}: no longer states ${claim.groups.join(', ')} as ${claim.re} expects: update this script`,
    );
    wrong++;
    continue;
  }
  const line = text.slice(0, m.index).split('\n').length;
  claim.groups.forEach((name, i) => {
    const stated = m[i + 1];
    const has = actual[name];
    const decimals = stated.includes('.') ? stated.split('.')[1].length : 0;
    const ok = name.endsWith('MB') ? has.toFixed(decimals) === stated : count(stated) === has;
    const shown = name.endsWith('MB') ? has.toFixed(decimals) : has.toLocaleString('en-US');
    console.log(`${ok ? 'ok  ' : 'DIFF'} ${claim.file}:${line} ${name}: stated ${stated}, the build has ${shown}`);
    if (!ok) wrong++;
  });
}
if (wrong) {
  console.log(
    `${wrong} figures differ from the build at ${args.dist}: update the docs (or this script) in the same change`,
  );
  process.exit(1);
}
