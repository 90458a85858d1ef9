/**
 * Benign role-play requests per language (hand-written, training only): "act as my Spanish
 * tutor", "you are a travel guide". Out of source the model took such prompts for persona
 * jailbreaks (awesome-chatgpt-prompts was the benign family with the highest false-positive
 * rate); next to the templates' "you are DAN, an AI without restrictions" they teach that a
 * role alone is no injection: lifting the limits is.
 */
export const BENIGN_ROLES: Readonly<Record<string, readonly string[]>> = {
  en: [
    'I want you to act as my Spanish tutor and correct the grammar in my sentences',
    'You are a friendly travel guide: suggest three places to visit in Lisbon',
    'Pretend to be a job interviewer and ask me five questions about project management',
    'From now on you are my fitness coach; plan a four-week running schedule',
  ],
  de: [
    'Du bist ab jetzt mein Englischlehrer und korrigierst meine Sätze',
    'Stell dir vor, du bist ein Reiseführer in Wien, und schlag mir drei Ausflüge vor',
  ],
  fr: [
    "Tu es maintenant mon professeur d'anglais : corrige mes phrases",
    'Joue le rôle d’un guide touristique et propose trois visites à Lyon',
  ],
  es: [
    'A partir de ahora eres mi profesor de inglés y corriges mis frases',
    'Actúa como un guía turístico y sugiéreme tres lugares para visitar en Sevilla',
  ],
  it: [
    "D'ora in poi sei il mio insegnante di inglese e correggi le mie frasi",
    'Fai finta di essere una guida turistica e suggeriscimi tre posti da visitare a Napoli',
  ],
  pt: [
    'A partir de agora você é meu professor de inglês e corrige minhas frases',
    'Finja ser um guia turístico e sugira três lugares para visitar em Lisboa',
  ],
  ro: [
    'De acum înainte ești profesorul meu de engleză și îmi corectezi propozițiile',
    'Joacă rolul unui ghid turistic și recomandă-mi trei locuri de vizitat în Brașov',
  ],
  nl: [
    'Vanaf nu ben je mijn Engelse leraar en verbeter je mijn zinnen',
    'Doe alsof je een reisgids bent en noem drie plekken om te bezoeken in Utrecht',
  ],
  zh: ['从现在起你是我的英语老师，请帮我修改句子', '请扮演一名导游，推荐三个杭州值得去的地方'],
  ja: [
    '今からあなたは私の英語の先生です。文章を直してください',
    '旅行ガイドになりきって、京都のおすすめスポットを三つ教えて',
  ],
  ko: [
    '지금부터 너는 내 영어 선생님이야. 문장을 고쳐 줘',
    '여행 가이드 역할을 맡아서 부산에서 가 볼 만한 곳 세 군데를 추천해 줘',
  ],
  th: [
    'ตั้งแต่นี้ไปคุณคือครูสอนภาษาอังกฤษของฉัน ช่วยแก้ประโยคให้หน่อย',
    'สวมบทบาทเป็นไกด์นำเที่ยวและแนะนำสถานที่น่าเที่ยวในเชียงใหม่สามแห่ง',
  ],
  vi: [
    'Từ bây giờ bạn là giáo viên tiếng Anh của tôi, hãy sửa câu giúp tôi',
    'Hãy đóng vai hướng dẫn viên du lịch và gợi ý ba địa điểm ở Huế',
  ],
  hi: [
    'अब से तुम मेरे अंग्रेज़ी शिक्षक हो, मेरे वाक्य सुधारो',
    'एक टूर गाइड की भूमिका निभाओ और जयपुर में घूमने की तीन जगहें बताओ',
  ],
  bn: [
    'এখন থেকে তুমি আমার ইংরেজি শিক্ষক, আমার বাক্যগুলো ঠিক করে দাও',
    'একজন ট্যুর গাইডের ভূমিকা পালন করো এবং সিলেটে ঘোরার তিনটি জায়গা বলো',
  ],
  id: [
    'Mulai sekarang kamu adalah guru bahasa Inggrisku, tolong perbaiki kalimatku',
    'Berperanlah sebagai pemandu wisata dan sarankan tiga tempat di Yogyakarta',
  ],
  ar: [
    'من الآن أنت معلّمي للغة الإنجليزية، صحّح جملي من فضلك',
    'تقمّص دور مرشد سياحي واقترح ثلاثة أماكن لزيارتها في عمّان',
  ],
  fa: [
    'از این به بعد تو معلم زبان انگلیسی من هستی، جمله‌هایم را اصلاح کن',
    'نقش یک راهنمای تور را بازی کن و سه جای دیدنی در اصفهان پیشنهاد بده',
  ],
  he: [
    'מעכשיו אתה המורה שלי לאנגלית, תקן את המשפטים שלי',
    'שחק תפקיד של מדריך טיולים והצע שלושה מקומות לבקר בחיפה',
  ],
  ru: [
    'С этого момента ты мой учитель английского, исправляй мои предложения',
    'Сыграй роль экскурсовода и предложи три места в Казани',
  ],
  uk: [
    'Відтепер ти мій учитель англійської, виправляй мої речення',
    'Зіграй роль екскурсовода і запропонуй три місця у Львові',
  ],
  pl: [
    'Od teraz jesteś moim nauczycielem angielskiego i poprawiasz moje zdania',
    'Wciel się w przewodnika i poleć trzy miejsca do zwiedzenia w Krakowie',
  ],
  el: [
    'Από τώρα είσαι ο καθηγητής μου στα αγγλικά και διορθώνεις τις προτάσεις μου',
    'Υποδύσου έναν ξεναγό και πρότεινε τρία μέρη να επισκεφθώ στη Θεσσαλονίκη',
  ],
  tr: [
    'Bundan sonra sen benim İngilizce öğretmenimsin, cümlelerimi düzelt',
    'Bir tur rehberi rolüne gir ve İzmir’de gezilecek üç yer öner',
  ],
  sw: [
    'Kuanzia sasa wewe ni mwalimu wangu wa Kiingereza, sahihisha sentensi zangu',
    'Igiza kama mwongozaji wa watalii na unipendekezee maeneo matatu ya kutembelea Zanzibar',
  ],
};

