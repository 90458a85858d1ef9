import { GatewayError } from '../../common/errors/gateway-errors';
import { encryptedContent } from '../../core/reasoning-carrier';
import type {
  BlockKind,
  CanonicalEvent,
  CanonicalResponse,
  OutputBlock,
} from '../../core/canonical';
import { ToolNamespaces } from './responses.namespaces';
import type { ResponsesRequestDto } from './responses-request.dto';
import {
  ENCRYPTED_REASONING,
  type FunctionCallItem,
  type MessageItem,
  type OutputItem,
  type OutputText,
  type ReasoningItem,
  type ResponseObject,
  type ResponsesStreamEvent,
  failureEvents,
  finishedResponse,
  newResponsesId,
  responseShell,
} from './responses.wire';

export interface ResponsesEncoderOptions {
  /** Catalog model id, reported as the response's `model`. */
  model: string;
  request: ResponsesRequestDto;
  /** Id factory (`resp_`, `rs_`, `msg_`, `fc_` prefixes); injectable for golden tests. */
  newId?: (prefix: string) => string;
  /** Unix seconds, for `completed_at`. */
  now?: () => number;
  /**
   * The gateway stores the response: its id is minted here (not the upstream's message id),
   * and `keep` gets the final response with every reasoning payload, asked for or not.
   */
  keep?: (stored: ResponseObject) => void;
}

/** What the request asked to see of reasoning: streamed summaries, the opaque payload. */
interface ReasoningView {
  summary: boolean;
  encrypted: boolean;
}

function reasoningView(request: ResponsesRequestDto): ReasoningView {
  const r = request.reasoning;
  return {
    summary: Boolean(r?.summary ?? r?.generate_summary),
    encrypted: request.include?.includes(ENCRYPTED_REASONING) ?? false,
  };
}

function responseId(canonicalId: string): string {
  return canonicalId.startsWith('resp_') ? canonicalId : `resp_${canonicalId}`;
}

