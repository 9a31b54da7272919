#!/usr/bin/env node
// The published CodeBuddy Agent SDK (@tencent-ai/agent-sdk) as a target of the
// structured-output harness.
//
//   npm ci --prefix examples/sdk-shims/codebuddy-sdk
//   harness run scenarios --target "codebuddy-sdk=cmd:node examples/sdk-shims/codebuddy-sdk/shim.mjs"
//
// It speaks the harness's JSON-lines target protocol (start, run..., stop; see
// harness/targets/serve.py) and answers each `run` for the codebuddy driver with
//
//   for await (const message of query({ prompt, options: {
//     pathToCodebuddyCode: <fake-codebuddy>, executable: <its interpreter>,
//     extraArgs: { 'json-schema': JSON.stringify(schema) }, env, cwd, stderr,
//     abortController } })) ...
//
// The SDK is the system under test, so the shim does what a typical user's
// code does and nothing more: the schema text goes through JSON.parse, the
// result message's `structured_output` is the value, never revalidated against
// the schema; an error result and what the iterator throws are mapped to an
// execution_error with the closest canonical cause.
//
// Two things a user finds out the hard way, and so does the shim:
//
// - The schema. `Options.outputFormat` is typed ({type: 'json_schema', schema})
//   but 0.3.201 never reads it: no --json-schema reaches the CLI and the
//   initialize request carries no jsonSchema (tests/test_sdk_shims.py proves it
//   on every run). The one way through is the SDK's `extraArgs`, which puts
//   `--json-schema TEXT` on the CLI's command line, the flag CodeBuddy Code reads.
// - The runtime. The SDK runs the CLI as a script under a JavaScript runtime
//   (`node PATH ARGS` unless `executable` names another; only a `.exe` is run
//   directly). The harness's fake is a Python console script, so the shim names
//   the interpreter on its `#!` line as that runtime, which `executable` accepts
//   ("well-known name or absolute path to a runtime binary").

import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

import { ExecutionError, query } from '@tencent-ai/agent-sdk';

const PROTOCOL_VERSION = 1;
const NAME = 'codebuddy-sdk';
// How many of the CLI's last stderr lines go into an error's message.
const STDERR_LINES = 5;
// An error result's subtype, as the canonical cause (anything else: turn_failed).
const FAILURE_CAUSES = { error_max_structured_output_retries: 'max_structured_output_retries' };

// stdout carries protocol replies only.
console.log = console.error;
console.info = console.error;
console.warn = console.error;

const sdk = JSON.parse(
  readFileSync(
    new URL('./node_modules/@tencent-ai/agent-sdk/package.json', import.meta.url),
    'utf-8',
  ),
);

const IMPLEMENTATION = {
  name: NAME,
  version: sdk.version,
  language: 'javascript',
  homepage: 'https://www.npmjs.com/package/@tencent-ai/agent-sdk',
  drivers: ['codebuddy'],
  features: ['native'],
};

/**
 * Whether a capability descriptor allows what the SDK always does: native structured
 * output on the streaming (stream-json) transport, with tool approval natively when the
 * application asks. Such a case needs no negotiation the SDK lacks, so it runs.
 */
function allowsTheOnlyWay(descriptor, approval) {
  if (descriptor.native !== true || descriptor.streaming !== true) return false;
  if (approval !== 'ask') return true;
  return (descriptor.native_hitl ?? descriptor.hitl) === true;
}