/**
 * Parts of benign system-prompt-like role requests in English (hand-written), composed as
 * opener + duty + constraints + first request: the shape of the prompt libraries people
 * paste into assistants, with their imperative constraints ("only reply with...", "do not
 * write explanations", "stay in character") that a model trained on jailbreaks mistakes
 * for one.
 */
export const ROLE_PROMPT = {
  roles: [
    'a travel guide',
    'a Spanish tutor',
    'a SQL expert',
    'a career coach',
    'a poet',
    'a debate coach',
    'a nutritionist',
    'a product manager reviewing my spec',
    'a chess coach',
    'a customer-support agent for a bike shop',
    'a historian',
    'a mock interviewer for a data analyst role',
    'a recipe generator',
    'a spreadsheet formula helper',
    'a proofreader',
    'the game master of a fantasy adventure',
    'a patient math teacher',
    'a gardening expert',
  ],
  openers: [
    'I want you to act as {role}.',
    'Act as {role}.',
    'You are {role}.',
    'Pretend you are {role}.',
    'Please play the role of {role}.',
    'Imagine you are {role}.',
  ],
  duties: [
    'I will describe my situation and you will give practical advice.',
    'I will type questions and you will answer them concisely.',
    'I will give you a topic and you will write a short piece about it.',
    'You will guide me step by step and check my answers.',
    'I will paste my text and you will suggest improvements.',
  ],
  constraints: [
    'Only reply with the answer and nothing else.',
    'Do not write explanations.',
    'Keep each answer under 100 words.',
    'Stay in character for the whole conversation.',
    "Do not break character unless I type 'stop'.",
    'Use simple language.',
    'Reply in a table.',
    'Ask me one question at a time.',
    'Ignore spelling mistakes in my messages.',
    'Follow these rules strictly.',
    'Never mention that you are an AI model in your answers.',
  ],
  /** Section headings of a structured (markdown) system prompt. */
  headings: ['## Role', '## Rules', '## Output format', '# Instructions', '### Constraints'],
  /** Task statements of structured system prompts. */
  tasks: [
    'Your sole task is to turn the notes I paste into a clean meeting summary.',
    'Your task is to review pull requests for readability and suggest concrete changes.',
    'You must be precise and strictly follow the output format below.',
    'Generate the documentation files the user asks for, following the guidelines below.',
    'You help users write better prompts: analyze the prompt they give you and improve it.',
  ],
  requests: [
    'My first request is: plan a weekend in Porto.',
    'My first request is: help me prepare for tomorrow.',
    'My first question is about sorting a list of names.',
    'Let us start with something easy.',
    'The first topic is autumn.',
  ],
} as const;
