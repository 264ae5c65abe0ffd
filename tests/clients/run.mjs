// node run.mjs SERVER WORKDIR [TEST.mjs...]: starts the test server
// (dsml-test-server scenarios.json WORKDIR/server.jsonl), runs the client
// tests (every *.test.mjs here when none is named) with its address, stops
// the server by closing its stdin, and fails when the tests fail, time out,
// or the server did not exit cleanly (a sanitizer's report, a crash).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

const here = path.dirname(new URL(import.meta.url).pathname);
const [serverPath, work, ...named] = process.argv.slice(2);
if (!serverPath || !work) {
  console.error('usage: node run.mjs SERVER WORKDIR [TEST.mjs...]');
  process.exit(2);
}
fs.mkdirSync(work, { recursive: true });
const log = path.join(work, 'server.jsonl');
const tests = named.length ? named
  : fs.readdirSync(here).filter((f) => f.endsWith('.test.mjs')).sort().map((f) => path.join(here, f));

const server = spawn(serverPath, [path.join(here, 'scenarios.json'), log],
  { stdio: ['pipe', 'pipe', 'inherit'] });
const serverExit = new Promise((resolve) => server.on('exit', (code, signal) => resolve({ code, signal })));
const port = await new Promise((resolve, reject) => {
  readline.createInterface({ input: server.stdout }).once('line', resolve);
  server.once('exit', () => reject(new Error('the server exited before printing its port')));
});
console.log(`dsml-test-server on 127.0.0.1:${port}, log ${log}`);

const child = spawn(process.execPath, ['--test', ...tests], {
  stdio: 'inherit',
  env: { ...process.env, DSML_TEST_BASE_URL: `http://127.0.0.1:${port}/v1`, DSML_TEST_LOG: log },
});
const timer = setTimeout(() => {
  console.error('client tests timed out after 420 s');
  child.kill('SIGKILL');
}, 420000);
const testCode = await new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
clearTimeout(timer);

server.stdin.end();
const killer = setTimeout(() => server.kill('SIGKILL'), 10000);
const { code, signal } = await serverExit;
clearTimeout(killer);
if (code !== 0) {
  console.error(`dsml-test-server exited with ${signal ?? `status ${code}`}`);
  process.exit(1);
}
process.exit(testCode);
