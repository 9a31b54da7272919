"""
Values two layers judge differently: the proof that a keyword is read two ways.

A schema passes through several validators on its way: the adaptor's
Draft 2020-12 (seed 001), the Ajv that Claude Code bundles, and, when its
strict gate is on, the API's decoding against the strict schema Claude Code
derived.  Saying "formats are not checked" helps less than a value that one
layer takes and another refuses, so this module generates values from the
schema (the fuzzer's generator: built from the schema, then broken one way),
adds probes for the classes that are known to part validators (formats, big
integers, ``1.0`` for an integer, astral characters against lengths and
patterns), and keeps each value on which two layers disagree, one per kind
of disagreement.

Generation is seeded: the same schema gives the same values on every run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, cast

import jsonschema

from harness.adaptor.intake import registry_of
from harness.adaptor.validation import ValidationTimeout, bounded
from harness.systems.claude import strict, validator
from harness.systems.claude.profile import ClaudeProfile

Json = Any
#: Generated values per schema, beside the probes.
GENERATED = 40
#: Differences kept per schema, one per kind of disagreement.
KEPT = 12
#: Seconds one layer may take over one value.
BUDGET = 2.0


@dataclass(frozen=True)
class Difference:
    """One value that two layers judge differently."""

    value: Json
    #: Each layer's verdict: "accepts" or the first error it gives.
    verdicts: tuple[tuple[str, str], ...]

    def to_json(self) -> dict[str, Json]:
        return {"value": self.value, **dict(self.verdicts)}


#: A layer: a name and, for a value, None when it takes it or its first error.
Layer = tuple[str, Callable[[Json], str | None]]


def _draft202012(document: Json) -> Callable[[Json], str | None]:
    checker = jsonschema.Draft202012Validator(document, registry=registry_of(document))

    def judge(value: Json) -> str | None:
        try:
            with bounded(BUDGET):
                error = jsonschema.exceptions.best_match(checker.iter_errors(value))
        except ValidationTimeout:
            return "timed out"
        if error is None:
            return None
        where = "/" + "/".join(str(p) for p in error.absolute_path)
        return f"{where}: {error.validator} ({error.message[:80]})"

    return judge


def _ajv(text: str, release: str | None) -> Callable[[Json], str | None]:
    profile = ClaudeProfile.of(release)  # the release's Ajv options (B-16, B-38)

    def judge(value: Json) -> str | None:
        verdict = validator.check(
            text,
            json.dumps(value, ensure_ascii=False),
            precision=profile.multiple_of_precision,
            annotated=profile.converts_annotated,
        )
        return None if verdict.error is None else str(verdict.error).splitlines()[0][:120]

    return judge


def layers(text: str, document: Json, claude: tuple[str, ...]) -> tuple[Layer, ...]:
    """The validators a value meets: the adaptor's, and each Claude Code release's asked."""
    found: list[Layer] = [("adaptor", _draft202012(document))]
    for release in claude:
        found.append((f"claude {release}", _ajv(text, release)))
    if claude:
        derived = strict.derive(document)
        if derived.ok:
            found.append(("claude strict gate", _draft202012(derived.schema)))
    return tuple(found)


def _probes(schema: Json) -> Iterator[Json]:
    """Values aimed at the classes validators are known to read differently."""
    yield from _leaf_probes(schema, 0)


_FORMAT_MISSES = {
    "email": "not-an-email",
    "date-time": "yesterday",
    "date": "2024-13-45",
    "uri": "not a uri",
    "uuid": "not-a-uuid",
    "ipv4": "999.1.1.1",
    "hostname": "-bad-",
}


def _leaf_probes(schema: Json, depth: int) -> Iterator[Json]:
    if depth > 4 or not isinstance(schema, dict):
        return
    kind = schema.get("type")
    kinds = set(kind) if isinstance(kind, list) else {kind}
    for word in ("const", "enum"):
        fixed = schema.get(word)
        for one in fixed if isinstance(fixed, list) else [fixed]:
            if isinstance(one, int) and not isinstance(one, bool):
                yield from (one - 1, one + 1, float(one))  # doubles round big ones
    step = schema.get("multipleOf")
    if isinstance(step, int | float) and not isinstance(step, bool) and step > 0:
        yield from (step * 3, step * 7, step / 2)  # fractions doubles cannot hold
    if "integer" in kinds:
        yield from (1.0, 2**53 + 1, 10**30)
    if "number" in kinds:
        yield from (1e308, 0.1 + 0.2)
    if "string" in kinds or "format" in schema or "pattern" in schema:
        fmt = schema.get("format")
        if isinstance(fmt, str):
            yield _FORMAT_MISSES.get(fmt, "not-a-" + fmt)
        if isinstance(schema.get("maxLength"), int):
            yield "😀" * schema["maxLength"]
        if isinstance(schema.get("minLength"), int) and schema["minLength"] > 0:
            yield "😀" * max(schema["minLength"] - 1, 1)
        if "pattern" in schema:
            yield from ("é", "😀", "")
    props = schema.get("properties")
    if isinstance(props, dict):
        base = {name: _plain(sub) for name, sub in props.items()}
        for name, sub in props.items():
            for probe in _leaf_probes(sub, depth + 1):
                yield {**base, name: probe}


def _plain(schema: Json) -> Json:
    """A simple value of a schema's type, for the fields a probe does not aim at."""
    if not isinstance(schema, dict):
        return None
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    return {"string": "x", "integer": 1, "number": 1, "boolean": True, "array": []}.get(
        str(kind), {} if kind == "object" else None
    )


