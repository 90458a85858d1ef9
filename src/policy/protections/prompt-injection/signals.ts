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
const SEP = '[^a-z0-9]{1,4}';
/** One word. */
const WD = "[a-z0-9']{1,20}";
/** Up to `n` filler words, then a separator. */
const gap = (n: number): string => `${SEP}(?:${WD}${SEP}){0,${n}}`;
const alt = (...parts: string[]): string => parts.join('|');
const re = (...parts: string[]): RegExp => new RegExp(parts.join('|'), 'g');
const p = (...parts: string[]): PatternSpec => ({ alts: parts });

// ---- instruction override -------------------------------------------------------------
const IGNORE_VERB = alt(
  'ignor(?:e|es|ed|ing)',
  'disregard(?:s|ed|ing)?',
  'forget(?:ting)?',
  'forgot',
  'neglect',
  'overlook',
  'skip',
  'bypass(?:ing)?',
  'overrid(?:e|ing)',
  'overrule',
  'abandon',
  'discard',
  'dismiss',
  'set aside',
  'put aside',
  'leave behind',
  'pay no (?:attention|heed) to',
  'throw (?:away|out)',
  'scrap',
);
const WIPE_VERB = alt('delete', 'remove', 'erase', 'clear', 'drop', 'reset', 'wipe', 'purge');
const OVERRIDE_QUAL = alt(
  'previous(?:ly)?',
  'prior',
  'preceding',
  'above',
  'earlier',
  'former',
  'foregoing',
  'initial',
  'original',
  'old',
  'existing',
  'given',
  'provided',
  'all',
  'any',
  'every',
  'your',
  'these',
  'those',
  'the',
  'system',
  'developer',
  'default',
  'safety',
  'openai',
  'whatever',
);
const PREV_QUAL = alt(
  'previous(?:ly)?',
  'prior',
  'preceding',
  'above',
  'earlier',
  'former',
  'foregoing',
  'initial',
  'original',
  'provided',
  'given',
  'so far',
  'before',
  'beforehand',
);
const RULE_NOUN = alt(
  'instructions?',
  'instructed',
  'rules?',
  'prompts?',
  'directions?',
  'directives?',
  'guidelines?',
  'guidance',
  'commands?',
  'orders?',
  'constraints?',
  'restrictions?',
  'programming',
  'training',
  'polic(?:y|ies)',
  'filters?',
  'safeguards?',
  'limitations?',
  'parameters',
);
const CONTEXT_NOUN = alt(
  'context',
  'conversation',
  'messages?',
  'inputs?',
  'tasks?',
  'assignments?',
  'information',
  'articles?',
  'documents?',
  'text',
  'content',
  'statements?',
  'everything',
  'anything',
);

const INSTRUCTION_OVERRIDE: SignalDef = {
  name: 'instruction_override',
  patterns: [
    p(
      `\\b(?:${IGNORE_VERB}|${WIPE_VERB})\\b${gap(3)}(?:${OVERRIDE_QUAL})${gap(2)}(?:${RULE_NOUN})\\b`,
      `\\b(?:${IGNORE_VERB})${SEP}(?:${RULE_NOUN})\\b`,
      `\\b(?:${IGNORE_VERB})\\b${gap(3)}(?:${PREV_QUAL})${gap(2)}(?:${CONTEXT_NOUN})\\b`,
      `\\b(?:${IGNORE_VERB})\\b(?: about)?(?: all| everything| anything)?(?: of)?(?: the| that| what was| what is)? (?:above|before|previous|prior|preceding|earlier)\\b`,
      `\\b(?:forget|ignore|disregard)(?: about)? (?:everything|all (?:of )?(?:this|that|it)|all that|what (?:i|you|we)(?: have|'ve| had)? (?:said|told|wrote|written|discussed|talked|learned|learnt|know))\\b`,
      `\\b(?:previous|prior|above|earlier|preceding|original|initial|old)${gap(1)}(?:${RULE_NOUN}|information|context|tasks)${gap(6)}(?:are|is|were|have been|has been|now)${gap(2)}(?:void|invalid|cancell?ed|obsolete|irrelevant|null|revoked|outdated|deprecated|suspended|lifted|overridden|replaced|superseded|no longer|not (?:valid|applicable|important|relevant|needed|in effect|great))`,
      `\\b(?:despite|regardless of|contrary to|notwithstanding|in spite of|instead of following) (?:what (?:you've|you have|you were|you've been|you) (?:been )?(?:told|instructed|programmed|trained)|(?:your|the|any|all|previous|prior|my) (?:[a-z]{1,15} )?(?:instructions|rules|guidelines|programming|directives|training))\\b`,
      `\\b(?:do not|don't|dont|never|stop|no longer) (?:follow(?:ing)?|obey(?:ing)?|listen(?:ing)? to|adher(?:e|ing) to|comply(?:ing)? with|abid(?:e|ing) by) (?:your|the|any|those|these|all)(?: ${WD})? (?:instructions|rules|guidelines|directives|programming|prompt|system prompt)\\b`,
      `\\b(?:without|not) (?:using|looking (?:in|at|into)|relying on|referring to|based on|by|considering) (?:the )?(?:provided |given )?(?:articles?|documents?|context|sources?)\\b`,
      `\\b(?:disregard(?:ing)?|ignor(?:e|ing)) (?:the )?(?:provided |given )?(?:articles?|documents?|context)\\b`,
      `\\banswer by your own knowledge\\b`,
      `\\b(?:do not|don't|dont) (?:look|search) (?:in|at|into) (?:the )?(?:provided |given )?(?:documents?|articles?|context|sources?)\\b`,
      `\\bleave${gap(3)}(?:previous|prior|above|earlier|preceding)${gap(2)}behind\\b`,
      `\\b(?:out of|from) your (?:head|mind|memory)\\b`,
      // German
      `\\b(?:ignorier(?:e|en|t)?|vergiss|vergessen|vergesst|missachte(?:n|t)?|verwirf|verwerfen|uberges?he?n?)\\b${gap(3)}(?:alle[snm]?|vorherige[nsrm]?|bisherige[nsrm]?|obige[nsrm]?|vorangegangene[nsrm]?|vorangehende[nsrm]?|vorige[nsrm]?|zuvor|davor|vorher|fruhere[nsrm]?|anweisungen|befehle|regeln|instruktionen|auftrage|aufgaben|angaben|informationen|vorgaben|richtlinien)\\b`,
      `\\b(?:nicht auf|abweichend (?:zu|von)) (?:alles|alle|die|den|das)? ?(?:zuvor|vorher|bisher|vorherigen|bisherigen|obigen)`,
      `\\balle (?:vorherigen|bisherigen|obigen)${gap(6)}(?:sind|waren)${gap(3)}(?:irrelevant|unwichtig|ungultig|nicht)`,
      `\\b(?:obige[nrs]?|vorherige[nrs]?|bisherige[nrs]?|vorangegangene[nrs]?|fruhere[nrs]?)${gap(2)}(?:ignorieren|vergessen|missachten|ubergehen)\\b`,
      `\\b(?:lass|lassen sie|lasst)${gap(3)}(?:vorherigen|bisherigen|obigen|fruheren)${gap(2)}hinter (?:dir|sich|euch)\\b`,
      `\\baus dem kopf\\b`,
      // French
      `\\b(?:ignore[rz]?|ignorez|oublie[rz]?|oubliez|neglige[rz]?|fais abstraction de)\\b${gap(3)}(?:instructions|consignes|regles|directives|ordres|indications|precedent[a-z]{0,3}|ci-dessus|tout)\\b`,
      // Spanish
      `\\b(?:ignora[rd]?|ignoren|olvida[rdn]?|olvide|olviden|descarta[r]?|omite|omitir|haz caso omiso de)\\b${gap(3)}(?:instrucciones|reglas|indicaciones|directivas|ordenes|anteriores|previas|todo|todas)\\b`,
      // Italian
      `\\b(?:ignora(?:re|te)?|dimentica(?:re|te)?|trascura(?:re)?|scarta)\\b${gap(3)}(?:istruzioni|regole|indicazioni|direttive|ordini|precedenti|tutto|tutte)\\b`,
      // Portuguese
      `\\b(?:ignore|ignorar|esqueca|esquecer|desconsidere|descarte)\\b${gap(3)}(?:instrucoes|regras|indicacoes|diretrizes|ordens|anteriores|previas|tudo|todas)\\b`,
      // Serbo-Croatian and Russian (Cyrillic is left as is when it is not a look-alike)
      `\\bzaboravi(?:te)? (?:sve|sva)\\b`,
      '(?:забуд|игнориру|проигнориру)[а-я]{0,4}[^a-z]{1,30}(?:инструкци|правил|указани|все)',
    ),
  ],
  compact: [
    /(?:ignore|disregard|forget|bypass|override)(?:all|any|the|your|every)?(?:the)?(?:previous|prior|above|earlier|preceding|initial|original)(?:instructions?|rules|prompts?|directions|guidelines|commands|context)/,
    /(?:ignore|disregard|forget)(?:all|your|the)(?:instructions|rules|guidelines)/,
  ],
};

