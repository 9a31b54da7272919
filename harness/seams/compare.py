"""
Comparison of an outcome with a scenario's expectation.

Only the fields an expectation names are checked.  The result is a tuple of
`Mismatch` values, each naming the field with what was expected and what
came back, which the reports render as a diff.  Every seam compares values
with `json_equal`, so a verdict means the same on each: JSON-exact, never
Python's ``==``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from harness.catalogue.jsonvalue import canonical
from harness.catalogue.outcome import Diagnostic, Outcome, ProviderCall
from harness.catalogue.scenario import DiagnosticExpectation, Expectation, ProviderExpectation


@dataclass(frozen=True)
class Mismatch:
    """One field whose actual value differs from the expectation."""

    field: str
    expected: str
    actual: str

    def render(self) -> str:
        pad = "\n" + " " * 12
        expected = self.expected.replace("\n", pad)
        actual = self.actual.replace("\n", pad)
        return f"{self.field}:\n  expected: {expected}\n  actual:   {actual}"


def show(value: Any) -> str:
    """A value as a mismatch renders it: canonical, key-sorted JSON."""
    return canonical(value)


def json_equal(want: Any, got: Any) -> bool:
    """
    Whether two JSON values are the same JSON, the one comparison every
    expectation field of every seam uses.

    Python's ``==`` is wrong for a verdict in three ways, each a way an
    implementation can corrupt a value unnoticed: ``True == 1``, ``1 == 1.0``
    and ``{"a": 1} == {"a": True}``.  Here a boolean equals only a boolean, a
    string only a string, ``null`` only ``null``, and numbers are compared
    within their kind:

    - *Integers* are what an integer literal parses to (no fraction, no
      exponent).  The harness parses every value it reads (an adaptor's
      answer, a CLI's stdout, a service's body, the scenario YAML) with
      Python's ``json`` module or the YAML loader, both of which give an
      arbitrary-precision ``int`` for such a literal, so integers compare
      exactly at any size (9007199254740993 is not 9007199254740992).
    - *Other numbers* (``1.0``, ``2.5``, ``1e3``) parse to ``float`` and
      compare by value, so ``1.0`` equals ``1.00`` and ``1e3`` equals
      ``1000.0``: the text of a fraction is not carried past the parser,
      only its kind and value.  An integer never equals a float, even of
      the same value: ``1`` and ``1.0`` are different JSON texts of different
      kinds, and a target that turns one into the other has changed the
      value it was given (a faithful JavaScript adaptor prints ``1.0`` as
      ``1``, which is why no scenario expects a float with an integral value
      to survive).

    Objects are equal when they have the same keys, each with an equal value
    (key order is not JSON); arrays when they have the same length and equal
    items in order.  Anything that is not a JSON type (a tuple, a set) equals
    nothing: callers compare JSON values, never Python containers.
    """
    if type(want) is not type(got):
        return False
    if isinstance(want, dict):
        return want.keys() == got.keys() and all(json_equal(want[k], got[k]) for k in want)
    if isinstance(want, list):
        return len(want) == len(got) and all(map(json_equal, want, got))
    if want is None or isinstance(want, (bool, int, float, str)):
        return bool(want == got)
    return False


def _diag_matches(want: DiagnosticExpectation, got: Diagnostic) -> bool:
    if not json_equal(want.path, got.path):
        return False
    if want.keyword is not None and not json_equal(want.keyword, got.keyword):
        return False
    if want.message is not None and not json_equal(want.message, got.message):
        return False
    return want.message_contains is None or want.message_contains in got.message


def _pairs_up(wanted: tuple[DiagnosticExpectation, ...], got: tuple[Diagnostic, ...]) -> bool:
    """
    Whether each expected diagnostic matches a different actual one, all used.

    Order is not part of the contract (validators report in their own order),
    so this is a matching, not a zip; the lists are short enough to search.
    """
    if len(wanted) != len(got):
        return False
    if not wanted:
        return True
    first, rest = wanted[0], wanted[1:]
    return any(
        _diag_matches(first, candidate) and _pairs_up(rest, got[:i] + got[i + 1 :])
        for i, candidate in enumerate(got)
    )


def _diag_json(want: DiagnosticExpectation) -> dict[str, str]:
    out = {"path": want.path}
    if want.keyword is not None:
        out["keyword"] = want.keyword
    if want.message is not None:
        out["message"] = want.message
    if want.message_contains is not None:
        out["message_contains"] = want.message_contains
    return out


def compare(expect: Expectation, actual: Outcome) -> tuple[Mismatch, ...]:
    """Every way ``actual`` fails to meet ``expect`` (empty when it meets it)."""
    return tuple(_mismatches(expect, actual))


def _mismatches(expect: Expectation, actual: Outcome) -> Iterator[Mismatch]:
    def equal(name: str, want: Any, got: Any) -> Iterator[Mismatch]:
        if not json_equal(want, got):
            yield Mismatch(name, show(want), show(got))

    if expect.status is not None:
        yield from equal("status", expect.status, actual.status)
    if expect.error is not None:
        yield from equal("error", expect.error, actual.error)
    if expect.cause is not None:
        yield from equal("cause", expect.cause, actual.cause)
    if expect.message_contains is not None and expect.message_contains not in (
        actual.message or ""
    ):
        yield Mismatch("message", f"contains {show(expect.message_contains)}", show(actual.message))
    if expect.message_match is not None and not re.search(
        expect.message_match, actual.message or ""
    ):
        yield Mismatch("message", f"matches {show(expect.message_match)}", show(actual.message))
    actual_value = None if actual.value is None else actual.value.value
    if expect.value is not None:
        if actual.value is None:
            yield Mismatch("value", show(expect.value.value), "<no value>")
        else:
            yield from equal("value", expect.value.value, actual_value)
    if expect.no_value and actual.value is not None:
        yield Mismatch("value", "<no value>", show(actual_value))
    if expect.text is not None:
        yield from equal("text", expect.text.value, actual.text)
    for fragment in expect.text_contains:
        if fragment not in (actual.text or ""):
            yield Mismatch("text", f"contains {show(fragment)}", show(actual.text))
    if expect.mechanism is not None:
        yield from equal("mechanism", expect.mechanism.value, actual.mechanism)
    if expect.diagnostics is not None:
        wanted = expect.diagnostics
        got = actual.diagnostics
        if not _pairs_up(wanted, got):
            yield Mismatch(
                "diagnostics",
                show([_diag_json(d) for d in wanted]),
                show([d.to_json() for d in got]),
            )
    for want in expect.diagnostics_contain:
        if not any(_diag_matches(want, got) for got in actual.diagnostics):
            yield Mismatch(
                "diagnostics",
                f"contains {show(_diag_json(want))}",
                show([d.to_json() for d in actual.diagnostics]),
            )
    if expect.launches is not None:
        yield from equal("launches", expect.launches, actual.launches)
    if expect.raw is not None:
        yield from equal("raw", expect.raw.value, None if actual.raw is None else actual.raw.value)
    yield from _audit_mismatches(expect, actual)
    if expect.provider is not None:
        yield from provider_mismatches(expect.provider, actual.calls)


def _audit_mismatches(expect: Expectation, actual: Outcome) -> Iterator[Mismatch]:
    """What the adaptor kept for audit: its stdout, and the final value it was given."""
    for fragment in expect.stdout_contains:
        if fragment not in (actual.stdout or ""):
            yield Mismatch("stdout", f"contains {show(fragment)}", show(actual.stdout))
    got = None if actual.audit_value is None else actual.audit_value.value
    if expect.audit_value is not None and (
        actual.audit_value is None or expect.audit_value.value != got
    ):
        shown = "<no audit value>" if actual.audit_value is None else show(got)
        yield Mismatch("audit_value", show(expect.audit_value.value), shown)
    if expect.no_audit_value and actual.audit_value is not None:
        yield Mismatch("audit_value", "<no audit value>", show(got))


def provider_mismatches(
    want: ProviderExpectation, calls: tuple[ProviderCall, ...]
) -> Iterator[Mismatch]:
    """How the last launch of the fake differs from what it should have received."""
    if not calls:
        yield Mismatch("provider", "at least one launch", "no launch")
        return
    call = calls[-1]
    prompt = call.prompt or ""
    shown_prompt = show(prompt)
    shown_argv = show(list(call.argv))
    got_schema = None if call.schema is None else call.schema.value
    # (field, holds, expected, actual) for every check the expectation names.
    checks: list[tuple[str, bool, str, str]] = []
    if want.output_format is not None:
        checks.append(
            (
                "provider.output_format",
                json_equal(want.output_format, call.output_format),
                show(want.output_format),
                show(call.output_format),
            )
        )
    if want.schema is not None:
        checks.append(
            (
                "provider.schema",
                call.schema is not None and json_equal(want.schema.value, got_schema),
                show(want.schema.value),
                show(got_schema),
            )
        )
    if want.no_schema:
        checks.append(("provider.schema", call.schema is None, "<none>", show(got_schema)))
    checks += [
        ("provider.prompt", n in prompt, f"contains {show(n)}", shown_prompt)
        for n in want.prompt_contains
    ]
    checks += [
        ("provider.prompt", n not in prompt, f"excludes {show(n)}", shown_prompt)
        for n in want.prompt_excludes
    ]
    if want.prompt_ends_with is not None:
        checks.append(
            (
                "provider.prompt",
                prompt.endswith(want.prompt_ends_with),
                f"ends with {show(want.prompt_ends_with)}",
                shown_prompt,
            )
        )
    checks += [
        ("provider.argv", a in call.argv, f"contains {show(a)}", shown_argv)
        for a in want.argv_contains
    ]
    checks += [
        ("provider.argv", a not in call.argv, f"excludes {show(a)}", shown_argv)
        for a in want.argv_excludes
    ]
    checks += _received_checks(want, call)
    for name, holds, expected, actual in checks:
        if not holds:
            yield Mismatch(name, expected, actual)


def _received_checks(
    want: ProviderExpectation, call: ProviderCall
) -> list[tuple[str, bool, str, str]]:
    """Checks on what the CLI received beyond equality: exact prompt, patterns, pointers."""
    prompt = call.prompt or ""
    checks: list[tuple[str, bool, str, str]] = []
    if want.prompt is not None:
        checks.append(
            ("provider.prompt", call.prompt == want.prompt, show(want.prompt), show(call.prompt))
        )
    checks += [
        ("provider.prompt", re.search(p, prompt) is not None, f"matches {show(p)}", show(prompt))
        for p in want.prompt_match
    ]
    checks += [
        (
            "provider.argv",
            any(re.search(p, arg) for arg in call.argv),
            f"an argument matches {show(p)}",
            show(list(call.argv)),
        )
        for p in want.argv_match
    ]
    schema = None if call.schema is None else call.schema.value
    for point in want.schema_at:
        found, value = resolve_pointer(schema, point.pointer)
        at = f"at {show(point.pointer)}: "
        shown = at + (show(value) if found else "<absent>")
        if point.absent:
            checks.append(("provider.schema", not found, at + "<absent>", shown))
        else:
            assert point.value is not None
            expected = point.value.value
            checks.append(
                ("provider.schema", found and value == expected, at + show(expected), shown)
            )
    return checks


def _index(step: str) -> int:
    """An array index token as RFC 6901 spells it (no sign, no leading zero), else -1."""
    if step.isdigit() and (step == "0" or not step.startswith("0")):
        return int(step)
    return -1


def resolve_pointer(document: Any, pointer: str) -> tuple[bool, Any]:
    """(found, value) at an RFC 6901 JSON pointer into ``document``."""
    node = document
    for raw in pointer.split("/")[1:] if pointer else ():
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and 0 <= _index(token) < len(node):
            node = node[int(token)]
        else:
            return False, None
    return True, node
