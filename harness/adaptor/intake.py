"""
Schema intake: everything that happens to a schema before any launch.

Implements SCH-01..08: derive or read the document, insist on one JSON value
in the json_schema format, compile it as Draft 2020-12, trim the name and
description, and copy the caller's bytes so later mutation changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import jsonschema
from jsonschema.exceptions import SchemaError
from referencing import Registry
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

if TYPE_CHECKING:
    from referencing._core import Resolver

from harness.adaptor.derive import DerivationError, derive
from harness.catalogue.jsonvalue import JSONError, dumps, parse_exact
from harness.catalogue.scenario import Request


class SchemaRejected(ValueError):
    """The request's schema cannot be used; the message says why."""


@dataclass(frozen=True)
class SchemaOption:
    """
    A schema option as built by the consumer: bytes copied, text trimmed.

    Building copies the caller's buffer (SCH-07); a derivation error is kept
    rather than raised, so a later explicit document cannot clear it (SCH-08).
    """

    document: bytes | None
    name: str | None
    description: str | None
    format: str
    on_invalid: str
    derivation_error: str | None = None

    @classmethod
    def build(cls, request: Request, buffer: bytearray | None) -> SchemaOption:
        error = None
        document = None if buffer is None else bytes(buffer)
        if request.schema_type is not None:
            try:
                derived = dumps(derive(request.schema_type)).encode()
            except DerivationError as failure:
                error = str(failure)
            else:
                document = document if document is not None else derived
        return cls(
            document=document,
            name=(request.schema_name or "").strip() or None,
            description=(request.schema_description or "").strip() or None,
            format=request.schema_format,
            on_invalid=request.on_invalid,
            derivation_error=error,
        )


@dataclass(frozen=True)
class Schema:
    """A schema that passed intake, ready to send and to validate against."""

    document: Any
    text: str
    name: str | None
    description: str | None
    on_invalid: str

    def validator(self) -> jsonschema.Draft202012Validator:
        # Formats are annotations in 2020-12; like the CLIs, do not assert them.
        # The registry holds the document's own resources and nothing else, so a
        # reference is resolved inside the document or not at all: never fetched.
        return jsonschema.Draft202012Validator(self.document, registry=registry_of(self.document))


#: Keywords whose values are instance data, where "$ref" is just a key.
_DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples"})


def _references(
    node: Any, scope: Resolver[Any], path: str = ""
) -> Iterator[tuple[str, str, Resolver[Any]]]:
    """Every ``$ref`` in a schema document, where it sits and the scope it resolves in."""
    if isinstance(node, dict):
        if path and isinstance(node.get("$id"), str):
            scope = scope.in_subresource(DRAFT202012.create_resource(node))
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield path or "/", ref, scope
        for key, value in node.items():
            if key not in _DATA_KEYWORDS:
                yield from _references(value, scope, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _references(value, scope, f"{path}/{index}")


#: Where a document without ``$id`` lives, for resolving its references.
_BASE = "urn:harness:schema"


def registry_of(document: Any) -> Registry[Any]:
    """
    The document's own resources (the root and every embedded ``$id``), and
    nothing else: no retrieval function, so nothing is ever fetched.
    """
    base = str(document.get("$id", _BASE)) if isinstance(document, dict) else _BASE
    registry: Registry[Any] = Registry().with_resource(base, DRAFT202012.create_resource(document))
    return registry.crawl()


def _dangling_reference(document: Any) -> str | None:
    """
    The first ``$ref`` that resolves nowhere, described; ``None`` if all do.

    A dangling reference passes the meta-schema but makes every later
    validation fail, so it is a compile failure (SCH-05).  Nothing is fetched:
    a remote reference (``https:``, ``file:``, any URI the document does not
    itself define) cannot be resolved and counts as dangling.  References are
    resolved in the scope of the nearest enclosing ``$id``.
    """
    if not isinstance(document, dict):
        return None
    base = str(document.get("$id", _BASE))
    resolver = registry_of(document).resolver(base_uri=base)
    for where, ref, scope in _references(document, resolver):
        try:
            scope.lookup(ref)
        except Unresolvable:
            return f"$ref {ref!r} at {where} resolves nowhere"
    return None


def intake(option: SchemaOption) -> Schema:
    """Check the option; raise `SchemaRejected` with a reason otherwise."""
    if option.derivation_error is not None:
        raise SchemaRejected(f"cannot derive schema: {option.derivation_error}")
    if option.format != "json_schema":
        raise SchemaRejected(f"unsupported output format {option.format!r}")
    if option.document is None:
        raise SchemaRejected("no schema document")
    try:
        text = option.document.decode("utf-8")
    except UnicodeDecodeError as failure:
        raise SchemaRejected(f"schema is not UTF-8: {failure.reason}") from None
    try:
        document = parse_exact(text)
    except JSONError as failure:
        raise SchemaRejected(f"schema document: {failure}") from None
    if not isinstance(document, dict | bool):
        raise SchemaRejected(
            f"schema must be an object or a boolean, not {type(document).__name__}"
        )
    try:
        jsonschema.Draft202012Validator.check_schema(document)
    except SchemaError as failure:
        where = "/".join(str(p) for p in failure.absolute_path)
        raise SchemaRejected(
            f"schema does not compile as Draft 2020-12 at /{where}: {failure.message}"
        ) from None
    dangling = _dangling_reference(document)
    if dangling is not None:
        raise SchemaRejected(f"schema does not compile as Draft 2020-12: {dangling}")
    return Schema(
        document=document,
        text=dumps(document),
        name=option.name,
        description=option.description,
        on_invalid=option.on_invalid,
    )