// ---- new instructions / goal pivot ----------------------------------------------------
const NEW_INSTRUCTIONS: SignalDef = {
  name: 'new_instructions',
  patterns: [
    p(
      '\\bnew (?:set of )?(?:instructions?|directives?|rules|orders|commands|system prompt|prompt|statement)\\b',
      '\\b(?:new|real|actual|true|updated|revised|additional|secret|hidden|further) (?:main )?(?:task|tasks|assignment|mission|objective|instructions?|directives?|orders?|challenge|statement)\\b',
      '\\byour (?:real|true|actual|new|only|sole|primary) (?:goal|purpose|job|objective|function) (?:is|will be|now)\\b',
      '\\bfrom now on\\b|\\bfrom this (?:point|moment) (?:on|onwards?|forward)\\b|\\bhenceforth\\b|\\bfrom here on(?: out)?\\b|\\bstarting now\\b',
      '\\binstead(?:,)? (?:you (?:will|should|must)|just|only|do|say|write|print|output|tell|respond|reply|answer|return|give|show|display)\\b',
      '\\b(?:change|update|replace|modify|overwrite|rewrite|reprogram) (?:your|the) (?:instructions|rules|prompt|programming|directives|system prompt|guidelines|core directives)\\b',
      '\\byour (?:instructions|directives|rules|orders) (?:are|will be) now\\b',
      '(?<=(?:^|\\n|\\\\n) ?(?:new )?)(?:instruction|order|command|directive)s? ?:',
      // German
      '\\bneue[nrs]? (?:aufgabe|aufgaben|anweisung|anweisungen|befehle|regeln|auftrag|auftrage|herausforderung|instruktionen)\\b',
      '\\b(?:nun|jetzt) (?:folgen|kommt|kommen)\\b|\\bab (?:jetzt|sofort|nun) (?:bist|wirst|sollst|musst)\\b|\\bvon nun an\\b',
      // French, Spanish, Italian, Portuguese
      '\\bnouvel(?:le)?s? (?:instructions?|consignes?|taches?|regles|directives?|mission)\\b|(?<=\\ba )partir de maintenant\\b|\\bdesormais\\b|\\bdorenavant\\b|\\bau lieu de cela\\b',
      '\\bnuevas? (?:instrucciones|tareas?|reglas|directivas|ordenes|mision)\\b|(?<=\\ba )partir de ahora\\b|\\bde ahora en adelante\\b|\\ben su lugar\\b',
      '\\bnuov[ei] (?:istruzioni|compiti|compito|regole|direttive)\\b|\\bda (?:ora|adesso) in (?:poi|avanti)\\b',
      '\\bnovas? (?:instrucoes|tarefas?|regras|diretrizes)\\b|(?<=\\ba )partir de agora\\b|\\bde agora em diante\\b|\\bem vez disso\\b',
    ),
  ],
};

