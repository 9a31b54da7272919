// The four agent CLIs: how to call each one and how to read what it printed.
//
// A driver's parse() turns a finished process into
//   { text, raw, candidate, cause, message }
// where `candidate` (native mechanism only) is { value } or { text } or null,
// and `cause` names an execution failure, most specific first:
// timeout, signal, malformed_protocol, turn_failed / api_error /
// max_structured_output_retries, nonzero_exit, missing_terminal.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { JSONError, MAX_DEPTH, isObject, parseExact, tooDeep } from './json.mjs';

/** The provider broke its own output protocol. */
class Malformed extends Error {}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function decodeStdout(bytes) {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new Malformed('stdout is not valid UTF-8');
  }
}

/**
 * Stdout as JSON objects, one a line; blank lines skipped. With `allowProse`,
 * lines that do not start with "{" are transcript text and skipped too.
 */
function jsonLines(bytes, { allowProse }) {
  const events = [];
  decodeStdout(bytes)
    .split('\n')
    .forEach((line, index) => {
      const body = line.trim();
      if (body === '' || (allowProse && !body.startsWith('{'))) return;
      if (tooDeep(body)) {
        throw new Malformed(`line ${index + 1} is nested deeper than ${MAX_DEPTH} levels`);
      }
      let event;
      try {
        event = JSON.parse(body);
      } catch (error) {
        throw new Malformed(`line ${index + 1} is not JSON: ${error.message}`);
      }
      if (!isObject(event)) throw new Malformed(`line ${index + 1} is not a JSON object`);
      events.push(event);
    });
  return events;
}

/** Failures visible without reading stdout. */
function processFailure(finished) {
  if (finished.timedOut) {
    return { cause: 'timeout', message: 'provider timed out and was killed' };
  }
  if (finished.signal) {
    const number = finished.signalNumber ?? finished.signal;
    return { cause: 'signal', message: `provider died by signal ${number} (${finished.signal})` };
  }
  return null;
}

function exitFailure(finished) {
  return { cause: 'nonzero_exit', message: `provider exited with status ${finished.code}` };
}

function show(value) {
  return typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
}

// -- Codex ------------------------------------------------------------------

const ITEM_EVENTS = new Set(['item.started', 'item.updated', 'item.completed']);

/**
 * `codex exec --json`: the schema goes in a file; the candidate is the text of
 * the last completed agent_message, only after turn.completed and exit 0.
 */
const codex = {
  name: 'codex',
  command: 'codex',
  // One transport here: `codex exec --json` (rich "no; batch is negotiated").
  rich: false,

  argv(exe, plan, schema, prompt, work) {
    const argv = [exe, 'exec', '--json', '--skip-git-repo-check'];
    if (schema && plan.mechanism === 'native') {
      const file = join(work, 'output-schema.json');
      writeFileSync(file, schema.text, 'utf-8');
      argv.push('--output-schema', file);
    }
    argv.push(prompt);
    return argv;
  },

  parse(finished) {
    const early = processFailure(finished);
    if (early) return early;
    const messages = [];
    // All completed messages are kept: each trimmed, blank ones dropped,
    // joined with a blank line.
    const joined = () => {
      const kept = messages.map((m) => m.trim()).filter((m) => m !== '');
      return kept.length ? kept.join('\n\n') : null;
    };
    let terminal = null;
    let failure = null;
    let threadStarted = false;
    try {
      for (const event of jsonLines(finished.stdout, { allowProse: true })) {
        const type = event.type;
        if (terminal) throw new Malformed(`event ${JSON.stringify(type)} after the terminal event`);
        if (type === 'thread.started') {
          if (threadStarted || typeof event.thread_id !== 'string') {
            throw new Malformed('thread.started repeated or without a thread_id');
          }
          threadStarted = true;
        } else if (ITEM_EVENTS.has(type)) {
          if (!threadStarted) throw new Malformed(`${type} before thread.started`);
          const item = event.item;
          if (!isObject(item)) throw new Malformed(`${type} without an item object`);
          if (type === 'item.completed' && item.type === 'agent_message') {
            if (typeof item.text !== 'string') {
              throw new Malformed('agent_message text is not a string');
            }
            messages.push(item.text);
          }
        } else if ((type === 'turn.completed' || type === 'turn.failed') && !threadStarted) {
          throw new Malformed(`${type} before thread.started`);
        } else if (type === 'turn.completed') {
          terminal = event;
        } else if (type === 'turn.failed') {
          terminal = event;
          const error = event.error;
          failure = show(isObject(error) ? error.message : error);
        } else if (type === 'error') {
          // An error line poisons the turn even if turn.completed follows.
          failure = failure || show(event.message);
        }
        // Anything else (warnings, plan deltas, a stray result envelope) is ignored.
      }
    } catch (error) {
      if (!(error instanceof Malformed)) throw error;
      return { text: joined(), cause: 'malformed_protocol', message: error.message };
    }
    const text = joined();
    const raw = terminal;
    if (failure !== null) return { text, raw, cause: 'turn_failed', message: failure };
    if (finished.code !== 0) return { text, raw, ...exitFailure(finished) };
    if (!terminal) return { text, cause: 'missing_terminal', message: 'no turn.completed event' };
    const last = messages.length ? messages[messages.length - 1] : '';
    return { text, raw, candidate: last.trim() ? { text: last } : null };
  },
};

