import { Injectable } from '@nestjs/common';
import type { ApiKeyInfo } from '../../auth/api-key.service';
import type { CatalogModel } from '../../catalog/catalog.types';
import { GatewayError } from '../../common/errors/gateway-errors';
import type { GatewayRequest } from '../../common/request-context';
import { ObjectOwnership, accessOf } from '../../ownership/object-ownership.service';
import type { OwnedObject } from '../../ownership/owner-store';
import type { ResponsesInputItem, ResponsesRequestDto } from './responses-request.dto';

/** Owner record kinds of the Responses API. */
export const RESPONSE = 'response';
export const RESPONSE_ITEM = 'response_item';

/** OpenAI's 404 for a response id it does not know: what any id the key may not reach gets. */
export class ResponseNotFoundError extends GatewayError {
  constructor(id: string) {
    super(404, 'not_found', `Response with id '${id}' not found.`);
  }
}

/** OpenAI's 400 for a `previous_response_id` it does not know. */
export class PreviousResponseNotFoundError extends GatewayError {
  constructor(id: string) {
    super(400, 'invalid_request', `Previous response with id '${id}' not found.`, {
      param: 'previous_response_id',
      code: 'previous_response_not_found',
    });
  }
}

/** OpenAI's 404 for an input item id it does not know. */
export class ItemNotFoundError extends GatewayError {
  constructor(id: string) {
    super(
      404,
      'not_found',
      `Item with id '${id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`,
      { param: 'input' },
    );
  }
}

/** A conversation (Conversations API): the gateway relays none, so none has an owner. */
export class ConversationNotFoundError extends GatewayError {
  constructor(id: string) {
    super(404, 'not_found', `Conversation with id '${id}' not found.`, { param: 'conversation' });
  }
}

/** Reports what a native Responses call relayed, for the owner records. */
export interface ResponsesObserver {
  /** A response snapshot from the stream: the first one, then the terminal one. */
  snapshot: (response: Record<string, unknown>, terminal: boolean) => void;
  /** An output item that started streaming (`response.output_item.added`). */
  item: (id: string) => void;
  /** An unstreamed answer; settles once its records are durable. */
  answered: (response: Record<string, unknown>) => Promise<void>;
  /** Settles once everything reported so far is durable. */
  settled: () => Promise<void>;
}

/** The ids in a response's `output` (and its own), as records of `owner`. */
function outputIds(response: Record<string, unknown>, parent: string): string[] {
  const ids: string[] = [];
  if (Array.isArray(response.output)) {
    for (const item of response.output as unknown[]) {
      const id = (item as { id?: unknown } | null)?.id;
      if (typeof id === 'string' && id !== parent) {
        ids.push(id);
      }
    }
  }
  return ids;
}

/**
 * Ownership of Responses API objects: records the ids of every response and output item
 * relayed from a native upstream with the key that asked, and refuses ids a key may not
 * reach (GET, DELETE, input items, `previous_response_id`, item ids in `input`) with
 * OpenAI's own not-found answer, before any upstream call.
 */
@Injectable()
export class ResponsesOwnership {
  constructor(private readonly owners: ObjectOwnership) {}

  /**
   * The record of a stored response `key` may reach; undefined for an unrecorded id an
   * admin key may try upstream. Throws OpenAI's 404 otherwise.
   */
  async authorize(id: string, key: ApiKeyInfo): Promise<OwnedObject | undefined> {
    const record = (await this.owners.find([id])).get(id);
    const access = accessOf(record, key);
    if (access === 'refused' || (record !== undefined && record.kind !== RESPONSE)) {
      throw new ResponseNotFoundError(id);
    }
    return access === 'owner' ? record : undefined;
  }

