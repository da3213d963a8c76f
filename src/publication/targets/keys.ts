// Every key a target is asked for is checked here before it becomes a path, an S3 key or a URL: the remote layout's
// keys are segments of letters, digits, '.', '_' and '-' that never start with '.', so no key can climb out of the
// root ('..'), name it absolutely, or reach a hidden name such as a target's own temporary folder.
const KEY_RE = /^(?:[A-Za-z0-9_-][A-Za-z0-9._-]*\/)*(?:[A-Za-z0-9_-][A-Za-z0-9._-]*)?$/;

/** `key` as given, once it is a key of the remote layout (a folder's key ends with '/'); refused otherwise. */
export function checkedKey(key: string, root: string): string {
  if (!KEY_RE.test(key))
    throw new Error(
      `${root}: refused the key ${JSON.stringify(key)}: not a key of the remote layout (it could leave the root)`,
    );
  return key;
}
