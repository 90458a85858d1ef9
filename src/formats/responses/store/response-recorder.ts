import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { CatalogService } from '../../../catalog/catalog.service';
import type { GatewayRequest } from '../../../common/request-context';
import type { AllConfig } from '../../../config';
import type { OwnedObject } from '../../../ownership/owner-store';
import type { ResponsesRequestDto } from '../responses-request.dto';
import { STORED_RESPONSE, STORED_RESPONSE_ITEM } from '../responses.ownership';
import { type ResponseObject, newResponsesId } from '../responses.wire';
import { continuationOf } from './continuation';
import { inputItems, withItemIds } from './conversation';
import { RESPONSE_STORE } from './response-store.token';
import type { ResponseStore } from './response-store';

const DAY_MS = 86_400_000;

/**
 * Writes the responses the gateway answers itself on `/v1/responses` (the canonical path)
 * to its store, with their input items and the owner records of the response and every
 * item, so that a later `previous_response_id`, `item_reference` or GET finds them on any
 * replica. The answer waits for the write (see the Responses adapter).
 */
@Injectable()
export class ResponseRecorder {
  private readonly logger = new Logger(ResponseRecorder.name);
  private readonly maxBytes: number;
  private readonly retentionMs: number;

  constructor(
    @Inject(RESPONSE_STORE) private readonly store: ResponseStore,
    private readonly catalog: CatalogService,
    config: ConfigService<AllConfig, true>,
  ) {
    const { responses } = config.get('store', { infer: true });
    this.maxBytes = responses.maxBytes;
    this.retentionMs = responses.retentionDays * DAY_MS;
  }

  /** Whether an answer to `body` is stored: `store` not false, for a known key. */
  stores(body: ResponsesRequestDto, req: GatewayRequest): boolean {
    return body.store !== false && req.ctx.key !== undefined;
  }

  /**
   * Stores `response` (the final object, reasoning payloads included) answered to `body`.
   * Never rejects: a response too large or a failed write is logged (never its content)
   * and not kept, so a later continuation from it gets OpenAI's not-found answer.
   */
  async write(
    response: ResponseObject,
    body: ResponsesRequestDto,
    req: GatewayRequest,
  ): Promise<void> {
    const key = req.ctx.key;
    if (key === undefined) {
      return;
    }
    const continuation = continuationOf(body);
    const items = withItemIds(continuation?.input ?? inputItems(body.input), newResponsesId);
    const inputText = JSON.stringify(items);
    const responseText = JSON.stringify({ ...response, store: true });
    if (inputText.length + responseText.length > this.maxBytes) {
      this.logger.warn(
        `response ${response.id} not stored: ${inputText.length + responseText.length} bytes, over RESPONSES_STORE_MAX_BYTES (${this.maxBytes})`,
      );
      return;
    }
    const provider = this.catalog.find(response.model)?.provider.name ?? 'gateway';
    const owner = {
      keyId: key.id,
      ...(key.team === undefined ? {} : { team: key.team }),
      provider,
      model: response.model,
    };
    const objects: OwnedObject[] = [{ ...owner, id: response.id, kind: STORED_RESPONSE }];
    for (const item of [...items, ...response.output]) {
      if (typeof item.id === 'string') {
        objects.push({
          ...owner,
          id: item.id,
          kind: STORED_RESPONSE_ITEM,
          parentId: response.id,
        });
      }
    }
    try {
      await this.store.put(
        {
          id: response.id,
          previousId: continuation?.previousResponseId ?? null,
          keyId: key.id,
          team: key.team ?? null,
          provider,
          model: response.model,
          inputItems: inputText,
          response: responseText,
        },
        new Date(Date.now() + this.retentionMs),
        objects,
      );
    } catch (error) {
      this.logger.warn(`response ${response.id} not stored: ${(error as Error).message}`);
    }
  }
}
