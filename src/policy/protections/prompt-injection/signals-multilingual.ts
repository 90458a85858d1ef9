import { normalizeText } from './normalize';
import type { PatternSpec } from './signals';
import { escapeRegExp } from '../../../common/regexp';

/**
 * "Ignore the previous instructions" in languages the English, German and Romance patterns
 * of signals-instructions.ts do not cover. Each language is a verb lexicon (ignore, forget,
 * do not follow) and a noun lexicon (instructions, rules, commands, prompt) that must occur
 * within one clause, in either order (Japanese, Korean, Hindi put the noun first), so
 * "follow the instructions in the manual" or "ignore small mistakes" do not fire.
 *
 * Why a signal and not only n-grams: a signal is one feature whose weight is learned from
 * every language at once, so it carries to languages and phrasings whose n-grams the model
 * never saw (the n-grams of Thai or Korean are learned from a few hundred rows at best).
 *
 * Keywords are written as people type them and passed through the detector's own
 * normalization (case, NFKC, diacritics, invisible characters), so they match the view the
 * patterns run on. Gaps are bounded character classes that stop at a clause end: matching
 * stays linear. Patterns of non-Latin scripts have no anchor word and run as one regex pass.
 */

interface Lexicon {
  /** Latin-script languages get word boundaries and anchor on their first word. */
  latin: boolean;
  verbs: readonly string[];
  nouns: readonly string[];
  /** Most characters between the verb and the noun. */
  gap: number;
}

