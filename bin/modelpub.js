#!/usr/bin/env -S node --max-old-space-size=1536 --no-memory-reducer
// The heap cap keeps a large build's RSS near its live set: 1.5 GB peak measured for 2,000 models x 60 metrics x
// 500k runs, where without it V8 grows the heap past 3 GB under the build's allocation rate. Raise it for larger catalogs:
//   node --max-old-space-size=4096 bin/modelpub.js build ...
// No memory reducer: it shrinks the heap of a gateway gone quiet, and in the benchmark's alternation of eight servers
// the gateway then answered 0.76-0.79 x the reference rate, against 0.84-0.94 x without it (docs/benchmarks/
// README.md, sixth session). V8 reads the flag only at start, so it is given here (and in `npm start`).
// Thin launcher: the compiled CLI lives in lib/ (made by `npm ci` through the prepare script, or `npm run compile`).
import('../lib/cli.js')
  .then((m) => m.main(process.argv))
  .catch((err) => {
    if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('lib/cli.js')) {
      console.error('modelpub: lib/ is missing; run `npm run compile` (or `npm ci`) first.');
    } else console.error(err);
    process.exit(1);
  });
