// One run, as the consumer sees it:
// intake → negotiate → launch → parse → validate → policy → decode.
// The result is always an outcome (or a skip); a misbehaving provider never throws.

import { DRIVERS } from './drivers.mjs';
import { JSONError, parseExact } from './json.mjs';
import { launch } from './launch.mjs';
import { Refused, descriptorFor, negotiate } from './negotiate.mjs';
import { SchemaRejected, diagnose, intake } from './schema.mjs';

/** The exact-JSON instruction that prompt validation puts before the prompt. */
export function instruction(schema, prompt) {
  const lines = [
    'Answer with exactly one JSON value and nothing else: no Markdown code fences, '
      + 'no prose, no text before or after the value.',
  ];
  if (schema.name) lines.push(`Schema name: ${schema.name}`);
  if (schema.description) lines.push(`Schema description: ${schema.description}`);
  lines.push('The value must validate against this JSON Schema:', schema.text, '', prompt);
  return lines.join('\n');
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
    stdout: fields.stdout ?? null,
    audit_value: Object.hasOwn(fields, 'audit') ? fields.audit : null,
    has_audit_value: Object.hasOwn(fields, 'audit'),
  };
}

/** What the run produced for validation, as diagnostics or a value. */
function check(schema, candidate) {
  if (candidate === null || candidate === undefined) {
    return { diagnostics: [{ path: '', message: 'no structured output candidate' }] };
  }
  let value = candidate.value;
  if (!Object.hasOwn(candidate, 'value')) {
    try {
      value = parseExact(candidate.text);
    } catch (error) {
      if (!(error instanceof JSONError)) throw error;
      return { diagnostics: [{ path: '', message: `not a single JSON value: ${error.message}` }] };
    }
  }
  return { value, diagnostics: diagnose(schema, value) };
}

/**
 * Run one protocol `run` request. Resolves to { outcome } or { skipped: reason }.
 */
export async function run(request, provider) {
  if (request.schema_type !== null && request.schema_type !== undefined) {
    return {
      skipped:
        'schema_type (a schema derived from a type in the Python reference\'s type language) '
        + 'is not supported by the Node adaptor; it takes schema documents only',
    };
  }
  const driver = DRIVERS[request.driver];
  if (!driver) return { skipped: `unknown driver ${JSON.stringify(request.driver)}` };

  let schema = null;
  if (request.schema !== null && request.schema !== undefined) {
    try {
      schema = intake(request);
    } catch (error) {
      if (!(error instanceof SchemaRejected)) throw error;
      return { outcome: outcome({ error: 'invalid_output_schema', message: error.message }) };
    }
  }

  let plan;
  try {
    // request.mode (Run or Stream) does not choose the transport.
    plan = negotiate(descriptorFor(request), {
      wantsSchema: schema !== null,
      rich: driver.rich,
      approval: request.approval,
    });
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    return { outcome: outcome({ error: error.kind, message: error.message }) };
  }

  const prompt = schema && plan.mechanism === 'prompt'
    ? instruction(schema, request.prompt)
    : request.prompt;
  const exe = provider.executables?.[request.driver] ?? driver.command;
  const argv = driver.argv(exe, plan, schema, prompt, provider.work);
  const finished = await launch(argv, {
    env: { ...process.env, ...provider.env },
    cwd: provider.work,
    timeout: request.timeout,
  });
  const parsed = driver.parse(finished, plan);
  const common = {
    text: parsed.text,
    raw: parsed.raw,
    mechanism: plan.mechanism,
    // Kept for audit; invalid UTF-8 becomes U+FFFD.
    stdout: finished.stdout.toString('utf-8'),
  };

  if (parsed.cause) {
    // An execution failure outranks anything the policy could say.
    return {
      outcome: outcome({
        error: 'execution_error', cause: parsed.cause, message: parsed.message, ...common,
      }),
    };
  }

  if (!schema) {
    // Without a schema Decode parses the trimmed text; structured output
    // nobody asked for is never used.
    try {
      return { outcome: outcome({ value: parseExact((parsed.text ?? '').trim()), ...common }) };
    } catch (error) {
      if (!(error instanceof JSONError)) throw error;
      return {
        outcome: outcome({
          error: 'decode_error', message: `cannot decode text: ${error.message}`, ...common,
        }),
      };
    }
  }

  const candidate = plan.mechanism === 'native'
    ? parsed.candidate
    : (parsed.text === null || parsed.text === undefined ? null : { text: parsed.text });
  const checked = check(schema, candidate);
  // The value the provider gave stays with the result for audit, valid or not.
  const audit = Object.hasOwn(checked, 'value') ? { audit: checked.value } : {};
  if (checked.diagnostics.length === 0) {
    return { outcome: outcome({ value: checked.value, ...audit, ...common }) };
  }
  const summary = checked.diagnostics.map((d) => `${d.path || '/'}: ${d.message}`).join('; ');
  return {
    outcome: outcome({
      // Default policy fails the run; "return" lets it succeed but Decode fails.
      error: schema.onInvalid === 'return' ? 'decode_error' : 'policy_violation',
      message: `structured output invalid: ${summary}`,
      diagnostics: checked.diagnostics,
      ...audit,
      ...common,
    }),
  };
}
