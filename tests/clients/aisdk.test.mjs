// The Vercel AI SDK through @ai-sdk/openai-compatible against the test
// server: generateText and streamText with the scenario's tools declared
// (no execute: the calls are returned), and both with a tool that runs for
// the two-round loop of scenario "weather".
import { test } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';

import {
  SINGLE, baseURL, checkLoopPrompt, checkResult, messagesOf, modelName, reasoningSentBack,
  scenarios,
} from './lib.mjs';

const provider = createOpenAICompatible({ name: 'dsml', baseURL, apiKey: 'test' });

// Thinking on: reasoning_effort alone (the platform's default mode for V4.1
// is thinking); off: DeepSeek's switch, passed through to the body.
const providerOptions = (sc) => ({
  dsml: sc.thinking ? { reasoningEffort: 'high' } : { thinking: { type: 'disabled' } },
});

const toolsOf = (sc, execute) => Object.fromEntries((sc.tools ?? []).map((t) => [
  t.function.name,
  tool({
    description: t.function.description,
    inputSchema: jsonSchema(t.function.parameters),
    ...(execute ? { execute } : {}),
  }),
]));

const settings = (name, tag, execute) => {
  const sc = scenarios[name];
  return {
    model: provider.chatModel(modelName(name, tag)),
    messages: messagesOf(sc),
    ...(sc.tools ? { tools: toolsOf(sc, execute) } : {}),
    providerOptions: providerOptions(sc),
    maxRetries: 0,
  };
};

// the AI SDK's finish reasons in OpenAI's spelling
const FINISH = { stop: 'stop', length: 'length', 'tool-calls': 'tool_calls' };

const fromResult = (text, reasoningText, toolCalls, finishReason) => ({
  finish: FINISH[finishReason] ?? finishReason,
  content: text,
  reasoning: reasoningText,
  toolCalls: toolCalls.map((c) => ({ name: c.toolName, arguments: JSON.stringify(c.input) })),
});

for (const name of SINGLE) {
  test(`ai-sdk generateText: ${name}`, async (t) => {
    await checkResult(t, name, async () => {
      const r = await generateText(settings(name, 'ai-generateText'));
      return fromResult(r.text, r.reasoningText, r.toolCalls, r.finishReason);
    }, { readsReasoning: true });
  });

  test(`ai-sdk streamText: ${name}`, async (t) => {
    await checkResult(t, name, async () => {
      let failure;
      const r = streamText({ ...settings(name, 'ai-streamText'), onError: ({ error }) => { failure = error; } });
      const [text, reasoningText, toolCalls, finishReason] = await Promise.all(
        [r.text, r.reasoningText, r.toolCalls, r.finishReason]);
      if (failure) {
        throw failure;
      }
      return fromResult(text, reasoningText, toolCalls, finishReason);
    }, { readsReasoning: true });
  });
}

for (const stream of [false, true]) {
  const tag = stream ? 'ai-streamText-loop' : 'ai-generateText-loop';
  test(`ai-sdk ${stream ? 'streamText' : 'generateText'} with a tool: weather, two rounds`, async (t) => {
    const sc = scenarios.weather;
    const model = modelName('weather', tag);
    await checkResult(t, 'weather', async () => {
      const opts = {
        ...settings('weather', tag, async () => sc.tool_results[0]),
        stopWhen: stepCountIs(3),
      };
      if (!stream) {
        const r = await generateText(opts);
        return fromResult(r.text, r.reasoningText, r.toolCalls, r.finishReason);
      }
      let failure;
      const r = streamText({ ...opts, onError: ({ error }) => { failure = error; } });
      const [text, reasoningText, toolCalls, finishReason] = await Promise.all(
        [r.text, r.reasoningText, r.toolCalls, r.finishReason]);
      if (failure) {
        throw failure;
      }
      return fromResult(text, reasoningText, toolCalls, finishReason);
    }, { round: 1, readsReasoning: true });
    await checkLoopPrompt(t, model);
    t.diagnostic(`reasoning sent back in round 2: ${await reasoningSentBack(model)}`);
  });
}