def generated(schema: Json, count: int = GENERATED, seed: str = "") -> list[Json]:
    """
    ``count`` values drawn from ``schema`` the way the fuzzer draws them, seeded;
    none without hypothesis (the ``fuzz`` extra), when only the probes are judged.
    """
    try:
        from hypothesis import HealthCheck, Verbosity, given, settings  # noqa: PLC0415
        from hypothesis import strategies as st  # noqa: PLC0415

        from harness.fuzz import jsonschemas  # noqa: PLC0415
    except ImportError:
        return []
    drawn: list[Json] = []

    @settings(
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
    )
    @given(st.data())
    def draw(data: st.DataObject) -> None:
        drawn.append(jsonschemas.tool_input(data.draw, schema))

    hook = cast(Any, draw).hypothesis.fuzz_one_input
    for attempt in range(count):
        buffer = hashlib.shake_256(f"{seed}:{attempt}".encode()).digest(1024)
        try:
            hook(buffer)
        except Exception:  # noqa: BLE001, S112 - a draw the generator cannot make is skipped
            continue
    return drawn


def differences(text: str, document: Json, claude: tuple[str, ...]) -> tuple[Difference, ...]:
    """Values the layers disagree on, one of each kind of disagreement, at most `KEPT`."""
    judged = layers(text, document, claude)
    if len(judged) < 2:
        return ()
    kept: dict[str, Difference] = {}
    seen: set[str] = set()
    values = [*_probes(document), *generated(document, seed=text)]
    for value in values:
        key = json.dumps(value, sort_keys=True, ensure_ascii=False)
        if key in seen:
            continue
        seen.add(key)
        verdicts = tuple((name, judge(value) or "accepts") for name, judge in judged)
        accepted = {verdict == "accepts" for _, verdict in verdicts}
        if len(accepted) < 2:
            continue
        kind = "|".join(f"{name}={verdict == 'accepts'}" for name, verdict in verdicts)
        kind += "|" + _shape(value)
        if kind not in kept and len(kept) < KEPT:
            kept[kind] = Difference(value, verdicts)
    return tuple(kept.values())


def _shape(value: Json) -> str:
    """What kind of value it is, so that one example of each kind is kept."""
    if isinstance(value, dict):
        return "object:" + ",".join(sorted(_shape(v) for v in value.values()))
    return type(value).__name__
