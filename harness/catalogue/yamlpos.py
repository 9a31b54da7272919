"""
Safe YAML loading that remembers where every value came from.

``yaml.safe_load`` forgets positions, so a validation error could only say
*what* is wrong.  Here the document is composed into nodes with the safe
loader and built by hand, recording the line and column of every mapping
key and value under its JSON-pointer-like path.  Duplicate keys, which plain
PyYAML silently collapses, are rejected; so is any tag outside the safe set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

#: A path into a document: mapping keys and sequence indexes.
Path = tuple[str | int, ...]

_PLAIN_TAGS = frozenset({"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"})

#: More nodes than this is not a scenario but an attack (alias bombs).
_MAX_NODES = 200_000


@dataclass(frozen=True)
class YAMLProblem(Exception):
    """The document could not be loaded at all, or has a structural flaw."""

    line: int
    column: int
    path: Path
    message: str


@dataclass(frozen=True)
class Located:
    """A loaded document plus the 1-based (line, column) of each path."""

    value: Any
    marks: dict[Path, tuple[int, int]]

    def where(self, path: Path) -> tuple[int, int]:
        """The position of ``path``, or of its nearest recorded ancestor."""
        for end in range(len(path), -1, -1):
            mark = self.marks.get(tuple(path[:end]))
            if mark is not None:
                return mark
        return (1, 1)


def _mark(node: yaml.Node) -> tuple[int, int]:
    return (node.start_mark.line + 1, node.start_mark.column + 1)


class _Builder:
    def __init__(self, loader: yaml.SafeLoader) -> None:
        self.loader = loader
        self.marks: dict[Path, tuple[int, int]] = {}
        self.count = 0

    def build(self, node: yaml.Node, path: Path) -> Any:
        self.count += 1
        if self.count > _MAX_NODES:
            line, column = _mark(node)
            raise YAMLProblem(line, column, path, "document is too large")
        self.marks.setdefault(path, _mark(node))
        if isinstance(node, yaml.CollectionNode) and node.tag not in _PLAIN_TAGS:
            line, column = _mark(node)
            raise YAMLProblem(line, column, path, f"tag {node.tag!r} is not allowed")
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        try:
            return self.loader.construct_object(node, deep=True)
        except yaml.constructor.ConstructorError as error:
            line, column = _mark(node)
            problem = error.problem or "cannot construct value"
            raise YAMLProblem(line, column, path, problem) from None

    def _mapping(self, node: yaml.MappingNode, path: Path) -> dict[str, Any]:
        self.loader.flatten_mapping(node)
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            line, column = _mark(key_node)
            key = self.build(key_node, (*path, "<key>"))
            if not isinstance(key, str):
                raise YAMLProblem(line, column, path, f"mapping key {key!r} is not a string")
            if key in result:
                raise YAMLProblem(line, column, (*path, key), f"duplicate key {key!r}")
            self.marks[(*path, key)] = (line, column)
            result[key] = self.build(value_node, (*path, key))
        self.marks.pop((*path, "<key>"), None)
        return result


def load(text: str) -> Located:
    """Load one YAML document safely, with positions; raise `YAMLProblem`."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return Located(None, {(): (1, 1)})
        builder = _Builder(loader)
        value = builder.build(node, ())
        return Located(value, builder.marks)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        message = error.problem or error.context or "invalid YAML"
        raise YAMLProblem(line, column, (), f"invalid YAML: {message}") from None
    except yaml.YAMLError as error:
        raise YAMLProblem(1, 1, (), f"invalid YAML: {error}") from None
    finally:
        loader.dispose()
