// Capability declarations parsed into normalized keys a client can filter on, e.g.
// `input:image`, `output:audio`, `reasoning`, `tool_use`, `structured_output`, `attachments`, `open_weights`.
import type { ModelRecord } from '../../schema/source.js';
import type { Capabilities } from '../../schema/api.js';

/** The published capabilities object (src/schema/api.ts). */
export type ParsedCapabilities = Capabilities;

export function parseCapabilities(c: ModelRecord['capabilities']): ParsedCapabilities {
  const input = [...new Set(c.input)].sort();
  const output = [...new Set(c.output)].sort();
  const flags: [string, boolean | null][] = [
    ['reasoning', c.reasoning],
    ['tool_use', c.tool_call],
    ['structured_output', c.structured_output],
    ['attachments', c.attachment],
    ['temperature', c.temperature],
    ['open_weights', c.open_weights],
  ];
  const keys = [
    ...input.map((m) => `input:${m}`),
    ...output.map((m) => `output:${m}`),
    ...flags.filter(([, v]) => v === true).map(([k]) => k),
  ].sort() as Capabilities['keys']; // each made from the schema's modalities and flags
  return {
    keys,
    input_modalities: input,
    output_modalities: output,
    reasoning: c.reasoning,
    tool_use: c.tool_call,
    structured_output: c.structured_output,
    attachments: c.attachment,
    temperature: c.temperature,
    open_weights: c.open_weights,
    knowledge_cutoff: c.knowledge_cutoff,
  };
}
