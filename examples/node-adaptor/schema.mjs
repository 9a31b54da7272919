// Schema intake and validation with ajv (JSON Schema Draft 2020-12).
//
// Intake happens before anything is launched: the document must be exactly
// one JSON value, an object or a boolean, in the json_schema format, and it
// must compile. Formats are annotations in 2020-12, as the CLIs treat them,
// so they are not asserted.

import Ajv2020 from 'ajv/dist/2020.js';

import { JSONError, dumps, isObject, jsonType, parseExact } from './json.mjs';

export class SchemaRejected extends Error {}

function newAjv() {
  // One instance per schema: documents that share an $id never collide.
  return new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
}

function trimmed(text) {
  const t = (text ?? '').trim();
  return t === '' ? null : t;
}

/**
 * Check the request's schema option and compile it.
 * Returns { document, text, name, description, onInvalid, validate }.
 */
export function intake(request) {
  if (request.schema_format !== 'json_schema') {
    throw new SchemaRejected(`unsupported output format ${JSON.stringify(request.schema_format)}`);
  }
  if (request.schema === null || request.schema === undefined) {
    throw new SchemaRejected('no schema document');
  }
  let document;
  try {
    document = parseExact(request.schema);
  } catch (error) {
    if (error instanceof JSONError) throw new SchemaRejected(`schema document: ${error.message}`);
    throw error;
  }
  if (!isObject(document) && typeof document !== 'boolean') {
    throw new SchemaRejected(
      `schema must be an object or a boolean, not ${jsonType(document)}`,
    );
  }
  let validate;
  try {
    validate = newAjv().compile(document);
  } catch (error) {
    throw new SchemaRejected(`schema does not compile as Draft 2020-12: ${error.message}`);
  }
  return {
    document,
    text: dumps(document),
    name: trimmed(request.schema_name),
    description: trimmed(request.schema_description),
    onInvalid: request.on_invalid,
    validate,
  };
}

/**
 * The leaf errors: a combinator's own error (anyOf, oneOf) is dropped when
 * ajv also reported what went wrong in its branches, which are the leaves.
 */
function leaves(errors) {
  return errors.filter((error) => !(
    (error.keyword === 'anyOf' || error.keyword === 'oneOf')
    && errors.some((other) => other.schemaPath.startsWith(`${error.schemaPath}/`))
  ));
}

/** ajv's leaf errors for `value`, one diagnostic each, de-duplicated and sorted. */
export function diagnose(schema, value) {
  if (schema.validate(value)) return [];
  const seen = new Map();
  for (const error of leaves(schema.validate.errors ?? [])) {
    const diagnostic = {
      path: error.instancePath,
      message: error.message ?? error.keyword,
      keyword: error.keyword,
    };
    seen.set(`${diagnostic.path}\u0000${diagnostic.message}\u0000${diagnostic.keyword}`, diagnostic);
  }
  return [...seen.values()].sort(
    (a, b) => compare(a.path, b.path) || compare(a.message, b.message),
  );
}

function compare(a, b) {
  if (a < b) return -1;
  return a > b ? 1 : 0;
}
