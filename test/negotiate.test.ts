// Accept-Encoding negotiation: the table of RFC 9110 §12.5.3 cases the gateway must answer, and the parse cache.
import { describe, expect, it } from 'vitest';
import { negotiateEncoding } from '../src/gateway/negotiate.js';

describe('negotiateEncoding', () => {
  it.each([
    // [Accept-Encoding, coding sent]
    [undefined, 'identity'], // no header: identity
    ['', 'identity'], // an empty value asks for no coding
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['br;q=0.5, gzip', 'gzip'],
    ['br;q=0.5, gzip;q=0.5', 'br'], // equal weights: br, the smaller
    ['gzip, br', 'br'], // order in the header carries no preference
    ['gzip, deflate, br, zstd', 'br'], // Chromium
    ['gzip, deflate', 'gzip'], // curl --compressed without brotli
    ['deflate, gzip;q=1.0, *;q=0.5', 'gzip'], // RFC 9110's example
    ['*', 'br'],
    ['*;q=0.5, gzip', 'gzip'], // * only covers what the header does not name
    ['*;q=0.5, br;q=0', 'gzip'],
    ['identity', 'identity'],
    ['identity, gzip;q=0.8', 'identity'], // identity named at a higher weight wins
    ['identity;q=0.5, gzip;q=0.5', 'gzip'],
    ['identity;q=0', null], // identity refused and nothing else accepted
    ['identity;q=0, gzip', 'gzip'],
    ['*;q=0', null],
    ['*;q=0, identity', 'identity'], // a more specific entry for identity overrides *
    ['*;q=0, br;q=0.1', 'br'],
    ['br;q=0, gzip;q=0', 'identity'], // identity stays acceptable when not excluded
    ['br;q=0, gzip;q=0, identity;q=0', null], // q=0 for everything
    ['br;q=0, gzip;q=0, *;q=0', null],
    ['zstd, deflate, compress', 'identity'], // unknown codings ignored; identity still acceptable
    ['zstd, deflate, identity;q=0', null],
    ['GZIP', 'gzip'], // case-insensitive names
    ['Br;Q=0.9, gzip;q=0.8', 'br'], // case-insensitive "q="
    ['x-gzip', 'gzip'], // RFC 9110 §8.4.1.3
    [' br ; q=0.4 ,gzip;q=0.3', 'br'], // optional white space around ";" and ","
    ['gzip, gzip;q=0', 'identity'], // named twice: the lowest weight, not the first
    ['br;q=1.0', 'br'],
    ['br;q=0.001', 'br'],
    // Malformed parts are ignored, the rest of the header still counts:
    ['br;q=2, gzip', 'gzip'], // qvalue above 1
    ['br;q=1.5, gzip;q=0.1', 'gzip'],
    ['br;q=0.1234, gzip;q=0.1', 'gzip'], // more than three decimals
    ['br;q=abc, gzip;q=0.1', 'gzip'],
    ['br;q=, gzip;q=0.1', 'gzip'],
    ['br;level=5, gzip;q=0.1', 'gzip'], // a parameter other than q
    ['br;q=-1, gzip;q=0.1', 'gzip'],
    ['b r, gzip;q=0.1', 'gzip'], // not a token
    [';q=1, gzip;q=0.1', 'gzip'],
    [',,, ,br', 'br'], // empty list elements
    ['identity;q=x', 'identity'], // a malformed refusal of identity refuses nothing
    [['gzip;q=0.5', 'br;q=0.4'], 'gzip'], // repeated header lines are one list
  ] as const)('%j -> %s', (header, expected) => {
    expect(negotiateEncoding(header)).toBe(expected);
  });

  it('answers the same from its cache, and past its bound', () => {
    for (let round = 0; round < 2; round++) {
      // More distinct values than the cache keeps, so the second round reads both kept and evicted ones.
      for (let i = 0; i < 600; i++) {
        const header = `br;q=0.${String(i % 1000).padStart(3, '0')}, gzip;q=0.5`;
        expect(negotiateEncoding(header)).toBe(i >= 500 ? 'br' : 'gzip'); // 0.500 ties: br;
      }
    }
  });

  it('answers a long header (not cached) by the same rules', () => {
    const header = `${'zstd;q=0.9, '.repeat(100)}gzip;q=0.2, br;q=0.1`;
    expect(negotiateEncoding(header)).toBe('gzip');
    expect(negotiateEncoding(header)).toBe('gzip');
  });
});
