import { choiceSetting, invalidSetting, numberSetting, readSettings } from '../protection-settings';

import { SHADOW_AGENT_TOOL } from '../protection-facts';

export { SHADOW_AGENT_TOOL };

/** Longest policy text (the tool's `description`) a request may give the judge. */
export const MAX_POLICY_CHARS = 8000;
export const MIN_SHADOW_TIMEOUT_MS = 100;
export const MAX_SHADOW_TIMEOUT_MS = 120_000;

export type ShadowAction = 'block' | 'flag';
/** `answer`: the whole answer waits for the verdict; `tool_calls`: only its tool calls do. */
export type ShadowScope = 'answer' | 'tool_calls';
export type ShadowOnError = 'block' | 'allow';

export interface ShadowSettings {
  /** Catalog id of the judge model; undefined when neither the request nor the operator set one. */
  model?: string;
  /** Path of the `model` setting when the request gave it, to name it in a 400. */
  modelParam?: string;
  action: ShadowAction;
  scope: ShadowScope;
  onError: ShadowOnError;
  timeoutMs: number;
  /** The policy text the answer is judged against (the tool's `description`). */
  policy?: string;
}

const SETTINGS = ['model', 'action', 'scope', 'on_error', 'timeout_ms'] as const;

export function defaultShadowSettings(
  model: string | undefined,
  timeoutMs: number,
): ShadowSettings {
  return { model, action: 'block', scope: 'answer', onError: 'block', timeoutMs };
}

/**
 * Reads the settings of a `shadow_agent_validation` tool: its parameter schema's
 * properties (`const`, else `default`) and its `description` as the policy. A bad value
 * is a 400 naming its path (`descriptionParam` is the description's, e.g.
 * `tools[2].function.description`).
 */
export function parseShadowSettings(
  schema: unknown,
  schemaParam: string,
  description: unknown,
  descriptionParam: string,
  defaults: ShadowSettings,
): ShadowSettings {
  const settings: ShadowSettings = { ...defaults };
  const raw = readSettings(schema, schemaParam, SHADOW_AGENT_TOOL, SETTINGS);
  const model = raw.get('model');
  if (model) {
    if (typeof model.value !== 'string' || model.value.trim() === '') {
      throw invalidSetting(
        model.param,
        `expected a catalog model id, got ${JSON.stringify(model.value)}.`,
      );
    }
    settings.model = model.value;
    settings.modelParam = model.param;
  }
  const action = raw.get('action');
  if (action) {
    settings.action = choiceSetting(action, ['block', 'flag'] as const);
  }
  const scope = raw.get('scope');
  if (scope) {
    settings.scope = choiceSetting(scope, ['answer', 'tool_calls'] as const);
  }
  const onError = raw.get('on_error');
  if (onError) {
    settings.onError = choiceSetting(onError, ['block', 'allow'] as const);
  }
  const timeout = raw.get('timeout_ms');
  if (timeout) {
    settings.timeoutMs = numberSetting(timeout, MIN_SHADOW_TIMEOUT_MS, MAX_SHADOW_TIMEOUT_MS, true);
  }
  // null: some clients serialize an absent description so.
  if (description !== undefined && description !== null) {
    if (typeof description !== 'string') {
      throw invalidSetting(descriptionParam, 'expected the policy text as a string.');
    }
    const policy = description.trim();
    if (policy.length > MAX_POLICY_CHARS) {
      throw invalidSetting(
        descriptionParam,
        `the policy is ${policy.length} characters long; at most ${MAX_POLICY_CHARS} are allowed.`,
      );
    }
    settings.policy = policy === '' ? undefined : policy;
  }
  return settings;
}