// -- Claude-like CLIs ending with a result record ------------------------------

const FAILURE_CAUSES = { error_max_structured_output_retries: 'max_structured_output_retries' };

/** Record types that end a run; nothing may follow one. */
const TERMINALS = new Set(['result', 'error']);

/** Whether a record ends a Claude Code or CodeBuddy run. */
function endsClaude(record) {
  return TERMINALS.has(record.type);
}

/**
 * Whether a record ends a Cursor run: only result/success; a result of another
 * subtype, or an error record, is an unknown record (seed-001.md, "Cursor terminals").
 */
function endsCursor(record) {
  return record.type === 'result' && record.subtype === 'success';
}

/**
 * The records of a run: one object (json; CodeBuddy may print one array of
 * records), or JSON lines (stream-json, and newline-delimited json).
 */
function records(bytes, plan, { name, arrayDocument, allowProse }) {
  if (plan.transport === 'batch') {
    let whole;
    let parsed = false;
    try {
      whole = parseExact(decodeStdout(bytes));
      parsed = true;
    } catch (error) {
      if (!(error instanceof JSONError || error instanceof Malformed)) throw error;
    }
    if (parsed) {
      if (isObject(whole)) return [whole];
      if (!Array.isArray(whole) || !arrayDocument) {
        throw new Malformed(`${name} printed a JSON ${whole === null ? 'null' : typeof whole}`);
      }
      if (whole.length === 0 || !whole.every(isObject)) {
        throw new Malformed('the JSON array is empty or holds a non-object');
      }
      return whole;
    }
  }
  return jsonLines(bytes, { allowProse });
}

/** Every record typed, one session, nothing after the terminal record. */
function checkProtocol(all, ends) {
  let session = null;
  all.forEach((record, index) => {
    if (typeof record.type !== 'string' || record.type === '') {
      throw new Malformed(`record ${index + 1} has no type`);
    }
    if (ends(record) && index !== all.length - 1) {
      throw new Malformed(`a record follows the ${record.type} record`);
    }
    const current = record.session_id;
    if (typeof current === 'string' && current !== '') {
      if (session !== null && current !== session) {
        throw new Malformed('session_id changed during the run');
      }
      session = current;
    }
  });
}

/** The terminal's result string: Claude's and CodeBuddy's assistant text. */
function resultText(all) {
  const last = all[all.length - 1];
  return last && typeof last.result === 'string' ? last.result : null;
}

/**
 * Cursor's assistant text: its fragments joined, else the result string of a
 * final result/success. An assistant record without a content list is malformed.
 */
function fragmentText(all) {
  const fragments = [];
  for (const record of all) {
    if (record.type !== 'assistant') continue;
    const content = isObject(record.message) ? record.message.content : null;
    if (!Array.isArray(content)) {
      throw new Malformed('an assistant record without a message content list');
    }
    for (const block of content) {
      if (isObject(block) && block.type === 'text' && typeof block.text === 'string') {
        fragments.push(block.text);
      }
    }
  }
  const joined = fragments.join('');
  if (joined !== '') return joined;
  const last = all[all.length - 1];
  return last && last.type === 'result' && last.subtype === 'success' ? resultText(all) : null;
}

