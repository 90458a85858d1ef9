import type { CanonicalRequest } from '../../../core/canonical';
import type { PromptShape } from '../../../limits/tokens/token-estimator';

/**
 * What the token estimator needs of a decoded request: its texts (system, turns, tool calls
 * and results, reasoning, tool definitions) and counts. For the input usage of an answer
 * the filter cut before the upstream reported any.
 */
export function promptShapeOf(request: CanonicalRequest): PromptShape {
  const texts: string[] = request.system.map((p) => p.text);
  let attachmentCount = 0;
  for (const message of request.messages) {
    for (const part of message.parts) {
      switch (part.type) {
        case 'text':
          texts.push(part.text);
          break;
        case 'image':
          attachmentCount += 1;
          break;
        case 'tool_call':
          texts.push(part.name, part.arguments);
          break;
        case 'tool_result':
          for (const item of part.content) {
            if (item.type === 'text') {
              texts.push(item.text);
            } else {
              attachmentCount += 1;
            }
          }
          break;
        case 'reasoning':
          texts.push(part.text ?? '', ...(part.summary ?? []));
          break;
      }
    }
  }
  for (const tool of request.tools) {
    texts.push(tool.name, tool.description ?? '', JSON.stringify(tool.parameters));
  }
  return {
    texts,
    messageCount: request.messages.length + (request.system.length > 0 ? 1 : 0),
    toolCount: request.tools.length,
    attachmentCount,
  };
}
