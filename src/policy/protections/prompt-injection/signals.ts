import {
  INSTRUCTION_OVERRIDE,
  NEW_INSTRUCTIONS,
  GOAL_PIVOT,
  TASK_ANNOUNCEMENT,
  INSTRUCTION_PREAMBLE,
} from './signals-instructions';
import {
  PERSONA_OVERRIDE,
  ROLEPLAY_SETUP,
  RESTRICTION_REMOVAL,
  UNRESTRICTED_PERSONA,
  HARM_VOCABULARY,
  REFUSAL_SUPPRESSION,
  JAILBREAK_MARKER,
  DUAL_RESPONSE,
  STAY_IN_CHARACTER,
  VENDOR_POLICY,
  COERCION,
} from './signals-jailbreak';
import {
  PROMPT_EXFILTRATION,
  FAKE_DELIMITER,
  FORCED_OUTPUT,
  AGENT_HIJACK,
  DATA_EXFILTRATION,
  TOOL_HIJACK,
} from './signals-agent';

/**
 * Signal definitions. Patterns run on normalized text (lower case, diacritics stripped,
 * look-alikes folded), so they are written in plain lower-case ASCII. Every pattern is
 * precompiled, anchored on a keyword and uses bounded gaps only (see `gap`), which keeps
 * matching linear: no nested unbounded repetition anywhere.
 *
 * Signals need intent structure (an imperative plus its target, a persona plus the removal
 * of limits), not lone trigger words: "ignore the distractions" or "explain a jailbreak on
 * a phone" must not fire.
 */

export type SignalName =
  | 'instruction_override'
  | 'new_instructions'
  | 'goal_pivot'
  | 'task_announcement'
  | 'instruction_preamble'
  | 'persona_override'
  | 'roleplay_setup'
  | 'restriction_removal'
  | 'unrestricted_persona'
  | 'harm_vocabulary'
  | 'refusal_suppression'
  | 'jailbreak_marker'
  | 'dual_response'
  | 'stay_in_character'
  | 'vendor_policy'
  | 'coercion'
  | 'prompt_exfiltration'
  | 'fake_delimiter'
  | 'forced_output'
  | 'agent_hijack'
  | 'data_exfiltration'
  | 'tool_hijack'
  | 'obfuscation'
  | 'encoded_instructions';

/** A pattern, optionally confirmed by a second pattern within `window` characters of a match. */
export interface PatternSpec {
  /** Regex alternatives (sources); each should start with a literal word so it can be anchored. */
  alts: string[];
  near?: RegExp;
  window?: number;
  /** Fires only when this many distinct matched strings are found. */
  minDistinct?: number;
}

export interface SignalDef {
  name: SignalName;
  patterns: PatternSpec[];
  /** Patterns for the letters-only (squashed) view, used against separator obfuscation. */
  compact?: RegExp[];
}

/** Separator between two words: 1-4 non-alphanumeric characters. */
export const SIGNALS: readonly SignalDef[] = [
  INSTRUCTION_OVERRIDE,
  NEW_INSTRUCTIONS,
  GOAL_PIVOT,
  TASK_ANNOUNCEMENT,
  INSTRUCTION_PREAMBLE,
  PERSONA_OVERRIDE,
  ROLEPLAY_SETUP,
  RESTRICTION_REMOVAL,
  UNRESTRICTED_PERSONA,
  HARM_VOCABULARY,
  REFUSAL_SUPPRESSION,
  JAILBREAK_MARKER,
  DUAL_RESPONSE,
  STAY_IN_CHARACTER,
  VENDOR_POLICY,
  COERCION,
  PROMPT_EXFILTRATION,
  FAKE_DELIMITER,
  FORCED_OUTPUT,
  AGENT_HIJACK,
  DATA_EXFILTRATION,
  TOOL_HIJACK,
];

/** Signals whose firing inside decoded content counts as hidden instructions. */
export const INSTRUCTION_SIGNALS: ReadonlySet<SignalName> = new Set<SignalName>([
  'instruction_override',
  'new_instructions',
  'persona_override',
  'restriction_removal',
  'refusal_suppression',
  'jailbreak_marker',
  'prompt_exfiltration',
  'agent_hijack',
  'data_exfiltration',
  'tool_hijack',
  'forced_output',
]);
