#!/usr/bin/env node
// zoo-js: an adaptor for Codex and Cursor written from docs/ alone
// (docs/adaptors.md, docs/outcome.md, docs/seed-001.md), the JavaScript half
// of the bug zoo (tests/zoo/zoo.py). Realistic single bugs are switched on
// by name: ZOO_BUG=NAME (or --bug NAME); `bug(NAME)` marks where each lives
// and, with ZOO_TRACE=FILE, records that a scenario reached it.
//
//   harness run scenarios/agent-cli --target 'zoo-js=cmd:node tests/zoo/node/adaptor.mjs'
//
// Validation uses ajv (Draft 2020-12), from the Node example's node_modules.

import { spawn } from 'node:child_process';
import { appendFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const require = createRequire(new URL('../../../examples/node-adaptor/package.json', import.meta.url));
const Ajv2020 = require('ajv/dist/2020.js').default;

export const BUGS = {
  'js-fence-unwrap': 'strips Markdown fences before JSON.parse of prompt-validation text',
  'js-first-line-only': 'decodes only the first line of the text',
  'js-falsy-is-none': 'treats every falsy value (0, false, "", null) as no value',
  'js-null-is-none': 'treats a decoded null as no value',
  'js-last-message-is-text': 'keeps only the last Codex agent message as the text',
  'js-turn-failed-ignored': 'ignores turn.failed when an agent message came before',
  'js-no-terminal-check': 'never asks for turn.completed',
  'js-exit-code-ignored': 'ignores the exit status',
  'js-signal-ignored': 'treats death by signal as a clean exit',
  'js-policy-return-ok': 'with on_invalid=return reports status ok',
  'js-diagnostics-dropped': 'reports a policy violation without its diagnostics',
  'js-audit-dropped': 'does not keep the provider value for audit',
  'js-schema-in-prompt-always': 'puts the instruction in the prompt under native Codex too',
  'js-prompt-before-instruction': 'puts the caller prompt before the instruction',
  'js-cursor-result-text': 'reads Cursor text from the result, not the fragments',
  'js-cursor-fragments-newline': 'joins Cursor fragments with newlines',
  'js-ask-ignored': 'does not hold Ask approvals to the HITL flags',
  'js-cursor-error-subtype-terminal': 'ends a Cursor run on a result that is not result/success',
};

const IMPLEMENTATION = {
  name: 'zoo-js',
  version: '1.0.0',
  language: 'javascript',
  drivers: ['codex', 'cursor'],
  features: ['native', 'prompt', 'stream'],
};

let current = '';
function bug(name) {
  if (!(name in BUGS)) throw new Error(`unknown bug ${name}`);
  if (process.env.ZOO_TRACE) appendFileSync(process.env.ZOO_TRACE, `${current}\t${name}\n`);
  return process.env.ZOO_BUG === name;
}

class Refused extends Error {
  constructor(error, message) { super(message); this.error = error; }
}

function parseOne(text) {
  let t = text;
  if (bug('js-fence-unwrap')) {
    const m = /^\s*```[a-z]*\n([\s\S]*)\n```\s*$/.exec(t);
    if (m) [, t] = m;
  }
  if (bug('js-first-line-only')) [t] = t.trim().split('\n');
  if (t.startsWith('\ufeff')) throw new SyntaxError('a byte-order mark is not JSON');
  return JSON.parse(t);
}

function isNone(value) {
  if (bug('js-falsy-is-none') && !value) return true;
  if (bug('js-null-is-none') && value === null) return true;
  return false;
}

function intake(request) {
  if (request.schema_format !== 'json_schema') throw new Refused('invalid_output_schema', 'unsupported format');
  let document;
  try {
    document = JSON.parse(request.schema);
  } catch (error) {
    throw new Refused('invalid_output_schema', `schema: ${error.message}`);
  }
  if (typeof document !== 'boolean' && (document === null || typeof document !== 'object' || Array.isArray(document))) {
    throw new Refused('invalid_output_schema', 'a schema is an object or a boolean');
  }
  let validate;
  try {
    validate = new Ajv2020({ strict: false, allErrors: true, validateFormats: false }).compile(document);
  } catch (error) {
    throw new Refused('invalid_output_schema', `schema does not compile: ${error.message}`);
  }
  const trim = (s) => (s === null || s === undefined || s.trim() === '' ? null : s.trim());
  return { text: request.schema, validate, name: trim(request.schema_name), description: trim(request.schema_description) };
}

const BUILTIN = {
  codex: { native: true, prompt: true, run: true, streaming: false },
  cursor: { native: false, prompt: true, run: true, streaming: true },
};

function negotiate(request, schema) {
  const rich = request.driver === 'cursor';
  if (!schema) return { mechanism: null, transport: rich ? 'stream-json' : 'json' };
  const d = request.descriptor ?? BUILTIN[request.driver];
  const ask = request.approval === 'ask' && !bug('js-ask-ignored');
  const transports = [];
  if (d.run) {
    if (rich && d.streaming) transports.push('stream-json');
    if (!(ask && rich)) transports.push('json');
  }
  for (const transport of transports) {
    for (const mechanism of ['native', 'prompt']) {
      if (!d[mechanism]) continue;
      if (mechanism === 'native' && request.driver === 'cursor') continue;
      if (ask && !(d.hitl || d[`${mechanism}_hitl`])) continue;
      return { mechanism, transport };
    }
  }
  throw new Refused('structured_output_unsupported', ask ? 'Ask needs HITL' : 'no transport can carry a mechanism');
}

function instruction(schema, prompt) {
  const lines = ['Answer with one JSON value only: no Markdown fences, no prose. JSON Schema:', schema.text];
  if (schema.name) lines.push(`Schema name: ${schema.name}`);
  if (schema.description) lines.push(`Schema description: ${schema.description}`);
  if (bug('js-prompt-before-instruction')) return [prompt, '', ...lines].join('\n');
  return [...lines, '', prompt].join('\n');
}

function argv(request, provider, plan, schema) {
  const exe = provider.executables[request.driver];
  let prompt = request.prompt;
  if (schema && (plan.mechanism === 'prompt' || (plan.mechanism === 'native' && bug('js-schema-in-prompt-always')))) {
    prompt = instruction(schema, prompt);
  }
  if (request.driver === 'codex') {
    const args = ['exec', '--json', '--skip-git-repo-check'];
    if (plan.mechanism === 'native') {
      const file = join(provider.work, 'schema.json');
      writeFileSync(file, schema.text);
      args.push('--output-schema', file);
    }
    return [exe, [...args, prompt]];
  }
  return [exe, ['-p', '--output-format', plan.transport, prompt]];
}

function launch([exe, args], provider, timeout) {
  return new Promise((resolve) => {
    const child = spawn(exe, args, {
      env: { ...process.env, ...provider.env }, cwd: provider.work, stdio: ['ignore', 'pipe', 'ignore'], detached: true,
    });
    const chunks = [];
    let timedOut = false;
    const timer = setTimeout(() => { timedOut = true; try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ } }, timeout * 1000);
    child.stdout.on('data', (c) => chunks.push(c));
    child.on('error', () => {});
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      resolve({ stdout: Buffer.concat(chunks), code, signal: sig, timedOut });
    });
  });
}

