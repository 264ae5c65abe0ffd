// The OpenAI Node SDK's Responses API against the test server's POST
// /v1/responses: responses.create (whole and streamed), responses.stream()
// with finalResponse(), and a function-call loop (scenario "weather") that
// sends the output items back with a function_call_output, as OpenAI's docs
// write it (input.push(...response.output)).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import OpenAI from 'openai';

import {
  SINGLE, baseURL, checkLoopPrompt, checkResult, fromResponse, modelName, reasoningSentBack,
  responsesOf, responsesTools, scenarios,
} from './lib.mjs';

const client = new OpenAI({ baseURL, apiKey: 'test', maxRetries: 0, timeout: 30000 });

// The API's one thinking field: reasoning.effort ("none" is thinking off).
const reasoning = (sc) => ({ reasoning: { effort: sc.thinking ? 'high' : 'none' } });

const request = (name, tag, extra = {}) => {
  const sc = scenarios[name];
  return {
    model: modelName(name, tag),
    ...responsesOf(sc),
    ...(sc.tools ? { tools: responsesTools(sc) } : {}),
    ...reasoning(sc),
    store: false,
    ...extra,
  };
};

// The SDK's stream helper (lib/responses/ResponseStream) takes the final
// response from response.completed only: after response.incomplete (the
// token limit) finalResponse() is its running snapshot, status
// "in_progress", no usage, and the summary it never accumulates.
const INCOMPLETE = 'the SDK\'s ResponseStream ignores response.incomplete and returns its running snapshot';

// The reasoning item carries its text twice, as content and as summary
// (the AI SDK reads only the summary).
async function checkSummary(t, got, todo) {
  await t.test('the reasoning summary is the reasoning', { todo }, () => {
    assert.ok(got, 'no response');
    assert.equal(got.summary, got.reasoning);
  });
}

// Adds up the events of responses.create({stream: true}) into the output
// items, checking the sequence numbers; the response of the last event is
// compared with them.
async function fromEvents(stream) {
  const items = [];
  const text = {};
  let seq = 0;
  let final;
  for await (const ev of stream) {
    assert.equal(ev.sequence_number, seq++, `${ev.type}: sequence_number`);
    if (ev.type === 'response.output_item.added') {
      items[ev.output_index] = { ...ev.item };
      text[ev.output_index] = { output: '', reasoning: '', summary: '', args: '' };
    } else if (ev.type === 'response.output_text.delta') {
      text[ev.output_index].output += ev.delta;
    } else if (ev.type === 'response.reasoning_text.delta') {
      text[ev.output_index].reasoning += ev.delta;
    } else if (ev.type === 'response.reasoning_summary_text.delta') {
      text[ev.output_index].summary += ev.delta;
    } else if (ev.type === 'response.function_call_arguments.delta') {
      text[ev.output_index].args += ev.delta;
    } else if (ev.type === 'response.output_item.done') {
      const it = items[ev.output_index];
      const x = text[ev.output_index];
      if (it.type === 'message') it.content = [{ type: 'output_text', text: x.output }];
      if (it.type === 'reasoning') {
        it.content = [{ type: 'reasoning_text', text: x.reasoning }];
        it.summary = [{ type: 'summary_text', text: x.summary }];
      }
      if (it.type === 'function_call') it.arguments = x.args;
      assert.deepEqual(fromResponse({ status: 'completed', output: [it] }),
        fromResponse({ status: 'completed', output: [ev.item] }), 'output_item.done: its deltas');
    } else if (ev.type === 'response.completed' || ev.type === 'response.incomplete') {
      final = ev.response;
    }
  }
  assert.ok(final, 'no response.completed or response.incomplete');
  const summed = fromResponse({ ...final, output: items.filter(Boolean) });
  assert.deepEqual(summed, fromResponse(final), 'the deltas add up to the final response');
  return final;
}

for (const name of SINGLE) {
  test(`openai responses.create: ${name}`, async (t) => {
    const got = await checkResult(t, name, async () => fromResponse(
      await client.responses.create(request(name, 'rsp-create'))), { readsReasoning: true });
    await checkSummary(t, got);
  });

  test(`openai responses.create stream: ${name}`, async (t) => {
    const got = await checkResult(t, name, async () => fromResponse(
      await fromEvents(await client.responses.create(request(name, 'rsp-create-stream', { stream: true })))),
    { readsReasoning: true });
    await checkSummary(t, got);
  });

  test(`openai responses.stream finalResponse: ${name}`, async (t) => {
    let usage;
    const todo = scenarios[name].rounds[0].end === 'length' ? INCOMPLETE : undefined;
    const got = await checkResult(t, name, async () => {
      const final = await client.responses.stream(request(name, 'rsp-stream')).finalResponse();
      usage = final.usage;
      return fromResponse(final);
    }, { readsReasoning: true, todo: { 'the finish reason': todo } });
    await checkSummary(t, got, todo);
    await t.test('usage', { todo }, () => {
      assert.ok(usage?.input_tokens > 0 && usage?.output_tokens > 0, JSON.stringify(usage));
      assert.equal(usage.total_tokens, usage.input_tokens + usage.output_tokens);
    });
  });
}

for (const stream of [false, true]) {
  const tag = stream ? 'rsp-loop-stream' : 'rsp-loop';
  test(`openai responses function-call loop${stream ? ' (responses.stream)' : ''}: weather, two rounds`, async (t) => {
    const sc = scenarios.weather;
    const call = async (body) => (stream
      ? client.responses.stream(body).finalResponse()
      : client.responses.create(body));
    await checkResult(t, 'weather', async () => {
      const body = request('weather', tag);
      const first = await call(body);
      body.input.push(...first.output);
      for (const item of first.output.filter((i) => i.type === 'function_call')) {
        body.input.push({ type: 'function_call_output', call_id: item.call_id, output: sc.tool_results[0] });
      }
      return fromResponse(await call(body));
    }, { round: 1, readsReasoning: true });
    await checkLoopPrompt(t, modelName('weather', tag));
    await t.test('the reasoning item was sent back', async () => {
      assert.ok(await reasoningSentBack(modelName('weather', tag)));
    });
  });
}

// State the server does not keep: refused with OpenAI's error object
// saying so, the path naming the field.
test('openai responses: previous_response_id is refused with the reason', async () => {
  await assert.rejects(client.responses.create(request('plain', 'rsp-error',
    { previous_response_id: 'resp_123' })), (e) => {
    assert.ok(e instanceof OpenAI.BadRequestError, `${e?.constructor?.name}: ${e?.message}`);
    assert.equal(e.param, '$.previous_response_id');
    assert.equal(e.code, 'server_state');
    return true;
  });
});
