// fs.writeFile whose error names the file. Node's message for a failed write(2) names only the system call
// ("ENOSPC: no space left on device, write"): a full disk during a build said nothing of where.
import { writeFile } from 'node:fs/promises';

/** Writes `data` to `file`; a failure is rethrown with the file's path in its message (code and cause kept). */
export async function writeFileNamed(file: string, data: string | Uint8Array): Promise<void> {
  try {
    await writeFile(file, data);
  } catch (e) {
    throw namedWriteError(e, file);
  }
}

/** The error of a write to `file`, naming it unless it already does (open(2)'s errors carry the path). */
export function namedWriteError(e: unknown, file: string): unknown {
  const err = e as NodeJS.ErrnoException;
  if (!(err instanceof Error) || typeof err.code !== 'string' || err.path !== undefined) return e;
  // "ENOSPC: no space left on device, write" -> "no space left on device (ENOSPC)"
  const what = err.message.replace(new RegExp(`^${err.code}: `), '').replace(/, \w+$/, '');
  return Object.assign(new Error(`cannot write ${file}: ${what} (${err.code})`, { cause: e }), {
    code: err.code,
    path: file,
  });
}
