"""
The classes a generated model-api case draws: one registry, read off the case itself.

A run that agrees on every case says little when the cases never met what
users meet.  Each class here names something of the users' world (a string
class, a provider's error kind, a cut inside a tool block, a resumed
session, a function call) and decides from the case alone whether the case
draws it, so a class counts however the generator came to draw it.
``harness fuzz --stats`` prints, per class, how many cases drew it and how
many of those agreed; `tests/test_fuzz_classes.py` holds the generator to
drawing every class of its CLI in 200 cases.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from harness.fuzz import world

Json = Any
Step = dict[str, Json]


@dataclass(frozen=True)
class Facts:
    """What the class tests read: the CLI, the request and the script's steps."""

    cli: str
    request: dict[str, Json]
    steps: tuple[Step, ...]

    @classmethod
    def of(cls, cli: str, case: dict[str, Json]) -> Facts:
        script = case["provider"]["model_script"]
        steps = script["steps"] if isinstance(script, dict) else script
        return cls(cli, case["request"], tuple(steps))

    def answers(self) -> Iterator[Step]:
        return (s for s in self.steps if "status" not in s)

    def strings(self) -> Iterator[str]:
        """Every string the model's side writes (texts, tool inputs), not the keys' names."""
        for step in self.answers():
            for key, value in step.items():
                if key not in ("tool_name", "stop_reason", "headers"):
                    yield from _strings(value)

    def tool_names(self) -> set[str]:
        names = set()
        for step in self.answers():
            if "tool" in step:
                names.add(step.get("tool_name", "StructuredOutput"))
            for call in step.get("tools", ()):
                names.add(call.get("name", step.get("tool_name", "StructuredOutput")))
        return names


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


@dataclass(frozen=True)
class CaseClass:
    """One class: its name, the CLIs whose cases can draw it, and the test."""

    name: str
    clis: tuple[str, ...]
    test: Callable[[Facts], bool]


BOTH = ("claude", "codex")


def _string_class(name: str) -> Callable[[Facts], bool]:
    return lambda f: any(name in world.string_classes(s) for s in f.strings())


def _anthropic(kind: str) -> Callable[[Facts], bool]:
    return lambda f: any(world.anthropic_kind(s) == kind for s in f.steps)


def _openai(kind: str) -> Callable[[Facts], bool]:
    return lambda f: any(world.openai_kind(s) == kind for s in f.steps)


def _cut(kind: str) -> Callable[[Facts], bool]:
    return lambda f: any(kind in world.cut_kinds(f.cli, s) for s in f.answers())


def _several_messages(f: Facts) -> bool:
    return any(
        len(s.get("texts", ()))
        + len(s.get("texts_after", ()))
        + ("text" in s)
        + ("text_after" in s)
        >= 2
        for s in f.answers()
    )


CLASSES: tuple[CaseClass, ...] = (
    *(CaseClass(f"string:{n}", BOTH, _string_class(n)) for n in world.STRING_CLASSES),
    *(
        CaseClass(f"anthropic:{k}", ("claude",), _anthropic(k))
        for k in (*world.ANTHROPIC_FINAL, *world.ANTHROPIC_RETRIED)
    ),
    *(CaseClass(f"openai:{k}", ("codex",), _openai(k)) for k in world.OPENAI_ERRORS),
    CaseClass("cut", BOTH, _cut("cut")),
    CaseClass("cut:tool-after-text", ("claude",), _cut("cut:tool-after-text")),
    CaseClass(
        "midstream-error", ("claude",), lambda f: any(s.get("midstream_error") for s in f.steps)
    ),
    CaseClass("session:resumed", BOTH, lambda f: bool(f.request.get("earlier_prompts"))),
    CaseClass(
        "output:last-message",
        ("codex",),
        lambda f: f.request.get("output_last_message") is not None,
    ),
    CaseClass("output:text", ("codex",), lambda f: f.request.get("output_format") == "text"),
    CaseClass("item:phase", ("codex",), lambda f: any("phase" in s for s in f.steps)),
    CaseClass("tool:bash", ("claude",), lambda f: "Bash" in f.tool_names()),
    CaseClass("call:shell", ("codex",), lambda f: "shell" in f.tool_names()),
    CaseClass(
        "call:unknown",
        BOTH,
        lambda f: bool(f.tool_names() - {"StructuredOutput", "Bash", "shell"}),
    ),
    CaseClass(
        "tools:several", ("claude",), lambda f: any(len(s.get("tools", ())) > 1 for s in f.steps)
    ),
    CaseClass("reasoning", BOTH, lambda f: any("thinking" in s for s in f.steps)),
    CaseClass("messages:several", BOTH, _several_messages),
    CaseClass(
        "refusal", ("claude",), lambda f: any(s.get("stop_reason") == "refusal" for s in f.steps)
    ),
    CaseClass(
        "stream-json", ("claude",), lambda f: f.request.get("output_format") == "stream-json"
    ),
    CaseClass("settings:env", ("claude",), lambda f: bool(f.request.get("env"))),
    CaseClass("schema:raw-text", BOTH, lambda f: "schema_text" in f.request),
    CaseClass("delay", BOTH, lambda f: any("delay" in s for s in f.steps)),
)


def names(cli: str) -> tuple[str, ...]:
    """Every class a case of ``cli`` can draw, in the registry's order."""
    return tuple(c.name for c in CLASSES if cli in c.clis)


def drawn(cli: str, case: dict[str, Json]) -> tuple[str, ...]:
    """The classes ``case`` draws."""
    facts = Facts.of(cli, case)
    return tuple(c.name for c in CLASSES if cli in c.clis and c.test(facts))
