#!/usr/bin/env node
// The published Claude Agent SDK for TypeScript as a target of the structured-output harness.
//
//   npm ci --prefix examples/sdk-shims/claude-agent-sdk-ts --omit=optional
//   harness run scenarios --target "claude-agent-sdk-ts=cmd:node examples/sdk-shims/claude-agent-sdk-ts/shim.mjs"
//
// It speaks the harness's JSON-lines target protocol (start, run..., stop; see
// harness/targets/serve.py) and answers each `run` for the claude driver with
//
//   for await (const message of query({ prompt, options: {
//     pathToClaudeCodeExecutable: <fake-claude>, outputFormat: { type: 'json_schema', schema },
//     env, cwd, stderr, abortController } })) ...
//
// The SDK is the system under test, so the shim does what a typical user's
// code does and nothing more: the schema text goes through JSON.parse (the SDK
// takes an object), the result message's `structured_output` is the value,
// never revalidated against the schema; an error result and what the iterator
// throws are mapped to an execution_error with the closest canonical cause.
// The SDK throws plain Errors, so telling them apart means reading their
// messages, as a user must.
//
// The SDK's platform binaries (optional dependencies, a Claude Code build each)
// are not needed: `pathToClaudeCodeExecutable` names the harness's fake, so
// install with --omit=optional.

import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

import { AbortError, query } from '@anthropic-ai/claude-agent-sdk';

const PROTOCOL_VERSION = 1;
const NAME = 'claude-agent-sdk-ts';
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
    new URL('./node_modules/@anthropic-ai/claude-agent-sdk/package.json', import.meta.url),
    'utf-8',
  ),
);

const IMPLEMENTATION = {
  name: NAME,
  version: sdk.version,
  language: 'javascript',
  homepage: 'https://github.com/anthropics/claude-agent-sdk-typescript',
  drivers: ['claude'],
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
  if (request.driver !== 'claude') {
    return `@anthropic-ai/claude-agent-sdk drives Claude Code only, not ${request.driver}`;
  }
  if (request.schema_type != null) {
    return 'schema_type: the SDK takes a JSON Schema object in outputFormat; it derives no '
      + 'schema from a type';
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
    return 'schema_name/schema_description: outputFormat carries only type and schema; the SDK '
      + 'has no name or description to send';
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
function classify(thrown, timedOut) {
  const message = String(thrown?.message ?? thrown);
  if (timedOut || thrown instanceof AbortError) return { cause: 'timeout' };
  const exit = /Claude Code process exited with code (-?\d+)/.exec(message);
  if (exit) return { cause: Number(exit[1]) < 0 ? 'signal' : 'nonzero_exit' };
  if (/Claude Code process terminated by signal/.test(message)) return { cause: 'signal' };
  if (thrown instanceof SyntaxError || thrown instanceof TypeError) {
    // The SDK itself tripped over a message it did not expect (say, an error result
    // without errors[]): all its caller can say is that the stream was not as typed.
    return { cause: 'malformed_protocol' };
  }
  if (/returned an error result|error result/i.test(message)) return { cause: 'turn_failed' };
  return null;
}

/** One run request, as a typical SDK user would write it. */
async function run(request, provider) {
  let outputFormat;
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
    outputFormat = { type: request.schema_format, schema };
    mechanism = 'native';
  }
  const stderr = [];
  const abortController = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abortController.abort();
  }, Math.ceil(request.timeout * 1000));
  const ask = request.approval === 'ask';
  // `env` replaces process.env for the CLI (it is not merged), so pass both.
  const options = {
    pathToClaudeCodeExecutable: provider.executables.claude,
    outputFormat,
    env: { ...process.env, ...provider.env },
    cwd: provider.work,
    stderr: (data) => stderr.push(...String(data).split('\n').filter((l) => l !== '')),
    abortController,
  };
  if (ask) {
    // approval=ask: the harness has no human at hand, so every tool call is refused.
    options.permissionMode = 'default';
    options.canUseTool = async (tool) => ({
      behavior: 'deny', message: `no human available to approve ${tool}`,
    });
  }
  if (request.mutate_schema_after_build && outputFormat !== undefined) {
    // The caller reuses its schema object after building the options (SCH-07).
    outputFormat.schema = { type: 'string', description: 'mutated after build' };
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
  try {
    for await (const message of query({ prompt: request.prompt, options })) {
      if (message.type === 'result') result = message;
    }
  } catch (thrown) {
    const found = classify(thrown, timedOut);
    if (found === null) throw thrown;
    if (found.cause === 'timeout') return failed('timeout', `no result within ${request.timeout} s`);
    const said = String(thrown?.message ?? thrown).trim();
    if (result !== null && (result.is_error || result.subtype !== 'success')) {
      // The error result was yielded before the SDK threw on the exit that follows
      // it: the result's subtype names the cause, as the SDK's types document.
      return failed(resultCause(result.subtype), said, textOf(result));
    }
    return failed(found.cause, said, textOf(result));
  } finally {
    clearTimeout(timer);
  }

  if (result === null) return failed('missing_terminal', 'the SDK yielded no result message');
  if (result.is_error || result.subtype !== 'success') { // an error result, yet no exception
    return failed(resultCause(result.subtype), resultMessage(result), textOf(result));
  }
  const common = { text: textOf(result), mechanism, raw: result }; // the terminal, for audit
  if (outputFormat === undefined) {
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
