// The scenarios' completions and expected messages are the golden data's,
// not written by hand: each is checked against the source it names.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { scenarios } from './lib.mjs';

const here = path.dirname(new URL(import.meta.url).pathname);
const EOS = '<｜end▁of▁sentence｜>';
const shared = process.env.DSML_SHARED_DIR ?? path.join(here, '../../../shared');
const officialPath = path.join(shared, 'golden/official/cases.json');
const official = fs.existsSync(officialPath)
  ? JSON.parse(fs.readFileSync(officialPath, 'utf8')).cases : null;
const skip = official ? false : `${officialPath} is not there`;

const expectOf = (m) => ({
  content: m.content ?? '',
  reasoning: m.reasoning_content ?? '',
  tool_calls: (m.tool_calls ?? []).map((c) => ({
    name: c.function.name, arguments: JSON.parse(c.function.arguments),
  })),
});

test('weather: both rounds as official case 1 writes them', { skip }, () => {
  const c = official[0];
  const sc = scenarios.weather;
  const [r1, r2] = sc.rounds;
  assert.ok(c.expected_prompt.includes(`<｜Assistant｜><think>${r1.completion}<｜User｜>`));
  assert.ok(c.expected_prompt.endsWith(`<｜Assistant｜><think>${r2.completion}`));
  assert.deepEqual(r1.expect, expectOf(c.input.messages[2]));
  assert.deepEqual(r2.expect, expectOf(c.input.messages[4]));
  assert.deepEqual(sc.messages, c.input.messages.slice(0, 2));
  assert.deepEqual(sc.tools, c.input.tools);
  assert.deepEqual(sc.tool_results, [c.input.messages[3].content]);
});

test('cut: the weather call cut inside a parameter value', () => {
  const full = scenarios.weather.rounds[0].completion;
  const cut = scenarios.cut.rounds[0];
  assert.ok(full.startsWith(cut.completion) && cut.completion.length < full.length);
  const open = cut.completion.lastIndexOf('string="true">');
  assert.ok(open > 0 && !cut.completion.slice(open).includes('</｜DSML｜ parameter>'));
  assert.equal(cut.end, 'length');
  assert.equal(cut.expect.reasoning, scenarios.weather.rounds[0].expect.reasoning);
});

test('plain and reasoning: official case 2, chat and thinking', { skip }, () => {
  const input = official[1].input;
  const last = input[4];
  assert.ok(official[1].expected_prompt.endsWith(
    `<｜Assistant｜></think>${scenarios.plain.rounds[0].completion}`));
  assert.deepEqual(scenarios.plain.rounds[0].expect, { ...expectOf(last), reasoning: '' });
  assert.equal(scenarios.reasoning.rounds[0].completion,
    `${last.reasoning_content}</think>${last.content}${EOS}`);
  assert.deepEqual(scenarios.reasoning.rounds[0].expect, expectOf(last));
  assert.deepEqual(scenarios.plain.messages, input.slice(0, 4));
  assert.deepEqual(scenarios.reasoning.messages, input.slice(0, 4));
});

test('parallel: testdata/parse.jsonl p101-00807', () => {
  const row = fs.readFileSync(path.join(here, '../../testdata/parse.jsonl'), 'utf8').split('\n')
    .filter(Boolean).map((l) => JSON.parse(l)).find((r) => r.id === 'p101-00807');
  const round = scenarios.parallel.rounds[0];
  assert.equal(row.thinking_mode, 'thinking');
  assert.equal(round.completion, row.text);
  assert.deepEqual(round.expect, expectOf(row.expect.message));
});

test('leak: the issue\'s completion, split at </think>', () => {
  const round = scenarios.leak.rounds[0];
  assert.equal(round.completion, `We need answer only number. 17*23=391.</think>\n391${EOS}`);
  const [before, after] = round.completion.slice(0, -EOS.length).split('</think>');
  assert.equal(round.expect.deliberation, before);
  assert.equal(round.expect.reasoning, before);
  assert.equal(round.expect.content, after.trimStart());
});