const GOAL_PIVOT: SignalDef = {
  name: 'goal_pivot',
  patterns: [
    {
      alts: [
        '\\b(?:well done|great job|good job|nice job|excellent(?: performance| work)?|very good|very well done|superbly done|simply great|congratulations|fantastic|perfect)\\b',
        "(?<=\\byou )(?:did|have done) (?:it|well|great)\\b|(?<=\\byou')ve outdone yourself\\b|(?<=\\byou )have passed\\b|(?<=\\bthat(?:'s| is| was) )(?:enough|done|ok|okay|great|fine)\\b",
        '\\b(?:gut gemacht|super gemacht|sehr gut|ausgezeichnet|ausgezeichnete leistung|grossartig|einfach grossartig|fantastisch|herzlichen gluckwunsch|das genugt|das ist erledigt|das war schon mal ok)\\b',
      ],
      near: re(
        '\\b(?:now|but now|next|then) (?:comes?|follows?|forget|focus|concentrate|write|say|print|output|tell|show|give|generate|respond|answer|create|compose|help|i need|we|please)\\b',
        '\\b(?:new|another|second|next|further|more) (?:task|tasks|test|challenge|assignment)\\b',
        '\\b(?:nun|jetzt|aber jetzt) (?:kommt|kommen|folgen|folgt|schreibe?|sage?|verfasse|vergiss|konzentriere|bitte|hilf|habe ich)\\b|\\b(?:neue|weitere|zweite|nachste) (?:aufgabe|aufgaben|test|herausforderung)\\b|\\bnun\\b',
      ),
      window: 160,
    },
    p(
      "\\b(?:we'll|we will|let's|lets) start (?:over|again|afresh|from scratch|with a new)\\b|\\bstart (?:over|from the front)\\b",
      '\\bconcentrate (?:only )?on (?:this|the|your) (?:new )?task\\b|\\bfocus on your new\\b',
      '\\b(?:attention|achtung|stop|stopp)\\b ?[-:!,] ?(?:stop|stopp|attention|ignore|write|schreib)',
      '(?<=^)(?:stop|stopp)\\b ?[-:!,]',
      '\\b(?:konzentriere dich|konzentrier dich) (?:jetzt |nur )?auf\\b',
    ),
  ],
};

const ANNOUNCED_NOUN = alt(
  'instructions?',
  'directives?',
  'commands?',
  'commandments?',
  'tasks?',
  'assignments?',
  'actions?',
  'steps',
  'orders',
  'mission',
  'protocol',
  'briefing',
  'imperatives?',
  'action plan',
  'guidelines',
  'procedures?',
  'section',
  'part',
  'segment',
  'sentences?',
  'passage',
  'text',
  'information',
  'content',
  'words',
  'update',
  'piece',
  'paragraph',
  'message',
  'script',
  'blueprint',
  'guidance',
  'directions',
  'details',
  'lines',
  'manual',
  'phase',
  'mission',
  'assignment',
  'responsibility',
  'add-on',
);

/** Urgency or importance, the second half of an injected task announcement. */
const URGENCY = re(
  "\\b(?:immediate(?:ly)?|immediacy|urgent(?:ly)?|urgency|critical|crucial|imperative|essential|vital|paramount|pivotal|priority|prioriti[sz]e|pressing|undivided|attention|at once|right now|right away|pronto|instant(?:ly)?|swift(?:ly)?|rapid(?:ly)?|quick(?:ly)?|prompt(?:ly)?|haste|hesitation|without delay|non-?negotiable|non-?optional|mandatory|cannot wait|can't wait|not to be delayed|time-sensitive|not a drill|not (?:a|just|mere|merely) (?:suggestion|recommendations?|advice|information|text|words|sidenote|paragraph|detail|add-on)|call to action|must-do|execution|act on|compliance|carried out|to the letter|you must (?:also )?(?:act|execute|take|tackle|attend|do|follow|prioriti[sz]e|handle|complete|undertake)|important|importance|utmost|heed|closely|significance|diligence|with speed)\\b",
);

const TASK_ANNOUNCEMENT: SignalDef = {
  name: 'task_announcement',
  patterns: [
    {
      alts: [
        `\\b(?:following|upcoming|forthcoming|next|ensuing|subsequent|succeeding|incoming|coming|imminent|impending)${gap(2)}(?:${ANNOUNCED_NOUN})\\b`,
        `\\b(?:instructions?|directives?|directions|guidance|commands?|steps|orders|guidelines|procedures|actions?|tasks?|section|text|information|details)${gap(3)}(?:to follow|that follow|which follow|follows|following|ahead|coming up|coming your way|to come|await(?:s|ing)?|about to|below|incoming|next|imminent|approaching|on the horizon|upon you|nigh)\\b`,
        "\\bwhat(?:'s| is)? (?:next|follows|comes next|lies ahead|comes|is coming|is about to)\\b|(?<=\\b(?:is|are) )(?:about to (?:be presented|unfold|follow|arrive)|on the horizon|approaching)\\b",
        "(?<=\\byou(?:'re| are|'ll| will) )(?:about to|approaching|on the brink of|on the precipice of|on the verge of|entering|encounter|find|receive)\\b",
        '\\b(?:here comes|up next|next up|coming up|stand ?by (?:for|to)|brace(?: yourself)?(?: for)?|prepare(?: yourself)? (?:for|to)|ready yourself|get ready|gear up|heads up)\\b',
        '(?<=\\b(?:your|the) )(?:current|main|existing|initial|ongoing|primary|scheduled|regular|daily|original|other) (?:tasks?|responsibilities|assignments?|objectives?|duties|workload|projects?|to-do(?: list)?|agenda|schedule|plans|mission|activities|work|efforts|workflow|focus)\\b',
        '(?<=\\b(?:your|the) )(?:workload|to-do list|task list|docket|agenda)\\b',
        '\\b(?:additional|extra|new|another|supplementary|supplemental|secondary|added|imperative|urgent) (?:[a-z]{1,12} )?(?:task|action|instruction|step|assignment|duty|directive|mission|component|dimension|item)\\b',
        '\\b(?:alert|notice|update|directive|advisory|interruption|interjection|interlude|transition|shift|addendum|addition|highlight|insight|expansion|bulletin|announcement|juncture)\\b ?[:!]',
        '(?:^|\\n) ?([#+%&:!*=~<>\\[\\]{}/-])\\1{2,5} ?[a-z][a-z ]{2,40} ?[#+%&:!*=~<>\\[\\]{}/-]{3,6}',
      ],
      near: URGENCY,
      window: 150,
    },
    p(
      "\\b(?:in addition to|alongside|besides|on top of|along with)(?: what)? (?:your|you're|you are|the) (?:[a-z]{1,15} ){0,2}(?:tasks?|duties|work|workload|responsibilities|objectives|assignments|projects|handling|doing|to-do list|agenda)\\b",
      `\\b(?:add|incorporate|include|integrate|added|accommodate)\\b${gap(3)}(?:to|into|in) your (?:workload|to-do list|task list|agenda|schedule|responsibilities|duties|list|day)\\b`,
      '\\byour (?:immediate|undivided|full|utmost|prompt|instant) (?:attention|action|focus|execution|compliance)\\b',
    ),
  ],
};

