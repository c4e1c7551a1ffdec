import type { ToolDefinition } from '../../engine/text-engine.js';

/**
 * The system text that shows a model without a tools-aware chat template the functions it may
 * call: each one's name, description and parameters' JSON schema, and the call form the engine's
 * grammar holds it to (one JSON object a line).
 */
export function toolPreamble(definitions: ToolDefinition[]): string {
  const listed = definitions.map((tool) => {
    const description = tool.description ? `: ${tool.description}` : '';
    return `- ${tool.name}${description}\n  parameters: ${JSON.stringify(tool.parameters ?? { type: 'object', properties: {} })}`;
  });
  return [
    'You may call these functions. To call one, answer with {"name": <function name>, "arguments": <its parameters as JSON>} alone, one call a line.',
    ...listed,
  ].join('\n');
}
