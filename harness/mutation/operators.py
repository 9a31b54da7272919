"""
Mutants of a Python module: one small operator change each, and how to install one.

The catalogue is the test table, so the question mutation testing answers is
whether it would notice a plausible mistake in the reference pipeline.  Each
`Mutant` changes one thing in one module: a comparison flipped, a condition
forced true or false, a boolean operator swapped, a ``not`` dropped, a
constant changed, ``+`` and ``-`` swapped, a return value dropped, a call or
``raise`` statement deleted.  Text that reads as prose (a string with a space
and a letter: messages, docstrings, f-strings) is not mutated; only the
catalogue's reference expectations pin wording, and wording is not contract.

Generation is pure (source text in, mutants out).  `install` changes the live
module in this process: a mutant inside a function swaps that function's
code object (so every module that imported the function sees the change); a
mutant of a module- or class-level constant re-executes that one assignment
and rebinds the name wherever ``from module import NAME`` copied it.  It is
meant for a forked child that exits afterwards: nothing is restored.
"""

from __future__ import annotations

import ast
import importlib
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_FLIP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
_ARITHMETIC: dict[type[ast.operator], type[ast.operator]] = {ast.Add: ast.Sub, ast.Sub: ast.Add}


@dataclass(frozen=True)
class Mutant:
    """One change to one module, named so it can be listed and found again."""

    module: str
    path: str
    line: int
    scope: str
    operator: str
    original: str
    mutated: str
    #: Which of several identical changes in the same scope this is (0: the first).
    occurrence: int
    #: Position in the module's enumeration, to apply it.
    index: int

    @property
    def key(self) -> str:
        """A name that survives unrelated edits: where, what, and which occurrence."""
        base = f"{self.path}:{self.scope}:{self.operator}: {self.original} -> {self.mutated}"
        return base if not self.occurrence else f"{base} #{self.occurrence + 1}"

    def describe(self) -> str:
        return f"{self.path}:{self.line}: [{self.operator}] {self.original} -> {self.mutated}"


def _prose(text: str) -> bool:
    return " " in text and any(c.isalpha() for c in text)


