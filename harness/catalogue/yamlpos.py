"""
Safe YAML loading that remembers where every value came from.

``yaml.safe_load`` forgets positions, so a validation error could only say
*what* is wrong.  Here the document is composed into nodes with the safe
loader and built by hand, recording the line and column of every mapping
key and value under its JSON-pointer-like path.  Duplicate keys, which plain
PyYAML silently collapses, are rejected; so is any tag outside the safe set.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from harness.catalogue.bounded import read_regular
from harness.exceptions import Unreadable

#: A path into a document: mapping keys and sequence indexes.
Path = tuple[str | int, ...]
#: Where a file is.
PathLike = str | os.PathLike[str]

_PLAIN_TAGS = frozenset({"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"})

#: More nodes than this is not a scenario but an attack (alias bombs).
MAX_NODES = 100_000
#: Deeper than this is no scenario either (and would exhaust Python's stack).
MAX_DEPTH = 100
#: The largest file read at all; the catalogue's largest is about 11 KB.
MAX_BYTES = 1024 * 1024


@dataclass(frozen=True)
class YAMLProblem(Exception):
    """The document could not be loaded at all, or has a structural flaw."""

    line: int
    column: int
    path: Path
    message: str


class Marks(Mapping[Path, tuple[int, int]]):
    """
    The 1-based (line, column) of each path, read off the composed nodes when
    asked: a catalogue has tens of thousands of values and a position is
    wanted for a handful (the problems, each case's first line).
    """

    def __init__(self, nodes: dict[Path, yaml.Node]) -> None:
        self._nodes = nodes

    def __getitem__(self, path: Path) -> tuple[int, int]:
        return _mark(self._nodes[path])

    def __iter__(self) -> Iterator[Path]:
        return iter(self._nodes)

    def __len__(self) -> int:
        return len(self._nodes)


@dataclass(frozen=True)
class Located:
    """A loaded document plus the 1-based (line, column) of each path."""

    value: Any
    marks: Mapping[Path, tuple[int, int]]
    #: How many lines the text has.
    lines: int = 1
    #: Each alias (``*name``) by where it is used and where its anchor is.
    aliases: tuple[tuple[Path, Path], ...] = ()

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
    def __init__(self, loader: yaml.SafeLoader, anchored: bool = True) -> None:
        self.loader = loader
        #: Whether the text can hold an anchor at all (it has an ``&``): aliases
        #: are tracked only then.
        self.anchored = anchored
        self.nodes: dict[Path, yaml.Node] = {}
        self.count = 0
        # The composer hands an alias the very node of its anchor.
        self.first: dict[int, Path] = {}
        self.aliases: list[tuple[Path, Path]] = []

    def build(self, node: yaml.Node, path: Path) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            line, column = _mark(node)
            too_many = f"document is too large (over {MAX_NODES} values)"
            raise YAMLProblem(line, column, path, too_many)
        if len(path) > MAX_DEPTH:  # aliases can nest deeper than the text does
            line, column = _mark(node)
            raise YAMLProblem(line, column, (), f"nested deeper than {MAX_DEPTH} levels")
        if path not in self.nodes:
            self.nodes[path] = node
        if self.anchored:
            anchor = self.first.setdefault(id(node), path)
            if anchor is not path and not any(path[: len(u)] == u for u, _ in self.aliases[-1:]):
                self.aliases.append((path, anchor))
        kind = type(node)
        if kind is yaml.ScalarNode and node.tag == _STR:
            return node.value  # what the constructor would make of it, without the detour
        if kind is not yaml.ScalarNode and node.tag not in _PLAIN_TAGS:
            line, column = _mark(node)
            raise YAMLProblem(line, column, path, f"tag {node.tag!r} is not allowed")
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        if kind is yaml.SequenceNode:
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        try:
            # A scalar: its tag's constructor straight away (construct_object's
            # bookkeeping is for collections, which are built here).
            construct = self.loader.yaml_constructors.get(node.tag)
            if construct is not None and isinstance(node, yaml.ScalarNode):
                return construct(self.loader, node)
            return self.loader.construct_object(node, deep=True)
        except yaml.constructor.ConstructorError as error:
            line, column = _mark(node)
            problem = error.problem or "cannot construct value"
            raise YAMLProblem(line, column, path, problem) from None

    def _mapping(self, node: yaml.MappingNode, path: Path) -> dict[str, Any]:
        self.loader.flatten_mapping(node)
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = self.build(key_node, (*path, "<key>"))
            if not isinstance(key, str):
                line, column = _mark(key_node)
                raise YAMLProblem(line, column, path, f"mapping key {key!r} is not a string")
            if key in result:
                line, column = _mark(key_node)
                raise YAMLProblem(line, column, (*path, key), f"duplicate key {key!r}")
            self.nodes[(*path, key)] = key_node
            result[key] = self.build(value_node, (*path, key))
        self.nodes.pop((*path, "<key>"), None)
        return result


#: How many plain scalars' tags `_remembering` keeps, and the longest it keeps.
_TAGS_KEPT = 4096
_TAG_TEXT_KEPT = 40


def _remembering(base: type[yaml.SafeLoader]) -> type[yaml.SafeLoader]:
    """
    ``base`` with a memory of the tags its resolver gives short scalars.

    The composer asks the resolver for the tag of every scalar, and the safe
    resolver tries a list of regular expressions each time; a catalogue is
    mostly the same few hundred keys and words, so their tags are kept (a
    tag depends on the text and on whether it was quoted only: the safe
    loader has no path resolvers).  Bounded: past `_TAGS_KEPT` the memory
    starts again.
    """
    kept: dict[tuple[str, tuple[bool, bool]], str] = {}
    resolve: Callable[[yaml.SafeLoader, type[yaml.Node], Any, Any], str] = base.resolve

    def remembered(self: yaml.SafeLoader, kind: type[yaml.Node], value: Any, implicit: Any) -> str:
        if kind is not yaml.ScalarNode or len(value) > _TAG_TEXT_KEPT:
            return resolve(self, kind, value, implicit)
        key = (value, implicit)
        tag = kept.get(key)
        if tag is None:
            if len(kept) >= _TAGS_KEPT:
                kept.clear()
            tag = kept[key] = resolve(self, kind, value, implicit)
        return tag

    return type(f"Remembering{base.__name__}", (base,), {"resolve": remembered})


#: libyaml's safe loader where PyYAML was built with it: the same documents,
#: many times faster (the pure-Python one is the fallback).
_Loader: type[yaml.SafeLoader] = _remembering(getattr(yaml, "CSafeLoader", yaml.SafeLoader))
_STR = "tag:yaml.org,2002:str"
#: A text this short cannot hold `MAX_NODES` values (a value takes at least a
#: third of a character), and libyaml refuses to nest deeper than 1000 levels
#: by itself; `_Builder` holds `MAX_DEPTH`.  So only a longer text, or one the
#: pure-Python loader composes (recursively, in Python), needs the event pass.
_EVENT_CHECK_FROM = MAX_NODES // 3
_OPENING = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_CLOSING = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
_NODES = (yaml.ScalarEvent, yaml.AliasEvent, *_OPENING)


def _bounds_first(text: str, kind: type[yaml.SafeLoader]) -> None:
    """
    Raise the bound a document that failed to parse broke before it failed,
    if any: a short text skips the event pass, but its error must be the
    same as if it had not.
    """
    try:
        _check_size(text, kind)
    except yaml.YAMLError:
        return


def _check_size(text: str, kind: type[yaml.SafeLoader] = _Loader) -> None:
    """
    `MAX_NODES` and `MAX_DEPTH`, held on the parser's event stream before any
    node is composed: a huge or deep document costs no memory and never
    reaches the recursive composer.
    """
    depth = nodes = 0
    for event in yaml.parse(text, Loader=kind):
        if isinstance(event, _NODES):
            nodes += 1
        if isinstance(event, _OPENING):
            depth += 1
        elif isinstance(event, _CLOSING):
            depth -= 1
        if nodes > MAX_NODES or depth > MAX_DEPTH:
            what = (
                f"document is too large (over {MAX_NODES} values)"
                if nodes > MAX_NODES
                else f"nested deeper than {MAX_DEPTH} levels"
            )
            mark = event.start_mark
            line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
            raise YAMLProblem(line, column, (), what)


def read(path: PathLike, parse: Callable[[str], Located] | None = None) -> Located:
    """
    Load the YAML file at ``path``: a regular file (never a FIFO or a device,
    which could block for ever), at most `MAX_BYTES`, UTF-8; raise `YAMLProblem`.
    ``parse`` turns the text into a document (`load`, or a cache in front of it).
    """
    try:
        data = read_regular(path, MAX_BYTES)
    except Unreadable as error:
        raise YAMLProblem(1, 1, (), str(error)) from None
    except OSError as error:
        raise YAMLProblem(1, 1, (), f"cannot read file: {error.strerror or error}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise YAMLProblem(line, 1, (), f"not UTF-8: {error.reason} at byte {error.start}") from None
    return (parse or load)(text)


#: libyaml refuses what the pure-Python loader reads: a ``\\udcXX`` escape, the
#: way a scenario writes a raw byte that is not UTF-8 (``"\\udcff"`` is 0xFF).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][cC][89a-fA-F][0-9a-fA-F]")


def load(text: str) -> Located:
    """Load one YAML document safely, with positions; raise `YAMLProblem`."""
    kind = yaml.SafeLoader if _SURROGATE_ESCAPE.search(text) else _Loader
    loader = kind(text)
    try:
        if len(text) >= _EVENT_CHECK_FROM or kind is yaml.SafeLoader:
            _check_size(text, kind)
        node = loader.get_single_node()
        lines = len(text.splitlines()) or 1
        if node is None:
            return Located(None, {(): (1, 1)}, lines)
        builder = _Builder(loader, anchored="&" in text)
        value = builder.build(node, ())
        return Located(value, Marks(builder.nodes), lines, tuple(builder.aliases))
    except yaml.MarkedYAMLError as error:
        _bounds_first(text, kind)  # a document too deep or large says so, not what broke after
        mark = error.problem_mark or error.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        message = error.problem or error.context or "invalid YAML"
        raise YAMLProblem(line, column, (), f"invalid YAML: {message}") from None
    except yaml.YAMLError as error:
        raise YAMLProblem(1, 1, (), f"invalid YAML: {error}") from None
    finally:
        loader.dispose()
