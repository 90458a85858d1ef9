import { type LimitFacts, emptyFacts } from '../../limits/limit-facts';
import {
  asArray,
  isRecord,
  outputCaps,
  pushJson,
  pushText,
  pushTool,
} from '../../common/json-read';

/** Content of a message item or of a tool output: a string or a list of parts. */
function readContent(facts: LimitFacts, content: unknown): void {
  if (typeof content === 'string') {
    pushText(facts.texts, content);
    return;
  }
  const parts = asArray(content);
  facts.contentPartCount += parts.length;
  for (const part of parts) {
    if (!isRecord(part)) {
      continue;
    }
    if (typeof part.text === 'string') {
      pushText(facts.texts, part.text);
    } else if (typeof part.refusal === 'string') {
      pushText(facts.texts, part.refusal);
    } else {
      // input_image, input_file, input_audio: a flat estimate each.
      facts.attachmentCount++;
    }
  }
}

/** `POST /v1/responses`: `input` (a string or items), `instructions`, tools, text format. */
export function responsesLimitFacts(body: unknown): LimitFacts {
  const facts = emptyFacts('input');
  if (!isRecord(body)) {
    return facts;
  }
  const texts = facts.texts;
  if (typeof body.instructions === 'string' && body.instructions !== '') {
    pushText(texts, body.instructions);
    facts.messageCount++;
  }
  if (typeof body.input === 'string') {
    pushText(texts, body.input);
    facts.messageCount++;
  } else {
    const items = asArray(body.input);
    facts.messageCount += items.length;
    for (const item of items) {
      if (!isRecord(item)) {
        continue;
      }
      switch (item.type) {
        case 'function_call':
        case 'custom_tool_call':
          facts.contentPartCount++;
          pushText(texts, item.name);
          pushText(texts, item.arguments);
          pushText(texts, item.input);
          break;
        case 'function_call_output':
        case 'custom_tool_call_output':
          facts.contentPartCount++;
          readContent(facts, item.output);
          break;
        case 'item_reference':
          facts.uncountedInput = true;
          break;
        case 'reasoning':
          // Summaries are text the model sees again; encrypted content is not counted.
          if (typeof item.encrypted_content === 'string') {
            facts.uncountedInput = true;
          }
          for (const summary of asArray(item.summary)) {
            facts.contentPartCount++;
            if (isRecord(summary)) {
              pushText(texts, summary.text);
            }
          }
          break;
        default:
          // `message` items, and the typeless `{role, content}` shorthand.
          readContent(facts, item.content);
      }
    }
  }
  const tools = asArray(body.tools);
  facts.toolCount = tools.length;
  for (const tool of tools) {
    if (!isRecord(tool)) {
      continue;
    }
    if (tool.type === 'function') {
      pushTool(texts, tool.name, tool.description, tool.parameters);
    } else {
      // Built-in tools (web_search, file_search, mcp...): their configuration as JSON. What
      // they find is read by the model too, and the gateway never sees it.
      pushJson(texts, tool);
      if (tool.type !== 'custom') {
        facts.uncountedInput = true;
      }
    }
  }
  // State the provider stored: earlier turns the model reads again.
  if (
    (body.previous_response_id !== undefined && body.previous_response_id !== null) ||
    (body.conversation !== undefined && body.conversation !== null)
  ) {
    facts.uncountedInput = true;
  }
  if (isRecord(body.text) && isRecord(body.text.format)) {
    pushJson(texts, body.text.format.schema);
  }
  facts.model = typeof body.model === 'string' ? body.model : undefined;
  facts.maxOutput = outputCaps(body, ['max_output_tokens']);
  facts.stream = body.stream === true;
  facts.detached = body.background === true;
  return facts;
}

/**
 * `GET` / `DELETE /v1/responses/{id}`: a replay counts as a request (and, with
 * `?stream=true`, holds a stream slot) but generates nothing, so no tokens are charged.
 */
export function storedResponseLimitFacts(
  _body: unknown,
  query: Record<string, unknown>,
): LimitFacts {
  const facts = emptyFacts('input');
  if (typeof query.model === 'string') {
    facts.model = query.model;
  }
  facts.stream = query.stream === 'true';
  facts.tokenFree = true;
  return facts;
}
