import { loadAndValidate } from '../pipeline/build.js';
import { compute } from '../pipeline/compute/index.js';

export async function validateCommand(o: { data: string }): Promise<void> {
  const data = await loadAndValidate(o.data);
  const c = compute(data);
  const dropped =
    data.benchmarks.length -
    data.benchmarks.filter((b) => data.sources.find((s) => s.id === b.provenance.source)?.redistributable).length;
  console.log(
    `${o.data}: valid. ${data.models.length} models, ${data.metrics.length} metrics, ${data.speed.length} speed runs, ${data.benchmarks.length} benchmark results, ${data.prices.length} price observations, ${data.overrides.length} display-only overrides`,
  );
  console.log(
    `  published: verified ${c.lanes.verified.models.length} models, provisional ${c.lanes.provisional.models.length}, all ${c.lanes.all.models.length}; ${dropped} benchmark results withheld by the rights filter`,
  );
}
