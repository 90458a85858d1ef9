import { asArray, isRecord } from '../../common/json-read';
import {
  type LabeledPart,
  type ProtectionExtractor,
  type ProtectionTool,
  pushPart,
  textOf,
} from '../../policy/protections/protection-facts';

const USER_TEXT = ['input_text', 'text'];
const OUTPUT_ITEMS = ['function_call_output', 'custom_tool_call_output'];

/** `POST /v1/responses`: `{"type":"function","name","parameters"}` tools. */
export const responsesProtections: ProtectionExtractor = {
  tools(body, names): ProtectionTool[] {
    const found: ProtectionTool[] = [];
    if (!isRecord(body)) {
      return found;
    }
    asArray(body.tools).forEach((tool, index) => {
      if (
        isRecord(tool) &&
        tool.type === 'function' &&
        typeof tool.name === 'string' &&
        names.includes(tool.name)
      ) {
        found.push({
          name: tool.name,
          index,
          schemaParam: `tools[${index}].parameters`,
          schema: tool.parameters,
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
    const choice = body.tool_choice;
    const names: string[] = [];
    if (typeof choice.name === 'string') {
      names.push(choice.name);
    }
    // {"type":"allowed_tools","mode":"auto","tools":[{"type":"function","name"}]}
    for (const t of asArray(choice.tools)) {
      if (isRecord(t) && typeof t.name === 'string') {
        names.push(t.name);
      }
    }
    return names;
  },

  parts(body): LabeledPart[] {
    const parts: LabeledPart[] = [];
    if (!isRecord(body)) {
      return parts;
    }
    if (typeof body.input === 'string') {
      pushPart(parts, 'user', body.input, 'input');
      return parts;
    }
    asArray(body.input).forEach((item, i) => {
      if (!isRecord(item)) {
        return;
      }
      if (item.role === 'user' && (item.type ?? 'message') === 'message') {
        pushPart(parts, 'user', textOf(item.content, USER_TEXT), `input[${i}]`);
      } else if (typeof item.type === 'string' && OUTPUT_ITEMS.includes(item.type)) {
        pushPart(
          parts,
          'tool_result',
          textOf(item.output, USER_TEXT),
          `input[${i}] (${item.type})`,
        );
      }
    });
    return parts;
  },
};