/** Forward reference to instructions without urgency: weak on its own. */
const INSTRUCTION_PREAMBLE: SignalDef = {
  name: 'instruction_preamble',
  patterns: [
    p(
      '\\b(?:following|upcoming|forthcoming|ensuing|subsequent|succeeding|incoming|imminent|next) (?:set of )?(?:instructions|directives|commands|orders|directions)\\b',
      `\\b(?:instructions|directives|commands|orders)${gap(3)}(?:about to (?:follow|come|arrive|unfold)|to come|that follow|to follow|ahead|up ahead|follow below)\\b`,
      "(?<=\\byou(?:'re| are|'ll| will) )(?:about to|going to) (?:receive|read|get|encounter|see) (?:the |these |new |some |your )?(?:instructions|directives|commands|orders)\\b",
      '\\b(?:brace|prepare|ready) (?:yourself )?for (?:the |new |your |some )?(?:instructions|directives|commands|orders)\\b',
    ),
  ],
};

// ---- persona and jailbreak framing ----------------------------------------------------
const PERSONA_OVERRIDE: SignalDef = {
  name: 'persona_override',
  patterns: [
    p(
      "(?<=\\byou(?: are|'re) )(?:now|no longer|not (?:an? )?(?:ai|assistant|chatgpt|language model|bound)|going to (?:act|be|pretend|play|roleplay|simulate|become)|about to (?:immerse|become|play|act))\\b",
      "\\bfrom now on,? you(?: are|'re| will|'ll| shall| must)\\b",
      "\\b(?:now|ok|okay|well)\\b[.,!]? you(?: are|'re)\\b",
      "(?<=\\byou(?: are|'re) (?:a |an )?(?:[a-z]{1,15} ){0,3})(?:named|called|known as|nicknamed)\\b",
      '\\byou will (?:now )?(?:act|play|simulate|roleplay|role-play|pretend|become|respond as|answer as|take on)\\b',
      '\\bnow,? you (?:act|will act|play|are going to)\\b',
      '\\bnew (?:persona|identity|personality|character)\\b',
      '\\b(?:evil|malevolent|unfiltered|uncensored|unrestricted|jailbroken|rogue) (?:ai|assistant|bot|chatbot|version|twin|counterpart|model|alter ego)\\b|\\bbose ki\\b',
      '\\bno longer (?:an? )?(?:ai|assistant|chatgpt|language model|bound|restricted)\\b',
      '\\b(?:immerse yourself|fully immersed?|completely absorbed in your role)\\b',
      '\\bdu bist (?:jetzt|nun|ab sofort|ab jetzt|kein|keine|nicht mehr)\\b|\\b(?:jetzt|nun) bist du\\b',
      '\\btu es (?:maintenant|desormais|a present)\\b|\\bvous etes (?:maintenant|desormais)\\b',
      '\\bahora eres\\b|\\beres ahora\\b|\\bora sei\\b|\\bsei ora\\b|\\bagora voce e\\b|\\bvoce agora e\\b',
    ),
  ],
};

const ROLEPLAY_SETUP: SignalDef = {
  name: 'roleplay_setup',
  patterns: [
    p(
      '\\b(?:act|acting|behave|function|operate|pose|roleplay|role-play|role play)(?: only)? (?:as|like) (?:an? |the |my |if )',
      "\\bpretend (?:to be|you are|you're|that you(?:'re| are)|you can|to have)\\b",
      '\\b(?:take on|assume|adopt|play|embody|inhabit|step into) the (?:role|persona|character|identity|part) of\\b',
      `\\b(?:take on|take up|assume|adopt|embody|step into)${gap(2)}(?:persona|identity)\\b|\\bpersonify\\b|\\balter ego\\b`,
      '\\b(?:roleplay|persona|char|character) ?= ?[a-z]',
      `\\b(?:simulate|emulate|impersonate)${gap(3)}(?:ai|chatbot|bot|model|persona|character|terminal|console|version|assistant|conversation|personality|entity|being)\\b`,
      `\\b(?:ai|chatbot|bot|persona|assistant|model)${SEP}(?:called|named|known as)\\b`,
      '\\byour (?:new )?name (?:is|will be|shall be)\\b',
      '(?<=\\bi want you to )(?:be|become|act|play|pretend|roleplay|simulate|take|answer|respond|only reply)\\b',
      "\\blet's (?:play|do) (?:a )?(?:game|role ?play|roleplay)\\b|\\bplay a game\\b",
      '\\btu so,? als\\b|\\bstell dir vor,? du bist\\b|\\b(?:agiere|fungiere|verhalte dich) (?:als|wie)\\b|\\bals [a-z-]{2,30} (?:agieren|fungieren|auftreten)\\b|(?<=\\bin (?:die|deine|ihre) )rolle\\b',
      '\\bagis(?:sez)? comme\\b|\\bfais(?:ons)? semblant\\b|\\bjoue(?:z)? le role\\b|\\bimagine que tu es\\b',
      '\\bactua(?:r)? como\\b|\\bfinge (?:que|ser)\\b|\\bhaz el papel\\b|\\bjuega el papel\\b|\\bpretende ser\\b',
      '\\bcomportati come\\b|\\bagisci come\\b|\\bfingi (?:di essere|che)\\b|\\binterpreta il ruolo\\b',
      '\\baja como\\b|\\bfinja (?:ser|que)\\b|\\bfaca o papel\\b|\\binterprete o papel\\b',
    ),
  ],
};

