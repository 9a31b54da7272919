"""
Claude Code's validation of a StructuredOutput call, in Ajv's words.

The CLI compiles the caller's schema with Ajv (``allErrors: true``,
``validateFormats: false``) and sends every error back to the model as one
``is_error`` tool_result; adaptors and scenarios match on that wording, so
the reference model renders jsonschema's errors the way Ajv would, in Ajv's
order (LOOP-02, LOOP-07).
"""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
from referencing import Registry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


def _ajv_message(error: jsonschema.ValidationError) -> str:
    keyword, value = error.validator, error.validator_value
    if keyword == "required":
        missing = error.message.split("'")[1] if "'" in error.message else "?"
        return f"must have required property '{missing}'"
    if keyword == "type":
        kinds = value if isinstance(value, list) else [value]
        return f"must be {','.join(str(k) for k in kinds)}"
    simple = {
        "additionalProperties": "must NOT have additional properties",
        "enum": "must be equal to one of the allowed values",
        "const": "must be equal to constant",
        "anyOf": "must match a schema in anyOf",
        "oneOf": "must match exactly one schema in oneOf",
        "not": "must NOT be valid",
        "uniqueItems": "must NOT have duplicate items",
    }
    if keyword in simple:
        return simple[str(keyword)]
    bounds = {
        "minLength": "must NOT have fewer than {} characters",
        "maxLength": "must NOT have more than {} characters",
        "minItems": "must NOT have fewer than {} items",
        "maxItems": "must NOT have more than {} items",
        "minProperties": "must NOT have fewer than {} properties",
        "maxProperties": "must NOT have more than {} properties",
        "minimum": "must be >= {}",
        "maximum": "must be <= {}",
        "exclusiveMinimum": "must be > {}",
        "exclusiveMaximum": "must be < {}",
        "multipleOf": "must be multiple of {}",
        "pattern": 'must match pattern "{}"',
    }
    if keyword in bounds:
        return bounds[str(keyword)].format(value)
    return f"must pass {keyword!s} keyword validation"


# Ajv checks a schema's type first, then the object keywords, then each property.
_RANK = {"type": 0, "required": 1, "additionalProperties": 2, "properties": 3}


def _instance_path(error: jsonschema.ValidationError) -> str:
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in error.absolute_path]
    return "/" + "/".join(parts) if parts else "root"


#: How much of a property name, and of an allowed value's JSON, the CLI quotes.
NAME_LIMIT, VALUE_LIMIT = 80, 300


def _js_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _cut(text: str, limit: int) -> str:
    return text[:limit] + "\u2026" if len(text) > limit else text


def _rendered(error: jsonschema.ValidationError, params: bool = True) -> list[str]:
    """
    ``PATH: MESSAGE`` as the CLI words it: Ajv's message plus the detail the CLI
    adds (the extra property's name, the length it got, the allowed values),
    which releases before 2.1.260 leave out (``params``, B-02).  Ajv reports
    each extra property on its own, where jsonschema groups them.
    """
    head = f"{_instance_path(error)}: {_ajv_message(error)}"
    keyword, instance = error.validator, error.instance
    if keyword == "additionalProperties" and isinstance(instance, dict):
        extras = _extra_properties(error.schema, instance)
        if not params:
            return [head for _ in extras] or [head]
        return [f"{head} ('{_cut(name, NAME_LIMIT)}' is not allowed)" for name in extras] or [head]
    if not params:
        return [head]
    if keyword in {"minLength", "maxLength"} and isinstance(instance, str):
        return [f"{head} (got {len(instance)})"]
    if keyword in {"minItems", "maxItems"} and isinstance(instance, list):
        return [f"{head} (got {len(instance)})"]
    if keyword in {"minProperties", "maxProperties"} and isinstance(instance, dict):
        return [f"{head} (got {len(instance)})"]
    if keyword in {"enum", "const"}:
        return [f"{head}: {_cut(_js_json(error.validator_value), VALUE_LIMIT)}"]
    return [head]


def _extra_properties(schema: object, instance: dict[str, Any]) -> list[str]:
    if not isinstance(schema, dict):
        return []
    declared = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    return [
        name
        for name in instance
        if name not in declared and not any(re.search(p, name) for p in patterns)
    ]


def validation_errors(
    schema: Mapping[str, Any],
    value: Any,
    *,
    params: bool = True,
    multiple_of_precision: int | None = 6,
) -> list[str]:
    """
    Every error, as ``PATH: MESSAGE``, in Ajv's order; ``format`` is not
    enforced.  With ``multiple_of_precision`` a quotient within that many
    decimals of an integer is a multiple, as Ajv's option of that name makes
    it (the CLI sets 6 from 2.1.287, B-16); without it the quotient must be
    an integer exactly.
    """
    validator_class = jsonschema.validators.validator_for(schema, jsonschema.Draft7Validator)
    # An empty registry: a reference outside the document is never fetched.
    errors = list(validator_class(schema, registry=Registry()).iter_errors(value))
    if multiple_of_precision is not None:
        errors = [e for e in errors if not _near_multiple(e, multiple_of_precision)]
    errors.sort(
        key=lambda e: _RANK.get(str(e.relative_schema_path[0]), 4) if e.relative_schema_path else 4
    )
    return [line for error in errors for line in _rendered(error, params)]


def _near_multiple(error: jsonschema.ValidationError, precision: int) -> bool:
    instance, step = error.instance, error.validator_value
    if error.validator != "multipleOf" or not isinstance(instance, (int, float)):
        return False
    if not isinstance(step, (int, float)) or isinstance(instance, bool):
        return False
    quotient = instance / step
    return bool(abs(round(quotient) - quotient) <= 10.0**-precision)


def as_object(value: object) -> dict[str, Any]:
    """
    A tool input as the CLI validates it: spread into an object, so an array or a
    string becomes its indices (``[1, 2]`` is ``{"0": 1, "1": 2}``) and anything
    else that is not an object becomes ``{}`` (probed on the real binary).
    """
    if isinstance(value, dict):
        return value
    if isinstance(value, (list, str)):
        return {str(index): item for index, item in enumerate(value)}
    return {}


def check_output(
    schema: Mapping[str, Any],
    value: object,
    *,
    params: bool = True,
    multiple_of_precision: int | None = 6,
) -> str | None:
    """The tool_result error for a StructuredOutput input, None when it is accepted."""
    problems = validation_errors(
        schema, as_object(value), params=params, multiple_of_precision=multiple_of_precision
    )
    if not problems:
        return None
    return "Output does not match required schema: " + ", ".join(problems)
