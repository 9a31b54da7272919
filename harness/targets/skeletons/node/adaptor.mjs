#!/usr/bin/env node
// __NAME__: an adaptor for the structured-output harness, in Node.js 20 or
// later (standard library only). Written by `harness init adaptor --lang node`.
//
// Run it against the harness's catalogue from the folder you ran init in:
//
//     __RUN__
//
// It speaks the harness's JSON-lines protocol on stdin/stdout (one request a
// line, one reply a line; log to stderr) and drives the agent CLI each request
// names. Under the harness, `provider.executables` names a fake CLI to run in
// place of the real one and `provider.env` tells it what to print; in
// production, run the real CLI (the command `CLIS` names, on PATH): see
// `launch` and `CLIS`, where the CLI call is made.
//
// What it does today: runs without a schema, decoding the CLI's assistant text
// as one JSON value, and reports execution failures. A request with a schema is
// answered `skipped`; add schema intake, negotiation and validation in `run`
// where it says so (docs/adaptors.md, docs/outcome.md). Cases for the
// `schema_type` feature are skipped by the harness, because IMPLEMENTATION does
// not announce it. JSON.parse rounds integers beyond 2^53: a real adaptor needs
// a parser that keeps them.

import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

// Each CLI (the request's driver): its command on PATH in production, its arguments
// after the executable and before the prompt, and which of READERS reads its output.
// Written by `harness init` from the harness's registry of agent CLIs.
const CLIS = {}; // __CLIS__

const IMPLEMENTATION = {
  name: '__NAME__',
  version: '0.1.0',
  language: 'javascript',
  drivers: Object.keys(CLIS),
  features: [],
};

/** The provider run failed: `cause` is the outcome's execution_error cause. */
class Failed extends Error {
  constructor(cause, message, text = null) {
    super(message);
    this.cause = cause;
    this.text = text;
  }
}

/**
 * Run the CLI in its own process group, so the deadline kills what it started
 * too. Resolves to { stdout (a Buffer), code, signal, timedOut }.
 */
function launch(argv, provider, timeout) {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), {
      env: { ...process.env, ...provider.env },
      cwd: provider.work,
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: true,
    });
    const chunks = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }, timeout * 1000);
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ stdout: Buffer.concat(chunks), code, signal, timedOut });
    });
  });
}

/** Exactly one JSON value, else a malformed protocol. */
function loads(text, where) {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Failed('malformed_protocol', `${where} is not JSON: ${error.message}`);
  }
}

/** `codex exec --json`: the completed agent messages, and the turn's last event. */
function readCodex(stdout) {
  const messages = [];
  let terminal = null;
  let failure = null;
  stdout.split('\n').forEach((line, index) => {
    if (!line.trimStart().startsWith('{')) return; // blank lines, and notes between events
    const event = loads(line, `line ${index + 1}`);
    const item = event.item;
    if (event.type === 'item.completed' && item?.type === 'agent_message') {
      messages.push(item.text);
    } else if (event.type === 'turn.completed' || event.type === 'turn.failed') {
      terminal = event;
    }
    if (event.type === 'turn.failed' || event.type === 'error') {
      // An error poisons the turn, whatever follows.
      failure ??= JSON.stringify(event.error ?? event.message ?? null);
    }
  });
  const text = messages.map((m) => m.trim()).filter((m) => m !== '').join('\n\n') || null;
  if (failure !== null) throw new Failed('turn_failed', failure, text);
  return { text, raw: terminal };
}

/** Claude Code, Cursor, CodeBuddy: one result record (CodeBuddy: an array of records). */
function readResult(stdout) {
  if (stdout.trim() === '') return { text: null, raw: null };
  const document = loads(stdout, 'stdout');
  const record = Array.isArray(document) ? document.at(-1) : document;
  if (record?.type !== 'result') return { text: null, raw: null };
  const text = typeof record.result === 'string' ? record.result : null;
  if (record.subtype !== 'success') {
    throw new Failed('turn_failed', `result subtype ${JSON.stringify(record.subtype)}`, text);
  }
  if (record.is_error) throw new Failed('api_error', text || 'the CLI reported an API error', text);
  return { text, raw: record };
}

// How a CLI's batch output is read: Codex's JSON lines, or a Claude-style result.
const READERS = { codex: readCodex, result: readResult };

/** The canonical outcome (docs/outcome.md); a `value` key means a value was decoded. */
function outcome(fields) {
  const error = fields.error ?? null;
  return {
    status: error ? 'error' : 'ok',
    error,
    cause: fields.cause ?? null,
    message: fields.message ?? null,
    value: fields.value ?? null,
    has_value: Object.hasOwn(fields, 'value'),
    text: fields.text ?? null,
    mechanism: null,
    diagnostics: [],
    raw: fields.raw ?? null,
    stdout: fields.stdout ?? null,
  };
}

/** One run request: { outcome }, or { skipped, reason } for what this adaptor does not do yet. */
async function run(request, provider) {
  if (request.schema !== null) {
    // Add structured output here: check the schema, pass it to the CLI (codex
    // --output-schema FILE, claude --json-schema TEXT, or in the prompt), then
    // validate the candidate and apply request.on_invalid.
    return { skipped: true, reason: '__NAME__ does not implement schemas yet' };
  }
  const driver = request.driver;
  // In production: the CLI on PATH, CLIS[driver][0] (cursor-agent for cursor).
  const executable = provider.executables[driver];
  const [, args, reader] = CLIS[driver];
  const argv = [executable, ...args, request.prompt];
  const finished = await launch(argv, provider, request.timeout);
  const stdout = finished.stdout.toString('utf-8');
  let text;
  let raw;
  try {
    if (finished.timedOut) throw new Failed('timeout', `no answer within ${request.timeout}s`);
    if (finished.signal) throw new Failed('signal', `the CLI was killed by ${finished.signal}`);
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(finished.stdout);
    } catch {
      throw new Failed('malformed_protocol', 'stdout is not UTF-8');
    }
    ({ text, raw } = READERS[reader](stdout));
    if (finished.code !== 0) {
      throw new Failed('nonzero_exit', `the CLI exited with ${finished.code}`, text);
    }
    if (raw === null) {
      throw new Failed('missing_terminal', 'the CLI ended without its final event', text);
    }
  } catch (error) {
    if (!(error instanceof Failed)) throw error;
    const { cause, message } = error;
    return { outcome: outcome({ error: 'execution_error', cause, message, text: error.text, stdout }) };
  }
  // Without a schema, Decode parses the trimmed assistant text as one JSON value.
  let value;
  try {
    value = JSON.parse((text ?? '').trim());
  } catch (error) {
    const message = `cannot decode the text as JSON: ${error.message}`;
    return { outcome: outcome({ error: 'decode_error', message, text, raw, stdout }) };
  }
  return { outcome: outcome({ value, text, raw, stdout }) };
}

async function serve() {
  const reply = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    if (line.trim() === '') continue;
    const message = JSON.parse(line);
    const { seq, cmd } = message;
    if (cmd === 'stop') return;
    if (cmd === 'start') {
      reply({ seq, ready: true, version: 1, implementation: IMPLEMENTATION });
    } else if (cmd === 'run') {
      try {
        reply({ seq, ...(await run(message.request, message.provider)) });
      } catch (error) {
        // One broken case must not end the rest.
        console.error(`${message.scenario}: ${error?.stack ?? error}`);
        reply({ seq, errored: true, message: String(error?.message ?? error) });
      }
    } else {
      reply({ seq, errored: true, message: `unknown command ${JSON.stringify(cmd)}` });
    }
  }
}

await serve();
process.exit(0);
