import { type LimitFacts, emptyFacts } from '../../limits/limit-facts';
import {
  asArray,
  isRecord,
  outputCaps,
  pushJson,
  pushText,
  pushTool,
} from '../../common/json-read';

/** `POST /v1/chat/completions`: messages (string or part arrays, tool calls), tools. */
export function chatLimitFacts(body: unknown): LimitFacts {
  if (!isRecord(body)) {
    return emptyFacts('messages');
  }
  const facts = emptyFacts('messages');
  const texts = facts.texts;
  const messages = asArray(body.messages);
  facts.messageCount = messages.length;
  for (const message of messages) {
    if (!isRecord(message)) {
      continue;
    }
    pushText(texts, message.name);
    pushText(texts, message.refusal);
    const content = message.content;
    if (typeof content === 'string') {
      pushText(texts, content);
    } else if (Array.isArray(content)) {
      facts.contentPartCount += content.length;
      for (const part of content) {
        if (!isRecord(part)) {
          continue;
        }
        if (typeof part.text === 'string') {
          pushText(texts, part.text);
        } else if (typeof part.refusal === 'string') {
          pushText(texts, part.refusal);
        } else {
          // image_url, input_audio, file: a flat estimate each, never their bytes.
          facts.attachmentCount++;
        }
      }
    }
    const calls = asArray(message.tool_calls);
    facts.contentPartCount += calls.length;
    for (const call of [...calls, message.function_call]) {
      const fn = isRecord(call) && isRecord(call.function) ? call.function : call;
      if (isRecord(fn)) {
        pushText(texts, fn.name);
        pushText(texts, fn.arguments);
      }
    }
  }
  const tools = [...asArray(body.tools), ...asArray(body.functions)];
  facts.toolCount = tools.length;
  for (const tool of tools) {
    const fn = isRecord(tool) && isRecord(tool.function) ? tool.function : tool;
    if (isRecord(fn)) {
      pushTool(texts, fn.name, fn.description, fn.parameters);
    }
  }
  if (body.web_search_options !== undefined) {
    // Search results reach the model without passing through the gateway.
    facts.uncountedInput = true;
  }
  if (isRecord(body.response_format)) {
    pushJson(texts, body.response_format.json_schema);
  }
  facts.model = typeof body.model === 'string' ? body.model : undefined;
  facts.maxOutput = outputCaps(body, ['max_completion_tokens', 'max_tokens']);
  facts.stream = body.stream === true;
  return facts;
}
