// LangChain JS (@langchain/openai's ChatOpenAI) against the test server:
// invoke and stream with the scenario's tools bound, and a two-round tool
// loop (scenario "weather") written as LangChain's docs write it, with
// invoke and with stream.  LangChain does not read reasoning_content.
import { test } from 'node:test';
import { ToolMessage } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';

import {
  SINGLE, baseURL, checkLoopPrompt, checkResult, messagesOf, modelName, reasoningSentBack,
  scenarios,
} from './lib.mjs';

// Thinking on: vLLM's and SGLang's chat_template_kwargs.enable_thinking;
// off: reasoning_effort "none" (vLLM's spelling of thinking off).
const modelKwargs = (sc) => (sc.thinking
  ? { chat_template_kwargs: { enable_thinking: true } }
  : { reasoning_effort: 'none' });

const chat = (name, tag) => {
  const sc = scenarios[name];
  const model = new ChatOpenAI({
    model: modelName(name, tag),
    apiKey: 'test',
    configuration: { baseURL },
    maxRetries: 0,
    modelKwargs: modelKwargs(sc),
  });
  return sc.tools ? model.bindTools(sc.tools) : model;
};

const fromMessage = (m) => ({
  finish: m.response_metadata?.finish_reason,
  content: typeof m.content === 'string' ? m.content : JSON.stringify(m.content),
  reasoning: undefined,
  toolCalls: [
    ...(m.tool_calls ?? []).map((c) => ({ name: c.name, arguments: JSON.stringify(c.args) })),
    // a call LangChain could not parse is still a call the client ends with
    ...(m.invalid_tool_calls ?? []).map((c) => ({ name: c.name, arguments: c.args ?? '' })),
  ],
});

async function streamed(model, messages) {
  let whole;
  for await (const chunk of await model.stream(messages)) {
    whole = whole ? whole.concat(chunk) : chunk;
  }
  return whole;
}

for (const name of SINGLE) {
  test(`langchain invoke: ${name}`, async (t) => {
    await checkResult(t, name, async () => fromMessage(
      await chat(name, 'lc-invoke').invoke(messagesOf(scenarios[name]))));
  });

  test(`langchain stream: ${name}`, async (t) => {
    await checkResult(t, name, async () => fromMessage(
      await streamed(chat(name, 'lc-stream'), messagesOf(scenarios[name]))));
  });
}

for (const stream of [false, true]) {
  const tag = stream ? 'lc-stream-loop' : 'lc-invoke-loop';
  test(`langchain ${stream ? 'stream' : 'invoke'} tool loop: weather, two rounds`, async (t) => {
    const sc = scenarios.weather;
    const model = chat('weather', tag);
    const call = (messages) => (stream ? streamed(model, messages) : model.invoke(messages));
    await checkResult(t, 'weather', async () => {
      const messages = messagesOf(sc);
      const first = await call(messages);
      messages.push(first);
      for (const c of first.tool_calls ?? []) {
        messages.push(new ToolMessage({ content: sc.tool_results[0], tool_call_id: c.id }));
      }
      return fromMessage(await call(messages));
    }, { round: 1 });
    await checkLoopPrompt(t, modelName('weather', tag));
    t.diagnostic(`reasoning sent back in round 2: ${await reasoningSentBack(modelName('weather', tag))}`);
  });
}
