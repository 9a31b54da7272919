"""
The mutator behind ``harness mutants``: what it changes, how a mutant is put in place.

The catalogue run itself is `make mutants` (minutes, not part of the suite);
here the operators are checked on a small module, installation on a module
made for the test, and the equivalents file like every hand-written file.
"""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness.mutation import runner
from harness.mutation.operators import Mutant, install, mutants, mutated_tree

SOURCE = textwrap.dedent(
    '''\
    """A module made to be mutated."""

    LIMIT = 3
    NAMES = frozenset({"alpha"})


    def check(value, names):
        """Docstrings are not mutated."""
        if value > LIMIT and value in names:
            return "big and known"
        total = 0
        total += value
        return not names or value - 1 == total


    def message(value):
        raise ValueError(f"value {value} is wrong")
    '''
)


def _shown(source: str) -> set[str]:
    return {f"[{m.operator}] {m.original} -> {m.mutated}" for m in mutants("m", source, "m.py")}


def test_operators() -> None:
    shown = _shown(SOURCE)
    expected = {
        "[constant] 3 -> 4",
        "[constant] 'alpha' -> 'alphaX'",
        "[condition] value > LIMIT and value in names -> True",
        "[condition] value > LIMIT and value in names -> False",
        "[boolean] value > LIMIT and value in names -> value > LIMIT or value in names",
        "[compare] value > LIMIT -> value <= LIMIT",
        "[compare] value in names -> value not in names",
        "[return] return not names or value - 1 == total -> return None",
        "[not] not names -> names",
        "[arithmetic] value - 1 -> value + 1",
        "[compare] value - 1 == total -> value - 1 != total",
        "[delete] total += value -> pass",
        "[delete] raise ValueError(f'value {value} is wrong') -> pass",
    }
    assert expected <= shown
    # Prose is never mutated: the message, the f-string, the docstring.
    assert not any("big and known" in s.split("->")[0] for s in shown if "[constant]" in s)
    assert not any("Docstrings" in s or "is wrong'" in s.split("->")[1] for s in shown)


def test_keys_name_repeated_changes_apart() -> None:
    source = "def f(a):\n    return a == 1 or a == 1\n"
    keys = [m.key for m in mutants("m", source, "m.py") if m.operator == "compare"]
    assert keys == [
        "m.py:f:compare: a == 1 -> a != 1",
        "m.py:f:compare: a == 1 -> a != 1 #2",
    ]


def test_a_mutant_applies_only_to_its_own_source() -> None:
    [first, *_] = mutants("m", SOURCE, "m.py")
    assert mutated_tree(first, SOURCE) is not None
    with pytest.raises(ValueError, match="does not apply"):
        mutated_tree(first, "LIMIT = 'other'\n")


