import { asArray, isRecord, type Json } from '../../common/json-read';
import {
  type LabeledPart,
  type ProtectionExtractor,
  type ProtectionTool,
  pushPart,
  textOf,
} from '../../policy/protections/protection-facts';

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

const MAX_NESTING = 4;

/**
 * All text a content block carries, nested blocks included: tool results, documents,
 * search results, and block types added later. Injection hides wherever text can go, so
 * an unknown block is read for its `text` and `content` rather than skipped.
 */
function blockText(block: unknown, depth = 0): string {
  if (typeof block === 'string') {
    return block;
  }
  if (!isRecord(block) || depth > MAX_NESTING) {
    return '';
  }
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? block.text : '';
    case 'document':
      return documentText(block);
    case 'image':
    case 'redacted_thinking':
      return '';
  }
  const pieces: string[] = [];
  if (typeof block.text === 'string') {
    pieces.push(block.text);
  }
  if (typeof block.content === 'string') {
    pieces.push(block.content);
  } else {
    for (const inner of asArray(block.content)) {
      const text = blockText(inner, depth + 1);
      if (text) {
        pieces.push(text);
      }
    }
  }
  return pieces.join('\n');
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
          description: tool.description,
          descriptionParam: `tools[${index}].description`,
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
          pushPart(parts, 'tool_result', blockText(block), `${where} (tool result)`);
        } else {
          // Documents, search results and any other block that carries text.
          pushPart(parts, 'document', blockText(block), `${where} (${String(block.type)})`);
        }
      });
      pushPart(parts, 'user', userText.join('\n'), `messages[${i}]`);
    });
    return parts;
  },
};
