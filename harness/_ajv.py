"""
Claude Code's validation of a StructuredOutput call, in Ajv's words.

The CLI compiles the caller's schema with Ajv (``allErrors: true``,
``validateFormats: false``) and sends every error back to the model as one
``is_error`` tool_result; adaptors and scenarios match on that wording, so
the reference model renders jsonschema's errors the way Ajv would, in Ajv's
order (LOOP-02, LOOP-07).
"""

from __future__ import annotations

from typing import Any

import jsonschema

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


def validation_errors(schema: Mapping[str, Any], value: Any) -> list[str]:
    """Every error, as ``PATH: MESSAGE``, in Ajv's order; ``format`` is not enforced."""
    validator_class = jsonschema.validators.validator_for(schema, jsonschema.Draft7Validator)
    errors = list(validator_class(schema).iter_errors(value))
    errors.sort(
        key=lambda e: _RANK.get(str(e.relative_schema_path[0]), 4) if e.relative_schema_path else 4
    )
    return [f"{_instance_path(e)}: {_ajv_message(e)}" for e in errors]


def check_output(schema: Mapping[str, Any], value: object) -> str | None:
    """The tool_result error for a StructuredOutput input, None when it is accepted."""
    # A tool input reaches the validator as an object: anything else is seen as empty.
    problems = validation_errors(schema, value if isinstance(value, dict) else {})
    if not problems:
        return None
    return "Output does not match required schema: " + ", ".join(problems)
