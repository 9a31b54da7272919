"""The model cards of the Claude Code model: which notes a model hears, and where."""

from __future__ import annotations

from harness.systems.claude import models
from harness.systems.claude.profile import ClaudeProfile


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
