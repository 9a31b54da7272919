"""
The model-api generator's classes of the users' world: drawn, labelled, counted.

Generation only: no binary runs.  A 200-case generation of each CLI must
draw every class the registry names for it (a class never drawn is a
blind spot the agreement figures cannot show); each class's test reads the
case itself, so the labels are checked on cases built by hand; the cases
that carry the world's strings survive the trip through a scenario file;
and ``--stats`` prints a line per class.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.fuzz import classes, model_api, world, write
from harness.fuzz.main import stats_lines
from harness.fuzz.run import Summary, Tally, generate
from harness.fuzz.verdict import AGREE, DISAGREE, Judgement


def _drawn(cli: str, count: int, seed: int) -> tuple[list[dict[str, Any]], Counter[str]]:
    fuzzer = model_api.ModelApiFuzzer(cli, allow_exec=True)
    cases: list[dict[str, Any]] = []
    counts: Counter[str] = Counter()

    def each(case: dict[str, Any], _: bytes) -> None:
        cases.append(case)
        counts.update(fuzzer.classes(case))

    generate(fuzzer.cases(), count, seed, each)
    return cases, counts


@pytest.mark.parametrize("cli", ["claude", "codex"])
def test_a_200_case_generation_draws_every_class(cli: str) -> None:
    cases, counts = _drawn(cli, 200, seed=5)
    assert len(cases) == 200
    missing = [name for name in classes.names(cli) if counts[name] == 0]
    assert not missing, f"never drawn in 200 {cli} cases: {missing}"
    # Each CLI has its own error kinds, and none of the other's.
    other = "openai:" if cli == "claude" else "anthropic:"
    assert not [name for name in counts if name.startswith(other)]


def _case(cli: str, steps: list[dict[str, Any]], **request: Any) -> dict[str, Any]:
    return {"request": {"cli": cli, **request}, "provider": {"model_script": steps}}


def test_string_classes_are_read_off_the_characters() -> None:
    assert world.string_classes("a\u2028b") == {"line-separators"}
    assert world.string_classes("x\u0085") == {"line-separators"}
    assert world.string_classes("\U0001f9ea") == {"astral"}
    assert world.string_classes("e\u0301") == {"combining"}
    assert world.string_classes("a\x00b") == {"nul"}
    assert world.string_classes('say "hi"') == {"escapes"}
    assert world.string_classes("plain été") == set()
    for name, pool in world.STRING_CLASSES.items():
        assert all(name in world.string_classes(s) for s in pool), name


def test_a_case_is_labelled_by_what_it_holds() -> None:
    claude = _case(
        "claude",
        [
            world.ANTHROPIC_FINAL["prompt_too_long"][0],
            {"text": "ok\u2029", "tool": {"cause": "\U0001f600"}},
        ],
        earlier_prompts=["First."],
    )
    drawn = set(classes.drawn("claude", claude))
    expected = {"anthropic:prompt_too_long", "string:line-separators", "string:astral"}
    assert expected | {"session:resumed"} <= drawn
    assert "anthropic:invalid_request_error" not in drawn  # the message decides the kind
    codex = _case("codex", [world.OPENAI_ERRORS["failed:rate_limit_exceeded"][0]])
    assert classes.drawn("codex", codex) == ("openai:failed:rate_limit_exceeded",)
    shell = _case(
        "codex", [{"tool_name": "shell", "tool": {"command": ["ls"]}, "text": "Checking."}]
    )
    assert {"call:shell"} <= set(classes.drawn("codex", shell))
    session = _case(
        "codex",
        [{"texts": ["Checking.", "{}"], "phase": ["commentary", "final_answer"]}],
        earlier_prompts=["First."],
        output_last_message="last.txt",
        output_format="text",
    )
    assert set(classes.drawn("codex", session)) == {
        "session:resumed",
        "output:last-message",
        "output:text",
        "item:phase",
        "messages:several",
    }
    plain = _case("codex", [{"text": "{}"}])
    assert classes.drawn("codex", plain) == ()
    bare = _case("claude", [{"status": 529}])
    assert "anthropic:overloaded_error" in classes.drawn("claude", bare)


def test_a_cut_is_placed_on_the_wire_and_named_by_where_it_lands() -> None:
    step = {"text": "Looking at the log.", "tool": {"cause": "first"}}
    sent = world.events("claude", step)
    kinds = [e.get("type") for e in sent]
    assert kinds[0] == "message_start"
    assert kinds[-2:] == ["message_delta", "message_stop"]
    tool_start = next(
        i
        for i, e in enumerate(sent)
        if e.get("type") == "content_block_start" and e["content_block"]["type"] == "tool_use"
    )
    tool_stop = max(i for i, k in enumerate(kinds) if k == "content_block_stop")
    for after in range(len(sent)):
        found = world.cut_kinds("claude", {**step, "truncate_after": after})
        inside = tool_start < after <= tool_stop
        assert found == ({"cut", "cut:tool-after-text"} if inside else {"cut"}), after
    assert world.cut_kinds("claude", {**step, "truncate_after": len(sent)}) == set()
    # Without a text before it, a cut in the tool block is only a cut.
    alone = {"tool": {"cause": "first"}, "truncate_after": 4}
    assert world.cut_kinds("claude", alone) == {"cut"}
    assert world.cut_kinds("codex", {"text": "{}", "truncate_after": 1}) == {"cut"}


@pytest.mark.parametrize("cli", ["claude", "codex"])
def test_cases_with_the_worlds_strings_load_as_written(cli: str, tmp_path: Path) -> None:
    cases, _ = _drawn(cli, 200, seed=5)
    odd = [
        c for c in cases if {"string:nul", "string:line-separators"} & set(classes.drawn(cli, c))
    ]
    assert odd
    fuzzer = model_api.ModelApiFuzzer(cli)
    for case in odd[:15]:
        doc = write.document(fuzzer, case)
        text = write.dump(doc)
        assert json.dumps(yaml.safe_load(text)) == json.dumps(doc)
        loaded = write.load(text, tmp_path / "case.yaml")
        assert loaded.id == doc["id"]
        script = json.loads(getattr(loaded.request, "model_script"))  # noqa: B009
        assert json.dumps(script) == json.dumps(case["provider"]["model_script"])


def test_stats_print_each_class_with_its_agreement() -> None:
    tally = Tally()
    case = _case("codex", [{"text": "a\u2028b"}])
    tally.add(case, b"", Judgement(AGREE), ("string:line-separators",))
    tally.add(case, b"", Judgement(DISAGREE), ("string:line-separators", "cut"))
    drawn = tally.per_class(classes.names("codex"))
    lines = stats_lines(Summary(2, 1, 1, 0, (), drawn))
    assert lines[0] == f"fuzz: classes drawn (2 of {len(classes.names('codex'))}):"
    by_name = {line.split()[0]: line.split()[1:] for line in lines[1:]}
    assert by_name["string:line-separators"] == ["2", "cases", "1", "agree", "50.0%"]
    assert by_name["cut"] == ["1", "cases", "0", "agree", "0.0%"]
    assert by_name["string:nul"] == ["0", "cases", "0", "agree", "-"]
    assert stats_lines(Summary(0, 0, 0, 0)) == [
        "fuzz: --stats: this seam has no registry of classes"
    ]
