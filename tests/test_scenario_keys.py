"""
The scenario keys for what users report (issue 24): text output, the items of
codex's events, the ``-o`` file, and how the reference models print them.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from harness.seams.model_api.expect import compare, expectation_of
from harness.seams.model_api.values import ModelApiOutcome, ModelApiRequest, text_result
from harness.systems import codex_exec
from harness.systems.claude.run import text_line
from providers_fake.api import Script
from providers_fake.api.openai import _items


def _codex(lines: tuple[object, ...], stdout: str | None = None) -> ModelApiOutcome:
    return ModelApiOutcome("codex", 0, "", False, lines, None, stdout=stdout)


def _events(*texts: str, completed: bool = True) -> bytes:
    lines: list[object] = [{"type": "thread.started", "thread_id": "t-1"}]
    lines.append({"type": "item.completed", "item": {"type": "error", "message": "No metadata."}})
    lines.append({"type": "turn.started"})
    for number, text in enumerate(texts):
        item = {"id": f"item_{number}", "type": "agent_message", "text": text}
        lines.append({"type": "item.completed", "item": item})
    if completed:
        lines.append({"type": "turn.completed", "usage": {"input_tokens": 12, "output_tokens": 7}})
    else:
        lines.append({"type": "error", "message": "boom"})
        lines.append({"type": "turn.failed", "error": {"message": "boom"}})
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def test_text_output_is_read_as_its_result_and_parsed_when_json() -> None:
    assert text_result('{"ok":true}\n') == {
        "type": "text",
        "result": '{"ok":true}',
        "structured_output": {"ok": True},
    }
    assert text_result("Error: Reached max turns (1)")["structured_output"] is None
    assert text_result("\n\n")["result"] == "\n"  # one line end is the printer's, not the text's


def test_stdout_is_compared_exactly() -> None:
    outcome = _codex((), stdout="{}\n")
    assert compare(expectation_of({"stdout": "{}\n"}), outcome) == ()
    (mismatch,) = compare(expectation_of({"stdout": "{}"}), outcome)
    assert mismatch.field == "stdout"


def test_items_match_in_order_and_a_null_field_must_be_absent() -> None:
    lines: tuple[object, ...] = tuple(
        json.loads(line) for line in _events("one", "two").decode().splitlines()
    )
    outcome = _codex(lines)
    fits = [
        [{"type": "agent_message", "text": "one"}, {"text": "two", "phase": None}],
        [{"type": "error"}, {"text": "two"}],
    ]
    for items in fits:
        assert compare(expectation_of({"items": items}), outcome) == (), items
    misses = [
        [{"text": "two"}, {"text": "one"}],  # out of order
        [{"text": "one", "id": "item_1"}],  # a field that differs
        [{"text": "one", "phase": "commentary"}],  # a field the item lacks
    ]
    for items in misses:
        (mismatch,) = compare(expectation_of({"items": items}), outcome)
        assert mismatch.field == "items", items
    with_phase = _codex(({"type": "item.completed", "item": {"text": "x", "phase": "c"}},))
    (mismatch,) = compare(expectation_of({"items": [{"text": "x", "phase": None}]}), with_phase)
    assert mismatch.field == "items"


def test_the_request_args_carry_the_new_flags() -> None:
    claude = ModelApiRequest("claude", "{}", max_turns=2, tools=())
    assert claude.args() == ("--max-turns", "2", "--tools", "")
    codex = ModelApiRequest("codex", "{}", output_last_message="last.txt", output_format="text")
    assert codex.args() == ("-o", "last.txt")
    assert codex.text_output
    assert not claude.text_output


def test_a_tool_left_out_by_tools_runs_no_command() -> None:
    script = json.dumps([{"tool_name": "Bash", "tool": {"command": "pwd"}}])
    assert ModelApiRequest("claude", "{}", script).runs_commands()
    assert not ModelApiRequest("claude", "{}", script, tools=()).runs_commands()
    assert ModelApiRequest("claude", "{}", script, tools=("Bash",)).runs_commands()


def test_the_fakes_message_items_carry_their_phase() -> None:
    (step,) = Script.from_json([{"texts": ["a", "b"], "phase": ["commentary"]}]).steps
    phases = [item.get("phase") for item, _text in _items(step, 0)]  # type: ignore[arg-type]
    assert phases == ["commentary", None]
    (step,) = Script.from_json([{"texts": ["a", "b"], "phase": "final_answer"}]).steps
    assert [item["phase"] for item, _text in _items(step, 0)] == ["final_answer"] * 2  # type: ignore[arg-type]


def test_claude_text_output_prints_success_with_a_line_end() -> None:
    assert text_line({"subtype": "success", "result": '{"ok":true}'}, None) == '{"ok":true}\n'
    assert text_line({"subtype": "success", "result": "\n\n"}, None) == "\n\n"
    assert text_line({"subtype": "error_max_turns"}, 3) == "Error: Reached max turns (3)"
    exhausted = {"subtype": "error_max_structured_output_retries", "errors": ["Failed after 1"]}
    assert text_line(exhausted, None) == "Error: Failed after 1"
    fixed = "Error: Failed to provide valid structured output after maximum retries"
    assert text_line(exhausted, None, names_error=False) == fixed  # up to 2.1.259 (B-43)
    assert text_line({"subtype": "error_during_execution"}, None) == "Execution error"


def test_codex_text_output_is_the_last_message() -> None:
    stdout, stderr = codex_exec.as_text(
        _events("Looking.", '{"ok":true}'),
        prompt="Go.",
        model="gpt-probe",
        cwd=Path("/w/probe"),
        version="0.169.0",
    )
    assert stdout == b'{"ok":true}\n'
    assert stderr.startswith("OpenAI Codex v0.169.0\n--------\nworkdir: /w/probe\n")
    assert "session id: t-1\n--------\nuser\nGo.\nwarning: No metadata.\n" in stderr
    assert stderr.endswith('codex\nLooking.\ncodex\n{"ok":true}\ntokens used\n19\n')
    failed, said = codex_exec.as_text(
        _events(completed=False), prompt="Go.", model="m", cwd=Path("/w"), version="0.169.0"
    )
    assert failed == b""
    assert said.endswith("ERROR: boom\nERROR: boom\n")
    # Once an answer of the run completed, a failed turn ends with the session's tokens.
    _, spent = codex_exec.as_text(
        _events(completed=False), prompt="Go.", model="m", cwd=Path("/w"), version="0", spent=19
    )
    assert spent.endswith("ERROR: boom\nERROR: boom\ntokens used\n19\n")


def test_codex_text_output_prints_a_reasoning_summary_as_it_is() -> None:
    events = _events("Looking.").replace(
        b'{"type": "turn.started"}\n',
        b'{"type": "turn.started"}\n'
        + json.dumps(
            {"type": "item.completed", "item": {"type": "reasoning", "text": "Hm."}}
        ).encode()
        + b"\n",
    )
    _, stderr = codex_exec.as_text(events, prompt="Go.", model="m", cwd=Path("/w"), version="0")
    assert "warning: No metadata.\nHm.\ncodex\nLooking.\n" in stderr


def test_codex_text_output_puts_each_log_line_where_it_happened() -> None:
    # Printed after the first message's line (the fourth JSON line), and one at the end.
    logged = ((4, "<time> ERROR refused\n"), (99, "late\n"))
    _, stderr = codex_exec.as_text(
        _events("Looking.", '{"ok":true}'),
        prompt="Go.",
        model="m",
        cwd=Path("/w"),
        version="0.169.0",
        logged=logged,
    )
    assert stderr.endswith(
        'codex\nLooking.\n<time> ERROR refused\ncodex\n{"ok":true}\ntokens used\n19\nlate\n'
    )
    # Stopped before its turn (no events): what it said, no banner.
    said = "Output schema file x is not valid JSON\n"
    nothing = codex_exec.as_text(
        b"", prompt="Go.", model="m", cwd=Path("/w"), version="0.169.0", logged=((0, said),)
    )
    assert nothing == (b"", said)


def test_codex_last_message_file_is_the_answer_or_empty(tmp_path: Path) -> None:
    written = tmp_path / "last.txt"
    codex_exec.write_last_message(_events("Looking.", '{"ok":true}'), written)
    assert written.read_text() == '{"ok":true}'
    codex_exec.write_last_message(_events("Looking.", completed=False), written)
    assert written.read_text() == ""
    never = tmp_path / "never.txt"
    codex_exec.write_last_message(b"", never)  # codex stopped before its turn
    assert not never.exists()


def test_a_file_expectation_of_null_says_the_file_is_absent() -> None:
    expect = expectation_of({"files": {"last.txt": None}})
    absent = _codex(())
    present = replace(absent, files=(("last.txt", ""),))
    assert compare(expect, absent) == ()
    assert [m.field for m in compare(expect, present)] == ["files.last.txt"]