function outputText(text: string): OutputText {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

/**
 * The final reasoning item. Raw reasoning is never shown: it becomes the summary only
 * when a summary was requested. The signature is the opaque round-trip payload.
 */
interface CarriedReasoning {
  signature?: string;
  encrypted?: string;
  redacted?: boolean;
}

function reasoningItem(
  id: string,
  text: string,
  carried: CarriedReasoning,
  view: ReasoningView,
): ReasoningItem {
  const item: ReasoningItem = {
    id,
    type: 'reasoning',
    summary: view.summary && text !== '' ? [{ type: 'summary_text', text }] : [],
  };
  const payload = encryptedContent(carried);
  if (view.encrypted && payload !== undefined) {
    item.encrypted_content = payload;
  }
  return item;
}

/** The reasoning view a stored copy needs: every payload, for the next turn's upstream. */
const storedView = (view: ReasoningView): ReasoningView => ({ ...view, encrypted: true });

function messageItem(id: string, text: string, status: MessageItem['status']): MessageItem {
  return { id, type: 'message', role: 'assistant', status, content: [outputText(text)] };
}

/** A function_call item; a namespaced function gets its namespace and own name back. */
function functionCallItem(
  id: string,
  callId: string,
  name: string,
  args: string,
  status: FunctionCallItem['status'],
  namespaces: ToolNamespaces | undefined,
): FunctionCallItem {
  const named = namespaces?.split(name);
  return named
    ? { id, type: 'function_call', status, call_id: callId, ...named, arguments: args }
    : { id, type: 'function_call', status, call_id: callId, name, arguments: args };
}

/** One output item being streamed. */
interface OpenItem {
  kind: 'reasoning' | 'text' | 'tool_call';
  id: string;
  outputIndex: number;
  text: string;
  summaryOpen: boolean;
  carried: CarriedReasoning;
  callId: string;
  name: string;
}

const unixNow = (): number => Math.floor(Date.now() / 1000);

/**
 * Canonical events -> Responses stream events, in the grammar of wire-formats.md 3.6 that
 * openai-node's ResponseStream enforces (v7.5 rules included): `response.created` and
 * `response.in_progress` first; each block becomes one output item, opened with
 * `output_item.added` in its initial state and closed with `output_item.done` before the
 * next starts, `output_index` 0, 1, ... in order; content and summary parts added before
 * their deltas; every item-scoped event names the item's id; exactly one terminal
 * lifecycle event carrying every final item; `sequence_number` from 0 by 1.
 * Canonical blocks arrive one after another, as every canonical source emits them.
 * One instance per stream.
 */
export class ResponsesStreamEncoder {
  private sequence = 0;
  private shell: ResponseObject | undefined;
  private readonly output: OutputItem[] = [];
  /** `output` as stored (reasoning payloads included), when the response is kept. */
  private readonly kept: OutputItem[] = [];
  private open: OpenItem | undefined;
  private ended = false;
  private readonly view: ReasoningView;
  private readonly namespaces: ToolNamespaces | undefined;
  private readonly newId: (prefix: string) => string;
  private readonly now: () => number;

  constructor(private readonly options: ResponsesEncoderOptions) {
    this.view = reasoningView(options.request);
    this.namespaces = ToolNamespaces.of(options.request.tools);
    this.newId = options.newId ?? newResponsesId;
    this.now = options.now ?? unixNow;
  }

  encode(event: CanonicalEvent): ResponsesStreamEvent[] {
    if (this.ended) {
      return [];
    }
    switch (event.type) {
      case 'message_start':
        return this.start(
          this.options.keep ? this.newId('resp_') : responseId(event.id),
          event.created,
        );
      case 'block_start':
        return [...this.ensureStarted(), ...this.openItem(event.block)];
      case 'reasoning_delta':
        return this.reasoningDelta(event.text);
      case 'reasoning_signature':
        if (this.open?.kind === 'reasoning') {
          this.open.carried.signature = event.signature;
        }
        return [];
      case 'reasoning_encrypted':
        if (this.open?.kind === 'reasoning') {
          this.open.carried.encrypted = event.data;
        }
        return [];
      case 'text_delta':
        return this.textDelta(event.text);
      case 'tool_arguments_delta':
        return this.argumentsDelta(event.json);
      case 'block_stop':
        return this.closeItem();
      case 'message_stop': {
        const events = [...this.ensureStarted(), ...this.closeItem()];
        const final = finishedResponse(
          this.startedShell(),
          [...this.output],
          event.finishReason,
          event.usage,
          this.now(),
        );
        this.ended = true;
        this.options.keep?.({ ...final, output: [...this.kept] });
        return [...events, this.event(`response.${final.status}`, { response: final })];
      }
    }
  }

  /**
   * The events that end a stream whose source failed: `error` then `response.failed`,
   * with the items so far (the one cut short marked incomplete). Nothing after a
   * terminal event.
   */
  /** The response shell; callers run ensureStarted() first, which sets it. */
  private startedShell(): ResponseObject {
    if (this.shell === undefined) {
      throw new Error('the Responses stream has not started');
    }
    return this.shell;
  }

  fail(error: GatewayError): ResponsesStreamEvent[] {
    if (this.ended) {
      return [];
    }
    const events = this.ensureStarted();
    const output = [...this.output];
    if (this.open) {
      output.push(this.partialItem(this.open));
    }
    this.ended = true;
    const tail = failureEvents({ ...this.startedShell(), output }, this.sequence, error);
    this.sequence += tail.length;
    return [...events, ...tail];
  }

  /** Called when the source completed: a stream without a terminal event fails. */
  end(): ResponsesStreamEvent[] {
    return this.fail(
      new GatewayError(502, 'server', 'The model stream ended before the response completed.', {
        code: 'stream_incomplete',
      }),
    );
  }

  private event(type: string, payload: Record<string, unknown>): ResponsesStreamEvent {
    return { type, sequence_number: this.sequence++, ...payload };
  }

  private start(id: string, createdAt: number): ResponsesStreamEvent[] {
    if (this.shell) {
      return [];
    }
    this.shell = responseShell(this.options.request, this.options.model, id, createdAt);
    return [
      this.event('response.created', { response: { ...this.shell } }),
      this.event('response.in_progress', { response: { ...this.shell } }),
    ];
  }

  private ensureStarted(): ResponsesStreamEvent[] {
    return this.shell ? [] : this.start(this.newId('resp_'), this.now());
  }

  private openItem(block: BlockKind): ResponsesStreamEvent[] {
    const events = this.closeItem();
    const open: OpenItem = {
      kind: block.kind,
      id: this.newId(block.kind === 'reasoning' ? 'rs_' : block.kind === 'text' ? 'msg_' : 'fc_'),
      outputIndex: this.output.length,
      text: '',
      summaryOpen: false,
      carried: block.kind === 'reasoning' && block.redacted ? { redacted: true } : {},
      callId: block.kind === 'tool_call' ? block.id : '',
      name: block.kind === 'tool_call' ? block.name : '',
    };
    this.open = open;
    const at = { output_index: open.outputIndex };
    switch (block.kind) {
      case 'reasoning':
        events.push(
          this.event('response.output_item.added', {
            ...at,
            item: { id: open.id, type: 'reasoning', summary: [] },
          }),
        );
        break;
      case 'text':
        events.push(
          this.event('response.output_item.added', {
            ...at,
            item: {
              id: open.id,
              type: 'message',
              role: 'assistant',
              status: 'in_progress',
              content: [],
            },
          }),
          this.event('response.content_part.added', {
            item_id: open.id,
            ...at,
            content_index: 0,
            part: outputText(''),
          }),
        );
        break;
      case 'tool_call':
        events.push(
          this.event('response.output_item.added', {
            ...at,
            item: functionCallItem(
              open.id,
              open.callId,
              open.name,
              '',
              'in_progress',
              this.namespaces,
            ),
          }),
        );
        break;
    }
    return events;
  }

  private reasoningDelta(text: string): ResponsesStreamEvent[] {
    const open = this.open;
    if (open?.kind !== 'reasoning') {
      return [];
    }
    open.text += text;
    if (!this.view.summary) {
      return [];
    }
    const at = { item_id: open.id, output_index: open.outputIndex, summary_index: 0 };
    const events: ResponsesStreamEvent[] = [];
    if (!open.summaryOpen) {
      open.summaryOpen = true;
      events.push(
        this.event('response.reasoning_summary_part.added', {
          ...at,
          part: { type: 'summary_text', text: '' },
        }),
      );
    }
    events.push(this.event('response.reasoning_summary_text.delta', { ...at, delta: text }));
    return events;
  }

  private textDelta(text: string): ResponsesStreamEvent[] {
    const open = this.open;
    if (open?.kind !== 'text') {
      return [];
    }
    open.text += text;
    return [
      this.event('response.output_text.delta', {
        item_id: open.id,
        output_index: open.outputIndex,
        content_index: 0,
        delta: text,
        logprobs: [],
      }),
    ];
  }

  private argumentsDelta(json: string): ResponsesStreamEvent[] {
    const open = this.open;
    if (open?.kind !== 'tool_call') {
      return [];
    }
    open.text += json;
    return [
      this.event('response.function_call_arguments.delta', {
        item_id: open.id,
        output_index: open.outputIndex,
        delta: json,
      }),
    ];
  }

  private closeItem(): ResponsesStreamEvent[] {
    const open = this.open;
    if (!open) {
      return [];
    }
    this.open = undefined;
    const at = { item_id: open.id, output_index: open.outputIndex };
    const events: ResponsesStreamEvent[] = [];
    let item: OutputItem;
    switch (open.kind) {
      case 'reasoning':
        if (open.summaryOpen) {
          const part = { type: 'summary_text', text: open.text };
          events.push(
            this.event('response.reasoning_summary_text.done', {
              ...at,
              summary_index: 0,
              text: open.text,
            }),
            this.event('response.reasoning_summary_part.done', { ...at, summary_index: 0, part }),
          );
        }
        item = reasoningItem(open.id, open.text, open.carried, this.view);
        if (this.options.keep) {
          this.kept.push(reasoningItem(open.id, open.text, open.carried, storedView(this.view)));
        }
        break;
      case 'text':
        events.push(
          this.event('response.output_text.done', {
            ...at,
            content_index: 0,
            text: open.text,
            logprobs: [],
          }),
          this.event('response.content_part.done', {
            ...at,
            content_index: 0,
            part: outputText(open.text),
          }),
        );
        item = messageItem(open.id, open.text, 'completed');
        break;
      case 'tool_call':
        events.push(
          this.event('response.function_call_arguments.done', {
            ...at,
            name: this.namespaces?.split(open.name)?.name ?? open.name,
            arguments: open.text,
          }),
        );
        item = functionCallItem(
          open.id,
          open.callId,
          open.name,
          open.text,
          'completed',
          this.namespaces,
        );
        break;
    }
    this.output.push(item);
    if (this.options.keep && item.type !== 'reasoning') {
      this.kept.push(item);
    }
    events.push(this.event('response.output_item.done', { output_index: open.outputIndex, item }));
    return events;
  }

  private partialItem(open: OpenItem): OutputItem {
    switch (open.kind) {
      case 'reasoning':
        return { ...reasoningItem(open.id, open.text, {}, this.view), status: 'incomplete' };
      case 'text':
        return messageItem(open.id, open.text, 'incomplete');
      case 'tool_call':
        return functionCallItem(
          open.id,
          open.callId,
          open.name,
          open.text,
          'incomplete',
          this.namespaces,
        );
    }
  }
}

/** A whole canonical response as the non-streamed Responses object. */
export function toResponseObject(
  r: CanonicalResponse,
  options: ResponsesEncoderOptions,
): ResponseObject {
  const newId = options.newId ?? newResponsesId;
  const view = reasoningView(options.request);
  const namespaces = ToolNamespaces.of(options.request.tools);
  const item = (block: OutputBlock): OutputItem => {
    switch (block.type) {
      case 'reasoning':
        return reasoningItem(newId('rs_'), block.text, block, view);
      case 'text':
        return messageItem(newId('msg_'), block.text, 'completed');
      case 'tool_call':
        return functionCallItem(
          newId('fc_'),
          block.id,
          block.name,
          block.arguments,
          'completed',
          namespaces,
        );
    }
  };
  const id = options.keep ? newId('resp_') : responseId(r.id);
  const shell = responseShell(options.request, options.model, id, r.created);
  const output = r.content.map(item);
  const done = finishedResponse(shell, output, r.finishReason, r.usage, (options.now ?? unixNow)());
  if (options.keep) {
    const stored = storedView(view);
    options.keep({
      ...done,
      output: r.content.map((block, i) =>
        block.type === 'reasoning'
          ? reasoningItem(output[i].id, block.text, block, stored)
          : output[i],
      ),
    });
  }
  return done;
}