def _alternatives(node: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """Every (operator, replacement) for ``node`` itself, children untouched."""
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            flipped = _FLIP.get(type(op))
            if flipped is not None:
                ops = [*node.ops[:i], flipped(), *node.ops[i + 1 :]]
                yield "compare", ast.Compare(node.left, ops, node.comparators)
    elif isinstance(node, ast.BoolOp):
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield "boolean", ast.BoolOp(other, node.values)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "not", node.operand
    elif isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        yield "arithmetic", ast.BinOp(node.left, _ARITHMETIC[type(node.op)](), node.right)
    elif isinstance(node, ast.Constant):
        yield from _constants(node.value)


def _constants(value: Any) -> Iterator[tuple[str, ast.AST]]:
    if isinstance(value, bool):
        yield "constant", ast.Constant(not value)
    elif isinstance(value, int):
        yield "constant", ast.Constant(value + 1)
    elif isinstance(value, str) and not _prose(value):
        yield "constant", ast.Constant(value + "X")


def _statement(node: ast.stmt) -> Iterator[tuple[str, ast.AST]]:
    """Replacements of a statement inside a function."""
    if isinstance(node, ast.Return) and node.value is not None:
        if not (isinstance(node.value, ast.Constant) and node.value.value is None):
            yield "return", ast.Return(ast.Constant(None))
    elif _deletable(node):
        yield "delete", ast.Pass()


def _deletable(node: ast.stmt) -> bool:
    """A call made for its effect, an augmented assignment, or a raise."""
    call = isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
    return call or isinstance(node, (ast.AugAssign, ast.Raise))


def _conditions(node: ast.AST) -> Iterator[tuple[str, ast.expr, Callable[[ast.expr], None]]]:
    """The tests of ``node`` that can be forced, each with a setter."""
    if isinstance(node, (ast.If, ast.While, ast.IfExp)) and not isinstance(node.test, ast.Constant):
        yield "condition", node.test, lambda new: setattr(node, "test", new)
    if isinstance(node, ast.comprehension):
        for i, test in enumerate(node.ifs):

            def setter(new: ast.expr, i: int = i) -> None:
                node.ifs[i] = new

            yield "condition", test, setter


class _Walker(ast.NodeTransformer):
    """
    Visits a module in a fixed order, numbering every mutation point.

    With ``target`` set it applies that one mutation and leaves the rest; with
    ``target`` None it only records what it saw.
    """

    def __init__(self, target: int | None = None) -> None:
        self.target = target
        self.count = 0
        self.scope: list[str] = []
        self.in_function = 0
        self.seen: list[tuple[int, str, str, str, str]] = []
        self.applied: tuple[str, str] | None = None

    # -- where mutation applies ------------------------------------------------

    def visit_Module(self, node: ast.Module) -> ast.AST:
        node.body = [self._top(stmt) for stmt in node.body]
        return node

    def _top(self, stmt: ast.stmt) -> ast.stmt:
        """Module level: only assignments' values, and the bodies of defs and classes."""
        if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
            # Decorators run at import; the body is mutated, never the decoration.
            return self._definition(stmt)
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            stmt.value = self._expression(stmt.value)
        return stmt

    def _definition(self, node: ast.FunctionDef | ast.ClassDef) -> ast.stmt:
        self.scope.append(node.name)
        try:
            if isinstance(node, ast.ClassDef):
                node.body = [self._top(stmt) for stmt in node.body]
            else:
                self.in_function += 1
                body = node.body
                start = 1 if _docstring(body) else 0
                node.body = body[:start] + [self._inside(stmt) for stmt in body[start:]]
                self.in_function -= 1
        finally:
            self.scope.pop()
        return node

    def _inside(self, stmt: ast.stmt) -> ast.stmt:
        if isinstance(stmt, ast.Assert):
            return stmt
        for operator, new in _statement(stmt):
            if self._point(stmt, operator, new):
                return new  # type: ignore[return-value]
        result = self.visit(stmt)
        assert isinstance(result, ast.stmt)
        return result

    def _expression(self, expr: ast.expr) -> ast.expr:
        result = self.visit(expr)
        assert isinstance(result, ast.expr)
        return result

    # -- the generic walk ------------------------------------------------------

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, (ast.JoinedStr, ast.Assert)):
            return node  # f-strings are prose; assertions are not behaviour
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            return self._definition(node)
        for operator, test, setter in list(_conditions(node)):
            for forced in (True, False):
                if self._point(test, operator, ast.Constant(forced)):
                    setter(ast.Constant(forced))
                    return node
        for operator, new in _alternatives(node):
            if self._point(node, operator, new):
                return new
        for name, value in ast.iter_fields(node):
            if name in {"annotation", "returns", "type_comment"}:
                continue
            if isinstance(value, list):
                setattr(node, name, [self._child(v) for v in value])
            elif isinstance(value, ast.AST):
                setattr(node, name, self._child(value))
        return node

    def _child(self, value: Any) -> Any:
        if isinstance(value, ast.stmt) and self.in_function:
            return self._inside(value)
        if isinstance(value, ast.AST):
            return self.visit(value)
        return value

    def _point(self, node: ast.AST, operator: str, new: ast.AST) -> bool:
        """Number one mutation point; True when it is the one to apply."""
        index = self.count
        self.count += 1
        original, mutated = _show(node), _show(new)
        where = ".".join(self.scope) or "<module>"
        self.seen.append((getattr(node, "lineno", 0), where, operator, original, mutated))
        if index == self.target:
            self.applied = (original, mutated)
            return True
        return False


def _docstring(body: list[ast.stmt]) -> bool:
    first = body[0] if body else None
    return isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)


def _show(node: ast.AST) -> str:
    if isinstance(node, ast.Pass):
        return "pass"
    text = ast.unparse(node).strip()
    line = " ".join(text.split())
    return line if len(line) <= 120 else line[:117] + "..."


def mutants(module: str, source: str, path: str) -> tuple[Mutant, ...]:
    """Every mutant of ``source`` (the text of ``module``, shown as ``path``)."""
    walker = _Walker()
    walker.visit(ast.parse(source))
    counts: dict[tuple[str, str, str, str], int] = {}
    out = []
    for index, (line, scope, operator, original, mutated) in enumerate(walker.seen):
        same = (scope, operator, original, mutated)
        occurrence = counts.get(same, 0)
        counts[same] = occurrence + 1
        out.append(
            Mutant(module, path, line, scope, operator, original, mutated, occurrence, index)
        )
    return tuple(out)


def mutated_tree(mutant: Mutant, source: str) -> ast.Module:
    """The module's syntax tree with ``mutant`` applied."""
    walker = _Walker(mutant.index)
    tree = walker.visit(ast.parse(source))
    if walker.applied != (mutant.original, mutant.mutated):
        raise ValueError(f"mutant {mutant.key} does not apply to this source")
    assert isinstance(tree, ast.Module)
    return ast.fix_missing_locations(tree)


