// The Anthropic TypeScript SDK (@anthropic-ai/sdk) against the test
// server's POST /v1/messages: messages.create (whole and streamed),
// messages.stream() with finalMessage(), and a two-round tool loop (scenario
// "weather") that sends the assistant's thinking and tool_use blocks back
// with a tool_result, as Anthropic's docs write it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';

import {
  SINGLE, anthropicOf, anthropicTools, baseURL, checkLoopPrompt, checkResult, fromAnthropicMessage,
  modelName, reasoningSentBack, scenarios,
} from './lib.mjs';

// the SDK adds /v1/messages itself
const client = new Anthropic({
  baseURL: baseURL.replace(/\/v1$/, ''), apiKey: 'test', maxRetries: 0, timeout: 30000,
});

// Anthropic's switch: thinking enabled with a budget, or disabled.
const thinking = (sc) => ({
  thinking: sc.thinking ? { type: 'enabled', budget_tokens: 1024 } : { type: 'disabled' },
});

const request = (name, tag, extra = {}) => {
  const sc = scenarios[name];
  return {
    model: modelName(name, tag),
    max_tokens: 2048,
    ...anthropicOf(sc),
    ...(sc.tools ? { tools: anthropicTools(sc) } : {}),
    ...thinking(sc),
    ...extra,
  };
};

// The server signs the thinking blocks it writes (responder option
// `signature`): the client must have kept the signature.
async function checkSignatures(t, got) {
  await t.test('the thinking block keeps the server\'s signature', () => {
    assert.ok(got, 'no message');
    for (const s of got.signatures) {
      assert.match(s ?? '', /^dsml-test-server-\d+$/);
    }
  });
}

// Adds up the raw events of messages.create({stream: true}).
async function fromEvents(stream) {
  const msg = { content: [], stop_reason: null };
  const json = [];
  for await (const ev of stream) {
    if (ev.type === 'message_start') {
      Object.assign(msg, ev.message, { content: [] });
    } else if (ev.type === 'content_block_start') {
      msg.content[ev.index] = { ...ev.content_block };
      json[ev.index] = '';
    } else if (ev.type === 'content_block_delta') {
      const b = msg.content[ev.index];
      const d = ev.delta;
      if (d.type === 'text_delta') b.text += d.text;
      else if (d.type === 'thinking_delta') b.thinking += d.thinking;
      else if (d.type === 'signature_delta') b.signature = d.signature;
      else if (d.type === 'input_json_delta') json[ev.index] += d.partial_json;
    } else if (ev.type === 'content_block_stop') {
      const b = msg.content[ev.index];
      if (b.type === 'tool_use') b.input = JSON.parse(json[ev.index] || '{}');
    } else if (ev.type === 'message_delta') {
      msg.stop_reason = ev.delta.stop_reason;
    }
  }
  return msg;
}

for (const name of SINGLE) {
  test(`anthropic messages.create: ${name}`, async (t) => {
    const got = await checkResult(t, name, async () => fromAnthropicMessage(
      await client.messages.create(request(name, 'ant-create'))), { readsReasoning: true });
    await checkSignatures(t, got);
  });

  test(`anthropic messages.create stream: ${name}`, async (t) => {
    const got = await checkResult(t, name, async () => fromAnthropicMessage(
      await fromEvents(await client.messages.create(request(name, 'ant-create-stream', { stream: true })))),
    { readsReasoning: true });
    await checkSignatures(t, got);
  });

  test(`anthropic messages.stream finalMessage: ${name}`, async (t) => {
    let usage;
    const got = await checkResult(t, name, async () => {
      const final = await client.messages.stream(request(name, 'ant-stream')).finalMessage();
      usage = final.usage;
      return fromAnthropicMessage(final);
    }, { readsReasoning: true });
    await checkSignatures(t, got);
    await t.test('usage: input tokens from message_start, output tokens from message_delta', () => {
      assert.ok(usage?.input_tokens > 0 && usage?.output_tokens > 0, JSON.stringify(usage));
    });
  });
}

for (const stream of [false, true]) {
  const tag = stream ? 'ant-loop-stream' : 'ant-loop';
  test(`anthropic tool loop${stream ? ' (messages.stream)' : ''}: weather, two rounds`, async (t) => {
    const sc = scenarios.weather;
    const call = async (body) => (stream
      ? client.messages.stream(body).finalMessage()
      : client.messages.create(body));
    await checkResult(t, 'weather', async () => {
      const body = request('weather', tag);
      const first = await call(body);
      body.messages.push({ role: 'assistant', content: first.content });
      body.messages.push({
        role: 'user',
        content: first.content.filter((b) => b.type === 'tool_use')
          .map((b) => ({ type: 'tool_result', tool_use_id: b.id, content: sc.tool_results[0] })),
      });
      return fromAnthropicMessage(await call(body));
    }, { round: 1, readsReasoning: true });
    await checkLoopPrompt(t, modelName('weather', tag));
    await t.test('the thinking block was sent back', async () => {
      assert.ok(await reasoningSentBack(modelName('weather', tag)));
    });
  });
}

// A refused request: HTTP 400 and Anthropic's error object, its message
// naming the place in the body.
test('anthropic: a refused request is an Anthropic error', async () => {
  const body = request('plain', 'ant-error');
  delete body.max_tokens;
  await assert.rejects(client.messages.create(body), (e) => {
    assert.ok(e instanceof Anthropic.BadRequestError, `${e?.constructor?.name}: ${e?.message}`);
    assert.equal(e.status, 400);
    assert.equal(e.error?.type, 'error');
    assert.equal(e.error?.error?.type, 'invalid_request_error');
    assert.match(e.error?.error?.message, /^\$\.max_tokens: /);
    return true;
  });
});
