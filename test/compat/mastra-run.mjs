// Runs one Mastra agent session against the gateway and prints its text as JSON. A child
// process, because @mastra/core loads ES modules that jest's module runtime cannot.
// argv: baseURL apiKey model stream(0|1)
import { Agent } from '@mastra/core/agent';
import { createTool } from '@mastra/core/tools';
import { z } from 'zod';

const [baseURL, apiKey, model, stream] = process.argv.slice(2);
const weather = createTool({
  id: 'weather',
  description: 'Current weather for a city',
  inputSchema: z.object({ city: z.string() }),
  execute: ({ context }) => Promise.resolve(`18 degrees in ${context.city}`),
});
const agent = new Agent({
  name: 'weather',
  instructions: 'You are the compatibility suite.',
  model: { providerId: 'gateway', modelId: model, url: baseURL, apiKey },
  tools: { weather },
});
let text = '';
if (stream === '1') {
  const out = await agent.stream('Use weather for Paris.', { maxSteps: 3 });
  for await (const chunk of out.textStream) {
    text += chunk;
  }
} else {
  text = (await agent.generate('Use weather for Paris.', { maxSteps: 3 })).text;
}
process.stdout.write(JSON.stringify({ text }) + '\n');