def install(mutant: Mutant, source: str) -> None:
    """Put ``mutant`` into the live module (for a process that exits afterwards)."""
    live = importlib.import_module(mutant.module)
    tree = mutated_tree(mutant, source)
    scope = mutant.scope.split(".")
    owner: Any = live
    for depth, name in enumerate(scope):
        if mutant.scope == "<module>":
            break
        found = vars(owner).get(name) if depth else getattr(owner, name, None)
        if isinstance(found, type):
            owner = found
            continue
        function = _function(found)
        if function is None:
            raise ValueError(f"cannot find {mutant.scope} in {mutant.module}")
        function.__code__ = _mutated_code(tree, mutant, function)
        return
    _rebind(mutant, tree, live, owner)


def _mutated_code(tree: ast.Module, mutant: Mutant, function: types.FunctionType) -> types.CodeType:
    """
    The code of the mutated ``function``, with the free variables the live one has.

    A function's closure cannot be changed, and its code may only be swapped
    for one with the same free variables.  A mutant can drop the last use of
    one (deleting ``super().__init__(...)`` drops the implicit ``__class__``
    cell the compiler adds for a zero-argument ``super``), so each lost name is
    referenced again in a branch that never runs: the compiler then keeps the
    cell and the mutant runs without it.
    """
    qualname = _qualname(function)
    code = _code_of(compile(tree, mutant.path, "exec"), qualname)
    lost = [name for name in function.__code__.co_freevars if name not in code.co_freevars]
    if lost:
        node = _definition_node(tree, mutant.scope.split("."))
        keep = ast.Tuple([ast.Name(name, ast.Load()) for name in lost], ast.Load())
        node.body.append(ast.If(ast.Constant(False), [ast.Expr(keep)], []))
        ast.fix_missing_locations(tree)
        code = _code_of(compile(tree, mutant.path, "exec"), qualname)
    return code


def _definition_node(tree: ast.Module, scope: list[str]) -> ast.FunctionDef:
    """The definition at ``scope`` (class and function names, outermost first)."""
    body: list[ast.stmt] = tree.body
    found: ast.stmt | None = None
    for name in scope:
        found = next(
            s for s in body if isinstance(s, (ast.FunctionDef, ast.ClassDef)) and s.name == name
        )
        if isinstance(found, ast.FunctionDef):
            return found
        body = found.body
    raise LookupError(".".join(scope))


def _function(found: Any) -> types.FunctionType | None:
    """The function whose code the source defines: unwrapped from decorators first."""
    for candidate in (
        getattr(found, "__wrapped__", None),
        getattr(found, "__func__", None),
        getattr(found, "fget", None),
        found,
    ):
        if isinstance(candidate, types.FunctionType):
            return candidate
    return None


def _qualname(function: types.FunctionType) -> str:
    return function.__code__.co_qualname


def _code_of(code: types.CodeType, qualname: str) -> types.CodeType:
    """The code object compiled for the function called ``qualname``."""
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_qualname == qualname:
                return const
            try:
                return _code_of(const, qualname)
            except LookupError:
                continue
    raise LookupError(qualname)


def _rebind(mutant: Mutant, tree: ast.Module, live: types.ModuleType, owner: Any) -> None:
    """Re-run the one mutated module- or class-level assignment and rebind its name."""
    body = tree.body
    if owner is not live:
        [cls] = [s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == owner.__name__]
        body = cls.body
    for stmt in body:
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
            continue
        if not stmt.lineno <= mutant.line <= (stmt.end_lineno or stmt.lineno):
            continue
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        plain = ast.Assign([ast.Name(n, ast.Store()) for n in names], stmt.value)
        module = ast.fix_missing_locations(ast.Module([plain], type_ignores=[]))
        namespace: dict[str, Any] = {}
        exec(compile(module, mutant.path, "exec"), vars(live), namespace)  # noqa: S102
        for name in names:
            old = getattr(owner, name)
            setattr(owner, name, namespace[name])
            if owner is live:
                _everywhere(name, old, namespace[name])
        return
    raise ValueError(f"no assignment at line {mutant.line} of {mutant.path}")


def _everywhere(name: str, old: object, new: object) -> None:
    """
    Rebind ``name`` to ``new`` in every harness module that copied it by import.

    The name must match as well as the value: small integers and short strings
    are shared objects, so identity alone would also rebind every unrelated
    constant that happens to hold the same value (a mutant of one module's
    ``3`` would change another's).
    """
    for module in list(sys.modules.values()):
        if module is None or not module.__name__.startswith("harness"):
            continue
        if vars(module).get(name) is old:
            setattr(module, name, new)


def module_source(module: str) -> tuple[str, Path]:
    """The source text and file of an importable module."""
    file = importlib.import_module(module).__file__
    assert file is not None
    path = Path(file)
    return path.read_text(encoding="utf-8"), path
