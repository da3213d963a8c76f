// HTTP validators of served bodies.

/** A strong ETag from a SHA-256 (hex): its first 128 bits. */
export const etagOf = (sha256: string) => `"${sha256.slice(0, 32)}"`;
/** An ISO instant as an HTTP date (Last-Modified). */
export const httpDate = (iso: string) => new Date(iso).toUTCString();
