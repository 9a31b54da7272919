"""
Schema derivation from a declared type (the Python analogue of WithSchema[T]).

Scenarios cannot run code, so a type is declared in a tiny expression
language instead: ``str``, ``int``, ``float``, ``bool``, ``null``, ``any``,
``list[T]``, ``dict[K, V]``, ``optional[T]``, ``T | U`` and record names
defined beside it.  ``callable`` and ``complex`` exist only to be rejected,
as do non-string dict keys and recursive records when references must be
inlined: the shapes a JSON Schema cannot represent safely.
"""

from __future__ import annotations

from typing import Any

from harness.catalogue.scenario import SchemaType

_PRIMITIVES: dict[str, dict[str, Any]] = {
    "str": {"type": "string"},
    "int": {"type": "integer"},
    "float": {"type": "number"},
    "bool": {"type": "boolean"},
    "null": {"type": "null"},
    "any": {},
}
_UNREPRESENTABLE = {
    "callable": "callables cannot be represented in JSON Schema",
    "complex": "complex numbers cannot be represented in JSON Schema",
    "bytes": "raw bytes cannot be represented in JSON Schema",
}


#: Every name the type language gives a meaning of its own; no record can take one.
BUILTIN_NAMES = frozenset(_PRIMITIVES) | frozenset(_UNREPRESENTABLE)


class DerivationError(ValueError):
    """The declared type has a shape JSON Schema cannot represent."""


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def _skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def _peek(self) -> str:
        self._skip()
        return self.text[self.pos : self.pos + 1]

    def _expect(self, char: str) -> None:
        if self._peek() != char:
            raise DerivationError(f"expected {char!r} at offset {self.pos} in {self.text!r}")
        self.pos += 1

    def _name(self) -> str:
        self._skip()
        start = self.pos
        while self.pos < len(self.text) and (
            self.text[self.pos].isalnum() or self.text[self.pos] == "_"
        ):
            self.pos += 1
        if start == self.pos:
            raise DerivationError(f"expected a type name at offset {start} in {self.text!r}")
        return self.text[start : self.pos]

    def parse(self) -> tuple[Any, ...]:
        node = self._union()
        if self._peek():
            raise DerivationError(f"unexpected {self._peek()!r} in {self.text!r}")
        return node

    def _union(self) -> tuple[Any, ...]:
        options = [self._atom()]
        while self._peek() == "|":
            self.pos += 1
            options.append(self._atom())
        return options[0] if len(options) == 1 else ("union", *options)

    def _atom(self) -> tuple[Any, ...]:
        name = self._name()
        if self._peek() != "[":
            return ("name", name)
        self.pos += 1
        args = [self._union()]
        while self._peek() == ",":
            self.pos += 1
            args.append(self._union())
        self._expect("]")
        return ("generic", name, *args)


class _Deriver:
    def __init__(self, spec: SchemaType) -> None:
        self.records = {name: dict(fields) for name, fields in spec.types}
        self.inline = spec.inline_references
        self.defs: dict[str, Any] = {}
        self.stack: list[str] = []

    def schema(self, node: tuple[Any, ...]) -> dict[str, Any]:
        kind = node[0]
        if kind == "union":
            return {"anyOf": [self.schema(option) for option in node[1:]]}
        if kind == "generic":
            return self._generic(node[1], node[2:])
        name = node[1]
        if name in _PRIMITIVES:
            return dict(_PRIMITIVES[name])
        if name in _UNREPRESENTABLE:
            raise DerivationError(_UNREPRESENTABLE[name])
        if name not in self.records:
            raise DerivationError(f"unknown type {name!r}")
        return self._record(name)

    def _generic(self, name: str, args: tuple[Any, ...]) -> dict[str, Any]:
        if name == "list" and len(args) == 1:
            return {"type": "array", "items": self.schema(args[0])}
        if name == "optional" and len(args) == 1:
            return {"anyOf": [self.schema(args[0]), {"type": "null"}]}
        if name == "dict" and len(args) == 2:
            if args[0] != ("name", "str"):
                raise DerivationError("dict keys must be strings to be represented in JSON")
            return {"type": "object", "additionalProperties": self.schema(args[1])}
        raise DerivationError(f"unsupported generic {name}[...] with {len(args)} argument(s)")

    def _record(self, name: str) -> dict[str, Any]:
        if name in self.stack:
            if self.inline:
                raise DerivationError(f"cannot inline recursive type {name!r}")
            return {"$ref": f"#/$defs/{name}"}
        self.stack.append(name)
        try:
            fields = self.records[name]
            body = {
                "type": "object",
                "properties": {f: self.schema(_Parser(t).parse()) for f, t in fields.items()},
                "required": list(fields),
                "additionalProperties": False,
            }
        finally:
            self.stack.pop()
        if self.inline:
            return body
        self.defs[name] = body
        return {"$ref": f"#/$defs/{name}"}


def derive(spec: SchemaType) -> dict[str, Any]:
    """A Draft 2020-12 schema for ``spec``; raises `DerivationError`."""
    deriver = _Deriver(spec)
    root = deriver.schema(_Parser(spec.root).parse())
    document: dict[str, Any] = {"$schema": "https://json-schema.org/draft/2020-12/schema"}
    document.update(root)
    if deriver.defs:
        document["$defs"] = dict(sorted(deriver.defs.items()))
    return document
