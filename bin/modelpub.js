#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in lib/ (made by `npm ci` through the prepare script, or `npm run compile`).
import('../lib/cli.js').then((m) => m.main(process.argv)).catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('lib/cli.js')) {
    console.error('modelpub: lib/ is missing; run `npm run compile` (or `npm ci`) first.');
  } else console.error(err);
  process.exit(1);
});
