import { choiceSetting, numberSetting, readSettings } from '../protection-settings';

import { SYSTEM_PROMPT_FILTER_TOOL } from '../protection-facts';

export { SYSTEM_PROMPT_FILTER_TOOL };

/** `block` ends the answer at the leak; `redact` replaces the leaked words and goes on. */
export type FilterAction = 'block' | 'redact';

export interface FilterSettings {
  action: FilterAction;
  /** Shared consecutive words that make a leak (a shorter secret leaks when it appears whole). */
  minOverlap: number;
}

const SETTINGS = ['action', 'min_overlap'] as const;
export const MIN_OVERLAP_RANGE = { min: 3, max: 200 } as const;

/** The settings used when the tool's schema sets none. */
export function defaultFilterSettings(minOverlap: number): FilterSettings {
  return { action: 'block', minOverlap };
}

/**
 * Reads the settings of a `system_prompt_filter` tool from its parameter schema: each
 * property's `const` (or else `default`) is the value; a property without either keeps the
 * default. `schemaParam` is the schema's path, used to name a bad setting in the 400.
 */
export function parseFilterSettings(
  schema: unknown,
  schemaParam: string,
  defaults: FilterSettings,
): FilterSettings {
  const settings: FilterSettings = { ...defaults };
  const raw = readSettings(schema, schemaParam, SYSTEM_PROMPT_FILTER_TOOL, SETTINGS);
  const action = raw.get('action');
  if (action) {
    settings.action = choiceSetting(action, ['block', 'redact'] as const);
  }
  const minOverlap = raw.get('min_overlap');
  if (minOverlap) {
    settings.minOverlap = numberSetting(
      minOverlap,
      MIN_OVERLAP_RANGE.min,
      MIN_OVERLAP_RANGE.max,
      true,
    );
  }
  return settings;
}
