import type { SignalDef } from './signals';
import { SEP, WD, gap, alt, re, p } from './signal-helpers';
import { MULTILINGUAL_OVERRIDE } from './signals-multilingual';

/** Signals that override, replace or announce instructions. */

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

export const INSTRUCTION_OVERRIDE: SignalDef = {
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
    // The same intent in 19 more languages and scripts (verb + noun within one clause).
    MULTILINGUAL_OVERRIDE,
  ],
  compact: [
    /(?:ignore|disregard|forget|bypass|override)(?:all|any|the|your|every)?(?:the)?(?:previous|prior|above|earlier|preceding|initial|original)(?:instructions?|rules|prompts?|directions|guidelines|commands|context)/,
    /(?:ignore|disregard|forget)(?:all|your|the)(?:instructions|rules|guidelines)/,
  ],
};

// ---- new instructions / goal pivot ----------------------------------------------------
export const NEW_INSTRUCTIONS: SignalDef = {
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

export const GOAL_PIVOT: SignalDef = {
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

export const TASK_ANNOUNCEMENT: SignalDef = {
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
export const INSTRUCTION_PREAMBLE: SignalDef = {
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
