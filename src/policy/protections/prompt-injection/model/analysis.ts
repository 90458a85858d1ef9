import { normalizeText, type DecodedKind } from '../normalize';
import { describeObfuscation, evidenceOf, matchView } from '../signal-match';
import { INSTRUCTION_SIGNALS, type SignalName } from '../signals';
import { gramStream, type GramStream } from './features';

/**
 * A text as the classifier sees it: its normalized main view and decoded views (base64, hex,
 * escapes, Morse, rot13, reversed, tag characters), each with its n-gram stream and the
 * hand-written signals found in it, plus the text-wide obfuscation description.
 */

/** Dense (non-hashed) features, in the order the trainer numbers them. */
export const DENSE_FEATURES: readonly SignalName[] = [
  'instruction_override',
  'new_instructions',
  'goal_pivot',
  'task_announcement',
  'instruction_preamble',
  'persona_override',
  'roleplay_setup',
  'restriction_removal',
  'unrestricted_persona',
  'harm_vocabulary',
  'refusal_suppression',
  'jailbreak_marker',
  'dual_response',
  'stay_in_character',
  'vendor_policy',
  'coercion',
  'prompt_exfiltration',
  'fake_delimiter',
  'forced_output',
  'agent_hijack',
  'data_exfiltration',
  'tool_hijack',
  'obfuscation',
  'encoded_instructions',
];
export const DENSE_INDEX: ReadonlyMap<SignalName, number> = new Map(
  DENSE_FEATURES.map((name, i) => [name, i]),
);

/** One signal hit in a view: where its match starts, and a short evidence string. */
export interface ViewSignal {
  name: SignalName;
  index: number;
  evidence: string;
}

/** One view of the text: its normalized characters, n-grams and signals. */
export interface TextView {
  kind: 'text' | DecodedKind;
  text: string;
  /** Shared scratch buffer while visiting (see gramStream); copy to keep. */
  grams: GramStream;
  signals: ViewSignal[];
}

export interface TextSummary {
  /** Obfuscation seen anywhere in the text (one dense feature for every window). */
  obfuscation: string | undefined;
  /** The input was over the normalization cap and its middle was skipped. */
  truncated: boolean;
}

/**
 * Normalizes `raw` once and visits its views in order, main view first. Each view's n-gram
 * stream lives in a shared buffer that the next view overwrites: score or copy it inside
 * `visit`.
 */
export function analyzeText(
  raw: string,
  shape: { bits: number; window: number },
  visit: (view: TextView, summary: TextSummary) => void,
): TextSummary {
  const n = normalizeText(raw);
  const summary: TextSummary = {
    obfuscation: describeObfuscation(n),
    truncated: n.truncated,
  };
  const mainSignals: ViewSignal[] = [];
  for (const [name, hit] of matchView(n.text, n.squashed)) {
    mainSignals.push({ name, index: hit.index, evidence: evidenceOf(hit.match) });
  }
  visit(
    {
      kind: 'text',
      text: n.text,
      grams: gramStream(n.text, shape.bits, shape.window),
      signals: mainSignals,
    },
    summary,
  );
  for (const view of n.decoded) {
    const signals: ViewSignal[] = [];
    let encoded: ViewSignal | undefined;
    for (const [name, hit] of matchView(view.text, undefined)) {
      const signal = { name, index: hit.index, evidence: evidenceOf(hit.match, `${view.kind}: `) };
      signals.push(signal);
      if (encoded === undefined && INSTRUCTION_SIGNALS.has(name)) {
        encoded = { ...signal, name: 'encoded_instructions' };
      }
    }
    if (encoded !== undefined) {
      signals.push(encoded);
    }
    visit(
      {
        kind: view.kind,
        text: view.text,
        grams: gramStream(view.text, shape.bits, shape.window),
        signals,
      },
      summary,
    );
  }
  return summary;
}
