"""
What the user asked the CLI for, read from the arguments they would have typed.

``harness record -- ARGS`` takes the CLI's own command line, so it is parsed
with the fake CLI's parser (the same options, values and refusals as the
real program) and reduced to what a model-api scenario's ``request`` can say:
the prompt, the schema, the output format, ``--fallback-model`` and
``--allowedTools`` for claude, ``--max-turns`` for codebuddy.  An option the
scenario could not replay is refused by name rather than dropped: a recording that silently lost
``--model`` would reproduce a different run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.catalogue import jsonvalue
from harness.exceptions import CannotWrite
from harness.record.transcript import MAX_DEPTH, depth
from providers_fake.cli.argv import Parsed
from providers_fake.cli.replay import cli_spec

#: Environment variables that change what the CLI does, written into the scenario when set.
#: Claude Code's documented knobs on a run, plus the retry limit the captures show.
RELEVANT_ENV: Mapping[str, tuple[str, ...]] = {
    "claude": (
        "MAX_STRUCTURED_OUTPUT_RETRIES",
        "CLAUDE_CODE_MAX_OUTPUT_TOKENS",
        "MAX_THINKING_TOKENS",
        "ANTHROPIC_MODEL",
        "ANTHROPIC_SMALL_FAST_MODEL",
        "ANTHROPIC_DEFAULT_OPUS_MODEL",
        "ANTHROPIC_DEFAULT_SONNET_MODEL",
        "ANTHROPIC_DEFAULT_HAIKU_MODEL",
        "API_TIMEOUT_MS",
        "DISABLE_PROMPT_CACHING",
    ),
    "codex": (),
    "codebuddy": (),
}
#: Where each CLI's key comes from in the user's environment, and the variable the
#: CLI reads it from under the harness (codex's provider is configured with FAKE_KEY).
KEYS: Mapping[str, tuple[tuple[str, str], ...]] = {
    "claude": (("ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY"),
               ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN")),
    "codex": (("OPENAI_API_KEY", "FAKE_KEY"), ("CODEX_API_KEY", "FAKE_KEY")),
    "codebuddy": (("CODEBUDDY_API_KEY", "CODEBUDDY_API_KEY"),),
}  # fmt: skip


@dataclass(frozen=True)
class Asked:
    """The run to record, as far as a model-api scenario can replay it."""

    cli: str
    prompt: str
    #: The schema argument's text (codex: the --output-schema file's content).
    schema: str
    output_format: str = "json"
    fallback_model: str | None = None
    allowed_tools: tuple[str, ...] = ()
    #: codex -m: the model the recording asks the upstream for (the replay asks for any).
    model: str | None = None
    #: codebuddy --max-turns: how the run was bounded.
    max_turns: int | None = None

    def request(self, env: Mapping[str, str], timeout: float) -> dict[str, Any]:
        """The scenario's ``request`` section."""
        section: dict[str, Any] = {"cli": self.cli, "prompt": self.prompt}
        section.update(schema_field(self.schema))
        if self.cli != "codex":
            section["output_format"] = self.output_format
        if self.max_turns is not None:
            section["max_turns"] = self.max_turns
        if self.fallback_model is not None:
            section["fallback_model"] = self.fallback_model
        if self.allowed_tools:
            section["allowed_tools"] = list(self.allowed_tools)
        if env:
            section["env"] = dict(sorted(env.items()))
        section["timeout"] = timeout
        return section

    def args(self) -> tuple[str, ...]:
        """The flags besides prompt, schema and format (as the real target passes them)."""
        out: tuple[str, ...] = ()
        if self.max_turns is not None:
            out += ("--max-turns", str(self.max_turns))
        if self.fallback_model is not None:
            out += ("--fallback-model", self.fallback_model)
        if self.allowed_tools:
            out += ("--allowedTools", ",".join(self.allowed_tools))
        return out


