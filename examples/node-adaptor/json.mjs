// Strict JSON: exactly one value per document, with a reason when it is not.
//
// JSON.parse already refuses NaN, Infinity and trailing garbage, but its
// messages do not say *which* of "malformed" or "two values" happened, and
// that distinction is part of the contract (trailing data is reported as
// such). Numbers are JavaScript numbers: integers beyond 2^53 are rounded by
// JSON.parse, a known limit of this adaptor (see baselines/node-example.yaml).

export class JSONError extends Error {}

/** How deep a value from a provider may nest before it is refused (the harness's bound). */
export const MAX_DEPTH = 128;

/**
 * Whether `text` nests deeper than `MAX_DEPTH` (brackets outside strings). JSON
 * from outside is untrusted: a reader without a bound can be driven as deep as
 * its stack goes, so the depth is checked before parsing.
 */
export function tooDeep(text) {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i += 1;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') {
      depth += 1;
      if (depth > MAX_DEPTH) return true;
    } else if (c === '}' || c === ']') depth -= 1;
  }
  return false;
}

/** Only the four JSON whitespace characters, not every Unicode space. */
function stripJsonSpace(text) {
  return text.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, '');
}

/**
 * Where the first JSON value of `text` ends (text starts with it), or -1.
 * A light scan: it balances brackets outside strings, it does not validate.
 */
function endOfFirstValue(text) {
  const first = text[0];
  if (first === '{' || first === '[' || first === '"') {
    let depth = 0;
    let inString = false;
    for (let i = 0; i < text.length; i += 1) {
      const c = text[i];
      if (inString) {
        if (c === '\\') i += 1;
        else if (c === '"') {
          inString = false;
          if (depth === 0) return i + 1;
        }
      } else if (c === '"') inString = true;
      else if (c === '{' || c === '[') depth += 1;
      else if (c === '}' || c === ']') {
        depth -= 1;
        if (depth === 0) return i + 1;
      }
    }
    return -1;
  }
  const scalar = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text);
  return scalar ? scalar[0].length : -1;
}

/** Parse `text` as exactly one JSON value (surrounding JSON whitespace allowed). */
export function parseExact(text) {
  const body = stripJsonSpace(text);
  if (body === '') throw new JSONError('empty document');
  try {
    return JSON.parse(body);
  } catch (error) {
    const end = endOfFirstValue(body);
    if (end > 0 && end < body.length) {
      let prefixParses = true;
      try {
        JSON.parse(body.slice(0, end));
      } catch {
        prefixParses = false;
      }
      if (prefixParses) {
        throw new JSONError(`trailing data after the JSON value at offset ${end}`);
      }
    }
    throw new JSONError(`malformed JSON: ${error.message}`);
  }
}

/** Compact JSON, keys in insertion order, non-ASCII kept as is. */
export function dumps(value) {
  return JSON.stringify(value);
}

/** A short name for the JSON type of `value`, for messages. */
export function jsonType(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

export function isObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