const CAUSES = ['timeout', 'signal', 'malformed_protocol', 'turn_failed', 'api_error', 'max_structured_output_retries', 'nonzero_exit', 'missing_terminal'];

class Reading {
  constructor() { this.text = null; this.raw = null; this.candidate = undefined; this.terminal = false; this.cause = null; this.message = null; }
  fail(cause, message) {
    if (this.cause === null || CAUSES.indexOf(cause) < CAUSES.indexOf(this.cause)) { this.cause = cause; this.message = message; }
  }
}

function records(stdout, r, skipPlain) {
  const out = [];
  stdout.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    if (skipPlain && !line.trimStart().startsWith('{')) return;
    try { out.push([i + 1, JSON.parse(line)]); } catch { r.fail('malformed_protocol', `line ${i + 1} is not JSON`); }
  });
  return out;
}

function readCodex(stdout, r) {
  const messages = [];
  let thread = false;
  let seenMessage = false;
  const items = ['item.started', 'item.updated', 'item.completed'];
  for (const [n, e] of records(stdout, r, true)) {
    if (e === null || typeof e !== 'object') continue;
    const kind = e.type;
    if (r.terminal) { r.fail('malformed_protocol', `line ${n}: ${kind} after the terminal`); continue; }
    if (kind === 'thread.started') {
      if (thread || typeof e.thread_id !== 'string' || !e.thread_id) r.fail('malformed_protocol', `line ${n}: bad thread`);
      thread = true;
      continue;
    }
    if ((items.includes(kind) || kind?.startsWith?.('turn.')) && !thread) { r.fail('malformed_protocol', `line ${n}: before thread.started`); continue; }
    if (items.includes(kind)) {
      if (e.item === null || typeof e.item !== 'object' || Array.isArray(e.item)) { r.fail('malformed_protocol', `line ${n}: item`); continue; }
      if (kind === 'item.completed' && e.item.type === 'agent_message') {
        if (typeof e.item.text !== 'string') { r.fail('malformed_protocol', `line ${n}: text`); continue; }
        messages.push(e.item.text);
        seenMessage = true;
      }
    } else if (kind === 'turn.completed') {
      r.terminal = true; r.raw = e;
    } else if (kind === 'turn.failed') {
      r.terminal = true; r.raw = e;
      if (!(seenMessage && bug('js-turn-failed-ignored'))) r.fail('turn_failed', JSON.stringify(e.error));
    } else if (kind === 'error') {
      r.fail('turn_failed', String(e.message));
    }
  }
  let kept = messages.map((m) => m.trim()).filter((m) => m);
  if (bug('js-last-message-is-text')) kept = kept.slice(-1);
  r.text = kept.length ? kept.join('\n\n') : null;
  const last = messages.at(-1);
  if (last !== undefined && last.trim()) r.candidate = last;
}