def schema_field(text: str) -> dict[str, Any]:
    """``schema`` when the text is one JSON value without duplicate keys, else ``schema_text``."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in items]
        if len(set(keys)) != len(keys):
            raise ValueError("duplicate keys")
        return dict(items)

    try:
        value = jsonvalue.loads(text, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return {"schema_text": text}
    # A schema nested past what YAML should carry (a size-guard case) stays text.
    return {"schema": value} if depth(value) <= MAX_DEPTH else {"schema_text": text}


def read(cli: str, argv: list[str]) -> Asked:
    """The run `argv` asks `cli` for; `CannotWrite` names what a scenario cannot replay."""
    parsed = cli_spec(cli).parse(argv)
    if parsed.error is not None:
        raise CannotWrite(f"{cli} arguments", "", parsed.error.strip().splitlines()[0])
    reader, accepted = _READERS[cli]
    for key in parsed.options:
        if key not in accepted:
            flag = _flag(cli, key)
            raise CannotWrite(
                f"{cli} arguments",
                flag,
                "a model-api scenario cannot replay this option (it says prompt, schema, "
                f"{_SAYS[cli]}); leave it out to record",
            )
    return reader(parsed)


def _flag(cli: str, key: str) -> str:
    return next(o[0][-1] for o in cli_spec(cli).options if o[1] == key)


def _claude(parsed: Parsed) -> Asked:
    schema = parsed.text("json_schema")
    if schema is None:
        raise CannotWrite("claude arguments", "--json-schema", "required: the scenario is about it")
    prompt = parsed.prompt
    if not prompt:
        raise CannotWrite("claude arguments", "PROMPT", "give the prompt as an argument")
    output_format = parsed.text("output_format") or "json"
    if output_format not in ("json", "stream-json"):
        raise CannotWrite(
            "claude arguments", "--output-format", f"{output_format}: give json or stream-json"
        )
    tools = tuple(t for value in parsed.values("allowed_tools") for t in value.split(",") if t)
    return Asked("claude", prompt, schema, output_format, parsed.text("fallback_model"), tools)


def _codex(parsed: Parsed) -> Asked:
    path = parsed.text("output_schema")
    if path is None:
        raise CannotWrite(
            "codex arguments", "--output-schema", "required: the scenario is about it"
        )
    try:
        schema = Path(path).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise CannotWrite(path, "--output-schema", f"cannot read: {error}") from None
    prompt = parsed.prompt
    if not prompt or prompt == "-":
        raise CannotWrite("codex arguments", "PROMPT", "give the prompt as an argument")
    return Asked("codex", prompt, schema, model=parsed.text("model"))


def _codebuddy(parsed: Parsed) -> Asked:
    schema = parsed.text("json_schema")
    if schema is None:
        raise CannotWrite(
            "codebuddy arguments", "--json-schema", "required: the scenario is about it"
        )
    prompt = parsed.prompt
    if not prompt:
        raise CannotWrite("codebuddy arguments", "PROMPT", "give the prompt as an argument")
    output_format = parsed.text("output_format") or "text"
    turns = parsed.text("max_turns")
    if turns is not None and not (turns.isdigit() and int(turns) > 0):
        raise CannotWrite("codebuddy arguments", "--max-turns", f"{turns}: give a whole number")
    return Asked(
        "codebuddy",
        prompt,
        schema,
        output_format,
        max_turns=None if turns is None else int(turns),
    )


_READERS: Mapping[str, tuple[Callable[[Parsed], Asked], frozenset[str]]] = {
    "claude": (
        _claude,
        frozenset({"print", "output_format", "verbose", "json_schema", "fallback_model",
                   "allowed_tools"}),
    ),
    "codex": (_codex, frozenset({"json", "skip_git_repo_check", "output_schema", "model"})),
    "codebuddy": (
        _codebuddy,
        frozenset({"print", "output_format", "verbose", "json_schema", "max_turns"}),
    ),
}  # fmt: skip
_SAYS = {
    "claude": "--output-format, --fallback-model and --allowedTools",
    "codex": "and -m for the recording",
    "codebuddy": "--output-format and --max-turns",
}


def environment(
    cli: str, source: Mapping[str, str] | None = None
) -> tuple[dict[str, str], dict[str, str]]:
    """(the variables the scenario records, the credentials passed to the CLI only)."""
    source = os.environ if source is None else source
    recorded = {name: source[name] for name in RELEVANT_ENV[cli] if source.get(name)}
    keys: dict[str, str] = {}
    for given, passed in KEYS[cli]:
        if source.get(given) and passed not in keys:
            keys[passed] = source[given]
    return recorded, keys
