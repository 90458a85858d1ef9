import { responsesLimitFacts } from './responses.limits';
import { responsesProtections } from './responses.protections';
import { responsesSystemPrompt } from './responses.system-prompt';
import type { GenerationFacts } from '../shared/generation.guard';
import type { ResponsesRequestDto } from './responses-request.dto';
import { validateResponsesRequest } from './responses-request.validation';

/** What admitting a Responses request reads from its body. */
export const responsesGeneration: GenerationFacts<ResponsesRequestDto> = {
  format: 'responses',
  validate: validateResponsesRequest,
  systemPrompt: responsesSystemPrompt,
  limits: responsesLimitFacts,
  protections: responsesProtections,
};
