import type { ParamNames } from '../../core/canonical';

/** Chat Completions' names for the canonical fields (errors, `x-gateway-dropped-params`). */
export const CHAT_PARAMS: ParamNames = {
  reasoning: 'reasoning_effort',
  stop: 'stop',
  user: 'user',
  responseFormat: 'response_format',
  temperature: 'temperature',
  topP: 'top_p',
  metadata: 'metadata',
  verbosity: 'verbosity',
  maxOutputTokens: 'max_completion_tokens',
};
