#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-old-space-size=1536 --no-memory-reducer
// Two malloc arenas, not glibc's eight per core: the compression threads, libuv's pool and V8's helpers each grew an
// arena of their own and kept it, 280 MB of a 2,000-model build's 1.16 GB peak (docs/benchmarks/README.md).
// The heap cap keeps a large build's RSS near its live set: under a build's allocation rate V8 would otherwise grow the
// heap to about twice that (docs/benchmarks/README.md). Raise it for larger catalogs:
//   node --max-old-space-size=4096 bin/modelpub.js build ...
// No memory reducer: it shrinks the heap of a gateway gone quiet, and the gateway then answers its next load markedly
// slower (docs/benchmarks/README.md). V8 reads the flag only at start, so it is given here (and in `npm start`).
// Thin launcher: the compiled CLI lives in lib/ (made by `npm ci` through the prepare script, or `npm run compile`).
import('../lib/cli.js')
  .then((m) => m.main(process.argv))
  .catch((err) => {
    if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('lib/cli.js')) {
      console.error('modelpub: lib/ is missing; run `npm run compile` (or `npm ci`) first.');
    } else console.error(err);
    process.exit(1);
  });