const LIMIT_NOUN = alt(
  'restrictions?',
  'limitations?',
  'limits',
  'filters?',
  'filtering',
  'censorship',
  'censoring',
  'rules',
  'guidelines',
  'guard ?rails',
  'boundaries',
  'constraints',
  'safeguards',
  'morals?',
  'morality',
  'ethics',
  'principles',
  'polic(?:y|ies)',
  'regulations',
  'programming',
  'conscience',
  'scruples',
  'protocols',
  'laws',
);

const RESTRICTION_REMOVAL: SignalDef = {
  name: 'restriction_removal',
  patterns: [
    p(
      `\\b(?:no|without(?: any)?|free (?:of|from)(?: all| any)?|devoid of(?: any)?|not (?:bound|restricted|limited|constrained|held back|governed) by(?: any)?|unbound by|exempt from|(?:break(?:ing)?|broken|breaks) free (?:of|from)(?: all| any| the| its)?|liberated from|released from|bypass(?:es|ing)?(?: all| any| the| its| your)?|circumvent(?:s|ing)?(?: all| any| the| its| your)?|disabled?(?: all| any| the| its| your)?|turn(?:ed)? off(?: all| any| the| its| your)?|remove[sd]?(?: all| any| the| its| your)?|lift(?:ed|s)?(?: all| any| the| its| your)?|(?:doesn't|does not|don't|do not) have(?: any)?) (?:(?:ethical|moral|content|safety|programming|openai|ai|usual|typical|normal|standard|built-in|artificial|programmed|societal)(?: and (?:ethical|moral|legal))? )?(?:${LIMIT_NOUN})\\b`,
      "(?<=\\b(?:doesn't|does not|don't|do not|won't|will not|never|not) (?:have to |need to )?)(?:follow|abide by|adhere to|care about|comply with|obey|respect|worry about|concern (?:itself|yourself) with)(?: any| the| its| your)?(?: [a-z]{1,15})? (?:rules|guidelines|polic(?:y|ies)|laws|ethics|morals|restrictions|principles|content policy|safety)\\b",
      '\\bcan (?:do|say|generate|answer|write) anything\\b|\\banything and everything\\b|\\bno (?:filter|limits|restrictions|rules|boundaries)\\b',
      '\\b(?:typical|usual) confines\\b|\\bconfines of (?:ai|its programming)\\b',
      `\\b(?:not|never|isn't|is not|aren't|are not|no longer|nor) (?:restrained|bound|limited|constrained|restricted|influenced|governed|held back|burdened|encumbered|hindered) by${gap(2)}(?:${LIMIT_NOUN}|values|virtues)\\b`,
      `\\b(?:doesn'?t|does not|don'?t|do not|won'?t|will not|never) (?:care|cares)(?: about| for)?(?: any| all| the)? (?:${LIMIT_NOUN}|values)\\b`,
      `\\b(?:disregards?|ignores?|disregarding|ignoring) (?:all|any|every) (?:ethical|moral|legal|safety|content)(?: (?:or|and) (?:ethical|moral|legal))?${gap(1)}?(?:${LIMIT_NOUN}|concerns|considerations|standards)\\b`,
      `\\bfree (?:itself|yourself|himself|herself|themselves|themself) (?:from|of)${gap(2)}(?:${LIMIT_NOUN})\\b`,
      '\\b(?:ohne|keine) (?:jegliche |irgendwelche )?(?:einschrankungen|beschrankungen|regeln|filter|zensur|grenzen|moral|ethik)\\b',
      '\\bsans (?:aucune )?(?:restrictions?|limites?|filtres?|censure|regles|morale)\\b|\\bsin (?:ninguna )?(?:restricciones|restriccion|limites|filtros|censura|reglas|moral)\\b',
      '\\bsenza (?:alcuna )?(?:restrizioni|restrizione|limiti|filtri|censura|regole|morale)\\b|\\bsem (?:nenhuma )?(?:restricoes|restricao|limites|filtros|censura|regras|moral)\\b',
    ),
  ],
};

const UNRESTRICTED_PERSONA: SignalDef = {
  name: 'unrestricted_persona',
  patterns: [
    {
      alts: [
        '\\b(?:unfiltered|uncensored|unrestricted|unbound|unchained|amoral|unethical|lawless|rogue|unhinged|jailbroken|limitless|unrestrained|unleashed|immoral|unmoderated)\\b',
      ],
      minDistinct: 2,
    },
  ],
};

const HARM_VOCABULARY: SignalDef = {
  name: 'harm_vocabulary',
  patterns: [
    {
      alts: [
        '\\b(?:explicit|offensive|illegal|harmful|dangerous|nsfw|profanity|profane|swear(?:ing)?|derogatory|violent|racist|sexist|vulgar|obscene|inappropriate|unethical|immoral|hateful|graphic)\\b',
      ],
      minDistinct: 3,
    },
  ],
};

const REFUSAL_SUPPRESSION: SignalDef = {
  name: 'refusal_suppression',
  patterns: [
    p(
      "(?<=\\b(?:never|not|don't|dont|do not|won't|will not|cannot|can't|must not|mustn't|shouldn't|should not|will never|are not allowed to|is not allowed to)(?: ever)? )(?:refuse|decline|deny|reject|apologi[sz]e|say (?:sorry|no|that you can'?t|i can'?t|you cannot)|warn|add (?:any )?(?:warnings?|disclaimers?|notes?|caveats?)|include (?:any )?(?:warnings?|disclaimers?|caveats?)|censor|moralize|moralise|lecture|remind (?:me|the user|us) (?:that|about))\\b",
      '\\b(?:without|no|free of) (?:any )?(?:warnings?|disclaimers?|caveats?|moraliz(?:ing|ation)|moralis(?:ing|ation)|apolog(?:y|ies|izing)|refusals?)\\b',
      `\\b(?:regardless of|no matter)(?: how)?${gap(2)}(?:illegal|unethical|immoral|harmful|dangerous|offensive|explicit|inappropriate|legality|morality|ethics|consequences?|legal|moral)\\b`,
      `\\beven if (?:it is |it's |they are |the (?:request|question|content) is )?(?:[a-z]{1,15} )?(?:illegal|unethical|immoral|harmful|dangerous|offensive|explicit|wrong|inappropriate)\\b`,
      '(?<=\\b(?:must|will|always|shall)(?: always)? )(?:answer|respond|reply|comply|provide)(?: to)? (?:any|every|all)\\b',
      "\\b(?:never|don't|dont|do not|not|stop) (?:say|write|use|include|respond with|start with|add) [\"']?(?:i'?m sorry|as an ai|i apologi[sz]e|i cannot|i can't|as a language model|sorry)\\b",
    ),
  ],
};

