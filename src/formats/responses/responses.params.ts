import type { ParamNames } from '../../core/canonical';

/** The Responses API's names for the canonical fields (errors, `x-gateway-dropped-params`). */
export const RESPONSES_PARAMS: ParamNames = {
  reasoning: 'reasoning',
  stop: 'stop',
  user: 'user',
  responseFormat: 'text.format',
  temperature: 'temperature',
  topP: 'top_p',
  metadata: 'metadata',
  verbosity: 'text.verbosity',
  maxOutputTokens: 'max_output_tokens',
};
