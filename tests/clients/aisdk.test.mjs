// The Vercel AI SDK through @ai-sdk/openai-compatible against the test
// server: generateText and streamText with the scenario's tools declared
// (no execute: the calls are returned), and both with a tool that runs for
// the two-round loop of scenario "weather".
import { test } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { stepCountIs } from 'ai';

import { generated, streamed, toolsOf } from './aisdk-lib.mjs';
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

for (const name of SINGLE) {
  test(`ai-sdk generateText: ${name}`, async (t) => {
    await checkResult(t, name, () => generated(settings(name, 'ai-generateText')),
      { readsReasoning: true });
  });

  test(`ai-sdk streamText: ${name}`, async (t) => {
    await checkResult(t, name, () => streamed(settings(name, 'ai-streamText')),
      { readsReasoning: true });
  });
}

for (const stream of [false, true]) {
  const tag = stream ? 'ai-streamText-loop' : 'ai-generateText-loop';
  test(`ai-sdk ${stream ? 'streamText' : 'generateText'} with a tool: weather, two rounds`, async (t) => {
    const sc = scenarios.weather;
    const model = modelName('weather', tag);
    await checkResult(t, 'weather', () => {
      const opts = {
        ...settings('weather', tag, async () => sc.tool_results[0]),
        stopWhen: stepCountIs(3),
      };
      return stream ? streamed(opts) : generated(opts);
    }, { round: 1, readsReasoning: true });
    await checkLoopPrompt(t, model);
    t.diagnostic(`reasoning sent back in round 2: ${await reasoningSentBack(model)}`);
  });
}