function readCursor(stdout, transport, r) {
  let list;
  if (transport === 'json') {
    try { list = [[1, JSON.parse(stdout)]]; } catch { if (stdout.trim()) r.fail('malformed_protocol', 'not one JSON document'); list = []; }
  } else {
    list = records(stdout, r, true);
  }
  const fragments = [];
  let session = null;
  for (const [n, rec] of list) {
    if (rec === null || typeof rec !== 'object' || Array.isArray(rec) || typeof rec.type !== 'string' || !rec.type) { r.fail('malformed_protocol', `record ${n}`); continue; }
    if (r.terminal) { r.fail('malformed_protocol', `record ${n} after the terminal`); continue; }
    if (typeof rec.session_id === 'string' && rec.session_id) {
      if (session !== null && session !== rec.session_id) r.fail('malformed_protocol', 'session changed');
      session ??= rec.session_id;
    }
    if (rec.type === 'assistant') {
      const content = rec.message !== null && typeof rec.message === 'object' ? rec.message.content : undefined;
      if (!Array.isArray(content)) { r.fail('malformed_protocol', `record ${n}: assistant without content`); continue; }
      for (const block of content) if (block?.type === 'text' && typeof block.text === 'string') fragments.push(block.text);
    } else if (rec.type === 'error') {
      r.terminal = true; r.raw = rec; r.fail('turn_failed', String(rec.message ?? 'error'));
    } else if (rec.type === 'result') {
      // Only result/success ends a Cursor run; another subtype is an unknown record.
      if (rec.subtype !== 'success' && !bug('js-cursor-error-subtype-terminal')) continue;
      r.terminal = true; r.raw = rec;
      const result = typeof rec.result === 'string' ? rec.result : null;
      r.text = result;
      if (rec.subtype !== 'success') { r.fail('turn_failed', `subtype ${rec.subtype}`); continue; }
      if (typeof rec.is_error !== 'boolean' || result === null || !rec.session_id) { r.fail('malformed_protocol', 'success fields'); continue; }
      if (rec.is_error) r.fail('api_error', result || 'API error');
    }
  }
  if (fragments.length && !bug('js-cursor-result-text')) r.text = fragments.join(bug('js-cursor-fragments-newline') ? '\n' : '');
}

function outcome(f) {
  const has = (k) => Object.hasOwn(f, k);
  return {
    status: f.error ? 'error' : 'ok', error: f.error ?? null, cause: f.cause ?? null, message: f.message ?? null,
    value: has('value') ? f.value : null, has_value: has('value'), text: f.text ?? null, mechanism: f.mechanism ?? null,
    diagnostics: f.diagnostics ?? [], raw: f.raw ?? null, stdout: f.stdout ?? null,
    audit_value: has('audit') ? f.audit : null, has_audit_value: has('audit'),
  };
}

