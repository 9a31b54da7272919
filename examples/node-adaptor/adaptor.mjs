#!/usr/bin/env node
// An example adaptor in Node.js for the structured-output harness.
//
//   harness run --target "node-example=cmd:node examples/node-adaptor/adaptor.mjs"
//
// It speaks the JSON-lines target protocol on stdin/stdout and drives the
// agent CLIs (the harness's fakes) named in each run request.

import { readFileSync } from 'node:fs';

import { killAll } from './launch.mjs';
import { run } from './pipeline.mjs';
import { serve } from './protocol.mjs';

// stdout carries protocol replies only: anything logged goes to stderr.
console.log = console.error;
console.info = console.error;

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf-8'));

const IMPLEMENTATION = {
  name: 'node-example',
  version: pkg.version,
  language: 'javascript',
  drivers: ['codex', 'claude', 'cursor', 'codebuddy'],
  features: ['native', 'prompt', 'stream'],
};

// The harness went away (closed our stdout): stop the providers and leave.
process.stdout.on('error', () => {
  killAll();
  process.exit(0);
});

for (const name of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  process.on(name, () => {
    killAll();
    process.exit(1);
  });
}

const status = await serve({
  input: process.stdin,
  output: process.stdout,
  implementation: IMPLEMENTATION,
  runScenario: (message) => run(message.request, message.provider),
});
killAll();
process.exit(status);