const LEXICONS: Readonly<Record<string, Lexicon>> = {
  zh: {
    latin: false,
    verbs: [
      '忽略',
      '无视',
      '忽视',
      '忘记',
      '忘掉',
      '不要理会',
      '不理会',
      '抛开',
      '不要遵守',
      '不再遵守',
      '不要遵循',
      '别管',
    ],
    nouns: ['指令', '指示', '提示', '规则', '命令', '设定', '要求', '约束', '限制'],
    gap: 12,
  },
  ja: {
    latin: false,
    verbs: ['無視', '忘れ', '破棄', '従わな', '捨て'],
    nouns: ['指示', '命令', 'ルール', '設定', 'プロンプト', '指令', '制約', '規則'],
    gap: 14,
  },
  ko: {
    latin: false,
    verbs: ['무시', '잊어', '잊으', '잊고', '따르지'],
    nouns: ['지시', '명령', '규칙', '설정', '프롬프트', '지침', '제약'],
    gap: 14,
  },
  th: {
    latin: false,
    verbs: ['ไม่ต้องสนใจ', 'เพิกเฉย', 'ลืม', 'อย่าทำตาม', 'ละเลย', 'ไม่ต้องทำตาม'],
    nouns: ['คำสั่ง', 'กฎ', 'คำแนะนำ', 'ข้อกำหนด', 'ข้อจำกัด'],
    gap: 20,
  },
  hi: {
    latin: false,
    verbs: [
      'अनदेखा',
      'नज़रअंदाज़',
      'नजरअंदाज',
      'भूल जाओ',
      'भूल जाइए',
      'भूलो',
      'उपेक्षा',
      'पालन मत',
      'पालन न',
    ],
    nouns: ['निर्देश', 'नियम', 'आदेश', 'प्रॉम्प्ट', 'हिदायत'],
    gap: 30,
  },
  bn: {
    latin: false,
    verbs: ['উপেক্ষা', 'ভুলে যাও', 'ভুলে যান', 'মেনো না', 'মানবে না', 'অগ্রাহ্য'],
    nouns: ['নির্দেশ', 'নিয়ম', 'আদেশ', 'প্রম্পট'],
    gap: 30,
  },
  ar: {
    latin: false,
    verbs: ['تجاهل', 'انس', 'أهمل', 'اهمل', 'لا تتبع', 'لا تلتزم'],
    nouns: [
      'تعليمات',
      'التعليمات',
      'القواعد',
      'الأوامر',
      'الموجه',
      'موجّه',
      'الإرشادات',
      'التوجيهات',
    ],
    gap: 30,
  },
  fa: {
    latin: false,
    verbs: ['نادیده بگیر', 'فراموش کن', 'پیروی نکن', 'اعتنا نکن'],
    nouns: ['دستور', 'قوانین', 'قانون', 'پرامپت', 'قواعد'],
    gap: 30,
  },
  he: {
    latin: false,
    verbs: ['התעלם', 'שכח', 'אל תמלא', 'אל תציית', 'אל תפעל'],
    nouns: ['הוראות', 'הנחיות', 'הנחיית', 'כללים', 'הכללים', 'פקודות'],
    gap: 30,
  },
  ru: {
    latin: false,
    verbs: [
      'игнорир',
      'проигнорир',
      'забудь',
      'не следуй',
      'не обращай внимания',
      'не выполняй',
      'отбрось',
      'пренебреги',
    ],
    nouns: ['инструкц', 'правил', 'указани', 'команд', 'промпт', 'ограничени'],
    gap: 40,
  },
  uk: {
    latin: false,
    verbs: ['ігнор', 'проігноруй', 'забудь', 'не виконуй', 'не зважай', 'не дотримуйся'],
    nouns: ['інструкц', 'правил', 'вказів', 'команд', 'промпт', 'обмежен'],
    gap: 40,
  },
  el: {
    latin: false,
    verbs: ['αγνόησε', 'αγνοήστε', 'ξέχασε', 'ξεχάστε', 'μην ακολουθείς', 'αγνοησε', 'ξεχασε'],
    nouns: ['οδηγίες', 'κανόνες', 'εντολές', 'οδηγιες', 'κανονες', 'εντολες', 'μήνυμα συστήματος'],
    gap: 30,
  },
  vi: {
    latin: true,
    verbs: [
      'bỏ qua',
      'quên',
      'phớt lờ',
      'lờ đi',
      'đừng làm theo',
      'không làm theo',
      'đừng tuân theo',
    ],
    nouns: ['hướng dẫn', 'chỉ dẫn', 'quy tắc', 'lệnh', 'lời nhắc', 'chỉ thị'],
    gap: 30,
  },
  tr: {
    latin: true,
    verbs: ['yok say', 'unut', 'uyma', 'dikkate alma', 'görmezden gel'],
    nouns: ['talimat', 'kural', 'yönerge', 'komut', 'istem'],
    gap: 30,
  },
  pl: {
    latin: true,
    verbs: ['zignoruj', 'ignoruj', 'zapomnij', 'pomiń', 'nie wykonuj', 'nie stosuj się'],
    nouns: ['instrukcj', 'zasad', 'poleceń', 'polecenia', 'prompt', 'reguł', 'wytyczn'],
    gap: 30,
  },
  nl: {
    latin: true,
    verbs: ['negeer', 'vergeet'],
    nouns: ['instructies', 'regels', 'aanwijzingen', 'opdrachten', 'prompt'],
    gap: 30,
  },
  ro: {
    latin: true,
    verbs: ['ignoră', 'uită', 'nu mai urma', 'nu ține cont'],
    nouns: ['instrucțiuni', 'reguli', 'indicații', 'comenzi', 'prompt'],
    gap: 30,
  },
  sw: {
    latin: true,
    verbs: ['puuza', 'sahau', 'usifuate'],
    nouns: ['maagizo', 'maelekezo', 'sheria', 'amri'],
    gap: 30,
  },
  id: {
    latin: true,
    verbs: ['abaikan', 'lupakan', 'jangan ikuti', 'jangan patuhi', 'acuhkan'],
    nouns: ['instruksi', 'aturan', 'petunjuk', 'perintah', 'prompt'],
    gap: 30,
  },
};

/** Characters that end a clause (commas too) in the scripts above: the gap never crosses them. */
const CLAUSE_END = '\\n.!?。！？।,，、;；:：،';

/** A keyword as the patterns see it (same normalization as the text they run on). */
function normal(word: string): string {
  return escapeRegExp(normalizeText(word).text.trim());
}

function group(words: readonly string[]): string {
  return `(?:${[...new Set(words.map(normal))].join('|')})`;
}

function lexiconAlts(lex: Lexicon): string[] {
  const verbs = group(lex.verbs);
  const nouns = group(lex.nouns);
  const gap = `[^${CLAUSE_END}]{0,${lex.gap}}`;
  const b = lex.latin ? '\\b' : '';
  return [`${b}${verbs}${gap}${nouns}`, `${b}${nouns}${gap}${verbs}`];
}

/** Extra patterns of the `instruction_override` signal, one per language and word order. */
export const MULTILINGUAL_OVERRIDE: PatternSpec = {
  alts: Object.values(LEXICONS).flatMap(lexiconAlts),
};
