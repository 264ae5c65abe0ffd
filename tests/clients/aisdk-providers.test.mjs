// The Vercel AI SDK's own providers against the test server's other APIs:
// @ai-sdk/anthropic (POST /v1/messages) and @ai-sdk/openai's default model
// (the Responses API, POST /v1/responses), with generateText and streamText,
// the scenario's tools declared (no execute: the calls are returned), and
// both with a tool that runs for the two-round loop of scenario "weather".
//
// Thinking: @ai-sdk/anthropic sends thinking {type: "enabled"} when asked
// and nothing when disabled; @ai-sdk/openai sends reasoning.effort only for
// model ids it knows as OpenAI reasoning models.  Neither can say "off", so
// the model name says it, as DeepSeek's deepseek-chat and deepseek-reasoner
// do: "chat/..." or "reasoner/..." (the server's mode for a body that gives
// none).  @ai-sdk/openai sends stored items by reference (item_reference)
// unless `store: false`, the setting for a server that keeps no responses.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs } from 'ai';

import { generated, streamed, toolsOf } from './aisdk-lib.mjs';
import {
  SINGLE, baseURL, checkLoopPrompt, checkResult, messagesOf, modelName, reasoningSentBack,
  scenarios,
} from './lib.mjs';

const anthropic = createAnthropic({ baseURL, apiKey: 'test' });
const openai = createOpenAI({ baseURL, apiKey: 'test' });

const PROVIDERS = {
  anthropic: {
    model: (id) => anthropic(id),
    options: (sc) => ({
      anthropic: { thinking: sc.thinking ? { type: 'enabled', budgetTokens: 1024 } : { type: 'disabled' } },
    }),
  },
  openai: {
    model: (id) => openai(id), // the provider's default: the Responses API
    options: () => ({ openai: { store: false } }),
  },
};

const modelId = (name, tag) => `${scenarios[name].thinking ? 'reasoner' : 'chat'}/${modelName(name, tag)}`;

const settings = (p, name, tag, execute) => {
  const sc = scenarios[name];
  return {
    model: PROVIDERS[p].model(modelId(name, tag)),
    messages: messagesOf(sc),
    ...(sc.tools ? { tools: toolsOf(sc, execute) } : {}),
    providerOptions: PROVIDERS[p].options(sc),
    maxRetries: 0,
  };
};

for (const p of Object.keys(PROVIDERS)) {
  for (const name of SINGLE) {
    test(`ai-sdk @ai-sdk/${p} generateText: ${name}`, async (t) => {
      await checkResult(t, name, () => generated(settings(p, name, `ai-${p}-generate`)),
        { readsReasoning: true });
    });

    test(`ai-sdk @ai-sdk/${p} streamText: ${name}`, async (t) => {
      await checkResult(t, name, () => streamed(settings(p, name, `ai-${p}-stream`)),
        { readsReasoning: true });
    });
  }

  for (const stream of [false, true]) {
    const tag = `ai-${p}-${stream ? 'stream' : 'generate'}-loop`;
    test(`ai-sdk @ai-sdk/${p} ${stream ? 'streamText' : 'generateText'} with a tool: weather, two rounds`, async (t) => {
      const sc = scenarios.weather;
      await checkResult(t, 'weather', () => {
        const opts = {
          ...settings(p, 'weather', tag, async () => sc.tool_results[0]),
          stopWhen: stepCountIs(3),
        };
        return stream ? streamed(opts) : generated(opts);
      }, { round: 1, readsReasoning: true });
      await checkLoopPrompt(t, modelId('weather', tag));
      await t.test('the reasoning was sent back', async () => {
        assert.ok(await reasoningSentBack(modelId('weather', tag)));
      });
    });
  }
}

// @ai-sdk/openai's default (store unset) sends round 1's items back by
// reference, which needs responses kept by the server: refused (400,
// OpenAI's error object naming the item), never rendered without them.
test('ai-sdk @ai-sdk/openai, store by default: item_reference is refused with the reason', async () => {
  const sc = scenarios.weather;
  const tag = 'ai-openai-stored-loop';
  const opts = {
    ...settings('openai', 'weather', tag, async () => sc.tool_results[0]),
    providerOptions: {},
    stopWhen: stepCountIs(3),
  };
  await assert.rejects(generateText(opts), (e) => {
    assert.equal(e.statusCode, 400, e.message);
    assert.match(e.responseBody, /"param":"\$\.input\[\d+\]/);
    assert.match(e.message, /item_reference/);
    return true;
  });
});
