import { asArray, isRecord } from '../../common/json-read';
import {
  type LabeledPart,
  type ProtectionExtractor,
  type ProtectionTool,
  pushPart,
  textOf,
} from '../../policy/protections/protection-facts';

/** `POST /v1/chat/completions`: `{"type":"function","function":{"name","parameters"}}` tools. */
export const chatProtections: ProtectionExtractor = {
  tools(body, names): ProtectionTool[] {
    const found: ProtectionTool[] = [];
    if (!isRecord(body)) {
      return found;
    }
    asArray(body.tools).forEach((tool, index) => {
      if (!isRecord(tool) || !isRecord(tool.function)) {
        return;
      }
      const name = tool.function.name;
      if (
        typeof name === 'string' &&
        names.includes(name) &&
        (tool.type ?? 'function') === 'function'
      ) {
        found.push({
          name,
          index,
          schemaParam: `tools[${index}].function.parameters`,
          schema: tool.function.parameters,
          description: tool.function.description,
          descriptionParam: `tools[${index}].function.description`,
        });
      }
    });
    // The legacy `functions` field turns a protection on just the same.
    asArray(body.functions).forEach((fn, index) => {
      if (isRecord(fn) && typeof fn.name === 'string' && names.includes(fn.name)) {
        found.push({
          name: fn.name,
          field: 'functions',
          index,
          schemaParam: `functions[${index}].parameters`,
          schema: fn.parameters,
          description: fn.description,
          descriptionParam: `functions[${index}].description`,
        });
      }
    });
    return found;
  },

  toolChoiceNames(body): string[] {
    if (!isRecord(body)) {
      return [];
    }
    const names: string[] = [];
    if (isRecord(body.function_call) && typeof body.function_call.name === 'string') {
      names.push(body.function_call.name);
    }
    const choice = body.tool_choice;
    if (isRecord(choice)) {
      if (isRecord(choice.function) && typeof choice.function.name === 'string') {
        names.push(choice.function.name);
      }
      // {"type":"allowed_tools","allowed_tools":{"tools":[{"type":"function","function":{"name"}}]}}
      const allowed = isRecord(choice.allowed_tools) ? choice.allowed_tools.tools : undefined;
      for (const t of asArray(allowed)) {
        if (isRecord(t) && isRecord(t.function) && typeof t.function.name === 'string') {
          names.push(t.function.name);
        }
      }
    }
    return names;
  },

  parts(body): LabeledPart[] {
    const parts: LabeledPart[] = [];
    if (!isRecord(body)) {
      return parts;
    }
    asArray(body.messages).forEach((message, i) => {
      if (!isRecord(message)) {
        return;
      }
      if (message.role === 'user') {
        pushPart(parts, 'user', textOf(message.content, ['text']), `messages[${i}]`);
      } else if (message.role === 'tool' || message.role === 'function') {
        pushPart(
          parts,
          'tool_result',
          textOf(message.content, ['text']),
          `messages[${i}] (tool result)`,
        );
      }
    });
    return parts;
  },
};
