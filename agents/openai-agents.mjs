// A two-turn OpenAI Agents SDK run against modelgate, for
// internal/app/agents_sdk_test.go: one agent with one function tool that
// runs a shell command, streamed over the Responses API. It prints the
// agent's final output. Configured by environment: MODELGATE_BASE_URL,
// MODELGATE_API_KEY, MODELGATE_MODEL, MODELGATE_PROMPT.
import { execFileSync } from 'node:child_process';
import OpenAI from 'openai';
import { Agent, run, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled, tool } from '@openai/agents';
import { z } from 'zod';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

setTracingDisabled(true); // traces would go to OpenAI's own service
setOpenAIAPI('responses');
setDefaultOpenAIClient(new OpenAI({ baseURL: env('MODELGATE_BASE_URL') + '/v1', apiKey: env('MODELGATE_API_KEY'), maxRetries: 0 }));

const shell = tool({
  name: 'shell_command',
  description: 'Run a shell command and return what it printed.',
  parameters: z.object({ command: z.string() }),
  execute: async ({ command }) => execFileSync('/bin/sh', ['-c', command], { encoding: 'utf8' }),
});

const agent = new Agent({
  name: 'modelgate-agent',
  instructions: 'Run the commands you are asked to run with shell_command, then say what they printed.',
  model: env('MODELGATE_MODEL'),
  tools: [shell],
});

const result = await run(agent, env('MODELGATE_PROMPT'), { stream: true, maxTurns: 4 });
for await (const _ of result) {
  // drain the stream; the run advances as events are read
}
await result.completed;
if (result.error) throw result.error;
console.log(result.finalOutput);
