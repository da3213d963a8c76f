/** Round half away from zero to `digits` decimals; published numbers never carry float noise like 0.30000000000000004. */
export function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.sign(x) * Math.round(Math.abs(x) * f) / f;
}
