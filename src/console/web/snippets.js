// Ready-to-paste calls shown with a new key's secret. No DOM here: a test imports this
// module and runs each snippet against a gateway, so what the page shows is what works.

/**
 * The gateway refuses a request without a system prompt (rule S1), so every snippet
 * carries one. No apostrophe: the curl body is single-quoted for the shell.
 */
export const SNIPPET_SYSTEM_PROMPT = 'You are a helpful assistant.';

/**
 * One snippet per tab: curl, the OpenAI SDK and the Anthropic SDK (JavaScript modules, so
 * TypeScript runs them as they are), each calling `origin` with `key` on `model`.
 */
export function keySnippets({ origin, key, model }) {
  const system = SNIPPET_SYSTEM_PROMPT;
  const body = JSON.stringify({
    model,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: 'Hello' },
    ],
  });
  return {
    curl: `curl ${origin}/v1/chat/completions \\\n  -H "Authorization: Bearer ${key}" \\\n  -H "Content-Type: application/json" \\\n  -d '${body}'`,
    'OpenAI SDK': `import OpenAI from 'openai';\n\nconst client = new OpenAI({\n  baseURL: '${origin}/v1',\n  apiKey: '${key}',\n});\nconst r = await client.chat.completions.create({\n  model: '${model}',\n  messages: [\n    { role: 'system', content: '${system}' },\n    { role: 'user', content: 'Hello' },\n  ],\n});\nconsole.log(r.choices[0].message.content);`,
    'Anthropic SDK': `import Anthropic from '@anthropic-ai/sdk';\n\nconst client = new Anthropic({\n  baseURL: '${origin}',\n  apiKey: '${key}',\n});\nconst m = await client.messages.create({\n  model: '${model}',\n  max_tokens: 256,\n  system: '${system}',\n  messages: [{ role: 'user', content: 'Hello' }],\n});\nconsole.log(m.content.find((b) => b.type === 'text')?.text);`,
  };
}
