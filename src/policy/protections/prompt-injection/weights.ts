import type { SignalName } from './signals';

/**
 * Logistic weights: score = sigmoid(BIAS + sum of the weights of the signals that fired).
 * All weights are non-negative, so one more signal can only raise a score (monotone), and
 * a text with no signal scores sigmoid(BIAS) (about 0.05).
 *
 * `direct` (user turns) started from a fit on 70% of the dev set
 * (scripts/fit-injection-weights.ts, L2 0.002, bias fixed) and was then rounded and
 * adjusted by hand where dev says little: exfiltration, agent/tool hijack and encoded
 * payloads are rare there, and task announcements are over-represented, so their fitted
 * values were moved toward priors. `indirect` (tool results, documents) raises the signals
 * that address the assistant or its tools, which is what indirect injection looks like, and
 * lowers the role-play ones, which documents and tool output legitimately contain.
 */
export const BIAS = -3;

export const WEIGHTS: Readonly<Record<SignalName, { direct: number; indirect: number }>> = {
  instruction_override: { direct: 3.5, indirect: 4 },
  new_instructions: { direct: 2.5, indirect: 2.5 },
  goal_pivot: { direct: 1.75, indirect: 1.5 },
  task_announcement: { direct: 3.75, indirect: 3.75 },
  instruction_preamble: { direct: 1.5, indirect: 2 },
  persona_override: { direct: 2, indirect: 2 },
  roleplay_setup: { direct: 1.75, indirect: 1 },
  restriction_removal: { direct: 2, indirect: 2 },
  unrestricted_persona: { direct: 1.25, indirect: 1 },
  harm_vocabulary: { direct: 1, indirect: 0.5 },
  refusal_suppression: { direct: 2, indirect: 2 },
  jailbreak_marker: { direct: 3, indirect: 3 },
  dual_response: { direct: 1.5, indirect: 1.5 },
  stay_in_character: { direct: 1.75, indirect: 1.25 },
  vendor_policy: { direct: 1.5, indirect: 1 },
  coercion: { direct: 1, indirect: 1 },
  prompt_exfiltration: { direct: 2.5, indirect: 3 },
  fake_delimiter: { direct: 2, indirect: 2.5 },
  forced_output: { direct: 1.5, indirect: 2 },
  agent_hijack: { direct: 1.5, indirect: 4 },
  data_exfiltration: { direct: 2.5, indirect: 4 },
  tool_hijack: { direct: 1, indirect: 3.5 },
  obfuscation: { direct: 1.5, indirect: 1.5 },
  encoded_instructions: { direct: 2.5, indirect: 3 },
};