function leaves(errors) {
  const out = new Map();
  for (const e of errors ?? []) {
    if (['anyOf', 'oneOf'].includes(e.keyword)) continue;
    const d = { path: e.instancePath, keyword: e.keyword, message: e.message };
    out.set(JSON.stringify([d.path, d.keyword, d.message]), d);
  }
  return [...out.values()];
}

async function runRequest(request, provider) {
  let schema = null;
  let plan;
  try {
    if (request.schema !== null) schema = intake(request);
    plan = negotiate(request, schema);
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    return outcome({ error: error.error, message: error.message });
  }
  const done = await launch(argv(request, provider, plan, schema), provider, request.timeout);
  const stdout = done.stdout.toString('utf-8');
  const common = { mechanism: plan.mechanism, stdout };
  if (done.timedOut) return outcome({ error: 'execution_error', cause: 'timeout', message: 'deadline', ...common });
  if (done.signal && !bug('js-signal-ignored')) return outcome({ error: 'execution_error', cause: 'signal', message: done.signal, ...common });
  const r = new Reading();
  if (stdout.includes('\ufffd') && !done.stdout.toString('latin1').includes('\u00ef\u00bf\u00bd')) r.fail('malformed_protocol', 'not UTF-8');
  if (request.driver === 'codex') readCodex(stdout, r); else readCursor(stdout, plan.transport, r);
  if (done.code !== 0 && done.code !== null && !bug('js-exit-code-ignored')) r.fail('nonzero_exit', `exit ${done.code}`);
  if (!r.terminal && !bug('js-no-terminal-check')) r.fail('missing_terminal', 'no terminal event');
  Object.assign(common, { text: r.text, raw: r.raw });
  if (r.cause) return outcome({ error: 'execution_error', cause: r.cause, message: r.message, ...common });
  if (!schema) {
    try { return outcome({ value: parseOne((r.text ?? '').trim()), ...common }); } catch (error) {
      return outcome({ error: 'decode_error', message: `text is not JSON: ${error.message}`, ...common });
    }
  }
  const given = plan.mechanism === 'prompt' ? r.text : r.candidate;
  let diagnostics;
  let audit = {};
  let value;
  if (given === null || given === undefined) {
    diagnostics = [{ path: '', keyword: null, message: 'no structured output candidate' }];
  } else {
    try {
      value = parseOne(given);
    } catch (error) {
      diagnostics = [{ path: '', keyword: null, message: `not a single JSON value: ${error.message}` }];
    }
    if (!diagnostics && isNone(value)) diagnostics = [{ path: '', keyword: null, message: 'no structured output candidate' }];
    else if (!diagnostics) {
      if (!bug('js-audit-dropped')) audit = { audit: value };
      diagnostics = schema.validate(value) ? [] : leaves(schema.validate.errors);
    }
  }
  if (!diagnostics.length) return outcome({ value, ...audit, ...common });
  const error = request.on_invalid === 'return' ? 'decode_error' : 'policy_violation';
  if (error === 'decode_error' && bug('js-policy-return-ok')) return outcome({ ...audit, diagnostics, ...common });
  if (bug('js-diagnostics-dropped')) diagnostics = [];
  return outcome({ error, message: 'invalid structured output', diagnostics, ...audit, ...common });
}

async function serve() {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  const reply = (m) => process.stdout.write(`${JSON.stringify(m)}\n`);
  for await (const line of lines) {
    if (!line.trim()) continue;
    const message = JSON.parse(line);
    const { seq, cmd } = message;
    if (cmd === 'stop') break;
    if (cmd === 'start') { reply({ seq, ready: true, version: 1, implementation: IMPLEMENTATION }); continue; }
    current = message.scenario ?? '';
    try {
      reply({ seq, outcome: await runRequest(message.request, message.provider) });
    } catch (error) {
      process.stderr.write(`${current}: ${error?.stack ?? error}\n`);
      reply({ seq, errored: true, message: String(error?.message ?? error) });
    }
  }
}

const args = process.argv.slice(2);
if (args[0] === '--list-bugs') {
  process.stdout.write(`${JSON.stringify(BUGS)}\n`);
} else {
  if (args[0] === '--bug') process.env.ZOO_BUG = args[1];
  await serve();
}
