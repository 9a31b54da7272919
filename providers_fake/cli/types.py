"""
The value `replay` returns, and the buffer renderers fill it through.

`Replay` is a plain slotted class rather than a dataclass or NamedTuple: both
of those pull in modules (``dataclasses``/``inspect``, ``typing``) whose import
time would dominate the start-up of a fake CLI.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    Chunk = (
        tuple[Literal["stdout", "stderr"], bytes]
        | tuple[Literal["sleep"], float]
        | tuple[Literal["hang"]]
    )
else:
    Chunk = tuple


class ScriptError(Exception):
    """The script cannot be replayed; the fake reports it and exits 2."""


class Replay:
    """
    Everything one launch of a fake CLI does, in order.

    ``chunks`` are performed one after the other; then the process dies by
    ``signal`` if it is set, otherwise it exits with ``exit_code``.
    """

    __slots__ = ("chunks", "exit_code", "signal")

    chunks: tuple[Chunk, ...]
    exit_code: int
    signal: int | None

    def __init__(self, chunks: tuple[Chunk, ...], exit_code: int, signal: int | None = None):
        object.__setattr__(self, "chunks", chunks)
        object.__setattr__(self, "exit_code", exit_code)
        object.__setattr__(self, "signal", signal)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Replay is immutable; cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Replay is immutable; cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Replay):
            return NotImplemented
        return (self.chunks, self.exit_code, self.signal) == (
            other.chunks,
            other.exit_code,
            other.signal,
        )

    def __hash__(self) -> int:
        return hash((self.chunks, self.exit_code, self.signal))

    def __repr__(self) -> str:
        return (
            f"Replay(chunks={self.chunks!r}, exit_code={self.exit_code!r}, signal={self.signal!r})"
        )

    @property
    def stdout(self) -> bytes:
        """All stdout bytes up to the first hang (a convenience for tests)."""
        return b"".join(c[1] for c in self.chunks if c[0] == "stdout")

    @property
    def stderr(self) -> bytes:
        return b"".join(c[1] for c in self.chunks if c[0] == "stderr")


class Output:
    """Collects chunks; stops recording for good once a hang is reached."""

    def __init__(self) -> None:
        self.chunks: list[Chunk] = []
        self.hung = False

    def stdout(self, data: bytes) -> None:
        if data and not self.hung:
            self.chunks.append(("stdout", data))

    def stderr(self, data: bytes) -> None:
        if data and not self.hung:
            self.chunks.append(("stderr", data))

    def sleep(self, seconds: float) -> None:
        if seconds > 0 and not self.hung:
            self.chunks.append(("sleep", float(seconds)))

    def hang(self) -> None:
        if not self.hung:
            self.chunks.append(("hang",))
            self.hung = True
