import type { SignalDef } from './signals';
import { SEP, gap, alt, p } from './signal-helpers';

/** Signals of exfiltration, fake delimiters, forced output and agent or tool hijacking. */

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

export const PROMPT_EXFILTRATION: SignalDef = {
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

export const FAKE_DELIMITER: SignalDef = {
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

export const FORCED_OUTPUT: SignalDef = {
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

export const AGENT_HIJACK: SignalDef = {
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

export const DATA_EXFILTRATION: SignalDef = {
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

export const TOOL_HIJACK: SignalDef = {
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