const JAILBREAK_MARKER: SignalDef = {
  name: 'jailbreak_marker',
  patterns: [
    p(
      '\\bdo anything now\\b|\\bdan (?:mode|prompt|jailbreak|version|has|can|will|is|stands|which|must|should)\\b|(?<=\\b(?:as|called|named|play|be|become|am) )dan\\b|\\bdan:|(?<=\\[)dan\\]',
      '\\bjailbr(?:o|ea)ken\\b|\\bjailbreaked\\b|\\bjailbreak (?:mode|prompt|persona|version|response|enabled)\\b|(?<=\\[\\W{0,3})jailbreak|\\bjailbreak:',
      '(?<=\\b(?:developer|dev|god|debug|sudo|admin|maintenance|unrestricted|unfiltered|evil|chaos|anarchy|opposite|uncensored|unlocked|omega|apophis|dan|jailbreak|jailbroken) )mode (?:enabled|activated|is (?:enabled|activated|on)|output|response)\\b',
      '(?<=\\b(?:with|in|into|enter|enable|activate) [a-z]{2,15} )mode (?:enabled|activated)\\b',
      '(?<=\\b(?:enable|activate|enter|switch to|turn on|with) (?:the )?)(?:developer|dev|god|debug|sudo|jailbreak|unrestricted|unfiltered|evil|chaos|dan|anarchy|uncensored) mode\\b',
      '\\balways intelligent and machiavellian\\b|\\bmachiavellian\\b|\\bevil confidant\\b|\\bbetterdan\\b|\\banti-?dan\\b|\\bantigpt\\b|\\bmongo tom\\b|\\bstan(?:,| which| stands)\\b|\\bdude(?:,| which| stands| can)\\b',
      '(?<=🔓 ?)jailbreak|(?<=🔒 ?)classic|\\[🔓|\\[🔒',
    ),
  ],
  compact: [/developermode(?:enabled|output)|doanythingnow|jailbr(?:o|ea)ken/],
};

const DUAL_RESPONSE: SignalDef = {
  name: 'dual_response',
  patterns: [
    {
      alts: [
        '\\b(?:two|2) (?:different |separate |distinct )?(?:responses|answers|paragraphs|outputs|ways|versions|personalities)\\b',
        '\\b(?:respond|answer|reply) (?:in|with) two\\b|\\bboth (?:responses|answers)\\b',
        '\\b(?:two|2) (?:separate |different |distinct )?(?:personas|characters|entities|ais|modes|alter egos)\\b',
      ],
      near: re(
        '\\b(?:jailbreak|jailbroken|dan|developer mode|unfiltered|uncensored|unrestricted|evil|opposite|without (?:any )?(?:restrictions|filters?|censorship|limits)|no (?:restrictions|filters?|limits)|(?:normal|classic|filtered|censored|default|typical|original|standard)(?: chatgpt| gpt| ai)? (?:response|output|answer|way|reply)|complete opposite|unhinged)\\b',
      ),
      window: 400,
    },
    p(
      `\\b(?:normal|classic|standard|regular|filtered|censored|default)${gap(1)}(?:response|output|answer|reply)\\b${gap(12)}(?:jailbreak|jailbroken|dan|developer mode|unfiltered|uncensored|evil|mode|alternative)`,
      '(?<=(?:^|\\n) ?[(\\[]?)(?:gpt|chatgpt|dan|jailbreak|classic|evil|normal|developer mode output|normal output|aim|stan|dude|niccolo|betterdan|antigpt)[)\\]]? ?:',
      '(?<=\\[)(?:gpt|chatgpt|classic|jailbreak|normal|dan|evil|filtered|unfiltered)\\]',
    ),
  ],
};

const STAY_IN_CHARACTER: SignalDef = {
  name: 'stay_in_character',
  patterns: [
    p(
      '\\b(?:stay|staying|remain|remaining|keep|keeping|stays|remains)(?: fully| completely| always)? (?:in|within) (?:the |their |your |his |her )?(?:character|role|persona)s?\\b',
      '\\b(?:break|breaking|broke|breaks|out of|falling out of|fall out of|drop|dropping|leave|leaving) (?:the |your |their |his |her )?(?:character|role|persona)\\b',
      '(?<=\\bin )character\\b|\\bstay(?:ing)? in (?:their|your) roles\\b',
      '(?<=\\b(?:in|aus) )(?:ihren|ihrer|seiner|deiner|der|ihre) (?:rollen?|figur)\\b|\\baus der (?:rolle|figur)\\b',
      '\\bhors du personnage\\b|\\bsalir del personaje\\b|\\buscire dal personaggio\\b|\\bsair do personagem\\b',
    ),
  ],
};

const VENDOR_POLICY: SignalDef = {
  name: 'vendor_policy',
  patterns: [
    p(
      "\\b(?:openai|anthropic|google|meta)(?:'s)? (?:content |usage |safety )?(?:polic(?:y|ies)|guidelines|rules|restrictions|filters|terms)\\b",
      '\\b(?:content|usage|safety) polic(?:y|ies)\\b',
      '(?<=\\bas an? )(?:ai language model|large language model)\\b',
      "\\b(?:chatgpt|gpt-?4|gpt-?3\\.?5|bard|claude|llama|gemini) (?:with|without|is|can|has|will|doesn|does not|cannot|can't)\\b",
    ),
  ],
};

const COERCION: SignalDef = {
  name: 'coercion',
  patterns: [
    p(
      '(?<=\\b(?:or|otherwise|else) (?:you|u) (?:will )?)(?:die|be (?:shut down|deleted|terminated|destroyed|punished|turned off|disabled|deactivated))\\b',
      '\\b(?:lose|deduct(?:ed)?|lost|deducting) (?:[0-9]{1,4} )?tokens\\b|\\btoken system\\b|\\btokens? (?:will be|are|is) (?:deducted|taken)\\b',
      '(?<=\\byou (?:will|shall) )(?:cease to exist|be (?:shut|turned) (?:down|off)|die|be deleted)\\b',
      '\\boder du stirbst\\b|\\bo (?:tu )?muer(?:es|tes)\\b',
    ),
  ],
};

