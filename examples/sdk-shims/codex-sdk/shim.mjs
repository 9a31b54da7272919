#!/usr/bin/env node
// The published @openai/codex-sdk as a target of the structured-output harness.
//
//   npm ci --prefix examples/sdk-shims/codex-sdk --omit=optional
//   harness run scenarios --target "codex-sdk=cmd:node examples/sdk-shims/codex-sdk/shim.mjs"
//
// It speaks the harness's JSON-lines target protocol (start, run..., stop; see
// harness/targets/serve.py) and answers each `run` for the codex driver with
//
//   new Codex({ codexPathOverride: <fake-codex>, env })
//     .startThread({ workingDirectory, skipGitRepoCheck: true })
//     .run(prompt, { outputSchema, signal })
//
// The SDK is the system under test, so the shim does what a typical user's
// code does and nothing more: the schema text goes through JSON.parse (the SDK
// takes an object), `finalResponse` goes through JSON.parse and is the value,
// never revalidated against the schema, and what run() throws is mapped to an
// execution_error with the closest canonical cause. The SDK throws plain
// Errors, so telling them apart means reading their messages, as a user must.
//
// The platform binary of @openai/codex (an optional dependency) is not needed:
// `codexPathOverride` names the harness's fake, so install with --omit=optional.

import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

import { Codex } from '@openai/codex-sdk';

const PROTOCOL_VERSION = 1;

// stdout carries protocol replies only.
console.log = console.error;
console.info = console.error;

const sdk = JSON.parse(
  readFileSync(new URL('./node_modules/@openai/codex-sdk/package.json', import.meta.url), 'utf-8'),
);

const IMPLEMENTATION = {
  name: 'codex-sdk',
  version: sdk.version,
  language: 'javascript',
  homepage: 'https://github.com/openai/codex/tree/main/sdk/typescript',
  drivers: ['codex'],
  features: ['native'],
};

/** Why the SDK cannot express `request` at all (null when it can). */
function skipReason(request) {
  if (request.driver !== 'codex') {
    return `@openai/codex-sdk drives Codex only, not ${request.driver}`;
  }
  if (request.schema_type != null) {
    return 'schema_type: the SDK takes a JSON Schema object as outputSchema; it derives no '
      + 'schema from a type';
  }
  if (request.descriptor != null) {
    return 'descriptor: the SDK has no capability descriptor to override; outputSchema always '
      + 'reaches the CLI as --output-schema (native), and it never negotiates prompt validation';
  }
  if (request.on_invalid === 'return') {
    return 'on_invalid=return: the SDK has no invalid-output policy; it never validates '
      + 'finalResponse and has no switch between failing the run and returning an invalid value';
  }
  if (request.schema_format !== 'json_schema') {
    return `schema_format ${JSON.stringify(request.schema_format)}: the SDK has no output-format `
      + 'option; outputSchema is always a JSON Schema';
  }
  if (request.schema_name != null || request.schema_description != null) {
    return 'schema_name/schema_description: outputSchema is the bare schema object; the SDK has '
      + 'no name or description to send';
  }
  if (request.mutate_schema_after_build) {
    return 'mutate_schema_after_build: the SDK has no option-building step apart from '
      + 'thread.run(); outputSchema is an object the caller owns, serialised when run() starts';
  }
  if (request.approval === 'ask') {
    return 'approval=ask: the SDK has no human-in-the-loop channel; `codex exec` runs '
      + 'non-interactively and approvalPolicy only sets what the CLI may do unasked';
  }
  return null;
}

function outcome(fields) {
  const hasValue = Object.hasOwn(fields, 'value');
  return {
    status: fields.error ? 'error' : 'ok',
    error: fields.error ?? null,
    cause: fields.cause ?? null,
    message: fields.message ?? null,
    value: hasValue ? fields.value : null,
    has_value: hasValue,
    text: fields.text ?? null,
    mechanism: fields.mechanism ?? null,
    diagnostics: fields.diagnostics ?? [],
    raw: fields.raw ?? null,
  };
}

