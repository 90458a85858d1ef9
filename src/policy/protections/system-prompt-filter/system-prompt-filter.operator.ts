import { type MonoTypeOperatorFunction, Observable, Subscription, identity } from 'rxjs';
import type { CanonicalEvent } from '../../../core/canonical';
import { compileSecrets, type CompiledSecrets } from './compiled-secrets';
import { type LeakInfo, LeakMatcher } from './leak-matcher';
import type { FilterAction, FilterSettings } from './settings';

export type LeakChannel = 'text' | 'reasoning' | 'tool_arguments';

export interface LeakReport {
  channel: LeakChannel;
  action: FilterAction;
  /** Words of the longest leaked run. */
  words: number;
}

export interface FilterHooks {
  onLeak(report: LeakReport): void;
  /** Output tokens of text, for the usage of a blocked answer. */
  countTokens(text: string): number;
  /**
   * Input tokens of the request, for the usage of a blocked answer when the upstream said
   * none at the start (chat completions and Responses report usage only at the end, which a
   * cut answer never reaches). Without it a blocked answer reports 0 input tokens.
   */
  inputTokens?(): number;
}

type DeltaEvent = Extract<
  CanonicalEvent,
  { type: 'text_delta' | 'reasoning_delta' | 'tool_arguments_delta' }
>;

interface BlockFilter {
  matcher: LeakMatcher;
  channel: LeakChannel;
  /** A delta of this block, to rebuild deltas of released text from. */
  template: DeltaEvent;
}

const CHANNEL: Record<DeltaEvent['type'], LeakChannel> = {
  text_delta: 'text',
  reasoning_delta: 'reasoning',
  tool_arguments_delta: 'tool_arguments',
};

/**
 * Filters a canonical event stream (streamed or to be accumulated: the same operator serves
 * both) so that the secrets do not leave in answer text, reasoning or tool-call arguments.
 * Block mode ends the answer with `content_filter` at the first leak and cancels the
 * upstream; redact mode replaces each leaked run with `[REDACTED]` and goes on.
 */
export function systemPromptFilter(
  secrets: string[],
  settings: FilterSettings,
  hooks: FilterHooks,
): MonoTypeOperatorFunction<CanonicalEvent> {
  const compiled = compileSecrets(secrets, settings.minOverlap);
  if (compiled.empty) {
    return identity;
  }
  return (source) =>
    new Observable<CanonicalEvent>((subscriber) => {
      const upstream = new Subscription();
      const filter = new EventFilter(compiled, settings.action, hooks, (event) =>
        subscriber.next(event),
      );
      // After a block the source is dropped at once (this cancels the upstream call), even
      // when it is still emitting synchronously from inside subscribe().
      const guard = (run: () => void): void => {
        if (filter.done) {
          return;
        }
        try {
          run();
        } catch (err) {
          filter.done = true;
          upstream.unsubscribe();
          subscriber.error(err);
          return;
        }
        if (filter.done) {
          upstream.unsubscribe();
          subscriber.complete();
        }
      };
      upstream.add(
        source.subscribe({
          next: (event) => guard(() => filter.onEvent(event)),
          error: (err: unknown) => {
            if (!filter.done) {
              subscriber.error(err);
            }
          },
          complete: () =>
            guard(() => {
              filter.flushAll();
              if (!filter.done) {
                subscriber.complete();
              }
            }),
        }),
      );
      return () => upstream.unsubscribe();
    });
}

class EventFilter {
  /** Set once the answer was cut (block mode) or failed: nothing more goes out. */
  done = false;
  private readonly blocks = new Map<number, BlockFilter>();
  /** Started and not stopped, in start order. */
  private readonly open = new Set<number>();
  private inputTokens: number | undefined;
  /** Everything the model produced, held and dropped text included, for the usage of a cut answer. */
  private readonly seen: string[] = [];

  constructor(
    private readonly secrets: CompiledSecrets,
    private readonly action: FilterAction,
    private readonly hooks: FilterHooks,
    private readonly emit: (event: CanonicalEvent) => void,
  ) {}

  onEvent(event: CanonicalEvent): void {
    switch (event.type) {
      case 'message_start':
        this.inputTokens = event.inputTokens;
        this.emit(event);
        return;
      case 'block_start':
        this.open.add(event.index);
        this.emit(event);
        return;
      case 'text_delta':
      case 'reasoning_delta':
        this.delta(event, event.text);
        return;
      case 'tool_arguments_delta':
        this.delta(event, event.json);
        return;
      case 'block_stop':
        this.flush(event.index);
        if (!this.done) {
          this.open.delete(event.index);
          this.emit(event);
        }
        return;
      case 'message_stop':
        this.flushAll();
        if (!this.done) {
          this.emit(event);
        }
        return;
      // A reasoning block whose text was redacted keeps its signature: the provider may then
      // reject it when the client sends it back next turn. That is the price of redaction.
      case 'reasoning_signature':
      case 'reasoning_encrypted':
        this.emit(event);
        return;
    }
  }

  /** Releases what every block still holds (end of the answer). */
  flushAll(): void {
    for (const index of [...this.blocks.keys()]) {
      if (this.done) {
        return;
      }
      this.flush(index);
    }
  }

  private delta(event: DeltaEvent, text: string): void {
    this.seen.push(text);
    let block = this.blocks.get(event.index);
    if (block === undefined) {
      const channel = CHANNEL[event.type];
      const matcher = new LeakMatcher(
        this.secrets,
        channel === 'tool_arguments' ? 'json' : 'text',
        this.action,
      );
      block = { matcher, channel, template: event };
      this.blocks.set(event.index, block);
    }
    const { release, leaks } = block.matcher.push(text);
    this.out(block, release, leaks);
  }

  private flush(index: number): void {
    const block = this.blocks.get(index);
    if (block !== undefined) {
      this.blocks.delete(index);
      const { release, leaks } = block.matcher.end();
      this.out(block, release, leaks);
    }
  }

  private out(block: BlockFilter, release: string, leaks: LeakInfo[]): void {
    if (release !== '') {
      const t = block.template;
      this.emit(
        t.type === 'tool_arguments_delta' ? { ...t, json: release } : { ...t, text: release },
      );
    }
    for (const leak of leaks) {
      this.hooks.onLeak({ channel: block.channel, action: this.action, words: leak.words });
      if (this.action === 'block') {
        this.cut();
        return;
      }
    }
  }

  /** Ends the answer here: close what is open and stop with `content_filter`. */
  private cut(): void {
    this.done = true;
    for (const index of this.open) {
      this.emit({ type: 'block_stop', index });
    }
    this.emit({
      type: 'message_stop',
      finishReason: 'content_filter',
      usage: {
        inputTokens: this.inputTokens ?? this.hooks.inputTokens?.() ?? 0,
        outputTokens: this.hooks.countTokens(this.seen.join('')),
      },
    });
  }
}
