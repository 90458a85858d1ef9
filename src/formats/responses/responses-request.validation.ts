import {
  invalidField as fail,
  isObject,
  validateTopLevel,
} from '../../common/validation/top-level.validation';
import { isPrototypeName, own } from '../../common/own';
import { ResponsesRequestDto } from './responses-request.dto';

const ROLES = new Set(['user', 'assistant', 'system', 'developer']);
const EFFORTS = new Set(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']);
const SUMMARIES = new Set(['auto', 'concise', 'detailed']);
const TOOL_CHOICES = new Set(['none', 'auto', 'required']);

function requireString(item: Record<string, unknown>, key: string, at: string): void {
  const value = own(item, key);
  if (typeof value !== 'string') {
    fail(
      `${at}.${key}`,
      value === undefined
        ? `Missing required parameter: '${at}.${key}'.`
        : `Invalid type for '${at}.${key}': expected a string.`,
    );
  }
}

/** Content parts of a message or of a tool output: objects with a string `type`. */
function checkParts(parts: unknown, at: string): void {
  if (typeof parts === 'string') {
    return;
  }
  if (!Array.isArray(parts)) {
    fail(at, `Invalid type for '${at}': expected a string or an array of content parts.`);
  }
  parts.forEach((part: unknown, j) => {
    const where = `${at}[${j}]`;
    if (!isObject(part) || typeof part.type !== 'string') {
      fail(where, `Invalid content part at '${where}': expected an object with a string 'type'.`);
    }
    if (isPrototypeName(part.type)) {
      fail(
        `${where}.type`,
        `Invalid value for '${where}.type': '${part.type}' is not a content part type.`,
      );
    }
    switch (part.type) {
      case 'input_text':
      case 'output_text':
        requireString(part, 'text', where);
        break;
      case 'refusal':
        requireString(part, 'refusal', where);
        break;
      case 'input_image':
        if (typeof part.image_url !== 'string' && typeof part.file_id !== 'string') {
          fail(
            `${where}.image_url`,
            `Invalid value for '${where}.image_url': an input_image needs a string 'image_url' (or a 'file_id').`,
          );
        }
        break;
      default:
        // input_file, input_audio, ...: forwarded as they are.
        break;
    }
  });
}

function checkItem(item: unknown, at: string): void {
  if (!isObject(item)) {
    fail(at, `Invalid type for '${at}': expected an object.`);
  }
  const type = item.type ?? (item.role === undefined ? undefined : 'message');
  switch (type) {
    case 'message':
      if (typeof item.role !== 'string' || !ROLES.has(item.role)) {
        fail(
          `${at}.role`,
          `Invalid value for '${at}.role': expected one of user, assistant, system, developer.`,
        );
      }
      if (item.content === undefined || item.content === null) {
        fail(`${at}.content`, `Missing required parameter: '${at}.content'.`);
      }
      checkParts(item.content, `${at}.content`);
      return;
    case 'function_call':
      requireString(item, 'call_id', at);
      requireString(item, 'name', at);
      requireString(item, 'arguments', at);
      return;
    case 'function_call_output':
      requireString(item, 'call_id', at);
      if (item.output === undefined || item.output === null) {
        fail(`${at}.output`, `Missing required parameter: '${at}.output'.`);
      }
      checkParts(item.output, `${at}.output`);
      return;
    case 'reasoning':
      if (!Array.isArray(item.summary)) {
        fail(`${at}.summary`, `Invalid type for '${at}.summary': expected an array.`);
      }
      return;
    case undefined:
      fail(`${at}.type`, `Missing required parameter: '${at}.type'.`);
      return;
    default:
      if (typeof type !== 'string') {
        fail(`${at}.type`, `Invalid type for '${at}.type': expected a string.`);
      }
      if (isPrototypeName(type)) {
        fail(`${at}.type`, `Invalid value for '${at}.type': '${type}' is not an input item type.`);
      }
      // item_reference, hosted tool calls, ...: forwarded as they are.
      return;
  }
}

function checkInput(input: unknown): void {
  if (typeof input === 'string') {
    return;
  }
  if (!Array.isArray(input)) {
    fail('input', "Invalid type for 'input': expected a string or an array of input items.");
  }
  input.forEach((item: unknown, i) => checkItem(item, `input[${i}]`));
}

function checkTools(tools: unknown[] | undefined): void {
  tools?.forEach((tool: unknown, i) => {
    const at = `tools[${i}]`;
    if (!isObject(tool) || typeof tool.type !== 'string') {
      fail(at, `Invalid tool at '${at}': expected an object with a string 'type'.`);
    }
    if (tool.type === 'function') {
      checkFunctionTool(tool, at);
    } else if (tool.type === 'namespace') {
      requireString(tool, 'name', at);
      if (!Array.isArray(tool.tools)) {
        fail(`${at}.tools`, `Invalid type for '${at}.tools': expected an array of tools.`);
      }
      tool.tools.forEach((inner: unknown, j) => {
        const innerAt = `${at}.tools[${j}]`;
        if (!isObject(inner) || typeof inner.type !== 'string') {
          fail(innerAt, `Invalid tool at '${innerAt}': expected an object with a string 'type'.`);
        }
        if (inner.type === 'function') {
          checkFunctionTool(inner, innerAt);
        }
      });
    }
  });
}

function checkFunctionTool(tool: Record<string, unknown>, at: string): void {
  requireString(tool, 'name', at);
  if (tool.parameters !== undefined && tool.parameters !== null && !isObject(tool.parameters)) {
    fail(`${at}.parameters`, `Invalid type for '${at}.parameters': expected an object.`);
  }
}

function checkToolChoice(choice: unknown): void {
  if (
    choice === undefined ||
    choice === null ||
    (typeof choice === 'string' && TOOL_CHOICES.has(choice))
  ) {
    return;
  }
  if (!isObject(choice) || typeof choice.type !== 'string') {
    fail(
      'tool_choice',
      "Invalid value for 'tool_choice': expected none, auto, required or an object with a string 'type'.",
    );
  }
  if (choice.type === 'function') {
    requireString(choice, 'name', 'tool_choice');
  }
}

function checkReasoning(reasoning: ResponsesRequestDto['reasoning']): void {
  if (!reasoning) {
    return;
  }
  const { effort, summary } = reasoning;
  if (effort !== undefined && effort !== null && !EFFORTS.has(effort)) {
    fail(
      'reasoning.effort',
      `Invalid value for 'reasoning.effort': expected one of ${[...EFFORTS].join(', ')}.`,
    );
  }
  if (summary !== undefined && summary !== null && !SUMMARIES.has(summary)) {
    fail(
      'reasoning.summary',
      "Invalid value for 'reasoning.summary': expected one of auto, concise, detailed.",
    );
  }
}

/**
 * Validates a Responses body without copying it: class-validator checks the top-level
 * fields, hand-written checks walk the input items, tools, tool choice and reasoning.
 * Unknown fields and unknown item types stay in the client's object.
 */
export function validateResponsesRequest(body: unknown): ResponsesRequestDto {
  const request = validateTopLevel(ResponsesRequestDto, body);
  checkInput(request.input);
  checkTools(request.tools);
  checkToolChoice(request.tool_choice);
  checkReasoning(request.reasoning);
  return request;
}
