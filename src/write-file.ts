// fs.writeFile and fs.readFile whose errors name the file. Node's message for a failed write(2) or read(2) names only
// the system call ("ENOSPC: no space left on device, write", "EISDIR: illegal operation on a directory, read"): a full
// disk during a build, or a folder where a release has its manifest, said nothing of where.
import { readFile, writeFile } from 'node:fs/promises';

/** Writes `data` to `file`; a failure is rethrown with the file's path in its message (code and cause kept). */
export async function writeFileNamed(file: string, data: string | Uint8Array): Promise<void> {
  try {
    await writeFile(file, data);
  } catch (e) {
    throw namedWriteError(e, file);
  }
}

/** Reads `file`; a failure is rethrown with the file's path in its message (code and cause kept). */
export async function readFileNamed(file: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (e) {
    throw namedError(e, file, 'read');
  }
}

/** The error of a read of `file`, naming it unless it already does. */
export const namedReadError = (e: unknown, file: string): unknown => namedError(e, file, 'read');

/** The error of a write to `file`, naming it unless it already does (open(2)'s errors carry the path). */
export const namedWriteError = (e: unknown, file: string): unknown => namedError(e, file, 'write');

function namedError(e: unknown, file: string, verb: 'read' | 'write'): unknown {
  const err = e as NodeJS.ErrnoException;
  if (!(err instanceof Error) || typeof err.code !== 'string' || err.path !== undefined) return e;
  // "ENOSPC: no space left on device, write" -> "no space left on device (ENOSPC)"
  const what = err.message.replace(new RegExp(`^${err.code}: `), '').replace(/, \w+$/, '');
  return Object.assign(new Error(`cannot ${verb} ${file}: ${what} (${err.code})`, { cause: e }), {
    code: err.code,
    path: file,
  });
}
