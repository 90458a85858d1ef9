import type { ParamNames } from '../../core/canonical';

/** Anthropic Messages' names for the canonical fields (errors, `x-gateway-dropped-params`). */
export const MESSAGES_PARAMS: ParamNames = {
  reasoning: 'thinking',
  stop: 'stop_sequences',
  user: 'metadata.user_id',
  responseFormat: 'output_config.format',
  temperature: 'temperature',
  topP: 'top_p',
  metadata: 'metadata',
  // Messages has no verbosity field; a request never carries one from here.
  verbosity: 'verbosity',
  maxOutputTokens: 'max_tokens',
};
