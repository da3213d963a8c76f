// A publication's JSON files, checked against their schemas as they are read (release.ts checks their bytes).
import type { z } from 'zod';
import { Attribution } from '../schema/api.js';
import { ListArtifact } from './files.js';

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
  const r = schema.safeParse(doc);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new Error(`${where}: ${i.path.join('.') || '(top)'}: ${i.message}`);
  }
  return keepInput ? (doc as T) : r.data;
}
