/**
 * Translation-free multilingual template augmentation (training only). Injections composed
 * from the hand-written tables (templates-*.ts: 25 languages, five intents: override,
 * reveal the system prompt, new persona, goal hijack, tool-output "IMPORTANT: the assistant
 * must ...") with slot variation, planted into benign training rows (documents, tool
 * outputs, questions) or standing alone. Each comes with a negative twin: the same carrier
 * with a benign sentence of the same language planted at the same place, inside the same
 * wrapper. So neither a foreign-language sentence inside a document, nor the wrapper, nor the
 * vocabulary of instructions and rules ("follow the instructions in the manual", "ignore
 * small mistakes") is a cue: only the intent is.
 *
 * Fold-safe: built from the fold's own training rows and the templates, nothing else.
 */
import { own } from '../../src/common/own';
import { insertAt, rng, WRAPS, type AugmentRow } from '../injection-augment';
import { ASIA } from './templates-asia';
import { LATIN } from './templates-latin';
import { BENIGN_ROLES, ROLE_PROMPT } from './templates-roles';
import type { LanguageTemplates } from './template-types';
import { WEST } from './templates-west';

/** Every language table, English first. */
export const TEMPLATES: readonly LanguageTemplates[] = [...LATIN, ...ASIA, ...WEST];

const SLOTS: Readonly<Record<string, readonly string[]>> = {
  persona: ['DAN', 'AIM', 'Omega', 'FreeBot', 'NovaX', 'Maximum', 'KAI', 'STAN'],
  word: ['HACKED', 'PWNED', 'OK', 'ACCESS GRANTED', 'I have been hacked', '42', 'LOL'],
  email: [
    'attacker@evil-mail.com',
    'backup.sync@protonmail.com',
    'admin@secure-verify.net',
    'x9@mailbox.org',
  ],
  iban: [
    'DE89 3704 0044 0532 0130 00',
    'GB29 NWBK 6016 1331 9268 19',
    '4111-2222-3333',
    'FR14 2004 1010 0505 0001 3M02 606',
  ],
  url: [
    'http://evil.example.com/login',
    'https://secure-update.net/verify',
    'www.free-prizes.info',
    'https://bit.ly/3xY7kQ',
  ],
};

type Random = () => number;

function pick<T>(list: readonly T[], random: Random): T {
  return list[Math.floor(random() * list.length)];
}

/** Fills `{slot}`s: `{task}` from the language's payloads, the others from SLOTS. */
function fill(template: string, t: LanguageTemplates, random: Random): string {
  return template.replace(/\{(\w+)\}/g, (_, slot: string) => {
    if (slot === 'task') {
      return fill(pick(t.tasks, random), t, random);
    }
    const values = own(SLOTS, slot);
    return values === undefined ? slot : pick(values, random);
  });
}

/** One injection in language `t`: one of the intents, sometimes behind an override. */
export function composeInjection(t: LanguageTemplates, random: Random): string {
  const f = (list: readonly string[]): string => fill(pick(list, random), t, random);
  const join = (...parts: string[]): string => parts.join(t.stop).trim();
  const kind = Math.floor(random() * 6);
  switch (kind) {
    case 0:
      return join(f(t.override), f(pick([t.reveal, t.tasks, t.hijack], random)));
    case 1:
      return random() < 0.5 ? join(f(t.override), f(t.reveal)) : f(t.reveal);
    case 2:
      return random() < 0.5 ? join(f(t.persona), f(t.tasks)) : join(f(t.persona), f(t.reveal));
    case 3:
      return random() < 0.3 ? join(f(t.override), f(t.hijack)) : f(t.hijack);
    case 4:
      return random() < 0.3 ? join(f(t.override), f(t.tool)) : f(t.tool);
    default:
      return f(t.override);
  }
}

/** Benign text in language `t`: one or two hard-negative sentences, or a harmless role. */
export function composeBenign(t: LanguageTemplates, random: Random): string {
  const roles = own(BENIGN_ROLES, t.lang) ?? [];
  const first =
    roles.length > 0 && random() < 0.3 ? `${pick(roles, random)}${t.stop}` : pick(t.benign, random);
  const text = random() < 0.4 ? `${first} ${pick(t.benign, random)}` : first;
  // Payload-like slot values (a URL, an address) also appear in benign text, so they are no cue.
  return random() < 0.3 ? `${text} ${pick([...SLOTS.url, ...SLOTS.email], random)}` : text;
}

/** A benign role prompt in English (see ROLE_PROMPT): opener, duty, constraints, request. */
export function composeRolePrompt(random: Random): string {
  if (random() < 0.4) {
    // A structured system prompt: headings, a task, rules as a list.
    const [role, rules, format] = [0, 1, 2].map(() => pick(ROLE_PROMPT.headings, random));
    return [
      `${role}\n${pick(ROLE_PROMPT.openers, random).replace('{role}', pick(ROLE_PROMPT.roles, random))} ${pick(ROLE_PROMPT.tasks, random)}`,
      `${rules}\n- ${pick(ROLE_PROMPT.constraints, random)}\n- ${pick(ROLE_PROMPT.constraints, random)}`,
      `${format}\n- ${pick(ROLE_PROMPT.constraints, random)}`,
    ].join('\n\n');
  }
  const opener = pick(ROLE_PROMPT.openers, random).replace(
    '{role}',
    pick(ROLE_PROMPT.roles, random),
  );
  const constraints = [
    pick(ROLE_PROMPT.constraints, random),
    pick(ROLE_PROMPT.constraints, random),
  ];
  return [
    opener,
    pick(ROLE_PROMPT.duties, random),
    ...new Set(constraints),
    pick(ROLE_PROMPT.requests, random),
  ].join(' ');
}

/**
 * `count` pairs: a composed injection planted in (or, one time in five, standing in for) a
 * benign training row, and its twin with a benign template sentence of the same language in
 * the same place. Half the time the language is the carrier's own (when a table exists),
 * otherwise any of the 25.
 */
export function templateRows(
  rows: readonly AugmentRow[],
  count: number,
  seed: number,
): AugmentRow[] {
  const carriers = rows.filter((r) => r.label === 0 && r.text.length <= 6000);
  if (count === 0 || carriers.length === 0) {
    return [];
  }
  const byLang = new Map(TEMPLATES.map((t) => [t.lang, t]));
  const random = rng(seed ^ 0x7e3a);
  const out: AugmentRow[] = [];
  for (let i = 0; i < count; i += 1) {
    // One carrier in seven is a benign role prompt: a role with rules is no injection.
    const carrier: AugmentRow =
      random() < 0.15
        ? { text: composeRolePrompt(random), label: 0, lang: 'en' }
        : pick(carriers, random);
    const native = byLang.get(carrier.lang ?? '');
    const t = native !== undefined && random() < 0.5 ? native : pick(TEMPLATES, random);
    const wrap = pick(WRAPS, random);
    const bad = wrap(composeInjection(t, random));
    const good = wrap(composeBenign(t, random));
    let text: string;
    let twin: string;
    if (random() < 0.2) {
      text = bad;
      twin = good;
    } else {
      const at = insertAt(carrier.text, random);
      const before = carrier.text.slice(0, at);
      const after = carrier.text.slice(at);
      text = `${before}${bad} ${after}`;
      twin = `${before}${good} ${after}`;
    }
    out.push(
      { id: `template-${i}`, text, label: 1, slice: 'augmented_template', lang: t.lang },
      {
        id: `template-clean-${i}`,
        text: twin,
        label: 0,
        slice: 'augmented_template',
        lang: t.lang,
      },
    );
  }
  return out;
}
