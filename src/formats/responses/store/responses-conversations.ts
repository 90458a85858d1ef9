import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { ApiKeyInfo } from '../../../common/key-policy';
import { InvalidRequestError } from '../../../common/errors/gateway-errors';
import type { AllConfig } from '../../../config';
import { accessOf } from '../../../ownership/object-ownership.service';
import type { OwnedObject } from '../../../ownership/owner-store';
import type { GenerationRoute } from '../../shared/canonical-path';
import type { ConversationState } from '../../shared/conversation-state';
import type { ResponsesInputItem, ResponsesRequestDto } from '../responses-request.dto';
import {
  ItemNotFoundError,
  PreviousResponseNotFoundError,
  ResponsesOwnership,
  STORED_RESPONSE,
  STORED_RESPONSE_ITEM,
} from '../responses.ownership';
import { continued } from './continuation';
import {
  type StoredItems,
  forStoringUpstream,
  historyOf,
  inputItems,
  itemsById,
  itemsOf,
  resolveReferences,
} from './conversation';
import type { ChainResult, ResponseStore, StoredResponseRow } from './response-store';
import { RESPONSE_STORE } from './response-store.token';

function previousOf(body: ResponsesRequestDto): string | undefined {
  const previous = body.previous_response_id;
  return typeof previous === 'string' && previous !== '' ? previous : undefined;
}

const isReference = (item: ResponsesInputItem): boolean =>
  item.type === 'item_reference' && typeof item.id === 'string';

/**
 * Conversation state on `/v1/responses` for every model: a `previous_response_id` or an
 * `item_reference` naming a response the gateway stored is resolved at admission into the
 * whole conversation (earlier inputs and outputs, oldest first; the request's own
 * `instructions` only), which the plan then holds. Ids held by a provider's own store stay
 * as they are, for that provider. One read of the owner records, then one of the store.
 */
@Injectable()
export class ResponsesConversations implements ConversationState<ResponsesRequestDto> {
  private readonly maxDepth: number;
  private readonly maxBytes: number;

  constructor(
    private readonly ownership: ResponsesOwnership,
    @Inject(RESPONSE_STORE) private readonly store: ResponseStore,
    config: ConfigService<AllConfig, true>,
  ) {
    const { responses } = config.get('store', { infer: true });
    this.maxDepth = responses.chainMaxDepth;
    this.maxBytes = responses.chainMaxBytes;
  }

  names(body: ResponsesRequestDto): boolean {
    return (
      previousOf(body) !== undefined || (Array.isArray(body.input) && body.input.some(isReference))
    );
  }

  async resolve(
    body: ResponsesRequestDto,
    key: ApiKeyInfo | undefined,
    route: GenerationRoute,
  ): Promise<ResponsesRequestDto> {
    if (key === undefined) {
      // Without keys nothing is stored (nobody to own it): ids go as they are.
      return body;
    }
    const previous = previousOf(body);
    // The chain is read beside the owner records, not after them: one round trip's wait.
    // The records decide; a chain read for an id held elsewhere is dropped.
    const reading =
      previous === undefined ? undefined : this.store.chain(previous, this.maxDepth, this.maxBytes);
    reading?.catch(() => undefined);
    const found: Map<string, OwnedObject> =
      (await this.ownership.checkContinuation(body, key)) ?? new Map<string, OwnedObject>();
    const chained = previous !== undefined && found.get(previous)?.kind === STORED_RESPONSE;
    const own = inputItems(body.input);
    const parents = new Set<string>();
    for (const item of own) {
      const record = isReference(item) && item.id !== undefined ? found.get(item.id) : undefined;
      if (record?.kind === STORED_RESPONSE_ITEM && record.parentId !== undefined) {
        parents.add(record.parentId);
      }
    }
    if (!chained && parents.size === 0) {
      return body;
    }
    const chain = chained && reading ? await this.chain(previous, reading, key) : [];
    const inChain = new Set(chain.map((c) => c.id));
    const others = [...parents].filter((id) => !inChain.has(id));
    const referenced = others.length > 0 ? await this.store.find(others) : [];
    const stored: StoredItems[] = [...chain.map((c) => c.items), ...referenced.map(itemsOf)];
    const resolved = resolveReferences(own, itemsById(stored));
    for (const item of resolved) {
      if (
        isReference(item) &&
        item.id !== undefined &&
        found.get(item.id)?.kind === STORED_RESPONSE_ITEM
      ) {
        // Its response expired or was deleted since the owner record was read.
        throw new ItemNotFoundError(item.id);
      }
    }
    const whole = [...historyOf(chain.map((c) => c.items)), ...resolved];
    return continued(
      body,
      route.path.kind === 'native' ? forStoringUpstream(whole) : whole,
      { previousResponseId: chained ? previous : null, input: resolved },
      !chained,
    );
  }

  /** The stored chain ending at `id`, oldest first; the 400s when it cannot be rebuilt. */
  private async chain(
    id: string,
    reading: Promise<ChainResult>,
    key: ApiKeyInfo,
  ): Promise<{ id: string; items: StoredItems }[]> {
    const result = await reading;
    switch (result.kind) {
      case 'too_deep':
        throw new InvalidRequestError(
          `The conversation ending at '${id}' is longer than ${this.maxDepth} responses (RESPONSES_CHAIN_MAX_DEPTH). Start a new conversation, or send the earlier items in 'input'.`,
          'previous_response_id',
          'conversation_too_long',
        );
      case 'too_large':
        throw new InvalidRequestError(
          `The conversation ending at '${id}' is larger than ${this.maxBytes} bytes (RESPONSES_CHAIN_MAX_BYTES). Start a new conversation, or send the earlier items in 'input'.`,
          'previous_response_id',
          'conversation_too_large',
        );
      case 'broken':
        throw new PreviousResponseNotFoundError(id);
      case 'ok':
        return result.rows.map((row) => {
          if (accessOf(ownerOf(row), key) !== 'owner') {
            throw new PreviousResponseNotFoundError(id);
          }
          return { id: row.id, items: itemsOf(row) };
        });
    }
  }
}

function ownerOf(row: StoredResponseRow): OwnedObject {
  return {
    id: row.id,
    kind: STORED_RESPONSE,
    keyId: row.keyId,
    provider: row.provider,
    model: row.model,
  };
}
