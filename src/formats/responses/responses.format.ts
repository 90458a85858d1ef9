import { OpenAiExceptionFilter } from '../openai/openai-exception.filter';
import type { WireFormatDescriptor } from '../shared/wire-format';
import type { ResponsesRequestDto } from './responses-request.dto';
import { responsesAdapter } from './responses.adapter';
import { RESPONSES_PARAMS } from './responses.params';

/** The OpenAI Responses API (its stored-response endpoints live under the same path). */
export const responsesFormat: WireFormatDescriptor<ResponsesRequestDto> = {
  name: 'responses',
  path: 'v1/responses',
  envelope: 'openai',
  filter: OpenAiExceptionFilter,
  answer: 'responses',
  params: RESPONSES_PARAMS,
  openapi: {
    summary: 'Create a response (OpenAI Responses)',
    tag: 'OpenAI',
    request: 'ResponsesRequest',
    answer: 'Response',
    event: 'ResponsesStreamEvent',
  },
  adapter: responsesAdapter,
};
