// Ajv (draft 2020-12) loaded with the committed JSON Schemas under schemas/, for tests that check published files.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';

export const SCHEMA_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../schemas');

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const validDate = (s: string) => {
  const m = DATE.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!));
  return d.getUTCFullYear() === +m[1]! && d.getUTCMonth() === +m[2]! - 1 && d.getUTCDate() === +m[3]!;
};

/** Strict Ajv 2020 (union types such as ["string","number"] are valid 2020-12) with the three formats zod emits (date, date-time, uri); ajv-formats is not a dependency. */
export function createAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  ajv.addFormat('date', { type: 'string', validate: validDate });
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (s: string) => /^\d{4}-\d{2}-\d{2}T/.test(s) && validDate(s.slice(0, 10)) && !Number.isNaN(Date.parse(s)),
  });
  ajv.addFormat('uri', { type: 'string', validate: (s: string) => URL.canParse(s) });
  return ajv;
}

/** The committed schema files: name (without .schema.json) -> parsed schema. */
export function committedSchemas(): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    readdirSync(SCHEMA_DIR)
      .filter((f) => f.endsWith('.schema.json'))
      .sort()
      .map((f) => [
        f.slice(0, -'.schema.json'.length),
        JSON.parse(readFileSync(path.join(SCHEMA_DIR, f), 'utf8')) as Record<string, unknown>,
      ]),
  );
}

/** Compiled validators of the committed schemas, by name. */
export function compileCommitted(): Record<string, ValidateFunction> {
  const ajv = createAjv();
  return Object.fromEntries(Object.entries(committedSchemas()).map(([name, s]) => [name, ajv.compile(s)]));
}

/** Ajv's errors as short readable lines (path: message), for assertion messages. */
export const ajvErrors = (v: ValidateFunction): string =>
  (v.errors ?? [])
    .slice(0, 5)
    .map((e) => `${e.instancePath || '/'}: ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`)
    .join('; ');
