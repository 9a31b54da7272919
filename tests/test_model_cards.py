"""The model cards of the Claude Code model: which notes a model hears, and where."""

from __future__ import annotations

from harness.systems.claude import models, wire, words
from harness.systems.claude.profile import ClaudeProfile
from providers_fake.cli.claude import data


def test_a_known_model_has_its_own_card() -> None:
    known = ClaudeProfile.of("2.1.328").known_models()
    sonnet = models.card("claude-sonnet-4-5", known)
    assert sonnet is not None
    assert (sonnet.place, sonnet.wrapped, sonnet.tokens) == (models.IN_RESULT, True, True)
    newest = models.card("claude-sonnet-5-5", known)
    assert newest is not None
    assert (newest.place, newest.tokens) == (models.IN_SYSTEM, False)


def test_a_model_the_release_does_not_know_takes_the_longest_stem() -> None:
    older = ClaudeProfile.of("2.1.235").known_models()
    assert "claude-sonnet-5-5" not in older
    assert models.card("claude-sonnet-5-5", older) == models.CARDS["claude-sonnet-5"]
    dated = models.card("claude-sonnet-4-5-20250929", older)
    assert dated == models.CARDS["claude-sonnet-4-5"]
    # A stem must end at a dash: claude-opus-5x is no claude-opus-5.
    assert models.card("claude-opus-5x", older) is None
    assert models.card("my-custom-model", older) is None


def test_the_announcement_names_the_model_and_its_cutoff_when_it_has_one() -> None:
    sonnet = models.CARDS["claude-sonnet-4-5"]
    assert models.announcement("claude-sonnet-4-5", sonnet) == (
        "You are powered by the model named Sonnet 4.5. The exact model ID is "
        "claude-sonnet-4-5. Assistant knowledge cutoff is January 2025."
    )
    haiku = models.CARDS["claude-3-5-haiku"]
    assert models.announcement("claude-3-5-haiku", haiku) == (
        "You are powered by the model named Claude 3.5 Haiku. The exact model ID is "
        "claude-3-5-haiku."
    )
    assert models.announcement("x", None) == "You are powered by the model x."


def test_every_card_is_a_model_the_pinned_release_knows() -> None:
    assert set(models.CARDS) <= ClaudeProfile.of().known_models()


def test_the_cli_names_a_model_family_first_without_a_date_or_a_whole_zero() -> None:
    assert data.display_name("claude-opus-5-5") == "Opus 5.5"
    assert data.display_name("claude-3-7-sonnet") == "Sonnet 3.7"
    assert data.display_name("claude-sonnet-4-0") == "Sonnet 4"
    assert data.display_name("Claude-Sonnet-4-5-20250929") == "Sonnet 4.5"
    assert data.display_name("my-custom-model") == "my-custom-model"


def test_a_refusal_is_worded_as_the_models_card_says() -> None:
    pinned = ClaudeProfile.of("2.1.328")
    brief = words.refusal_text(pinned, "claude-sonnet-4-5", "msg_1")
    assert brief.startswith("API Error: Sonnet 4.5 can't help with this.")
    assert brief.endswith("Message ID: msg_1")
    fable = words.refusal_text(pinned, "claude-fable-5-1", "msg_1")
    assert "Fable 5.1's safeguards" in fable
    assert "articles/15363606" in fable
    custom = words.refusal_text(pinned, "my-custom-model", "msg_1")
    assert "my-custom-model's safeguards" in custom
    assert "articles/8106465" in custom
    older = ClaudeProfile.of("2.1.235")
    # A model the release does not know is named as the one whose card it takes...
    assert words.refusal_text(older, "claude-sonnet-5-5", "m").startswith("API Error: Sonnet 5 ")
    # ...and one without a card by its id, briefly, with no message id.
    assert words.refusal_text(older, "claude-haiku-5-5", "m") == (
        "API Error: claude-haiku-5-5 can't help with this. Start a new session to continue."
        "\n\nLearn more: https://www.anthropic.com/legal/aup"
    )


def test_an_id_extending_a_known_one_is_recognised() -> None:
    known = ClaudeProfile.of("2.1.235").known_models()
    assert data.unrecognized_model("claude-opus-5-5", {}, known) is None
    assert data.unrecognized_model("claude-sonnet-4-5-20250929", {}, known) is None
    assert data.unrecognized_model("claude-haiku-5-5", {}, known) is not None
    assert data.unrecognized_model("claude-opus-5x", {}, known) is not None


def test_a_note_placed_in_a_result_joins_the_last_result_before_it_else_stands_alone() -> None:
    # issue 24, probed on 2.1.328: a resumed turn's prompt follows the earlier turn's
    # result in one message, and the note still goes into that result.
    result = {"type": "tool_result", "tool_use_id": "t", "content": "ok"}
    earlier = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "X"}]},
        {"role": "user", "content": [result]},
    ]
    wrapped = "<system-reminder>\nN\n</system-reminder>"
    note = {"role": wire.NOTE, "content": wrapped}
    sent = wire.joined([*earlier, {"role": "user", "content": "prompt"}, note, dict(note)])
    assert sent[-1]["content"][0]["content"] == f"ok\n\n{wrapped}\n\n{wrapped}"
    assert [m["role"] for m in sent] == ["assistant", "user"]
    # Without a result: text blocks before the last message joined, the seam's line break
    # on the last of them only (probed on 2.1.328: the task tools' reminder, then the token
    # note, then the resumed prompt).
    cut = [{"role": "assistant", "content": "x"}, {"role": "user", "content": "resume"}]
    texts = wire.joined([*cut, {"role": "user", "content": "prompt"}, note, dict(note)])
    assert [b["text"] for b in texts[-1]["content"]] == [
        "resume",
        wrapped,
        f"{wrapped}\n",
        "prompt",
    ]
    # After an assistant message: a system message of its own, notes in a row joined.
    alone = wire.joined([*cut[:1], note, dict(note)])
    assert alone[-1] == {"role": "system", "content": f"{wrapped}\n\n{wrapped}"}
