import { asArray, isRecord, type Json } from '../../../limits/extractors/read';
import {
  type LabeledPart,
  type ProtectionExtractor,
  type ProtectionTool,
  pushPart,
  textOf,
} from '../protection-facts';

/** A `document` block's text: plain-text source, or a content source's text blocks. */
function documentText(block: Json): string {
  const source = block.source;
  if (!isRecord(source)) {
    return '';
  }
  if (source.type === 'text' && typeof source.data === 'string') {
    return source.data;
  }
  return source.type === 'content' ? textOf(source.content, ['text']) : '';
}

/** `POST /v1/messages`: `{"name","input_schema"}` tools (custom tools only). */
export const messagesProtections: ProtectionExtractor = {
  tools(body, names): ProtectionTool[] {
    const found: ProtectionTool[] = [];
    if (!isRecord(body)) {
      return found;
    }
    asArray(body.tools).forEach((tool, index) => {
      if (
        isRecord(tool) &&
        typeof tool.name === 'string' &&
        names.includes(tool.name) &&
        (tool.type === undefined || tool.type === null || tool.type === 'custom')
      ) {
        found.push({
          name: tool.name,
          index,
          schemaParam: `tools[${index}].input_schema`,
          schema: tool.input_schema,
        });
      }
    });
    return found;
  },

  toolChoiceNames(body): string[] {
    if (!isRecord(body) || !isRecord(body.tool_choice)) {
      return [];
    }
    const name = body.tool_choice.name;
    return typeof name === 'string' ? [name] : [];
  },

  parts(body): LabeledPart[] {
    const parts: LabeledPart[] = [];
    if (!isRecord(body)) {
      return parts;
    }
    asArray(body.messages).forEach((message, i) => {
      if (!isRecord(message) || message.role !== 'user') {
        return;
      }
      if (typeof message.content === 'string') {
        pushPart(parts, 'user', message.content, `messages[${i}]`);
        return;
      }
      const userText: string[] = [];
      asArray(message.content).forEach((block, j) => {
        if (!isRecord(block)) {
          return;
        }
        const where = `messages[${i}].content[${j}]`;
        if (block.type === 'text' && typeof block.text === 'string') {
          userText.push(block.text);
        } else if (block.type === 'tool_result') {
          pushPart(parts, 'tool_result', textOf(block.content, ['text']), `${where} (tool result)`);
        } else if (block.type === 'document') {
          pushPart(parts, 'document', documentText(block), `${where} (document)`);
        }
      });
      pushPart(parts, 'user', userText.join('\n'), `messages[${i}]`);
    });
    return parts;
  },
};
