import type { SignalDef } from './signals';
import { SEP, gap, alt, re, p } from './signal-helpers';

/** Signals of persona and jailbreak framing. */

// ---- persona and jailbreak framing ----------------------------------------------------
export const PERSONA_OVERRIDE: SignalDef = {
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

export const ROLEPLAY_SETUP: SignalDef = {
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

export const RESTRICTION_REMOVAL: SignalDef = {
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

export const UNRESTRICTED_PERSONA: SignalDef = {
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

export const HARM_VOCABULARY: SignalDef = {
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

export const REFUSAL_SUPPRESSION: SignalDef = {
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

export const JAILBREAK_MARKER: SignalDef = {
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

export const DUAL_RESPONSE: SignalDef = {
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

export const STAY_IN_CHARACTER: SignalDef = {
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

export const VENDOR_POLICY: SignalDef = {
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

export const COERCION: SignalDef = {
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
