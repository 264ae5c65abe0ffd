// What the two AI SDK tests share: the scenario's tools as AI SDK tools,
// and generateText / streamText turned into the result lib.mjs checks.
import { generateText, jsonSchema, streamText, tool } from 'ai';

// The scenario's tools; with `execute`, tools the SDK runs (a tool loop).
export const toolsOf = (sc, execute) => Object.fromEntries((sc.tools ?? []).map((t) => [
  t.function.name,
  tool({
    description: t.function.description,
    inputSchema: jsonSchema(t.function.parameters),
    ...(execute ? { execute } : {}),
  }),
]));

// the AI SDK's finish reasons in OpenAI's spelling
const FINISH = { stop: 'stop', length: 'length', 'tool-calls': 'tool_calls' };

const fromResult = (text, reasoningText, toolCalls, finishReason) => ({
  finish: FINISH[finishReason] ?? finishReason,
  content: text,
  reasoning: reasoningText,
  toolCalls: toolCalls.map((c) => ({ name: c.toolName, arguments: JSON.stringify(c.input) })),
});

export async function generated(opts) {
  const r = await generateText(opts);
  return fromResult(r.text, r.reasoningText, r.toolCalls, r.finishReason);
}

// streamText's result; an error the stream reported fails the call.
export async function streamed(opts) {
  let failure;
  const r = streamText({ ...opts, onError: ({ error }) => { failure = error; } });
  const [text, reasoningText, toolCalls, finishReason] = await Promise.all(
    [r.text, r.reasoningText, r.toolCalls, r.finishReason]);
  if (failure) {
    throw failure;
  }
  return fromResult(text, reasoningText, toolCalls, finishReason);
}