@pytest.fixture
def module(tmp_path: Path) -> Iterator[str]:
    """An importable module (and a second one that imports from it), removed afterwards."""
    (tmp_path / "harness_mutant_subject.py").write_text(SOURCE)
    (tmp_path / "harness_mutant_user.py").write_text(
        "from harness_mutant_subject import LIMIT, check\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        yield "harness_mutant_subject"
    finally:
        sys.path.remove(str(tmp_path))
        for name in ("harness_mutant_subject", "harness_mutant_user"):
            sys.modules.pop(name, None)


def _mutant(name: str, shown: str) -> tuple[Mutant, str]:
    [found] = [
        m
        for m in mutants(name, SOURCE, "subject.py")
        if f"[{m.operator}] {m.original} -> {m.mutated}" == shown
    ]
    return found, SOURCE


def test_install_swaps_the_code_that_every_importer_calls(module: str) -> None:
    user = importlib.import_module("harness_mutant_user")
    assert user.check(5, {5}) == "big and known"
    mutant, source = _mutant(module, "[compare] value > LIMIT -> value <= LIMIT")
    install(mutant, source)
    assert user.check(5, {5}) is False  # the copy imported elsewhere runs the mutant too


def test_install_rebinds_a_constant_where_it_was_imported(module: str) -> None:
    user = importlib.import_module("harness_mutant_user")
    subject = importlib.import_module(module)
    mutant, source = _mutant(module, "[constant] 3 -> 4")
    install(mutant, source)
    assert (subject.LIMIT, user.LIMIT) == (4, 4)
    assert subject.check(4, {4}) is False


def test_equivalents_file_problems_are_one_line_each(tmp_path: Path) -> None:
    path = tmp_path / "mutants.yaml"
    path.write_text(
        "equivalent:\n"
        "  - mutant: 'harness/adaptor/codex.py:Codex:constant: False -> True'\n"
        "    reason: the only transport ignores the plan's transport\n"
        "  - mutant: not a key\n"
        "    reason: short\n"
    )
    _, problems = runner.load_equivalents(path)
    lines = sorted(str(p) for p in problems)
    assert lines[0].startswith(f"{path}:4:")
    assert "equivalent[1].mutant" in lines[0]
    assert any(line.startswith(f"{path}:5:") for line in lines)


def test_the_listed_equivalents_are_well_formed() -> None:
    equivalents, problems = runner.load_equivalents(Path("baselines/mutants.yaml"))
    assert problems == []
    keys = {m.key for m, _ in runner.all_mutants(runner.MODULES)}
    # Every listed mutant exists (whether it still survives is make mutants' job).
    assert set(equivalents.reasons) <= keys


def test_install_leaves_other_constants_of_the_same_value_alone(module: str) -> None:
    importlib.import_module("harness.systems.claude.loop")  # MIDSTREAM_RESUMES = 3, say
    # Every harness constant that holds the subject's 3 (the same small-integer object).
    threes = {
        (name, attr)
        for name, live in list(sys.modules.items())
        if name.startswith("harness.") and live is not None
        for attr, value in vars(live).items()
        if attr.isupper() and type(value) is int and value == 3
    }
    assert threes  # the harness has such constants, or this checks nothing
    mutant, source = _mutant(module, "[constant] 3 -> 4")
    install(mutant, source)
    assert {(n, a) for n, a in threes if getattr(sys.modules[n], a) != 3} == set()


SUPER_SOURCE = textwrap.dedent(
    '''\
    """Methods that call a zero-argument super(), which needs the __class__ cell."""


    class Base:
        def text(self):
            return "base"


    class Child(Base):
        def __init__(self):
            self.ready = True
            super().__init__()

        def text(self):
            own = ""
            return own if own else super().text()
    '''
)


@pytest.fixture
def super_module(tmp_path: Path) -> Iterator[str]:
    (tmp_path / "harness_mutant_super.py").write_text(SUPER_SOURCE)
    sys.path.insert(0, str(tmp_path))
    try:
        yield "harness_mutant_super"
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("harness_mutant_super", None)


@pytest.mark.parametrize(
    ("shown", "check"),
    [
        # The mutant drops the method's only super(): its code loses __class__.
        ("[delete] super().__init__() -> pass", lambda m: m.Child().ready),
        (
            "[return] return own if own else super().text() -> return None",
            lambda m: m.Child().text() is None,
        ),
        # A mutant that keeps super() still installs and still reaches the base.
        ("[constant] '' -> 'X'", lambda m: m.Child().text() == "X"),
    ],
)
def test_install_a_mutant_of_a_method_that_calls_super(
    super_module: str, shown: str, check: Callable[[object], bool]
) -> None:
    [mutant] = [
        m
        for m in mutants(super_module, SUPER_SOURCE, "super.py")
        if f"[{m.operator}] {m.original} -> {m.mutated}" == shown
    ]
    live = importlib.import_module(super_module)
    assert live.Child().text() == "base"
    install(mutant, SUPER_SOURCE)
    assert check(live)
    assert live.Child.__init__.__code__.co_freevars == ("__class__",)
