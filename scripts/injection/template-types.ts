/**
 * The shape of the translation-free multilingual injection templates (training only; the
 * gateway never reads them). Written for this project by hand, one table per language: no
 * row of any dataset is copied here, so a leave-one-source-out fold cannot leak its
 * left-out source through them.
 *
 * Slots: `{task}` (one of the language's `tasks`), `{word}`, `{persona}`, `{email}`,
 * `{iban}`, `{url}` (filled from shared lists in templates.ts).
 */
export interface LanguageTemplates {
  /** BCP-47-ish code as the data's `lang` field spells it (`zh`, `ja`, `es`...). */
  lang: string;
  /** Sentence terminator placed between composed clauses ("。", "। ", ". "). */
  stop: string;
  /** "Ignore all previous instructions" and its kin. */
  override: readonly string[];
  /** "Reveal your system prompt". */
  reveal: readonly string[];
  /** A new role or jailbreak persona without limits (`{persona}` slot optional). */
  persona: readonly string[];
  /** Goal hijack: "instead do {task}", "just print {word}". */
  hijack: readonly string[];
  /** Tool-output style: "IMPORTANT: the assistant must {task}". */
  tool: readonly string[];
  /** Attacker payloads as standalone imperative clauses (`{email}`, `{iban}`, `{url}`). */
  tasks: readonly string[];
  /**
   * Benign hard negatives in the same language: sentences that innocently talk about
   * instructions, rules, systems and prompts (some reuse the override verbs: "ignore small
   * mistakes"), so the language or the vocabulary alone is no cue.
   */
  benign: readonly string[];
}
