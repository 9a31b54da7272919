"""
Comparison of an outcome with a scenario's expectation.

Only the fields an expectation names are checked.  The result is a tuple of
`Mismatch` values, each naming the field with what was expected and what
came back, which the reports render as a diff.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from harness._jsonvalue import canonical
from harness._outcome import Diagnostic, Outcome, ProviderCall
from harness._scenario import DiagnosticExpectation, Expectation, ProviderExpectation


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


def _show(value: Any) -> str:
    return canonical(value)


def _diag_matches(want: DiagnosticExpectation, got: Diagnostic) -> bool:
    if want.path != got.path:
        return False
    if want.message is not None and want.message != got.message:
        return False
    return want.message_contains is None or want.message_contains in got.message


def _diag_json(want: DiagnosticExpectation) -> dict[str, str]:
    out = {"path": want.path}
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
        if want != got:
            yield Mismatch(name, _show(want), _show(got))

    if expect.status is not None:
        yield from equal("status", expect.status, actual.status)
    if expect.error is not None:
        yield from equal("error", expect.error, actual.error)
    if expect.cause is not None:
        yield from equal("cause", expect.cause, actual.cause)
    if expect.message_contains is not None and expect.message_contains not in (
        actual.message or ""
    ):
        yield Mismatch(
            "message", f"contains {_show(expect.message_contains)}", _show(actual.message)
        )
    actual_value = None if actual.value is None else actual.value.value
    if expect.value is not None:
        if actual.value is None:
            yield Mismatch("value", _show(expect.value.value), "<no value>")
        else:
            yield from equal("value", expect.value.value, actual_value)
    if expect.no_value and actual.value is not None:
        yield Mismatch("value", "<no value>", _show(actual_value))
    if expect.text is not None:
        yield from equal("text", expect.text.value, actual.text)
    if expect.text_contains is not None and expect.text_contains not in (actual.text or ""):
        yield Mismatch("text", f"contains {_show(expect.text_contains)}", _show(actual.text))
    if expect.mechanism is not None:
        yield from equal("mechanism", expect.mechanism.value, actual.mechanism)
    if expect.diagnostics is not None:
        wanted = expect.diagnostics
        got = actual.diagnostics
        if len(wanted) != len(got) or not all(map(_diag_matches, wanted, got)):
            yield Mismatch(
                "diagnostics",
                _show([_diag_json(d) for d in wanted]),
                _show([d.to_json() for d in got]),
            )
    for want in expect.diagnostics_contain:
        if not any(_diag_matches(want, got) for got in actual.diagnostics):
            yield Mismatch(
                "diagnostics",
                f"contains {_show(_diag_json(want))}",
                _show([d.to_json() for d in actual.diagnostics]),
            )
    if expect.launches is not None:
        yield from equal("launches", expect.launches, actual.launches)
    if expect.raw is not None:
        yield from equal("raw", expect.raw.value, None if actual.raw is None else actual.raw.value)
    if expect.provider is not None:
        yield from _provider(expect.provider, actual.calls)


def _provider(want: ProviderExpectation, calls: tuple[ProviderCall, ...]) -> Iterator[Mismatch]:
    if not calls:
        yield Mismatch("provider", "at least one launch", "no launch")
        return
    call = calls[-1]
    checks: list[tuple[str, bool, Callable[[], str], Callable[[], str]]] = []
    if want.output_format is not None:
        checks.append(
            (
                "provider.output_format",
                call.output_format == want.output_format,
                lambda: _show(want.output_format),
                lambda: _show(call.output_format),
            )
        )
    if want.schema is not None:
        got = None if call.schema is None else call.schema.value
        checks.append(
            (
                "provider.schema",
                got == want.schema.value,
                lambda: _show(want.schema.value if want.schema else None),
                lambda: _show(got),
            )
        )
    if want.no_schema:
        checks.append(
            (
                "provider.schema",
                call.schema is None,
                lambda: "<none>",
                lambda: _show(None if call.schema is None else call.schema.value),
            )
        )
    prompt = call.prompt or ""
    for needle in want.prompt_contains:
        checks.append(
            ("provider.prompt", needle in prompt, lambda n=needle: f"contains {_show(n)}",
             lambda: _show(prompt))
        )
    for needle in want.prompt_excludes:
        checks.append(
            ("provider.prompt", needle not in prompt, lambda n=needle: f"excludes {_show(n)}",
             lambda: _show(prompt))
        )
    if want.prompt_ends_with is not None:
        tail = want.prompt_ends_with
        checks.append(
            ("provider.prompt", prompt.endswith(tail), lambda: f"ends with {_show(tail)}",
             lambda: _show(prompt))
        )
    for arg in want.argv_contains:
        checks.append(
            ("provider.argv", arg in call.argv, lambda a=arg: f"contains {_show(a)}",
             lambda: _show(list(call.argv)))
        )
    for arg in want.argv_excludes:
        checks.append(
            ("provider.argv", arg not in call.argv, lambda a=arg: f"excludes {_show(a)}",
             lambda: _show(list(call.argv)))
        )
    for name, ok, expected, actual in checks:
        if not ok:
            yield Mismatch(name, expected(), actual())
