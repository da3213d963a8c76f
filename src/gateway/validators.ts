// HTTP validators of served bodies.

/** A strong ETag from a SHA-256 (hex): its first 128 bits. */
export const etagOf = (sha256: string) => `"${sha256.slice(0, 32)}"`;
/**
 * The ETag of a br or gzip representation: the identity body's, with `-br` or `-gz` inside the quotes (RFC 9110
 * 8.8.3: each representation its own strong validator). If-None-Match strips the suffix (docs/api.md).
 */
export const codedEtag = (identityEtag: string, coding: 'br' | 'gzip') =>
  `${identityEtag.slice(0, -1)}${coding === 'br' ? '-br' : '-gz'}"`;
/** An ISO instant as an HTTP date (Last-Modified). */
export const httpDate = (iso: string) => new Date(iso).toUTCString();

const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '\\d{2}:\\d{2}:\\d{2}';
const IMF_FIXDATE = new RegExp(`^${DAY}, \\d{2} ${MONTH} \\d{4} ${TIME} GMT$`);
const RFC850_DATE = new RegExp(`^(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, \\d{2}-${MONTH}-\\d{2} ${TIME} GMT$`);
const ASCTIME_DATE = new RegExp(`^${DAY} ${MONTH} [ \\d]\\d ${TIME} \\d{4}$`);

/**
 * An HTTP-date (RFC 9110 5.6.7: IMF-fixdate, or the obsolete RFC 850 and asctime forms recipients must accept) as ms
 * since the epoch; NaN for anything else, which a conditional request must then ignore (13.1.3): Date.parse alone
 * takes '2030' or '7/1/2026' too, the latter in the server's time zone.
 */
export function parseHttpDate(value: string): number {
  const v = value.trim();
  if (IMF_FIXDATE.test(v) || RFC850_DATE.test(v)) return Date.parse(v);
  if (ASCTIME_DATE.test(v)) return Date.parse(`${v} GMT`); // asctime has no zone: it is GMT
  return NaN;
}
