// Claude Code's StructuredOutput validation, for the harness's reference model.
//
// Claude Code 2.1.328 validates each StructuredOutput call with the Ajv it bundles
// (8.18.0, the default draft-07 class), built with `allErrors`, no format checks and
// `multipleOfPrecision: 6`, and sends every error back to the model in one tool_result.
// The reference model asks this worker, so that verdicts, messages, their order and the
// numbers in them come from the same library under the same JavaScript number, string
// and regular-expression semantics.  What the CLI adds around Ajv (its guards on the
// schema, how it prepares a tool input, how it words and caps the errors, how it reads
// an integer from the environment) is written here from the behaviour observed on the
// binary (docs/model-api.md); nothing is taken from the binary itself.
//
// Protocol: one JSON request per stdin line, one JSON answer per stdout line, in order:
//   {"op": "compile", "schema": TEXT}            -> {"ok": true, "schema": JSON, "warnings": [..]}
//                                                   or {"refused": MESSAGE, "warnings": [..]}
//   {"op": "check", "schema": TEXT, "input": TEXT}
//        -> {"error": null | TOOL_RESULT, "prepared": JSON, "validated": JSON}
//   {"op": "normalize", "json": TEXT}            -> {"json": JSON}
//   {"op": "env_int", "value": TEXT | null}      -> {"value": NUMBER | null}
// TEXT is JSON text as the CLI received it; JSON in answers is JSON.stringify's output, so
// numbers and key order are JavaScript's.  A request that cannot be served gets
// {"fault": MESSAGE}.  The worker ends when its stdin closes.
import readline from "node:readline";
import Ajv from "ajv";

const PREFIX = "Output does not match required schema: ";
// The CLI's bounds on a schema before Ajv sees it.
const MAX_NODES = 100_000;
const MAX_DEPTH = 10_000;
// How much of an extra property's name, and of an enum's or const's JSON, a message quotes.
const NAME_CUT = 80;
const VALUE_CUT = 300;
// An error tool_result longer than KEEP + SLACK UTF-16 units keeps its first and last KEEP / 2.
const KEEP = 10_000;
const SLACK = 1_024;
// Compiled schemas kept, most recent last.
const CACHE_SIZE = 128;

// -- strings, cut the way the CLI cuts them (UTF-16 units, never half a surrogate pair) ------

