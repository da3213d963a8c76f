// The field reference of every source record kind (docs/data-reference.md), generated from the zod schemas through
// their JSON Schemas, so that it cannot drift from what `validate` accepts. `npm run schemas` writes it;
// test/schemas.test.ts fails when the committed file differs.
import { z } from 'zod';
import {
  BenchmarkResult,
  DisplayOverride,
  Metric,
  ModelRecord,
  OfferRecord,
  PriceObservation,
  ProviderRecord,
  SiteFile,
  Source,
  SpeedRun,
} from './schema/source.js';

interface Kind {
  title: string;
  where: string;
  schema: z.ZodType;
}

/** The record kinds, in the order a maintainer meets them (data/README.md). */
const KINDS: Kind[] = [
  { title: 'Model', where: '`data/models/<slug>.yaml`, one per file; the slug is the file name', schema: ModelRecord },
  { title: 'Offer', where: '`data/offers/<provider>.jsonl`, one per line', schema: OfferRecord },
  { title: 'Provider', where: '`data/providers.yaml`, each an item of `providers:`', schema: ProviderRecord },
  {
    title: 'Benchmark result',
    where: '`data/measurements/benchmarks/<source>.jsonl`, one per line',
    schema: BenchmarkResult,
  },
  { title: 'Speed sample', where: '`data/measurements/speed/<source>.jsonl`, one per line', schema: SpeedRun },
  {
    title: 'Price observation',
    where: "`data/measurements/prices/<source>.jsonl`, one per line: a model's headline price",
    schema: PriceObservation,
  },
  { title: 'Source', where: '`data/sources.yaml`, each an item of `sources:`', schema: Source },
  { title: 'Metric', where: '`data/metrics.yaml`, each an item of `metrics:`', schema: Metric },
  {
    title: 'Display override',
    where: '`data/overrides/*.yaml`, each an item of `overrides:`',
    schema: DisplayOverride,
  },
  { title: 'Site', where: '`data/site.yaml`', schema: SiteFile },
];

type Node = {
  type?: string | string[];
  anyOf?: Node[];
  const?: unknown;
  enum?: unknown[];
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  minItems?: number;
  items?: Node;
  properties?: Record<string, Node>;
  additionalProperties?: Node | boolean;
  propertyNames?: Node;
  required?: string[];
  default?: unknown;
  description?: string;
};

const code = (v: unknown) => `\`${typeof v === 'string' ? v : JSON.stringify(v)}\``;
const num = (n: number) => n.toLocaleString('en-US');

/** A schema node's type in words: "number, 0 to 1,000,000, or null", "one of `a`, `b`". */
function typeOf(n: Node): string {
  if (n.anyOf) return n.anyOf.map(typeOf).join(', or ');
  if (n.const !== undefined) return code(n.const);
  if (n.enum) return `one of ${n.enum.map(code).join(', ')}`;
  if (Array.isArray(n.type)) return n.type.map((type) => typeOf({ ...n, type })).join(', or ');
  switch (n.type) {
    case 'integer':
    case 'number': {
      const what = n.type === 'integer' ? 'whole number' : 'number';
      if (n.minimum !== undefined && n.maximum !== undefined) return `${what}, ${num(n.minimum)} to ${num(n.maximum)}`;
      return n.minimum !== undefined ? `${what} ≥ ${num(n.minimum)}` : what;
    }
    case 'string':
      if (n.format === 'date') return 'date (YYYY-MM-DD)';
      if (n.format === 'date-time') return 'timestamp with a zone (ISO 8601)';
      if (n.format === 'uri') return 'http(s) URL';
      // Long patterns are the hidden-character guards of names and prose: described in data/README.md, not here.
      if (n.pattern && n.pattern.length <= 60) return `text matching ${code(n.pattern)}`;
      return n.minLength ? 'text, not empty' : 'text';
    case 'array':
      return `list of ${n.items ? typeOf(n.items) : 'values'}${n.minItems ? `, at least ${n.minItems}` : ''}`;
    case 'object':
      if (n.properties) return 'mapping';
      if (typeof n.additionalProperties === 'object') {
        const key = n.propertyNames?.pattern ? ` (keys matching ${code(n.propertyNames.pattern)})` : '';
        return `mapping of name to ${typeOf(n.additionalProperties)}${key}`;
      }
      return 'mapping';
    case undefined:
      return 'any value';
    default:
      return n.type;
  }
}

/** The object a node describes fields of (itself, its list's items, its mapping's values), and how paths go into it. */
function inner(n: Node): [Node, string] | null {
  const object = (x: Node | boolean | undefined): Node | null =>
    typeof x === 'object' && x.type === 'object' && x.properties ? x : null;
  if (object(n)) return [n, '.'];
  const items = n.type === 'array' ? object(n.items) : null;
  if (items) return [items, '[].'];
  const values = n.type === 'object' ? object(n.additionalProperties) : null;
  if (values) return [values, '.<name>.'];
  const variant = n.anyOf?.find((v) => inner(v));
  return variant ? inner(variant) : null;
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function rows(n: Node, prefix: string, out: string[]): void {
  const required = new Set(n.required ?? []);
  for (const [name, field] of Object.entries(n.properties ?? {})) {
    const path = `${prefix}${name}`;
    const presence = required.has(name)
      ? 'yes'
      : field.default !== undefined
        ? `no (default ${code(field.default)})`
        : 'no';
    out.push(`| \`${path}\` | ${cell(typeOf(field))} | ${presence} | ${cell(field.description ?? '')} |`);
    const child = inner(field);
    if (child) rows(child[0], `${path}${child[1]}`, out);
  }
}

/** docs/data-reference.md: one table per record kind, a row per field (nested fields by their dotted path). */
export function dataReference(): string {
  const out = [
    '# Source data: field reference',
    '',
    'Generated from the zod schemas in `src/schema/source.ts` by `npm run schemas`; do not edit by hand. What each file',
    'holds and how to add records by hand: [data/README.md](../data/README.md). Every record is strict: a field not',
    'listed here is an error. "required: no" fields may be left out; the default is what the build reads then.',
    '`maintained` marks what a maintainer wrote (data/README.md, "Maintained records"); `private` never reaches the',
    'publication.',
  ];
  for (const k of KINDS) {
    const js = z.toJSONSchema(k.schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'throw' }) as Node;
    out.push('', `## ${k.title}`, '', `${k.where}.`, '', '| field | type | required | meaning |', '|---|---|---|---|');
    rows(js, '', out);
  }
  return `${out.join('\n')}\n`;
}
