"""
What Claude Code knows of each model it can run, where the loop's notes depend on it.

After tool results the CLI tells some models how many tokens the session has
left (`<total_tokens>N tokens left</total_tokens>`, B-14), and, once the run
has fallen back to another model, which model they are (B-34).  Where these
notes go and in what wrapping is a fact of the model, not of the release
(probed on 2.1.235, 2.1.328 and 2.1.332 with every model the pinned release
knows, as ``ANTHROPIC_MODEL`` and as ``--fallback-model``):

- ``result``: appended to the last tool result's text, each note inside
  ``<system-reminder>`` (the 3.x and 4.x models but Opus 4.8);
- ``system``: one system message after the results, the notes joined by a
  blank line (the 5.x models, Opus 4.8, any model without a card);
- ``system, wrapped``: the same message with each note inside
  ``<system-reminder>`` (Sonnet 5).

Which models hear the token count changed with the release: every model up
to 2.1.312 (`ClaudeProfile.token_notes`), from 2.1.314 only those whose card
says so.  Only four models are told that the user has not heard from them in
a while (B-25: Opus 5.5, Sonnet 5.5, Fable 5.1, Mythos 5.1).  Two models also
get a planning hint at the end of such a request (B-35), and a refusal is
worded per model (B-09): briefly, or naming a support article.  A model a
release does not know takes the card of the longest model id it starts with
(2.1.235 treats claude-sonnet-5-5 as claude-sonnet-5).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

#: What the requests after tool results end with for some models (B-35), after the
#: cache mark and never kept in the conversation (probed on 2.1.328).
PLANNING_HINT = (
    "First privately list what you need next; then request every item that doesn't depend "
    "on another's result in this one response."
)
#: Where a model's notes go.
IN_RESULT = "result"
IN_SYSTEM = "system"


@dataclass(frozen=True)
class Card:
    """One model as the CLI describes it to itself."""

    #: The name the model is told it has ("Sonnet 4.5").
    name: str
    #: Its knowledge cutoff ("January 2025"), which the 3.x models are not told.
    cutoff: str | None
    #: `IN_RESULT` or `IN_SYSTEM`.
    place: str = IN_SYSTEM
    #: Whether each note is wrapped in ``<system-reminder>`` (always so in a result).
    wrapped: bool = False
    #: Whether the model hears the token count from 2.1.314 on.
    tokens: bool = True
    #: Whether a request after tool results ends with `PLANNING_HINT` (B-35).
    hint: bool = False
    #: The support article a refusal's message names (B-09); None: the brief wording.
    article: str | None = None
    #: Whether the model is told when it has not spoken to the user in a while (B-25;
    #: probed on 2.1.328 with every model the release knows, and a model it does not).
    quiet: bool = False
    #: Whether the model is given the task tools (TaskCreate, TaskUpdate, ...) and so
    #: the reminder to use them (B-47; probed on 2.1.328 with every model it knows).
    tasks: bool = False


#: The support article of a refusal by a model without a card of its own article.
DEFAULT_ARTICLE = "8106465"
_FABLE = "15363606"


def _older(name: str, cutoff: str | None) -> Card:
    return Card(name, cutoff, IN_RESULT, wrapped=True, tasks=True)


# fmt: off
CARDS: dict[str, Card] = {
    "claude-3-5-haiku": _older("Claude 3.5 Haiku", None),
    "claude-3-5-sonnet": _older("Claude 3.5 Sonnet", None),
    "claude-3-7-sonnet": _older("Claude 3.7 Sonnet", None),
    "claude-sonnet-4-0": _older("Sonnet 4", "January 2025"),
    "claude-sonnet-4-5": _older("Sonnet 4.5", "January 2025"),
    "claude-sonnet-4-6": _older("Sonnet 4.6", "August 2025"),
    "claude-haiku-4-5": _older("Haiku 4.5", "February 2025"),
    "claude-opus-4-5": _older("Opus 4.5", "May 2025"),
    "claude-opus-4-6": _older("Opus 4.6", "May 2025"),
    "claude-opus-4-7": _older("Opus 4.7", "January 2026"),
    "claude-opus-4-8": Card("Opus 4.8", "January 2026"),
    "claude-opus-5": Card("Opus 5", "May 2026", article="16049681"),
    "claude-opus-5-5": Card(
        "Opus 5.5", "June 2026", tokens=False, article=DEFAULT_ARTICLE, quiet=True
    ),
    "claude-sonnet-5": Card("Sonnet 5", "January 2026", wrapped=True),
    "claude-sonnet-5-5": Card(
        "Sonnet 5.5", "June 2026", tokens=False, article=DEFAULT_ARTICLE, quiet=True
    ),
    "claude-haiku-5-5": Card("Haiku 5.5", "June 2026"),
    "claude-fable-5": Card("Fable 5", "January 2026", article=_FABLE),
    "claude-fable-5-1": Card("Fable 5.1", "June 2026", hint=True, article=_FABLE, quiet=True),
    "claude-fable-5-2": Card("Fable 5.2", "June 2026", tokens=False, article=_FABLE),
    "claude-mythos-5": Card("Mythos 5", "January 2026"),
    "claude-mythos-5-1": Card("Mythos 5.1", "June 2026", hint=True, quiet=True),
    "claude-mythos-5-2": Card("Mythos 5.2", "June 2026", tokens=False),
}
# fmt: on


def card(model: str, known: Iterable[str]) -> Card | None:
    """
    The card of ``model`` on a release that knows the models ``known``: its
    own, else that of the longest known id it extends; None for any other.
    """
    found = stem(model, known)
    return None if found is None else CARDS[found]


def stem(model: str, known: Iterable[str]) -> str | None:
    """The id whose card ``model`` takes on a release that knows ``known`` (see `card`)."""
    known = frozenset(known) & CARDS.keys()
    model = model.lower()  # ids are matched without regard to case (probed)
    if model in known:
        return model
    stems = [k for k in known if model.startswith(k + "-")]
    return max(stems, key=len) if stems else None


def announcement(model: str, found: Card | None) -> str:
    """What a model is told about itself after the run fell back to it (B-34)."""
    if found is None:
        return f"You are powered by the model {model}."
    text = f"You are powered by the model named {found.name}. The exact model ID is {model}."
    return text + (f" Assistant knowledge cutoff is {found.cutoff}." if found.cutoff else "")
