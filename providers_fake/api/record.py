"""
What the CLI sent to the fake model API, kept for assertions.

A conformance scenario about the model-api seam is mostly about requests: how
many the CLI made, and what each carried (the StructuredOutput tool and its
``input_schema``, ``strict``, the retry feedback, the enforce reminder, the
model after a fallback, Codex's ``text.format``).  Each request is recorded
whole (the parsed body is kept, the raw bytes too) and the accessors below
name the parts scenarios ask about, so tests do not each re-walk the
Messages or Responses request shape.
"""

from __future__ import annotations

from dataclasses import dataclass

from providers_fake.api.script import STRUCTURED_OUTPUT

ENFORCE_PREFIX = "[structured-output-enforce]"
# Credentials are never kept: recordings end up in reports and failure diffs.
_SECRET_HEADERS = frozenset({"authorization", "x-api-key", "proxy-authorization", "cookie"})


def redact_headers(pairs: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    return tuple(
        (name.lower(), "<redacted>" if name.lower() in _SECRET_HEADERS else value)
        for name, value in pairs
    )


@dataclass(frozen=True)
class RecordedRequest:
    """
    One request as the fake received it, and how it was answered.

    ``api`` is ``anthropic`` (``/v1/messages``), ``openai`` (``/v1/responses``),
    ``chat`` (``.../chat/completions``) or ``unknown``; ``step`` is the script
    step that answered, ``None`` for an unexpected request, whose reason is in
    ``unexpected``, and for a request beside the conversation, which ``side``
    names (a connectivity check).
    """

    index: int
    method: str
    path: str
    headers: tuple[tuple[str, str], ...]
    raw_body: bytes
    body: object
    api: str
    step: int | None
    status: int
    unexpected: str | None = None
    side: str | None = None

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((value for key, value in self.headers if key == wanted), None)

    @property
    def json(self) -> dict[str, object]:
        """The body when it is a JSON object, else an empty dict."""
        return self.body if isinstance(self.body, dict) else {}

    @property
    def model(self) -> object:
        return self.json.get("model")

    @property
    def stream(self) -> bool:
        return self.json.get("stream") is True

    @property
    def top_level_keys(self) -> list[str]:
        return sorted(self.json)

    # -- Anthropic Messages ------------------------------------------------------------

    @property
    def tools(self) -> list[dict[str, object]]:
        tools = self.json.get("tools")
        return [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []

    def tool(self, name: str) -> dict[str, object] | None:
        """The tool named ``name``: a Chat Completions tool is its ``function`` object."""
        for tool in self.tools:
            function = tool.get("function") if self.api == "chat" else tool
            if isinstance(function, dict) and function.get("name") == name:
                return function
        return None

    @property
    def structured_output_tool(self) -> dict[str, object] | None:
        return self.tool(STRUCTURED_OUTPUT)

    @property
    def input_schema(self) -> object:
        """The StructuredOutput tool's ``input_schema`` (None when the tool is absent)."""
        tool = self.structured_output_tool
        return None if tool is None else tool.get("input_schema")

    @property
    def strict(self) -> object:
        """The StructuredOutput tool's ``strict`` flag; None when not sent."""
        tool = self.structured_output_tool
        return None if tool is None else tool.get("strict")

    @property
    def messages(self) -> list[dict[str, object]]:
        messages = self.json.get("messages")
        return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []

    @property
    def messages_after_prompt(self) -> list[dict[str, object]]:
        """
        The conversation from the model's first answer on.

        Claude Code's prompt turn is several messages (a system-reminder user
        message, a ``system`` environment message, the prompt), so "after the
        prompt" is "from the first assistant message", as in the captures.
        On the Responses API (codex) it is the ``input`` from the first item
        that is not a developer or user message (a function call sent back).
        """
        items = self.json.get("input")
        if self.api == "openai" and isinstance(items, list):
            answers = [i for i in items if isinstance(i, dict)]
            given = ("developer", "user", "system")
            asked = [i.get("type") == "message" and i.get("role") in given for i in answers]
            answered = asked.index(False) if False in asked else len(answers)
            return answers[answered:]
        messages = self.messages
        first = next((i for i, m in enumerate(messages) if m.get("role") == "assistant"), None)
        return [] if first is None else messages[first:]

    def _blocks_after_prompt(self, role: str) -> list[dict[str, object]]:
        blocks: list[dict[str, object]] = []
        for message in self.messages_after_prompt:
            content = message.get("content")
            if message.get("role") == role and isinstance(content, list):
                blocks.extend(b for b in content if isinstance(b, dict))
        return blocks

    @property
    def tool_uses(self) -> list[dict[str, object]]:
        """The model's earlier tool calls, as the CLI replays them."""
        return [b for b in self._blocks_after_prompt("assistant") if b.get("type") == "tool_use"]

    @property
    def tool_results(self) -> list[dict[str, object]]:
        return [b for b in self._blocks_after_prompt("user") if b.get("type") == "tool_result"]

    @property
    def retry_feedback(self) -> list[object]:
        """The content of every ``is_error`` tool_result: the CLI's validation messages."""
        return [b.get("content") for b in self.tool_results if b.get("is_error") is True]

    @property
    def enforce_reminders(self) -> list[str]:
        """User text blocks carrying the ``[structured-output-enforce]`` reminder."""
        blocks = self._blocks_after_prompt("user")
        texts = [b.get("text") for b in blocks if b.get("type") == "text"]
        return [t for t in texts if isinstance(t, str) and t.startswith(ENFORCE_PREFIX)]

    # -- OpenAI Responses --------------------------------------------------------------

    @property
    def text_format(self) -> object:
        """Codex's ``text.format`` (``{"type": "json_schema", "strict": true, ...}``)."""
        text = self.json.get("text")
        return text.get("format") if isinstance(text, dict) else None

    # -- the captures' summary ---------------------------------------------------------

    def capture_view(self) -> dict[str, object]:
        """This request in the shape of a capture's ``requests_to_model_api`` entry."""
        view: dict[str, object] = {
            "path": self.path,
            "model": self.model,
            "stream": self.json.get("stream"),
            "top_level_keys": self.top_level_keys,
        }
        if self.api == "openai":
            view["text"] = self.json.get("text")
            view["tool_choice"] = self.json.get("tool_choice")
            return view
        if self.api == "chat":
            return {**view, **self._chat_view()}
        view["structured_output_tool"] = self.structured_output_tool
        view["tool_choice"] = self.json.get("tool_choice")
        view["output_config"] = self.json.get("output_config")
        view["messages_after_prompt"] = self.messages_after_prompt
        return view

    def _chat_view(self) -> dict[str, object]:
        """
        What CodeBuddy Code sends on Chat Completions, without what differs per run:
        the conversation after the prompt keeps each message's ``role``,
        ``content``, ``tool_calls`` and ``tool_call_id``, not the ids and trace
        fields CodeBuddy adds to every message.
        """
        names = []
        for tool in self.tools:
            function = tool.get("function")
            names.append(function.get("name") if isinstance(function, dict) else None)
        kept = ("role", "content", "tool_calls", "tool_call_id")
        return {
            "stream_options": self.json.get("stream_options"),
            "user_agent": self.header("user-agent"),
            "tool_names": names,
            "structured_output_tool": self.structured_output_tool,
            "tool_choice": self.json.get("tool_choice"),
            "messages_after_prompt": [
                {key: m[key] for key in kept if key in m} for m in self.messages_after_prompt
            ],
        }

    def describe(self) -> str:
        """One line for failure messages."""
        what = f"#{self.index} {self.method} {self.path} model={self.model!r} -> {self.status}"
        if self.side:
            what += f" (beside the conversation: {self.side})"
        return what + (f" (unexpected: {self.unexpected})" if self.unexpected else "")