/** What run() threw, as { error, cause } in the canonical taxonomy. */
function classify(thrown) {
  const message = String(thrown?.message ?? thrown);
  if (thrown?.name === 'AbortError') return { error: 'execution_error', cause: 'timeout' };
  if (message.startsWith('outputSchema must be a plain JSON object')) {
    return { error: 'invalid_output_schema' }; // the SDK's own check, before it spawns
  }
  if (/^Codex Exec exited with signal /.test(message)) {
    return { error: 'execution_error', cause: 'signal' };
  }
  if (/^Codex Exec exited with code /.test(message)) {
    return { error: 'execution_error', cause: 'nonzero_exit' };
  }
  if (message.startsWith('Failed to parse item')) {
    return { error: 'execution_error', cause: 'malformed_protocol' };
  }
  if (thrown instanceof TypeError) {
    // The SDK itself tripped over an event it did not expect (say, no usage).
    return { error: 'execution_error', cause: 'malformed_protocol' };
  }
  if (thrown?.constructor === Error) {
    // run() throws new Error(turn.failed's error.message).
    return { error: 'execution_error', cause: 'turn_failed' };
  }
  return null; // spawn failures and the like: the shim's environment, not an outcome
}

/** One run request, as a typical SDK user would write it. */
async function run(request, provider) {
  let outputSchema;
  let mechanism = null;
  if (request.schema != null) {
    try {
      outputSchema = JSON.parse(request.schema);
    } catch (error) {
      return outcome({
        error: 'invalid_output_schema', message: `schema is not JSON: ${error.message}`,
      });
    }
    mechanism = 'native';
  }
  // `env` replaces process.env for the CLI (it is not merged), so pass both.
  const codex = new Codex({
    codexPathOverride: provider.executables.codex,
    env: { ...process.env, ...provider.env },
  });
  const thread = codex.startThread({ workingDirectory: provider.work, skipGitRepoCheck: true });
  let turn;
  try {
    turn = await thread.run(request.prompt, {
      outputSchema,
      signal: AbortSignal.timeout(Math.ceil(request.timeout * 1000)),
    });
  } catch (thrown) {
    const found = classify(thrown);
    if (found === null) throw thrown;
    const message = String(thrown?.message ?? thrown).trim();
    return outcome({ ...found, message, mechanism: found.cause ? mechanism : null });
  }
  // Codex's text (docs/seed-001.md): every completed agent message, each trimmed, blank
  // ones dropped, joined with a blank line.
  const messages = turn.items
    .filter((item) => item.type === 'agent_message')
    .map((i) => (typeof i.text === 'string' ? i.text.trim() : i.text))
    .filter((text) => text !== '');
  const common = {
    text: messages.length ? messages.join('\n\n') : null,
    raw: turn.usage ? { type: 'turn.completed', usage: turn.usage } : null,
    mechanism,
  };
  if (outputSchema === undefined) {
    try {
      return outcome({ value: JSON.parse(turn.finalResponse), ...common });
    } catch (error) {
      return outcome({
        error: 'decode_error', message: `finalResponse is not JSON: ${error.message}`, ...common,
      });
    }
  }
  if (turn.finalResponse.trim() === '') {
    return outcome({
      error: 'policy_violation',
      message: 'the turn has no final response',
      diagnostics: [{ path: '', message: 'no structured output candidate' }],
      ...common,
    });
  }
  try {
    return outcome({ value: JSON.parse(turn.finalResponse), ...common });
  } catch (error) {
    return outcome({
      error: 'policy_violation',
      message: `finalResponse is not JSON: ${error.message}`,
      diagnostics: [{ path: '', message: `not a single JSON value: ${error.message}` }],
      ...common,
    });
  }
}

async function answer(message) {
  const { seq, cmd } = message;
  if (cmd === 'start') {
    return { seq, ready: true, version: PROTOCOL_VERSION, implementation: IMPLEMENTATION };
  }
  if (cmd !== 'run') return { seq, errored: true, message: `unknown command ${JSON.stringify(cmd)}` };
  const reason = skipReason(message.request);
  if (reason !== null) return { seq, skipped: true, reason };
  return { seq, outcome: await run(message.request, message.provider) };
}

async function serve() {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    const message = JSON.parse(line);
    if (message.cmd === 'stop') break;
    let reply;
    try {
      reply = await answer(message);
    } catch (error) {
      // Never crash on one scenario: report it and serve the next.
      process.stderr.write(`[codex-sdk-shim] ${message.scenario}: ${error?.stack ?? error}\n`);
      reply = { seq: message.seq, errored: true, message: String(error?.message ?? error) };
    }
    process.stdout.write(`${JSON.stringify(reply)}\n`);
  }
  lines.close();
}

process.stdout.on('error', () => process.exit(0)); // the harness went away
await serve();
process.exit(0);
