import {
  invalidField as fail,
  isObject,
  validateTopLevel,
} from '../../common/validation/top-level.validation';
import { isPrototypeName } from '../../common/own';
import { ChatCompletionRequestDto, ChatMessage } from './chat-request.dto';

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);
const TEXT_ONLY_ROLES = new Set(['system', 'developer', 'tool']);

function checkContent(message: ChatMessage, at: string): void {
  const content = message.content;
  if (content === undefined || content === null) {
    if (message.role === 'assistant') {
      return;
    }
    fail(`${at}.content`, `Missing required parameter: '${at}.content'.`);
  }
  if (typeof content === 'string') {
    return;
  }
  if (!Array.isArray(content)) {
    fail(
      `${at}.content`,
      `Invalid type for '${at}.content': expected a string or an array of content parts.`,
    );
  }
  content.forEach((part: unknown, j) => {
    const where = `${at}.content[${j}]`;
    if (!isObject(part) || typeof part.type !== 'string') {
      fail(where, `Invalid content part at '${where}': expected an object with a string 'type'.`);
    }
    if (isPrototypeName(part.type)) {
      fail(
        `${where}.type`,
        `Invalid value for '${where}.type': '${part.type}' is not a content part type.`,
      );
    }
    if (part.type === 'text' && typeof part.text !== 'string') {
      fail(`${where}.text`, `Invalid type for '${where}.text': expected a string.`);
    }
    if (TEXT_ONLY_ROLES.has(message.role) && part.type !== 'text') {
      fail(
        `${where}.type`,
        `Invalid value for '${where}.type': ${message.role} messages accept only text parts.`,
      );
    }
    if (
      part.type === 'image_url' &&
      !(isObject(part.image_url) && typeof part.image_url.url === 'string')
    ) {
      fail(
        `${where}.image_url`,
        `Invalid value for '${where}.image_url': expected an object with a string 'url'.`,
      );
    }
  });
}

function checkToolCalls(message: ChatMessage, at: string): void {
  if (message.tool_calls === undefined || message.tool_calls === null) {
    return;
  }
  if (!Array.isArray(message.tool_calls)) {
    fail(`${at}.tool_calls`, `Invalid type for '${at}.tool_calls': expected an array.`);
  }
  message.tool_calls.forEach((call: unknown, j) => {
    const where = `${at}.tool_calls[${j}]`;
    if (
      !isObject(call) ||
      typeof call.id !== 'string' ||
      !isObject(call.function) ||
      typeof call.function.name !== 'string' ||
      typeof call.function.arguments !== 'string'
    ) {
      fail(
        where,
        `Invalid tool call at '${where}': expected {id, type: "function", function: {name, arguments: string}}.`,
      );
    }
  });
}

/** Checks the messages array; throws a 400 naming the first bad field. */
export function checkChatMessages(messages: unknown[]): void {
  messages.forEach((message: unknown, i) => {
    const at = `messages[${i}]`;
    if (!isObject(message)) {
      fail(at, `Invalid type for '${at}': expected an object.`);
    }
    if (typeof message.role !== 'string' || !ROLES.has(message.role)) {
      fail(
        `${at}.role`,
        `Invalid value for '${at}.role': expected one of system, developer, user, assistant, tool.`,
      );
    }
    const m = message as ChatMessage;
    checkContent(m, at);
    if (m.role === 'assistant') {
      checkToolCalls(m, at);
    }
    if (m.role === 'tool' && typeof m.tool_call_id !== 'string') {
      fail(`${at}.tool_call_id`, `Missing required parameter: '${at}.tool_call_id'.`);
    }
  });
}

function checkTools(tools: unknown[] | undefined): void {
  tools?.forEach((tool: unknown, i) => {
    const at = `tools[${i}]`;
    if (!isObject(tool)) {
      fail(at, `Invalid type for '${at}': expected an object.`);
    }
    if (
      tool.type === 'function' &&
      !(isObject(tool.function) && typeof tool.function.name === 'string')
    ) {
      fail(`${at}.function.name`, `Missing required parameter: '${at}.function.name'.`);
    }
  });
}

const TOOL_CHOICE_MODES = new Set(['none', 'auto', 'required']);

function checkToolChoice(choice: unknown): void {
  if (choice === undefined || choice === null || isObject(choice)) {
    return;
  }
  if (typeof choice !== 'string' || !TOOL_CHOICE_MODES.has(choice)) {
    fail(
      'tool_choice',
      "Invalid value for 'tool_choice': expected 'none', 'auto', 'required' or an object naming a tool.",
    );
  }
}

function checkStop(stop: unknown): void {
  if (stop === undefined || stop === null || typeof stop === 'string') {
    return;
  }
  if (!Array.isArray(stop) || stop.length > 4 || stop.some((s) => typeof s !== 'string')) {
    fail('stop', "Invalid value for 'stop': expected a string or an array of at most 4 strings.");
  }
}

/**
 * Validates a chat completion body without copying it: class-validator checks the
 * top-level fields on a shallow view, hand-written checks walk the messages. Returns the
 * client's own object, typed; unknown fields stay in it.
 */
export function validateChatRequest(body: unknown): ChatCompletionRequestDto {
  const request = validateTopLevel(ChatCompletionRequestDto, body);
  checkChatMessages(request.messages);
  checkTools(request.tools);
  checkToolChoice(request.tool_choice);
  checkStop(request.stop);
  return request;
}
