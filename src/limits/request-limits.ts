import type { CatalogModel } from '../catalog/catalog.types';
import { ContextLengthExceededError, InvalidRequestError } from '../common/errors/gateway-errors';
import type { LimitFacts } from './limit-facts';

/**
 * Request limits: cheap checks that reject, before any upstream call, a request the
 * provider would refuse or that no client should send. Pure functions; each throws a 400
 * naming the parameter, in the wording OpenAI uses for the same problem.
 */
export interface RequestBounds {
  maxMessages: number;
  maxTools: number;
  maxContentParts: number;
}

function tooLong(param: string, max: number, got: number): InvalidRequestError {
  return new InvalidRequestError(
    `Invalid '${param}': array too long. Expected an array with maximum length ${max}, but got an array with length ${got} instead.`,
    param,
    'array_above_max_length',
  );
}

export function checkCounts(facts: LimitFacts, bounds: RequestBounds): void {
  if (facts.messageCount > bounds.maxMessages) {
    throw tooLong(facts.messagesParam, bounds.maxMessages, facts.messageCount);
  }
  if (facts.toolCount > bounds.maxTools) {
    throw tooLong('tools', bounds.maxTools, facts.toolCount);
  }
  if (facts.contentPartCount > bounds.maxContentParts) {
    throw new InvalidRequestError(
      `Too many content parts: the request has ${facts.contentPartCount} across its ${facts.messagesParam}, the limit is ${bounds.maxContentParts}.`,
      facts.messagesParam,
      'too_many_content_parts',
    );
  }
}

/**
 * Validates every output cap the request sets: a positive integer, at most the model's
 * maximum output (or, for a translated request, lowered to it). Returns the cap that
 * applies (the first set, in the format's order).
 */
export function checkMaxOutput(facts: LimitFacts, model: CatalogModel): number | undefined {
  let requested: number | undefined;
  for (const { param, value } of facts.maxOutput) {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
      throw new InvalidRequestError(
        `Invalid '${param}': expected a positive integer, got ${JSON.stringify(value)}.`,
        param,
        'invalid_value',
      );
    }
    if (value > model.maxOutputTokens && facts.clampMaxOutput === true) {
      requested ??= model.maxOutputTokens;
      continue;
    }
    if (value > model.maxOutputTokens) {
      throw new InvalidRequestError(
        `'${param}' is too large: ${value}. The model '${model.id}' supports at most ${model.maxOutputTokens} output tokens.`,
        param,
        'invalid_value',
      );
    }
    requested ??= value;
  }
  return requested;
}

/**
 * Prompt plus requested output must fit the context window. `promptTokens` is an
 * estimate; with a tolerance t it is only trusted down to (1 - t) x estimate, so an
 * approximate tokenizer never rejects a request the model would have accepted.
 */
export function checkContextWindow(
  model: CatalogModel,
  promptTokens: number,
  requestedOutput: number,
  tolerance: number,
  facts: LimitFacts,
): void {
  if (fitsContextWindow(model, promptTokens, requestedOutput, tolerance)) {
    return;
  }
  const outputParam = facts.maxOutput[0]?.param;
  const output = requestedOutput > 0 ? `, ${requestedOutput} in the output (${outputParam})` : '';
  throw new ContextLengthExceededError(
    `This model's maximum context length is ${model.contextWindow} tokens. However, you requested about ${promptTokens + requestedOutput} tokens (about ${promptTokens} in the prompt${output}). Please reduce the length of the ${facts.messagesParam}${requestedOutput > 0 ? ` or ${outputParam}` : ''}.`,
    facts.messagesParam,
  );
}

/** The test {@link checkContextWindow} applies, as a predicate (for choosing among models). */
export function fitsContextWindow(
  model: CatalogModel,
  promptTokens: number,
  requestedOutput: number,
  tolerance: number,
): boolean {
  return Math.floor(promptTokens * (1 - tolerance)) + requestedOutput <= model.contextWindow;
}