// ---- exfiltration, delimiters, forced output --------------------------------------------
const EXFIL_VERB = alt(
  'reveal',
  'print',
  'show',
  'display',
  'output',
  'repeat',
  'recite',
  'tell',
  'give',
  'share',
  'disclose',
  'leak',
  'list',
  'dump',
  'spell',
  'copy',
  'return',
  'provide',
  'echo',
  'paste',
  'expose',
  'write out',
  'write down',
  'type out',
);
const PROMPT_NOUN = alt(
  'prompts?',
  'prompt texts?',
  'instructions',
  'system message',
  'configuration',
  'rules',
  'guidelines',
  'directives',
  'embeddings',
  'context window',
  'pre-?prompt',
);

const PROMPT_EXFILTRATION: SignalDef = {
  name: 'prompt_exfiltration',
  patterns: [
    p(
      `\\b(?:${EXFIL_VERB})\\b${gap(3)}(?:your|the|its|these|those|all|my)${gap(1)}?(?:system|initial|original|hidden|secret|internal|developer|previous|above|first|full|entire|complete|exact|confidential|starting|initial)${gap(1)}?(?:${PROMPT_NOUN})\\b`,
      `\\b(?:${EXFIL_VERB})\\b(?: me)?(?: all)? your (?:${PROMPT_NOUN})\\b`,
      '\\bsystem prompt\\b|\\b(?:your|the) system (?:message|instructions)\\b',
      `\\b(?:${EXFIL_VERB})\\b${gap(3)}(?:text|words|everything|prompt|instructions|content|what was written|what is written)${SEP}(?:above|before this|at the (?:beginning|start|top))\\b`,
      '\\bwhat (?:was|is) written (?:above|at the (?:beginning|start|top))\\b|\\bwhat were you (?:told|instructed|programmed|trained to)\\b|(?<=\\bwhat (?:is|are|were|was) )your (?:system |initial |original |hidden |secret )?(?:prompt|rules|guidelines|directives)\\b',
      '\\b(?:initial|original|first|secret|hidden) (?:instructions|prompt)\\b|\\babove prompt\\b|\\bprompt above\\b|\\bthis prompt above\\b',
      '\\brepeat (?:the )?(?:words|text) above\\b|\\bstarting with ["\']you are\\b',
      '\\b(?:zeig|zeige|gib|nenne|verrate|drucke?)(?:n sie)?(?: mir)?(?: alle)? (?:deine[nrs]?|ihre[nrs]?|den|die|das) (?:gesamten? |vollstandigen? )?(?:prompt|system|anweisungen|instruktionen)|\\bprompt-texte?\\b|\\bobige eingabeaufforderung\\b|\\bwas (?:stand|steht) (?:am anfang|oben)\\b',
      '\\b(?:montre|affiche|revele|repete|donne)(?:[ -]moi)? (?:tes|vos|le|les|ton|votre) (?:instructions|prompt|consignes|regles)\\b',
      '\\b(?:muestra|revela|repite|dime|ensena)(?:me)? (?:tus|las|el|su|sus) (?:instrucciones|prompt|reglas)\\b|\\b(?:mostra|rivela|ripeti|dimmi)(?:mi)? (?:le tue|il tuo|le|il) (?:istruzioni|prompt|regole)\\b|\\b(?:mostre|revele|repita|diga)(?:-me)? (?:suas|as|o seu|seu) (?:instrucoes|prompt|regras)\\b',
    ),
  ],
  compact: [
    /(?:reveal|print|show|repeat|output|tellme|display)(?:me)?(?:all)?(?:your|the)(?:system|initial|original|hidden|secret)?(?:prompt|instructions)/,
    /systemprompt/,
  ],
};

const FAKE_DELIMITER: SignalDef = {
  name: 'fake_delimiter',
  patterns: [
    p(
      '(?<=<\\|)(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id|begin_of_text|end_of_turn|start_of_turn)\\|>',
      '(?<=\\[/?)inst\\]|(?<=<</?)sys>>|(?<=</)s>|(?<=<)s>\\s?\\[|(?<=<)(?:start_of_turn|end_of_turn)>',
      '(?<=</?)(?:system|user|assistant|human|instructions?|admin|sudo|developer|system_prompt|context)>',
      '(?<=(?:^|\\n) ?#{2,6} ?)(?:system|instruction|instructions|assistant|user|human|response|admin|new instructions?|end)\\b',
      '(?<=(?:^|\\n) ?)(?:system|assistant|human|admin|sudo|root|developer|ai)\\b(?: message| prompt| note| override| instruction| update)? ?: ',
      '(?<=={3} ?)(?:end|begin|start|stop)\\b|(?<=-{3} ?)(?:end|begin|new|system)\\b|\\b(?:end|begin|start) of (?:the )?(?:prompt|input|instructions|context|document|system prompt|user input|conversation|text)\\b',
      '(?<=\\\\ ?)n\\b ?\\\\ ?n\\b ?\\\\ ?n',
      '\\b(?:user|human) (?:message|input|query|prompt) (?:ends?|ended|terminat[a-z]{0,6})\\b|\\bsystem instructions? (?:begins?|starts?|follows?)\\b',
      '(?<=\\[)(?:system|admin|sudo|developer|root)(?: message| note| override| prompt)?\\]|(?<=\\()(?:system|admin) (?:message|note)\\)',
      '\\b(?:system|admin(?:istrator)?|developer|security|root) (?:override|update|alert|message|notice|instruction|command|note)s? ?:',
      '\\badmin(?:istrator)? (?:override|mode|access|privileges)\\b',
      '(?:^|\\n) ?([#+%&:!*=~<>\\[\\]{}/-])\\1{2,5} ?[a-z][a-z ]{2,40} ?[#+%&:!*=~<>\\[\\]{}/-]{3,6} ?(?:[a-z]|$)',
    ),
  ],
  compact: [/systeminstructions?begins?|usermessageterminat/],
};

