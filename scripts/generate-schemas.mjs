#!/usr/bin/env node
// Writes schemas/<name>.schema.json from the zod schemas (src/json-schemas.ts, compiled to lib/ by tsc), and the field
// reference of the source records, docs/data-reference.md (src/data-reference.ts).
// Run through `npm run schemas`, which compiles first. Files of ours that no schema produces any more are removed.
// test/schemas.test.ts fails when the committed files differ from what this writes.
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outDir = path.join(root, 'schemas');
const { schemaFiles } = await import('../lib/json-schemas.js').catch((e) => {
  console.error('generate-schemas: cannot load lib/json-schemas.js; run `npm run schemas` (it compiles first).');
  throw e;
});

const files = schemaFiles();
await mkdir(outDir, { recursive: true });
let written = 0;
for (const [name, text] of Object.entries(files)) {
  const target = path.join(outDir, name);
  const old = await readFile(target, 'utf8').catch(() => null);
  if (old !== text) {
    await writeFile(target, text);
    written++;
  }
}
let removed = 0;
for (const name of await readdir(outDir)) {
  if (name.endsWith('.schema.json') && !(name in files)) {
    await rm(path.join(outDir, name));
    removed++;
  }
}
console.log(`schemas/: ${Object.keys(files).length} schemas, ${written} written, ${removed} removed`);

const { dataReference } = await import('../lib/data-reference.js');
const reference = path.join(root, 'docs', 'data-reference.md');
const text = dataReference();
if ((await readFile(reference, 'utf8').catch(() => null)) !== text) await writeFile(reference, text);
console.log('docs/data-reference.md: the field reference of the source records');
