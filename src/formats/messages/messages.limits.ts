import { type LimitFacts, emptyFacts } from '../../limits/limit-facts';
import {
  asArray,
  isRecord,
  outputCaps,
  pushJson,
  pushText,
  pushTool,
} from '../../common/json-read';

/** Content blocks (of a message, a tool result or the system prompt). */
function readBlocks(facts: LimitFacts, content: unknown): void {
  if (typeof content === 'string') {
    pushText(facts.texts, content);
    return;
  }
  const blocks = asArray(content);
  facts.contentPartCount += blocks.length;
  for (const block of blocks) {
    if (!isRecord(block)) {
      continue;
    }
    switch (block.type) {
      case 'text':
        pushText(facts.texts, block.text);
        break;
      case 'thinking':
        pushText(facts.texts, block.thinking);
        break;
      case 'redacted_thinking':
        break;
      case 'tool_use':
      case 'server_tool_use':
        pushText(facts.texts, block.name);
        pushJson(facts.texts, block.input);
        break;
      case 'tool_result':
        readBlocks(facts, block.content);
        break;
      case 'document':
        // A plain-text document is text; a PDF or image source gets the flat estimate.
        if (isRecord(block.source) && block.source.type === 'text') {
          pushText(facts.texts, block.source.data);
        } else if (isRecord(block.source) && block.source.type === 'content') {
          readBlocks(facts, block.source.content);
        } else {
          facts.attachmentCount++;
        }
        break;
      case 'image':
        facts.attachmentCount++;
        break;
      default:
        if (typeof block.text === 'string') {
          pushText(facts.texts, block.text);
        } else if (block.source !== undefined) {
          facts.attachmentCount++;
        } else {
          pushJson(facts.texts, block.content ?? block.input);
        }
    }
  }
}

/** `POST /v1/messages`: `system`, messages of content blocks, tools, `max_tokens`. */
export function messagesLimitFacts(body: unknown): LimitFacts {
  const facts = emptyFacts('messages');
  if (!isRecord(body)) {
    return facts;
  }
  readBlocks(facts, body.system);
  const messages = asArray(body.messages);
  facts.messageCount = messages.length;
  for (const message of messages) {
    if (isRecord(message)) {
      readBlocks(facts, message.content);
    }
  }
  const tools = asArray(body.tools);
  facts.toolCount = tools.length;
  for (const tool of tools) {
    if (!isRecord(tool)) {
      continue;
    }
    if (tool.input_schema !== undefined) {
      pushTool(facts.texts, tool.name, tool.description, tool.input_schema);
    } else {
      // Server tools (web_search, code_execution...): their configuration as JSON; what they
      // find or run is read by the model too, and the gateway never sees it.
      pushJson(facts.texts, tool);
      facts.uncountedInput = true;
    }
  }
  facts.model = typeof body.model === 'string' ? body.model : undefined;
  facts.maxOutput = outputCaps(body, ['max_tokens']);
  facts.stream = body.stream === true;
  return facts;
}
