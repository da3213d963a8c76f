// The checks every read of a publication goes through, each written once: a body is the size and sha256 its
// manifest (or the pointer) names, and no read takes in more than that size.
import { hash } from 'node:crypto';

/** Bytes that are not the ones their name or the manifest promise: a damaged, half-replaced or foreign publication. */
export class IntegrityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IntegrityError';
  }
}

// The one-shot hash: a third of the cost of createHash() for small bodies.
export const sha256Hex = (b: Buffer | string): string => hash('sha256', b);

/** `b`, read from `where`, must be `bytes` long (when known) and hash to `sha256`. */
export function checkBytes(b: Buffer, where: string, sha256: string, bytes?: number): void {
  if (bytes !== undefined && b.length !== bytes)
    throw new IntegrityError(`${where} holds ${b.length} bytes, not the ${bytes} it was published with`);
  const got = sha256Hex(b);
  if (got !== sha256) throw new IntegrityError(`${where} has sha256 ${got}, not ${sha256}`);
}

/** A read that would take in more than the size it was published with: refused before it fills memory. */
export const tooLarge = (where: string, maxBytes: number): IntegrityError =>
  new IntegrityError(`${where} holds more than the ${maxBytes} bytes it was published with`);
