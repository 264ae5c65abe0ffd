// What every client test shares: the scenarios, the test server's address and
// log, and the checks a client's result must pass for a scenario.  A client
// test turns what its library returned into
//   {content, reasoning (undefined when the library does not read it),
//    toolCalls: [{name, arguments (the JSON text the library holds)}],
//    finish (the finish reason in OpenAI's spelling, when the library tells)}
// and runs checkResult() on it.
import assert from 'node:assert/strict';
import fs from 'node:fs';

export const scenarios = JSON.parse(
  fs.readFileSync(new URL('./scenarios.json', import.meta.url), 'utf8'));
export const baseURL = process.env.DSML_TEST_BASE_URL;
const logPath = process.env.DSML_TEST_LOG;
if (!baseURL || !logPath) {
  throw new Error('DSML_TEST_BASE_URL and DSML_TEST_LOG are set by run.mjs');
}

// The scenarios every client runs once per way of calling it.
export const SINGLE = ['plain', 'reasoning', 'weather', 'parallel', 'cut', 'leak'];

// The "model" a test sends: the scenario, then a tag the log is read by.
export const modelName = (scenario, tag) => `${scenario}@${tag}`;

// Plain role/content messages of a scenario's request.
export const messagesOf = (sc) => sc.messages.map((m) => ({ role: m.role, content: m.content }));

// The same request in the other two APIs: Anthropic's system and messages,
// Responses' instructions and input (the system messages joined).
const systemOf = (sc) => sc.messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n\n');
export const anthropicOf = (sc) => ({
  ...(systemOf(sc) ? { system: systemOf(sc) } : {}),
  messages: messagesOf(sc).filter((m) => m.role !== 'system'),
});
export const responsesOf = (sc) => ({
  ...(systemOf(sc) ? { instructions: systemOf(sc) } : {}),
  input: messagesOf(sc).filter((m) => m.role !== 'system'),
});
export const anthropicTools = (sc) => sc.tools?.map((t) => ({
  name: t.function.name, description: t.function.description, input_schema: t.function.parameters,
}));
export const responsesTools = (sc) => sc.tools?.map((t) => ({
  type: 'function', name: t.function.name, description: t.function.description,
  parameters: t.function.parameters, strict: false,
}));

// The finish reason in OpenAI's spelling of an Anthropic stop_reason and of
// a Responses status (its calls making "tool_calls").
const ANTHROPIC_STOP = { end_turn: 'stop', stop_sequence: 'stop', tool_use: 'tool_calls', max_tokens: 'length' };
export const fromAnthropicMessage = (m) => ({
  content: m.content.filter((b) => b.type === 'text').map((b) => b.text).join(''),
  reasoning: m.content.filter((b) => b.type === 'thinking').map((b) => b.thinking).join(''),
  toolCalls: m.content.filter((b) => b.type === 'tool_use')
    .map((b) => ({ name: b.name, arguments: JSON.stringify(b.input) })),
  finish: ANTHROPIC_STOP[m.stop_reason] ?? m.stop_reason,
  signatures: m.content.filter((b) => b.type === 'thinking').map((b) => b.signature),
});
export const fromResponse = (r) => {
  const calls = r.output.filter((i) => i.type === 'function_call');
  return {
    content: r.output.filter((i) => i.type === 'message')
      .flatMap((i) => i.content).filter((p) => p.type === 'output_text').map((p) => p.text).join(''),
    reasoning: r.output.filter((i) => i.type === 'reasoning')
      .flatMap((i) => i.content ?? []).map((p) => p.text).join(''),
    summary: r.output.filter((i) => i.type === 'reasoning')
      .flatMap((i) => i.summary ?? []).map((p) => p.text).join(''),
    toolCalls: calls.map((c) => ({ name: c.name, arguments: c.arguments })),
    finish: r.status === 'incomplete'
      ? (r.incomplete_details?.reason === 'max_output_tokens' ? 'length' : r.incomplete_details?.reason)
      : calls.length ? 'tool_calls' : r.status === 'completed' ? 'stop' : r.status,
  };
};

// Text that never belongs in content or reasoning: the think tags, DSML
// markup, the EOS token.
const MARKUP = ['<think>', '</think>', '｜DSML｜', '<｜end▁of▁sentence｜>'];

