#!/usr/bin/env node
// How long a publication switch blocks a gateway's event loop: loads the live publication of --pub (a build's --out)
// as a poll that found a new one does (Publication.load: manifest read, checked, parsed, indexed), --reps times, with
// perf_hooks' monitorEventLoopDelay running, and prints the largest event-loop delay seen during each load and the
// load's duration (medians and spread). Requests are answered only between such delays.
//
//   node scripts/bench-switch.mjs --pub DIR [--reps 5] [--lib DIR]
//
// --lib: the compiled modules to measure (default ./lib; another checkout's lib/ gives the before figure).
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';

const { values } = parseArgs({
  options: { pub: { type: 'string' }, reps: { type: 'string', default: '5' }, lib: { type: 'string', default: 'lib' } },
});
if (!values.pub) throw new Error('--pub DIR: a folder `modelpub build --out` wrote');
const lib = (m) => import(pathToFileURL(path.resolve(values.lib, m)).href);
const { openSource } = await lib('publication/source.js');
const { Publication } = await lib('gateway/publication.js');
const { BodyCache } = await lib('gateway/caches.js');

const source = await openSource(values.pub);
const id = await source.currentId();
const cache = new BodyCache(64 << 20);
const h = monitorEventLoopDelay({ resolution: 1 });
h.enable();
const rows = [];
// A second, plain measure: the longest gap between two runs of a 1 ms timer (what a request waiting to be read sees).
let last = performance.now();
let gap = 0;
const ticker = setInterval(() => {
  const now = performance.now();
  gap = Math.max(gap, now - last);
  last = now;
}, 1);
for (let i = 0; i < Number(values.reps) + 1; i++) {
  h.reset();
  gap = 0;
  last = performance.now();
  const t0 = performance.now();
  await Publication.load(source, id, cache);
  const ms = performance.now() - t0;
  // The delay a block caused is seen when the timers run next: let them, before reading it.
  await new Promise((resolve) => setTimeout(resolve, 20));
  // the first load warms the file cache and the JIT
  if (i > 0) rows.push({ maxDelayMs: h.max / 1e6, gapMs: gap, loadMs: ms });
}
clearInterval(ticker);
h.disable();
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (xs) =>
  `median ${med(xs).toFixed(0)} ms (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)})`;
console.log(`lib ${values.lib}, ${values.pub}, ${rows.length} loads`);
console.log(`max event-loop delay during a load: ${fmt(rows.map((r) => r.maxDelayMs))}`);
console.log(`longest gap between 1 ms timer runs:  ${fmt(rows.map((r) => r.gapMs))}`);
console.log(`load duration:                      ${fmt(rows.map((r) => r.loadMs))}`);
