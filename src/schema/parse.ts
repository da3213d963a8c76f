// Reading a published JSON file against its schema, with an error that names the file, the field and the reason
// (a zod error dump names none of them).
import type { z } from 'zod';

export function parseJsonFile<T>(schema: z.ZodType<T>, bytes: Buffer | string, where: string): T {
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
  return r.data;
}