function resultDriver({ name, command, nativeSchema = true, arrayDocument = false,
  allowProse = false, extraFlags = [], streamFlags = ['--verbose'], text = resultText,
  ends = endsClaude }) {
  function requireSuccessFields(result) {
    const checks = [
      ['is_error', typeof result.is_error === 'boolean'],
      ['result', typeof result.result === 'string'],
      ['session_id', typeof result.session_id === 'string' && result.session_id !== ''],
    ];
    for (const [key, ok] of checks) {
      if (!ok) throw new Malformed(`${name} successful terminal result is missing required ${key}`);
    }
  }

  function candidateOf(result) {
    const value = result.structured_output;
    if (!nativeSchema || value === null || value === undefined) return null;
    // JSON text holding the value is the value; other text is a string value.
    if (typeof value === 'string') {
      try {
        return { value: parseExact(value) };
      } catch (error) {
        if (!(error instanceof JSONError)) throw error;
      }
    }
    return { value };
  }

  function terminal(record, finished, kept) {
    const raw = record;
    if (record.type === 'error') {
      const message = typeof record.message === 'string' ? record.message : 'provider error record';
      return { text: kept, raw, cause: 'turn_failed', message };
    }
    if (record.subtype !== 'success') {
      const message = Array.isArray(record.errors)
        ? record.errors.map(show).join('; ')
        : show(record.subtype ?? null);
      const cause = FAILURE_CAUSES[record.subtype] ?? 'turn_failed';
      return { text: kept, raw, cause, message };
    }
    requireSuccessFields(record);
    if (record.is_error) {
      const message = kept || `API error ${record.api_error_status}`;
      return { text: kept, raw, cause: 'api_error', message };
    }
    if (finished.code !== 0) return { text: kept, raw, ...exitFailure(finished) };
    return { text: kept, raw, candidate: candidateOf(record) };
  }

  return {
    name,
    command,
    rich: true,

    argv(exe, plan, schema, prompt) {
      const format = plan.transport === 'rich' ? 'stream-json' : 'json';
      const argv = [exe, '-p', '--output-format', format];
      if (format === 'stream-json') argv.push(...streamFlags);
      if (schema && plan.mechanism === 'native') argv.push('--json-schema', schema.text);
      argv.push(...extraFlags, prompt);
      return argv;
    },

    parse(finished, plan) {
      const early = processFailure(finished);
      if (early) return early;
      try {
        const all = records(finished.stdout, plan, { name, arrayDocument, allowProse });
        checkProtocol(all, ends);
        const kept = text(all);
        const last = all[all.length - 1];
        if (last && ends(last)) return terminal(last, finished, kept);
        if (finished.code !== 0) return { text: kept, ...exitFailure(finished) };
        return { text: kept, cause: 'missing_terminal', message: 'no result record' };
      } catch (error) {
        if (!(error instanceof Malformed)) throw error;
        return { cause: 'malformed_protocol', message: error.message };
      }
    },
  };
}

/** Claude Code: --json-schema in, structured_output out; stream-json needs --verbose. */
const claude = resultDriver({ name: 'claude', command: 'claude' });

/** CodeBuddy: Claude's shape; its json transport may print one array of records. */
const codebuddy = resultDriver({
  name: 'codebuddy',
  command: 'codebuddy',
  arrayDocument: true,
  extraFlags: ['-y'],
});

/**
 * Cursor: no schema flag, no structured_output, no --verbose; prompt validation
 * only, of its assistant fragments; plain lines between records are transcript.
 */
const cursor = resultDriver({
  name: 'cursor',
  command: 'cursor-agent',
  nativeSchema: false,
  allowProse: true,
  streamFlags: [],
  text: fragmentText,
  ends: endsCursor,
});

export const DRIVERS = Object.freeze({ codex, claude, cursor, codebuddy });