  /**
   * Checks the stored objects a new request continues from; undefined (no wait) when it
   * names none. `item_reference` ids must be reachable; other input items carry their own
   * content, so only an id recorded for someone else is refused. A stateless request
   * (`store: false`, no `previous_response_id`) reads no stored item through the ids it
   * carries back (clients such as Codex send them), so those are not looked up, except a
   * reasoning item without `encrypted_content`: its content is server state.
   */
  checkContinuation(body: ResponsesRequestDto, key: ApiKeyInfo): Promise<void> | undefined {
    const previous = typeof body.previous_response_id === 'string' ? body.previous_response_id : '';
    const conversation = conversationId(body.conversation);
    if (conversation !== undefined && key.admin !== true) {
      throw new ConversationNotFoundError(conversation);
    }
    const stateless = body.store === false && previous === '';
    const referenced: string[] = [];
    const carried: string[] = [];
    if (Array.isArray(body.input)) {
      for (const item of body.input) {
        if (typeof item !== 'object' || item === null || typeof item.id !== 'string') {
          continue;
        }
        if (item.type === 'item_reference') {
          referenced.push(item.id);
        } else if (!stateless || readsStoredItem(item)) {
          carried.push(item.id);
        }
      }
    }
    if (previous === '' && referenced.length === 0 && carried.length === 0) {
      return undefined;
    }
    const ids =
      previous === '' ? [...referenced, ...carried] : [previous, ...referenced, ...carried];
    return this.owners.find(ids).then((found) => {
      if (previous !== '' && accessOf(found.get(previous), key) === 'refused') {
        throw new PreviousResponseNotFoundError(previous);
      }
      for (const id of referenced) {
        if (accessOf(found.get(id), key) === 'refused') {
          throw new ItemNotFoundError(id);
        }
      }
      for (const id of carried) {
        const record = found.get(id);
        if (record !== undefined && accessOf(record, key) === 'refused') {
          throw new ItemNotFoundError(id);
        }
      }
    });
  }

  /** Records the ids of a stored response's input items as its owner's (after a listing). */
  recordItems(record: OwnedObject, listing: Record<string, unknown>): Promise<void> {
    const ids = Array.isArray(listing.data)
      ? (listing.data as unknown[])
          .map((item) => (item as { id?: unknown } | null)?.id)
          .filter((id): id is string => typeof id === 'string')
      : [];
    return this.owners.record(
      ids.map((id) => ({ ...record, id, kind: RESPONSE_ITEM, parentId: record.id })),
    );
  }

  /** Forgets a response the owner deleted, and its items. */
  forget(id: string): Promise<void> {
    return this.owners.forget(id);
  }

  /** The observer of one native call of `model` (the deployment that serves it) for `req`'s key. */
  observer(req: GatewayRequest, model: CatalogModel): ResponsesObserver | undefined {
    const key = req.ctx.key;
    if (key === undefined) {
      return undefined;
    }
    const owner = {
      keyId: key.id,
      ...(key.team === undefined ? {} : { team: key.team }),
      provider: model.provider.name,
      model: model.id,
    };
    const writes: Promise<void>[] = [];
    let responseId: string | undefined;
    /** Item ids recorded as they started, not written again at the end. */
    const started = new Set<string>();
    const write = (objects: OwnedObject[]): Promise<void> => {
      const done = this.owners.record(objects);
      writes.push(done);
      return done;
    };
    const record = (response: Record<string, unknown>, withOutput: boolean): Promise<void> => {
      const id = response.id;
      if (typeof id !== 'string' || id === '') {
        return Promise.resolve();
      }
      const objects: OwnedObject[] = [];
      if (responseId === undefined) {
        responseId = id;
        objects.push({ ...owner, id, kind: RESPONSE });
      }
      if (withOutput) {
        for (const item of outputIds(response, id)) {
          if (!started.has(item)) {
            objects.push({ ...owner, id: item, kind: RESPONSE_ITEM, parentId: id });
          }
        }
      }
      return write(objects);
    };
    return {
      snapshot: (response, terminal) => void record(response, terminal),
      item: (id) => {
        if (responseId !== undefined && id !== responseId && !started.has(id)) {
          started.add(id);
          void write([{ ...owner, id, kind: RESPONSE_ITEM, parentId: responseId }]);
        }
      },
      answered: (response) => record(response, true),
      settled: () => Promise.all(writes).then(() => undefined),
    };
  }
}

/** A reasoning item sent back without its encrypted content: the provider reads it from its store. */
function readsStoredItem(item: ResponsesInputItem): boolean {
  return item.type === 'reasoning' && typeof item.encrypted_content !== 'string';
}

function conversationId(conversation: unknown): string | undefined {
  if (typeof conversation === 'string' && conversation !== '') {
    return conversation;
  }
  const id = (conversation as { id?: unknown } | null | undefined)?.id;
  return typeof id === 'string' ? id : undefined;
}
