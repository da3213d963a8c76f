// What validate and build say about data that is valid but enters no published number, and about implausible values.
import { formatIssue, type SourceIssue } from '../errors.js';
import type { LeftOut } from '../pipeline/compute/index.js';

/** One line naming what the computation left out, or null when nothing was. */
export function leftOutLine(l: LeftOut): string | null {
  const s = (n: number) => (n === 1 ? '' : 's');
  const parts: string[] = [];
  if (l.sentinelSpeedSamples)
    parts.push(
      `${l.sentinelSpeedSamples} sentinel speed sample${s(l.sentinelSpeedSamples)} left out of the tokens/s averages ` +
        '(their source could not measure them)',
    );
  if (l.resellerZeroPrices)
    parts.push(`${l.resellerZeroPrices} reseller price${s(l.resellerZeroPrices)} of 0/0 published as no price`);
  return parts.length ? `  ${parts.join('; ')}` : null;
}

/** Warnings on stderr, located like errors. */
export function printWarnings(warnings: readonly SourceIssue[]): void {
  for (const w of warnings) console.error(`warning: ${formatIssue(w)}`);
}
