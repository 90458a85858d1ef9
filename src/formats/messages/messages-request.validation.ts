import {
  invalidField as fail,
  isObject,
  validateTopLevel,
} from '../../common/validation/top-level.validation';
import { isPrototypeName, own } from '../../common/own';
import { CountTokensRequestDto, MessagesRequestDto } from './messages-request.dto';

/**
 * Request validation for the Messages endpoints: class-validator on the top-level fields
 * (the shared helper), hand-written checks below it. Nested fields are named by their
 * dotted path as the Anthropic API names them (`messages.1.content.0.text`).
 */

type Json = Record<string, unknown>;

const ROLES = new Set(['user', 'assistant', 'system']);
const TOOL_CHOICES = new Set(['auto', 'any', 'tool', 'none']);
const THINKING_TYPES = new Set(['enabled', 'adaptive', 'disabled']);

function missing(path: string): never {
  fail(path, `Missing required parameter: '${path}'.`);
}

function invalid(path: string, expected: string): never {
  fail(path, `Invalid value for '${path}': expected ${expected}.`);
}

function requireString(block: Json, field: string, at: string): void {
  const value = own(block, field);
  if (value === undefined) {
    missing(`${at}.${field}`);
  }
  if (typeof value !== 'string') {
    invalid(`${at}.${field}`, 'a string');
  }
}

function requireObject(block: Json, field: string, at: string): void {
  const value = own(block, field);
  if (value === undefined) {
    missing(`${at}.${field}`);
  }
  if (!isObject(value)) {
    invalid(`${at}.${field}`, 'an object');
  }
}

/** Shape checks of the block types the gateway reads; other types are forwarded as they are. */
const BLOCK_CHECKS: Record<string, (block: Json, at: string) => void> = {
  text: (b, at) => requireString(b, 'text', at),
  image: (b, at) => requireObject(b, 'source', at),
  document: (b, at) => requireObject(b, 'source', at),
  tool_use: (b, at) => {
    requireString(b, 'id', at);
    requireString(b, 'name', at);
    requireObject(b, 'input', at);
  },
  tool_result: (b, at) => {
    requireString(b, 'tool_use_id', at);
    if (b.content !== undefined && typeof b.content !== 'string') {
      checkBlocks(b.content, `${at}.content`);
    }
  },
  thinking: (b, at) => {
    requireString(b, 'thinking', at);
    requireString(b, 'signature', at);
  },
  redacted_thinking: (b, at) => requireString(b, 'data', at),
};

/** A block type named like an Object.prototype member is no block type at all. */
function rejectPrototypeType(type: string, at: string): void {
  if (isPrototypeName(type)) {
    fail(at, `Invalid value for '${at}': '${type}' is not a content block type.`);
  }
}

function checkBlocks(content: unknown, at: string): void {
  if (!Array.isArray(content)) {
    invalid(at, 'a string or an array of content blocks');
  }
  content.forEach((block: unknown, j) => {
    const where = `${at}.${j}`;
    if (!isObject(block) || typeof block.type !== 'string') {
      invalid(where, "an object with a string 'type'");
    }
    rejectPrototypeType(block.type, `${where}.type`);
    own(BLOCK_CHECKS, block.type)?.(block, where);
  });
}

function checkMessages(messages: unknown[]): void {
  messages.forEach((message: unknown, i) => {
    const at = `messages.${i}`;
    if (!isObject(message)) {
      invalid(at, 'an object');
    }
    if (typeof message.role !== 'string' || !ROLES.has(message.role)) {
      invalid(`${at}.role`, "'user', 'assistant' or 'system'");
    }
    if (message.content === undefined) {
      missing(`${at}.content`);
    }
    if (typeof message.content !== 'string') {
      checkBlocks(message.content, `${at}.content`);
    }
  });
}

function checkSystem(system: unknown): void {
  if (system === undefined || typeof system === 'string') {
    return;
  }
  if (
    !Array.isArray(system) ||
    system.some((b) => !isObject(b) || b.type !== 'text' || typeof b.text !== 'string')
  ) {
    invalid('system', 'a string or an array of text blocks');
  }
}

function checkTools(tools: unknown[] | undefined): void {
  tools?.forEach((tool: unknown, i) => {
    const at = `tools.${i}`;
    if (!isObject(tool)) {
      invalid(at, 'an object');
    }
    if (typeof tool.name !== 'string' || tool.name === '') {
      missing(`${at}.name`);
    }
    // Server tools (web search, code execution, ...) carry a versioned `type` and no schema.
    if (tool.type === undefined || tool.type === 'custom') {
      requireObject(tool, 'input_schema', at);
    }
  });
}

function checkToolChoice(choice: Json | undefined): void {
  if (choice === undefined) {
    return;
  }
  if (typeof choice.type !== 'string' || !TOOL_CHOICES.has(choice.type)) {
    invalid('tool_choice.type', "'auto', 'any', 'tool' or 'none'");
  }
  if (choice.type === 'tool') {
    requireString(choice, 'name', 'tool_choice');
  }
}

function checkThinking(thinking: Json | undefined): void {
  if (thinking === undefined) {
    return;
  }
  if (typeof thinking.type !== 'string' || !THINKING_TYPES.has(thinking.type)) {
    invalid('thinking.type', "'enabled', 'adaptive' or 'disabled'");
  }
  if (thinking.type === 'enabled' && thinking.budget_tokens === undefined) {
    missing('thinking.budget_tokens');
  }
  if (thinking.type === 'enabled' && !Number.isInteger(thinking.budget_tokens)) {
    invalid('thinking.budget_tokens', 'an integer');
  }
}

function validate<T extends CountTokensRequestDto>(Dto: new () => T, body: unknown): T {
  const request = validateTopLevel(Dto, body);
  checkSystem(request.system);
  checkMessages(request.messages);
  checkTools(request.tools);
  checkToolChoice(request.tool_choice);
  checkThinking(request.thinking);
  return request;
}

/** Validates a `POST /v1/messages` body without copying it. */
export function validateMessagesRequest(body: unknown): MessagesRequestDto {
  return validate(MessagesRequestDto, body);
}

/** Validates a `POST /v1/messages/count_tokens` body (no `max_tokens`) without copying it. */
export function validateCountTokensRequest(body: unknown): CountTokensRequestDto {
  return validate(CountTokensRequestDto, body);
}
