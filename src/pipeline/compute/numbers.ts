/** Round half away from zero to `digits` decimals; published numbers never carry float noise like 0.30000000000000004. */
export function round(x: number, digits: number): number {
  const f = 10 ** digits;
  const scaled = Math.abs(x) * f;
  // From 2^53 on, the scaled value is a whole number: nothing to round. Beyond about 1.8e308 it is Infinity, and a
  // finite input would be published as null (validation bounds the inputs; this is the second line of defence).
  if (scaled >= 2 ** 53) return x;
  return (Math.sign(x) * Math.round(scaled)) / f;
}
