// Accept-Encoding negotiation (RFC 9110 §12.5.3) between the codings the publication stores: br, gzip and identity.
// It runs on every request, so each distinct header value is parsed once and its answer kept in a bounded cache.

export type Coding = 'br' | 'gzip' | 'identity';

/** Server preference when the client weighs codings alike: the smallest bytes first. */
const PREFERENCE: readonly Coding[] = ['br', 'gzip', 'identity'];

/** `token` characters (RFC 9110 §5.6.2), for the coding names. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
/** `weight` (RFC 9110 §12.4.2): "q=" then a qvalue of at most three decimals, at most 1. */
const WEIGHT = /^q=(0(\.\d{0,3})?|1(\.0{0,3})?)$/;

/**
 * The coding to send, given the request's Accept-Encoding: 'br', 'gzip' or 'identity', or null when the header rules
 * out every one of them (`identity;q=0` or `*;q=0` and neither br nor gzip accepted). No header means identity.
 *
 * Rules: names are case-insensitive and `x-gzip` is gzip (§8.4.1.3); `*` stands for every coding the header does not
 * name, identity included; identity is acceptable unless excluded, at the lowest weight when the header does not name
 * it; q=0 excludes; a part that does not parse (a bad qvalue, a parameter other than q) is ignored, as are codings we
 * do not store; a coding named twice takes its lowest weight (never send what the client refused). The highest weight
 * wins, then br before gzip before identity.
 */
export function negotiateEncoding(header: string | readonly string[] | undefined): Coding | null {
  if (header === undefined) return 'identity';
  const value = typeof header === 'string' ? header : header.join(',');
  const cached = cache.get(value);
  if (cached !== undefined) return cached;
  const answer = choose(value);
  remember(value, answer);
  return answer;
}

function choose(value: string): Coding | null {
  const weights = new Map<string, number>(); // named coding -> weight (br, gzip, identity or *), lowest when repeated
  for (const part of value.split(',')) {
    const parsed = parsePart(part);
    if (parsed === undefined) continue;
    const [name, q] = parsed;
    if (name !== 'br' && name !== 'gzip' && name !== 'identity' && name !== '*') continue;
    const before = weights.get(name);
    weights.set(name, before === undefined ? q : Math.min(before, q));
  }
  const star = weights.get('*');
  let best: Coding | null = null;
  let bestWeight = 0;
  for (const coding of PREFERENCE) {
    let q = weights.get(coding) ?? star;
    // Identity stays acceptable unless excluded, below every coding the client asked for (§12.5.3).
    if (q === undefined) q = coding === 'identity' ? Number.MIN_VALUE : 0;
    if (q > bestWeight) {
      best = coding;
      bestWeight = q;
    }
  }
  return best;
}

/** `coding [OWS ";" OWS weight]`, lower-cased, with its weight (1 when absent); undefined when malformed or empty. */
function parsePart(part: string): [string, number] | undefined {
  const semicolon = part.indexOf(';');
  const name = (semicolon < 0 ? part : part.slice(0, semicolon)).trim().toLowerCase();
  if (!TOKEN.test(name)) return undefined;
  const coding = name === 'x-gzip' ? 'gzip' : name;
  if (semicolon < 0) return [coding, 1];
  const weight = WEIGHT.exec(
    part
      .slice(semicolon + 1)
      .trim()
      .toLowerCase(),
  );
  return weight ? [coding, Number(weight[1])] : undefined;
}

/** Distinct header values kept: real clients send a handful; the bound keeps a client that varies it from growing it. */
const CACHE_ENTRIES = 256;
/** Longer values are answered but not kept, so the cache holds at most CACHE_ENTRIES × this many characters. */
const CACHE_VALUE_CHARS = 256;
const cache = new Map<string, Coding | null>();

function remember(value: string, answer: Coding | null): void {
  if (value.length > CACHE_VALUE_CHARS) return;
  // Evict the oldest entry (Map keeps insertion order): cheap, and the common values are re-added at once.
  if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
  cache.set(value, answer);
}
