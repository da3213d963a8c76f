// A publication's JSON files, checked against their schemas as they are read (release.ts checks their bytes).
import { z } from 'zod';
import { Attribution } from '../schema/api.js';
import { ListArtifact, Manifest, ManifestEntry, BodyRepresentations } from './files.js';
import { Sha256Hex } from '../schema/primitives.js';

/** Artifacts of releases written before artifacts carried the attribution lack it: the reader takes the release's. */
const ArtifactAsRead = ListArtifact.extend({ attribution: Attribution.optional() });
export type ArtifactAsRead = z.infer<typeof ArtifactAsRead>;
/**
 * The artifact as written, once checked: zod's output would list each object's keys in schema order, and a composed
 * page must keep the key order of the build's bytes to equal a prebuilt one (the schema has no defaults or transforms).
 */
export const parseArtifact = (bytes: Buffer, where: string): ArtifactAsRead =>
  parseJsonFile(ArtifactAsRead, bytes, where, { keepInput: true });

/** A JSON file checked against its schema, with an error that names the file, the field and the reason. */
export function parseJsonFile<T>(
  schema: z.ZodType<T>,
  bytes: Buffer | string,
  where: string,
  { keepInput = false } = {},
): T {
  let doc: unknown;
  try {
    doc = JSON.parse(typeof bytes === 'string' ? bytes : bytes.toString('utf8'));
  } catch (e) {
    throw new Error(`${where}: not JSON (${(e as Error).message})`);
  }
  const data = checked(schema, doc, where);
  return keepInput ? (doc as T) : data;
}

function checked<T>(schema: z.ZodType<T>, doc: unknown, where: string, at: PropertyKey[] = []): T {
  const r = schema.safeParse(doc);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new Error(`${where}: ${[...at, ...i.path].map(String).join('.') || '(top)'}: ${i.message}`);
  }
  return r.data;
}

/** Rows checked between two turns of the event loop: a few milliseconds of work. */
const SLICE = 2048;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const EntrySlice = ManifestEntry.array();
const RepresentationSlice = z.record(Sha256Hex, BodyRepresentations);

/**
 * manifest.json checked against its schema as parseJsonFile does, with the same errors, but its entries a slice at a
 * time with a turn of the event loop between two: a gateway loading the next publication (75,000 entries) goes on
 * answering requests meanwhile, where one check of the whole took it away for a second or more.
 */
export async function parseManifest(bytes: Buffer, where: string): Promise<Manifest> {
  let doc: unknown;
  try {
    doc = JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    throw new Error(`${where}: not JSON (${(e as Error).message})`);
  }
  await nextTurn();
  const d = doc as { files?: unknown; representations?: unknown };
  const isRecord = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);
  // Anything but the usual shape is checked whole: its error is then the one a single check gives.
  if (!isRecord(doc) || !Array.isArray(d.files) || (d.representations !== undefined && !isRecord(d.representations)))
    return checked(Manifest, doc, where);
  const { files, representations } = d as { files: unknown[]; representations?: Record<string, unknown> };
  const head = checked(
    Manifest,
    { ...d, files: [], ...(representations === undefined ? {} : { representations: {} }) },
    where,
  );
  const out: ManifestEntry[] = [];
  for (let i = 0; i < files.length; i += SLICE) {
    const part = files.slice(i, i + SLICE);
    const rows = EntrySlice.safeParse(part);
    if (!rows.success) {
      const issue = rows.error.issues[0]!;
      const [n, ...rest] = issue.path;
      throw new Error(`${where}: ${['files', Number(n) + i, ...rest].map(String).join('.')}: ${issue.message}`);
    }
    for (const row of rows.data) out.push(row);
    await nextTurn();
  }
  head.files = out;
  if (representations !== undefined) {
    const reps: Record<string, BodyRepresentations> = {};
    const keys = Object.keys(representations);
    for (let i = 0; i < keys.length; i += SLICE) {
      const part = Object.fromEntries(keys.slice(i, i + SLICE).map((k) => [k, representations[k]]));
      Object.assign(reps, checked(RepresentationSlice, part, where, ['representations']));
      await nextTurn();
    }
    head.representations = reps;
  }
  return head;
}