function isHigh(code) {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLow(code) {
  return code >= 0xdc00 && code <= 0xdfff;
}

function head(text, units) {
  if (text.length <= units) return text;
  const end = units > 0 && isHigh(text.charCodeAt(units - 1)) ? units - 1 : units;
  return text.slice(0, end);
}

function tail(text, units) {
  if (text.length <= units) return text;
  const start = text.length - units;
  return text.slice(isLow(text.charCodeAt(start)) ? start + 1 : start);
}

function shortened(text, units) {
  return text.length > units ? `${head(text, units)}\u2026` : text;
}

// Earlier cuts inside the part a new cut removes are counted into its figure.
const MARK = /\n\n\.\.\. \[(\d{1,15}) characters truncated\] \.\.\.\n\n/g;

function capped(text) {
  if (text.length <= KEEP + SLACK) return text;
  const half = KEEP / 2;
  const first = head(text, half);
  const last = tail(text, KEEP - half);
  let dropped = text.length - first.length - last.length;
  for (const found of text.slice(half, text.length - (KEEP - half)).matchAll(MARK)) {
    const earlier = Number(found[1]);
    if (earlier >= found[0].length) dropped += earlier - found[0].length;
  }
  return `${first}\n\n... [${dropped} characters truncated] ...\n\n${last}`;
}

// -- the schema: guards, Ajv, refusals in JavaScriptCore's words ------------------------------

function isPlainObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function tooLarge(schema) {
  let budget = MAX_NODES;
  const pending = [[schema, 0]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop();
    budget -= 1;
    if (budget < 0 || depth > MAX_DEPTH) return true;
    if (node !== null && typeof node === "object") {
      for (const child of Object.values(node)) pending.push([child, depth + 1]);
    }
  }
  return false;
}

// The binary runs on Bun, whose regular expressions are JavaScriptCore's: a pattern Ajv
// cannot compile is refused in JavaScriptCore's words, not V8's.  Each V8 reason maps to
// the one the binary printed for the same pattern (probed, docs/model-api.md); where V8
// has one reason for what JavaScriptCore tells apart, the pattern decides.
const JSC_REGEXP_REASONS = new Map([
  ["Unterminated group", "missing )"],
  ["Unmatched ')'", "unmatched parentheses"],
  ["Unterminated character class", "missing terminating ] for character class"],
  ["Nothing to repeat", "nothing to repeat"],
  ["Incomplete quantifier", "incomplete {} quantifier for Unicode pattern"],
  ["numbers out of order in {} quantifier", "numbers out of order in {} quantifier"],
  ["Range out of order in character class", "range out of order in character class"],
  ["Invalid character class", "invalid range in character class for Unicode pattern"],
  ["Invalid class escape", "invalid escaped character for Unicode pattern"],
  ["Invalid decimal escape", "invalid backreference for Unicode pattern"],
  ["Invalid property name", "invalid property expression"],
  ["Invalid property name in character class", "invalid property expression"],
  ["Invalid group", "unrecognized character after (?"],
  ["Invalid capture group name", "invalid group specifier name"],
  ["Duplicate capture group name", "duplicate group specifier name"],
  ["Invalid named reference", "invalid \\k<> named backreference"],
  ["Invalid named capture referenced", "invalid \\k<> named backreference"],
  ["\\ at end of pattern", "\\ at end of pattern"],
]);
const V8_REGEXP = /^Invalid regular expression: \/(.*)\/[a-z]*: (.*)$/s;

// The first escape in `pattern` that a Unicode pattern does not allow, in JavaScriptCore's
// words; `kinds` limits it to escapes of those letters (or digits, "0").
function badEscape(pattern, kinds) {
  for (let at = 0; at < pattern.length; at += 1) {
    if (pattern[at] !== "\\") continue;
    const next = pattern[at + 1] ?? "";
    at += 1;
    const kind = /[0-9]/.test(next) ? "0" : next;
    if (!kinds.includes(kind)) continue;
    if (kind === "0" && next !== "0") return "invalid backreference for Unicode pattern";
    if (kind === "c" && !/[A-Za-z]/.test(pattern[at + 1] ?? "")) {
      return "invalid escaped character for Unicode pattern";
    }
    if (kind === "u") {
      const braced = /^\{([0-9a-fA-F]+)\}/.exec(pattern.slice(at + 1));
      if (braced !== null && parseInt(braced[1], 16) > 0x10ffff) {
        return "invalid Unicode code point \\u{} escape";
      }
      if (braced === null && !/^[0-9a-fA-F]{4}/.test(pattern.slice(at + 1))) {
        return "invalid Unicode \\u escape";
      }
    }
  }
  return undefined;
}

// A lone `{` reads as an unfinished quantifier; a lone `]` or `}` as an unmatched bracket;
// a whole `{n}`, `{n,}` or `{n,m}` quantifier is neither.
function loneBracket(pattern) {
  let inClass = false;
  for (let at = 0; at < pattern.length; at += 1) {
    const char = pattern[at];
    if (char === "\\") at += 1;
    else if (inClass) inClass = char !== "]";
    else if (char === "[") inClass = true;
    else if (char === "{") {
      // A whole quantifier ({2}, {2,}, {2,5}) is no bracket: the search goes on past it.
      const whole = /^\{[0-9]+(,[0-9]*)?\}/.exec(pattern.slice(at));
      if (whole === null) return "incomplete {} quantifier for Unicode pattern";
      at += whole[0].length - 1;
    }
    else if (char === "]" || char === "}") return "unmatched ] or } bracket for Unicode pattern";
  }
  return "unmatched ] or } bracket for Unicode pattern";
}

function jscReason(pattern, reason) {
  switch (reason) {
    case "Lone quantifier brackets":
      return loneBracket(pattern);
    case "Invalid Unicode escape":
      return badEscape(pattern, ["u", "c"]) ?? "invalid Unicode \\u escape";
    case "Invalid escape":
      return badEscape(pattern, ["0"]) ?? "invalid escaped character for Unicode pattern";
    default:
      return JSC_REGEXP_REASONS.get(reason) ?? reason;
  }
}

// Other engine messages the binary words differently.
const JSC_MESSAGES = new Map([["Maximum call stack size exceeded", "Maximum call stack size exceeded."]]);

function inJscWords(message) {
  const found = V8_REGEXP.exec(message);
  if (found !== null) return `Invalid regular expression: ${jscReason(found[1], found[2])}`;
  return JSC_MESSAGES.get(message) ?? message;
}

const compiled = new Map();

// `precision`: Ajv's multipleOfPrecision (6 from 2.1.287; null: exact quotients, as
// releases before it check, B-16 in docs/versions.md).  `formats`: format checks on with
// no format known, so that a schema naming any format does not compile (CodeBuddy Code's
// Ajv; Claude Code's turns them off).
function compile(text, precision = 6, formats = false) {
  const key = `${precision}\u0000${formats}\u0000${text}`;
  const known = compiled.get(key);
  if (known !== undefined) {
    compiled.delete(key); // most recent last
    compiled.set(key, known);
    return known;
  }
  const made = build(text, precision, formats);
  compiled.set(key, made);
  if (compiled.size > CACHE_SIZE) compiled.delete(compiled.keys().next().value);
  return made;
}

function build(text, precision, formats) {
  const warnings = [];
  const logger = {
    log: (...parts) => warnings.push(parts.join(" ")),
    warn: (...parts) => warnings.push(parts.join(" ")),
    error: (...parts) => warnings.push(parts.join(" ")),
  };
  const schema = JSON.parse(text);
  if (!isPlainObject(schema)) return { refused: "must be a JSON object", warnings };
  let reason;
  try {
    if (tooLarge(schema)) reason = "schema too large";
    else if (Boolean(schema.$async)) reason = "$async schemas are not supported";
    else {
      const options = { allErrors: true, validateFormats: formats, logger };
      if (precision !== null) options.multipleOfPrecision = precision;
      const ajv = new Ajv(options);
      if (!ajv.validateSchema(schema)) reason = ajv.errorsText(ajv.errors);
      else return { validate: ajv.compile(schema), schema, warnings };
    }
  } catch (error) {
    reason = inJscWords(error instanceof Error ? error.message : String(error));
  }
  return { refused: reason, warnings };
}

// -- a tool input as the CLI prepares it -----------------------------------------------------

// The type the CLI reads off a property's schema, to decide whether a string value is the
// JSON text of what the property wants: a type list prefers a compound type, then string,
// then the first other non-null one; local $defs / definitions references are followed;
// anyOf / oneOf branches are combined by the same preference.
function preferred(types) {
  let compound;
  let other;
  let string = false;
  for (const kind of types) {
    if (kind === "array" || kind === "object") compound ??= kind;
    else if (kind === "string") string = true;
    else if (kind !== undefined && kind !== "null") other ??= kind;
  }
  return compound ?? (string ? "string" : other);
}

const LOCAL_DEFINITION = /^#\/(?:\$defs|definitions)\/([^/]+)$/;

function wantedType(schema, definitions, seen = new Set()) {
  if (seen.size > 64 || seen.has(schema) || schema === null || typeof schema !== "object") {
    return undefined;
  }
  seen.add(schema);
  if (typeof schema.type === "string") return schema.type;
  if (Array.isArray(schema.type)) {
    const kind = preferred(schema.type.filter((item) => typeof item === "string"));
    if (kind !== undefined) return kind;
  }
  if (typeof schema.$ref === "string" && definitions) {
    const name = LOCAL_DEFINITION.exec(schema.$ref)?.[1];
    if (name) return wantedType(definitions[name], definitions, seen);
  }
  for (const branches of [schema.anyOf, schema.oneOf]) {
    if (!Array.isArray(branches)) continue;
    const kind = preferred(branches.map((branch) => wantedType(branch, definitions, seen)));
    if (kind !== undefined) return kind;
  }
  return undefined;
}

const ANNOTATIONS = new Set([
  "$comment", "default", "deprecated", "description", "examples", "readOnly", "title", "writeOnly",
]);
const CONVERTED = new Set(["array", "object", "boolean", "integer", "number"]);

function parsedOrNull(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

// Whether `value`, parsed from `text`, is what a property of `kind` wants.  Numbers only
// when they print back as the same text ("5" but not "5.0" or "1e3").
function fits(kind, value, text) {
  const number = typeof value === "number" && Number.isFinite(value) && String(value) === text;
  switch (kind) {
    case "array":
      return Array.isArray(value);
    case "object":
      return isPlainObject(value);
    case "boolean":
      return typeof value === "boolean";
    case "integer":
      return number && Number.isInteger(value);
    case "number":
      return number;
    default: // a property whose schema is annotations only
      return typeof value === "boolean" || (value !== null && typeof value === "object") || number;
  }
}

// Top-level string values holding the JSON text of what the property's schema wants are
// replaced by the parsed value; nested values, patternProperties and the rest are not.
// `annotated`: whether a property whose schema is annotations only (or empty) takes any
// JSON text but a string's (from 2.1.246, B-38).
function converted(input, schema, annotated = true) {
  const properties = schema.properties;
  if (!properties || typeof properties !== "object") return input;
  const definitions = schema.$defs ?? schema.definitions;
  let out = input;
  for (const [name, property] of Object.entries(properties)) {
    let kind = wantedType(property, definitions);
    if (kind === undefined && annotated && isPlainObject(property)) {
      if (Object.keys(property).every((key) => ANNOTATIONS.has(key))) kind = "annotations";
    }
    if (kind !== "annotations" && !CONVERTED.has(kind)) continue;
    const text = out[name];
    if (typeof text !== "string") continue;
    const value = parsedOrNull(text);
    if (!fits(kind, value, text)) continue;
    if (out === input) out = { ...input };
    out[name] = value;
  }
  return out;
}

// A literal \uXXXX in a string value is decoded (a pair of them into one character), unless
// an odd number of backslashes precedes it (it is then an escaped backslash), it names a
// lone surrogate or a C0 / C1 control character, or the string looks like a Windows path.
const ESCAPE = String.raw`\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})`;
const HAS_ESCAPE = new RegExp(ESCAPE);
const EVERY_ESCAPE = new RegExp(ESCAPE, "g");
const DRIVE_PATH = /(?:^|[^A-Za-z])[A-Za-z]:[\\/]/;
const SHARE_PATH = /(?:^|[\s"'=])\\\\[^\s\\/]+[\\/](?!\\)/;

function decoded(text) {
  if (!HAS_ESCAPE.test(text) || DRIVE_PATH.test(text) || SHARE_PATH.test(text)) return text;
  return text.replace(EVERY_ESCAPE, (whole, high, low, single, at) => {
    let backslashes = 0;
    while (at - backslashes > 0 && text[at - backslashes - 1] === "\\") backslashes += 1;
    if (backslashes % 2 === 1) return whole;
    if (high !== undefined) return String.fromCharCode(parseInt(high, 16), parseInt(low, 16));
    const code = parseInt(single, 16);
    const control = code <= 0x1f || (code >= 0x7f && code <= 0x9f);
    if (control || (code >= 0xd800 && code <= 0xdfff)) return whole;
    return String.fromCharCode(code);
  });
}

// Strings decoded at every depth (values, not keys), and every "__proto__" key dropped.
function repaired(value) {
  if (typeof value === "string") return value.includes("\\u") ? decoded(value) : value;
  if (Array.isArray(value)) return value.map(repaired);
  if (value !== null && typeof value === "object") {
    const out = {};
    for (const [key, item] of Object.entries(value)) {
      if (key !== "__proto__") out[key] = repaired(item);
    }
    return out;
  }
  return value;
}

// What the CLI keeps of a call's input (it is what the conversation and the result carry)
// and what it validates: an object as it is, anything else spread into one.
function prepared(raw, schema, annotated = true) {
  const input = raw ?? {};
  if (typeof input !== "object") return input;
  return repaired(converted(input, schema, annotated));
}

function spread(value) {
  if (isPlainObject(value)) return value;
  if (Array.isArray(value) || typeof value === "string") return { ...value };
  return {};
}

// -- the tool_result: Ajv's errors in order, with what the CLI adds to six keywords -----------

function at(root, pointer) {
  let node = root;
  for (const token of pointer.split("/").slice(1)) {
    const key = token.replaceAll("~1", "/").replaceAll("~0", "~");
    if (Array.isArray(node)) node = node[Number(key)];
    else if (isPlainObject(node) && Object.hasOwn(node, key)) node = node[key];
    else return undefined;
  }
  return node;
}

function quoted(value) {
  let text;
  try {
    text = JSON.stringify(value);
  } catch {
    return undefined;
  }
  return typeof text === "string" ? shortened(text, VALUE_CUT) : undefined;
}

function detail(error, input) {
  const found = () => at(input, error.instancePath);
  switch (error.keyword) {
    case "additionalProperties": {
      const name = error.params.additionalProperty;
      return typeof name === "string" ? ` ('${shortened(name, NAME_CUT)}' is not allowed)` : "";
    }
    case "minLength":
    case "maxLength": {
      const value = found();
      return typeof value === "string" ? ` (got ${[...value].length})` : "";
    }
    case "minItems":
    case "maxItems": {
      const value = found();
      return Array.isArray(value) ? ` (got ${value.length})` : "";
    }
    case "minProperties":
    case "maxProperties": {
      const value = found();
      return isPlainObject(value) ? ` (got ${Object.keys(value).length})` : "";
    }
    case "enum": {
      const shown = Array.isArray(error.params.allowedValues)
        ? quoted(error.params.allowedValues)
        : undefined;
      return shown === undefined ? "" : `: ${shown}`;
    }
    case "const": {
      const shown = "allowedValue" in error.params ? quoted(error.params.allowedValue) : undefined;
      return shown === undefined ? "" : `: ${shown}`;
    }
    default:
      return "";
  }
}

// `params`: whether the CLI adds the detail of each error (from 2.1.260, B-02).
function verdict(validate, input, params = true) {
  if (validate(input)) return null;
  const parts = (validate.errors ?? []).map(
    (error) =>
      `${error.instancePath || "root"}: ${error.message}${params ? detail(error, input) : ""}`,
  );
  return capped(PREFIX + parts.join(", "));
}

// -- integers from the environment, read as the CLI reads them -------------------------------

const EXPONENT_FORM = /^[+-]?(\d+(\.\d*)?|\.\d+)[eE][+-]?\d+$/;
const GROUPED_FORM = /^[+-]?\d{1,3}([_, \u00A0\u202F])\d{3}(\1\d{3})*$/;
const SEPARATORS = /[_, \u00A0\u202F]/g;

// Unset (null) when absent, or when nothing numeric can be read; otherwise the number.
function envInt(raw) {
  if (raw === null || raw === undefined) return null;
  const text = String(raw).trim();
  let value;
  if (text.length <= 32 && EXPONENT_FORM.test(text)) {
    const number = Number(text);
    value = Number.isInteger(number) ? number : NaN;
  } else if (text.length <= 32 && GROUPED_FORM.test(text)) {
    value = parseInt(text.replace(SEPARATORS, ""), 10);
  } else {
    value = parseInt(text, 10);
  }
  return Number.isFinite(value) ? value : null;
}

// -- the loop ----------------------------------------------------------------------------------

function answer(request) {
  switch (request.op) {
    case "compile": {
      const made = compile(request.schema, 6, request.formats === true);
      if (made.refused !== undefined) return { refused: made.refused, warnings: made.warnings };
      return { ok: true, schema: JSON.stringify(made.schema), warnings: made.warnings };
    }
    case "check": {
      const precision = request.precision === undefined ? 6 : request.precision;
      const made = compile(request.schema, precision, request.formats === true);
      if (made.refused !== undefined) return { fault: `schema refused: ${made.refused}` };
      // `raw`: the input validated as it came, neither converted nor spread (CodeBuddy Code).
      const parsed = JSON.parse(request.input);
      const input = request.raw ? parsed : prepared(parsed, made.schema, request.annotated !== false);
      const validated = request.raw ? input : spread(input);
      return {
        error: verdict(made.validate, validated, request.params !== false),
        prepared: JSON.stringify(input),
        validated: JSON.stringify(validated),
      };
    }
    case "normalize":
      return { json: JSON.stringify(JSON.parse(request.json)) };
    case "env_int":
      return { value: envInt(request.value) };
    default:
      return { fault: `unknown op ${JSON.stringify(request.op)}` };
  }
}

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  let reply;
  try {
    reply = answer(JSON.parse(line));
  } catch (error) {
    reply = { fault: error instanceof Error ? error.message : String(error) };
  }
  process.stdout.write(`${JSON.stringify(reply)}\n`);
});
// When stdin closes the worker ends by itself, once its answers are written.
