import type { ResponsesInputItem, ResponsesRequestDto } from '../responses-request.dto';

/**
 * Where a request body rebuilt from stored responses keeps what the client itself sent.
 * A symbol key: JSON.stringify, the decoder's field walk and the upstream never see it.
 */
export const CONTINUATION = Symbol('responses.continuation');

/** What the client sent, of a body the gateway rebuilt from its stored responses. */
export interface Continuation {
  /** The client's `previous_response_id` (echoed on the answer; not sent upstream). */
  previousResponseId: string | null;
  /** The request's own input items, references resolved: what its response stores. */
  input: ResponsesInputItem[];
}

/** The continuation of a rebuilt body; undefined for a body as the client sent it. */
export function continuationOf(body: Partial<ResponsesRequestDto>): Continuation | undefined {
  return (body as { [CONTINUATION]?: Continuation })[CONTINUATION];
}

/** A frozen copy of `body` with `input` rebuilt and the client's own part kept aside. */
export function continued(
  body: ResponsesRequestDto,
  input: ResponsesInputItem[],
  continuation: Continuation,
  keepPrevious: boolean,
): ResponsesRequestDto {
  const copy: ResponsesRequestDto = { ...body, input };
  if (!keepPrevious) {
    delete copy.previous_response_id;
  }
  Object.defineProperty(copy, CONTINUATION, { value: continuation, enumerable: false });
  return Object.freeze(copy);
}