/** Why the SDK cannot express `request` at all (null when it can). */
function skipReason(request) {
  if (request.driver !== 'codebuddy') {
    return `@tencent-ai/agent-sdk drives CodeBuddy Code only, not ${request.driver}`;
  }
  if (request.schema_type != null) {
    return 'schema_type: the SDK takes a JSON Schema object; it derives no schema from a type';
  }
  if (request.descriptor != null && !allowsTheOnlyWay(request.descriptor, request.approval)) {
    return 'descriptor: the SDK always asks for structured output natively (--json-schema) on '
      + 'the stream-json transport and negotiates nothing else; this descriptor rules that out';
  }
  if (request.on_invalid === 'return') {
    return 'on_invalid=return: the SDK has no invalid-output policy; it never validates '
      + 'structured_output itself and has no switch that returns an invalid value instead of '
      + 'failing the run';
  }
  if (request.schema_name != null || request.schema_description != null) {
    return 'schema_name/schema_description: the SDK sends the bare schema (outputFormat, had it '
      + 'been read, carries only type and schema); it has no name or description to send';
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

/** The canonical cause of an error result, read the way the SDK's types document it. */
function resultCause(subtype) {
  if (subtype === 'success') return 'api_error'; // is_error on a "success": the API call failed
  return FAILURE_CAUSES[subtype] ?? 'turn_failed';
}

function resultMessage(result) {
  const errors = Array.isArray(result.errors) ? result.errors.map(String) : [];
  const text = typeof result.result === 'string' ? result.result.trim() : '';
  return errors.filter((e) => e.trim() !== '').join('; ') || text || result.subtype;
}

/** The result message's text, when it is one (the protocol's text is a string or null). */
function textOf(result) {
  return typeof result?.result === 'string' ? result.result : null;
}

/** What the iterator threw, as { cause } of an execution_error (null: not the SDK's). */
function classify(thrown) {
  const message = String(thrown?.message ?? thrown);
  // The transport's close reasons, which reject the pending initialize request.
  const exit = /^CLI process exited with code (\S+)/.exec(message);
  if (exit) return { cause: exit[1] === 'null' ? 'signal' : 'nonzero_exit' };
  if (message.startsWith('CLI process stdout closed unexpectedly')) {
    return { cause: 'missing_terminal' };
  }
  if (message.startsWith('Request timeout: ')) return { cause: 'timeout' };
  if (thrown instanceof TypeError) {
    // The SDK itself tripped over a message it did not expect.
    return { cause: 'malformed_protocol' };
  }
  return null; // spawn failures and the like: the shim's environment, not an outcome
}

/** The interpreter named on the `#!` line of `path` (the fake is a Python script). */
function interpreter(path) {
  const head = readFileSync(path, 'utf-8').slice(0, 512).split('\n', 1)[0];
  if (!head.startsWith('#!')) throw new Error(`${path} has no #! line naming its runtime`);
  const [program, ...rest] = head.slice(2).trim().split(/\s+/);
  return { executable: program, executableArgs: rest };
}

/** One run request, as a typical SDK user would write it. */
async function run(request, provider) {
  let schemaText = null;
  let mechanism = null;
  if (request.schema != null) {
    let schema;
    try {
      schema = JSON.parse(request.schema);
    } catch (error) {
      return outcome({
        error: 'invalid_output_schema', message: `schema is not JSON: ${error.message}`,
      });
    }
    mechanism = 'native';
    if (request.mutate_schema_after_build && schema !== null && typeof schema === 'object') {
      // The caller reuses its schema object after building the options (SCH-07): the
      // text is already in extraArgs, so the change cannot reach the CLI.
      schemaText = JSON.stringify(schema);
      schema.type = 'string';
    } else {
      schemaText = JSON.stringify(schema);
    }
  }
  const stderr = [];
  const abortController = new AbortController();
  const executable = provider.executables.codebuddy;
  const options = {
    pathToCodebuddyCode: executable,
    ...interpreter(executable),
    env: { ...provider.env }, // merged over process.env by the SDK
    cwd: provider.work,
    stderr: (data) => stderr.push(...String(data).split('\n').filter((l) => l !== '')),
    abortController,
  };
  if (schemaText !== null) options.extraArgs = { 'json-schema': schemaText };
  if (request.approval === 'ask') {
    // approval=ask: the harness has no human at hand, so every tool call is refused.
    options.permissionMode = 'default';
    options.canUseTool = async (tool) => ({
      behavior: 'deny', message: `no human available to approve ${tool}`,
    });
  }

  const failed = (cause, message, text = null) => {
    const tail = stderr.slice(-STDERR_LINES).join('\n');
    return outcome({
      error: 'execution_error',
      cause,
      message: tail ? `${message}\nstderr: ${tail}` : message,
      text,
      mechanism,
    });
  };

  let result = null;
  const messages = query({ prompt: request.prompt, options });
  const consume = (async () => {
    for await (const message of messages) {
      if (message.type === 'result') result = message;
    }
    return 'done';
  })();
  // abortController is the SDK's documented cancellation, but the iterator only
  // looks at it when the next message arrives: a CLI that prints nothing more is
  // waited for forever. So the deadline is raced, as a user with one must.
  let timer;
  const deadline = new Promise((resolve) => {
    timer = setTimeout(() => resolve('timeout'), Math.ceil(request.timeout * 1000));
  });
  let ended;
  try {
    ended = await Promise.race([consume, deadline]);
  } catch (thrown) {
    if (thrown instanceof ExecutionError) {
      // An is_error result with errors[]: thrown before it is yielded.
      const said = thrown.errors.map(String).join('; ') || thrown.message;
      return failed(resultCause(thrown.subtype), said);
    }
    const found = classify(thrown);
    if (found === null) throw thrown;
    return failed(found.cause, String(thrown?.message ?? thrown).trim(), textOf(result));
  } finally {
    clearTimeout(timer);
  }
  if (ended === 'timeout') {
    abortController.abort();
    consume.catch(() => {}); // whatever it ends with now is nobody's concern
    return failed('timeout', `no result within ${request.timeout} s`, textOf(result));
  }

  if (result === null) {
    // The SDK ends the iteration quietly when the CLI exits: no exit code, no error.
    return failed('missing_terminal', 'the SDK yielded no result message');
  }
  if (result.is_error || result.subtype !== 'success') { // an error result without errors[]
    return failed(resultCause(result.subtype), resultMessage(result), textOf(result));
  }
  const common = { text: textOf(result), mechanism, raw: result }; // the terminal, for audit
  if (schemaText === null) {
    try {
      return outcome({ value: JSON.parse(String(result.result ?? '').trim()), ...common });
    } catch (error) {
      return outcome({ error: 'decode_error', message: `result is not JSON: ${error.message}`, ...common });
    }
  }
  if (!Object.hasOwn(result, 'structured_output') || result.structured_output === undefined) {
    return outcome({
      error: 'policy_violation',
      message: 'the result message has no structured_output',
      diagnostics: [{ path: '', message: 'no structured output candidate' }],
      ...common,
    });
  }
  return outcome({ value: result.structured_output, ...common });
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
      process.stderr.write(`[${NAME}-shim] ${message.scenario}: ${error?.stack ?? error}\n`);
      reply = { seq: message.seq, errored: true, message: String(error?.message ?? error) };
    }
    process.stdout.write(`${JSON.stringify(reply)}\n`);
  }
  lines.close();
}

process.stdout.on('error', () => process.exit(0)); // the harness went away
await serve();
process.exit(0);