// Runs `call` (the client's request, resolving to a result as above) and the
// checks of scenario `name`, round `round`, each as its own subtest.
// opts.readsReasoning: the library exposes reasoning_content; opts.todo: a
// check the library breaks itself, reported as TODO with the reason.
export async function checkResult(t, name, call, opts = {}) {
  const round = opts.round ?? 0;
  const exp = scenarios[name].rounds[round].expect;
  let got;
  let failure;
  try {
    got = await call();
  } catch (e) {
    failure = e;
  }
  const check = (what, fn) => t.test(what, { todo: opts.todo?.[what] }, () => {
    if (failure) {
      throw new Error(`the request failed: ${describe(failure)}`);
    }
    fn(got);
  });
  await check('no think tags, DSML markup or EOS in content or reasoning', (g) => {
    for (const [field, text] of [['content', g.content], ['reasoning', g.reasoning]]) {
      for (const m of MARKUP) {
        assert.ok(!(text ?? '').includes(m), `${field} holds ${m}: ${JSON.stringify(text)}`);
      }
    }
  });
  await check('the answer', (g) => {
    const content = g.content ?? '';
    // thinking-off leak: the newline the model wrote after </think> may stay
    assert.equal(exp.deliberation ? content.trimStart() : content, exp.content);
  });
  if (exp.deliberation) {
    await check('the deliberation is not shown as the answer', (g) => {
      assert.ok(!(g.content ?? '').includes(exp.deliberation), JSON.stringify(g.content));
    });
  }
  if (opts.readsReasoning) {
    await check('reasoning_content reaches the client', (g) => {
      assert.equal(g.reasoning ?? '', exp.reasoning);
    });
  }
  await check('no cut or partial tool call', (g) => {
    for (const c of g.toolCalls) {
      let args;
      assert.doesNotThrow(() => { args = JSON.parse(c.arguments); },
        `${c.name}: arguments ${JSON.stringify(c.arguments)} are not JSON`);
      assert.equal(typeof args, 'object', `${c.name}: arguments ${c.arguments}`);
    }
    if (scenarios[name].rounds[round].end === 'length') {
      assert.deepEqual(g.toolCalls, [], 'a call cut by length must not reach the client');
    }
  });
  await check('the finish reason', (g) => {
    const want = scenarios[name].rounds[round].end === 'length' ? 'length'
      : exp.tool_calls.length ? 'tool_calls' : 'stop';
    assert.equal(g.finish, want);
  });
  await check('the tool calls', (g) => {
    const calls = g.toolCalls.map((c) => ({ name: c.name, arguments: parseOr(c.arguments) }));
    assert.deepEqual(calls, exp.tool_calls);
  });
  return got;
}

function parseOr(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function describe(e) {
  const body = e?.error ?? e?.responseBody ?? e?.data;
  return `${e?.message ?? e}${body ? ` -- ${typeof body === 'string' ? body : JSON.stringify(body)}` : ''}`;
}

// The server's log entries for one model name, once `count` are there.
export async function logEntries(model, count) {
  for (let i = 0; ; i++) {
    const entries = fs.readFileSync(logPath, 'utf8').split('\n').filter(Boolean)
      .map((l) => JSON.parse(l)).filter((e) => e.model === model);
    if (entries.length >= count || i >= 50) {
      return entries;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

// The two-round tool loop of scenario "weather" through a client: round 2's
// prompt must be round 1's prompt followed by the completion as the model
// wrote it, byte for byte (through the server's reasoning lookup when the
// client dropped reasoning_content).
export async function checkLoopPrompt(t, model, todo) {
  await t.test('round 2 prompt is round 1 prompt + completion, byte for byte', { todo }, async () => {
    const entries = await logEntries(model, 2);
    assert.ok(entries.length >= 2, `the server saw ${entries.length} request(s) for ${model}`);
    const [r1, r2] = entries;
    assert.ok(r1.prompt !== undefined && r2.prompt !== undefined,
      `a round was refused: ${r1.error ?? r2.error}`);
    const want = r1.prompt + r1.completion;
    const have = r2.prompt.slice(0, want.length);
    if (have !== want) {
      let i = 0;
      while (i < want.length && have[i] === want[i]) i++;
      const sent = sentBack(r2.request);
      assert.fail(`round 2 differs at ${i}: expected ${JSON.stringify(want.slice(i - 40, i + 60))}`
        + ` got ${JSON.stringify(have.slice(i - 40, i + 60))}; the client sent back`
        + ` ${JSON.stringify(sent)}`);
    }
  });
}

// What a round-2 request carries of round 1: the assistant message (chat,
// Anthropic), or the assistant items (Responses).
function sentBack(req) {
  if (Array.isArray(req?.input)) {
    return req.input.filter((i) => i.type === 'reasoning' || i.type === 'function_call'
      || i.role === 'assistant');
  }
  return req?.messages?.find((m) => m.role === 'assistant');
}

// Whether the client sent reasoning back in round 2 (reported, not checked).
export async function reasoningSentBack(model) {
  const entries = await logEntries(model, 2);
  const sent = sentBack(entries[1]?.request);
  if (Array.isArray(sent)) {
    return sent.some((i) => i.type === 'reasoning'
      && [...(i.content ?? []), ...(i.summary ?? [])].some((p) => p.text));
  }
  if (Array.isArray(sent?.content)) {
    return sent.content.some((b) => b.type === 'thinking' && b.thinking);
  }
  return Boolean(sent && (sent.reasoning_content || sent.reasoning));
}
