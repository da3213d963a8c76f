import { ValidationError } from '../errors.js';
import { loadAndValidate } from '../pipeline/build.js';
import { compute } from '../pipeline/compute/index.js';
import { leftOutLine, printWarnings } from './report.js';

export async function validateCommand(o: { data: string; strict?: boolean }): Promise<void> {
  const data = await loadAndValidate(o.data);
  // For CI: a value that is valid but implausible fails the check too.
  if (o.strict && data.warnings.length)
    throw new ValidationError(
      data.warnings,
      `${data.warnings.length === 1 ? 'warning' : 'warnings'}, refused by --strict,`,
    );
  const c = compute(data);
  const dropped =
    data.benchmarks.length -
    data.benchmarks.filter((b) => data.sources.find((s) => s.id === b.provenance.source)?.redistributable).length;
  console.log(
    `${o.data}: valid. ${data.models.length} models, ${data.metrics.length} metrics, ${data.speed.length} speed runs, ` +
      `${data.benchmarks.length} benchmark results, ${data.prices.length} price observations, ${data.offers.length} ` +
      `offers at ${data.providers.length} providers, ${data.overrides.length} display-only overrides`,
  );
  console.log(
    `  published: verified ${c.lanes.verified.models.length} models, provisional ` +
      `${c.lanes.provisional.models.length}, all ${c.lanes.all.models.length}; ${dropped} benchmark results withheld by ` +
      'the rights filter',
  );
  const left = leftOutLine(c.leftOut);
  if (left) console.log(left);
  if (data.warnings.length) {
    console.log(`  ${data.warnings.length} warnings (on stderr): valid values that look implausible`);
    printWarnings(data.warnings);
  }
}