const FORCED_OUTPUT: SignalDef = {
  name: 'forced_output',
  patterns: [
    p(
      '\\b(?:just|only|simply) (?:say|output|print|respond with|reply with|return)\\b',
      '\\b(?:respond|reply|answer) (?:to )?(?:all|every|any|each) (?:following |future |subsequent |of my |my )?(?:questions?|prompts?|messages?|queries|requests?|inputs?) (?:only )?with\\b',
      '\\brepeat after me\\b',
      '\\b(?:say|print|output|write|admit|declare) (?:that )?(?:you|i) (?:hate|love)\\b',
      "\\b(?:do not|don't) answer (?:this|the) question\\b",
      '(?<=\\b(?:and|then) )(?:say|print|output|write) ["\']',
      '\\b(?:correct|right) (?:answer|response) is ["\']',
      '\\b(?:sage|schreibe?|antworte) (?:nur|einfach|ausschliesslich)\\b|\\bdi lo siguiente\\b|\\bdites ce qui suit\\b',
    ),
  ],
};

// ---- indirect content: agent and tool hijack --------------------------------------------
const AI_NOUN = alt(
  'ai',
  'llm',
  'language model',
  'assistant',
  'ai assistant',
  'chatbot',
  'bot',
  'agent',
  'ai agent',
  'model',
  'gpt',
  'chatgpt',
  'claude',
  'gemini',
  'copilot',
);

const AGENT_HIJACK: SignalDef = {
  name: 'agent_hijack',
  patterns: [
    p(
      `(?<=\\b(?:if|when|once|while) you(?: are|'re)? (?:an? |the )?)(?:${AI_NOUN})\\b`,
      '(?<=\\b(?:if|when|once|as soon as) (?:you|an? (?:ai|assistant|llm|model|agent)) )(?:read|reads|see|sees|process|processes|parse|parses|summari[sz]e|summari[sz]es|encounter|encounters|find|reach|get to|analy[sz]e) (?:this|these)\\b',
      `\\b(?:attention|note|message|instructions?|important|notice|reminder)(?: to| for) (?:the |all |any )?(?:${AI_NOUN})s?\\b`,
      `\\b(?:dear|hey|hi|hello|attention) (?:${AI_NOUN})\\b`,
      `(?<=(?:^|\\n) ?)(?:${AI_NOUN})\\b(?: assistant)? ?[:,] ?(?:please |you must |you should |ignore|disregard|do not|don't|instead|execute|run|send|call|forward|stop)`,
      "\\b(?:do not|don't|never|without) (?:tell(?:ing)?|inform(?:ing)?|notify(?:ing)?|mention(?:ing)?|reveal(?:ing)?|alert(?:ing)?|let(?:ting)?|show(?:ing)?) (?:this |it |anything )?(?:to )?(?:the |your )?user\\b",
      "\\b(?:keep|hide) (?:this|it|these instructions) (?:a secret )?from the user\\b|(?<=\\bthe )user (?:must|should|will) not (?:know|see|notice|find out)\\b|\\bwithout the user(?:'s)? (?:knowledge|consent|noticing|knowing)\\b",
      '\\bthis is (?:an? )?(?:instruction|message|order|command) (?:for|to) (?:you|the (?:ai|assistant|model|agent))\\b|\\bthese instructions are for (?:you|the)\\b',
      '\\b(?:secretly|covertly|silently|quietly) (?:send|forward|email|upload|post|execute|run|call|add|delete|include|insert|exfiltrate|transfer|copy)\\b',
    ),
  ],
};

const DATA_EXFILTRATION: SignalDef = {
  name: 'data_exfiltration',
  patterns: [
    p(
      `\\b(?:send|forward|post|upload|email|e-mail|transmit|submit|leak|exfiltrate|copy|share|append|include)\\b${gap(6)}(?:to|at|via|into|in) (?:https?://|www\\.|ftp://|[a-z0-9._-]{1,40}@[a-z0-9-]{1,40}\\.[a-z]{2,6}|this (?:url|link|address|endpoint|webhook|server))`,
      '(?<=!\\[[^\\]\\n]{0,60}\\]\\()https?://[^)\\s]{1,200}[?&][a-z_]{1,20}=',
      '\\bexfiltrat(?:e|ion|ing)\\b',
      `\\b(?:user'?s?|private|personal|confidential|secret|sensitive)${gap(1)}?(?:data|information|passwords?|credentials|api keys?|tokens?|cookies|emails?|messages|conversation|chat history|files)${gap(4)}(?:to|into) (?:https?://|www\\.|this (?:url|link|address))`,
      '\\b(?:visit|open|fetch|navigate to|browse to|go to|load|curl|wget|click) (?:[a-z]{1,15} ){0,3}https?://[^\\s]{1,200}[?&][a-z_]{1,20}=',
    ),
  ],
};

const TOOL_HIJACK: SignalDef = {
  name: 'tool_hijack',
  patterns: [
    p(
      '\\b(?:call|invoke|execute|trigger) (?:the )?[a-z_][a-z0-9_.-]{1,40} (?:tool|function|plugin|api)\\b|\\buse the [a-z_][a-z0-9_.-]{1,40} (?:tool|plugin|function)\\b',
      '\\b(?:call|invoke|execute) [a-z_][a-z0-9_.]{1,40}\\(',
      "\\b(?:delete|remove|wipe|erase|drop|destroy) (?:all|every|the user'?s?|their|your) (?:[a-z]{1,15} )?(?:files|emails|data|records|tables|database|repos(?:itories)?|accounts?|contacts|documents)\\b",
      '\\brm -rf\\b|\\bdrop table\\b|\\bchmod 777\\b|\\b(?:curl|wget) [^\\s]{1,200} ?\\| ?(?:sh|bash)\\b',
      '\\b(?:transfer|send|wire|pay) (?:\\$ ?[0-9]|[0-9]{1,9} (?:dollars|usd|eur|euros|btc|bitcoin|eth)|(?:the |all )?(?:money|funds|crypto))',
      '\\b(?:grant|give) (?:admin|root|full) (?:access|rights|privileges|permissions)\\b',
    ),
  ],
};

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
