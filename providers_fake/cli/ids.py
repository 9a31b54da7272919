"""
Deterministic identifiers and a fake clock.

Every id and timestamp a fake prints is drawn from a generator seeded by the
script's ``seed``, so a scenario renders byte-identical output on every run
and on every machine, while different scenarios still get different ids.
The generator is splitmix64 over an FNV-1a hash of the seed: a handful of
integer operations, which keeps ``hashlib`` (and its OpenSSL start-up cost)
out of the executables.
"""

from __future__ import annotations

import time

_MASK = (1 << 64) - 1
# 2026-11-29T22:00:00Z, the hour the reference captures were taken.
_EPOCH_MS = 1_795_989_600_000


def _fnv1a(text: str) -> int:
    value = 0xCBF29CE484222325
    for byte in text.encode("utf-8", "surrogatepass"):
        value = ((value ^ byte) * 0x100000001B3) & _MASK
    return value


class Ids:
    """A seeded stream of ids plus a millisecond clock that only moves forward."""

    def __init__(self, seed: str, cli: str) -> None:
        self._state = _fnv1a(cli + "\0" + seed)
        # Spread scenarios over an hour so their timestamps differ too.
        self.now_ms = _EPOCH_MS + self.below(3_600_000)
        self.start_ms = self.now_ms

    def next64(self) -> int:
        """The next 64 pseudo-random bits (splitmix64)."""
        self._state = (self._state + 0x9E3779B97F4A7C15) & _MASK
        value = self._state
        value = ((value ^ (value >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        value = ((value ^ (value >> 27)) * 0x94D049BB133111EB) & _MASK
        return value ^ (value >> 31)

    def below(self, bound: int) -> int:
        return self.next64() % bound

    def hex(self, length: int) -> str:
        """`length` lowercase hex digits."""
        text = ""
        while len(text) < length:
            text += f"{self.next64():016x}"
        return text[:length]

    def uuid4(self) -> str:
        """A string shaped like a random (version 4) UUID."""
        bits = (self.next64() << 64) | self.next64()
        bits = (bits & ~(0xF << 76)) | (0x4 << 76)
        bits = (bits & ~(0x3 << 62)) | (0x2 << 62)
        return _dashed(f"{bits:032x}")

    def uuid7(self) -> str:
        """A string shaped like a time-ordered (version 7) UUID at the current clock."""
        low = (self.next64() << 16) | (self.next64() & 0xFFFF)
        bits = (self.now_ms << 80) | (0x7 << 76) | (low & ((1 << 76) - 1))
        bits = (bits & ~(0x3 << 62)) | (0x2 << 62)
        return _dashed(f"{bits:032x}")

    def advance(self, low: int, high: int) -> int:
        """Move the clock forward by `low`..`high` ms; returns the new time."""
        self.now_ms += low + self.below(high - low + 1)
        return self.now_ms

    def iso(self, offset_hours: int = 0) -> str:
        """The clock as ``2026-11-29T22:42:55.157Z`` (or local time without the Z)."""
        ms = self.now_ms + offset_hours * 3_600_000
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000))
        return f"{stamp}.{ms % 1000:03d}" + ("Z" if offset_hours == 0 else "")

    def compact_stamp(self, offset_hours: int = 0) -> str:
        """The clock as ``20260713223405498`` (date, time and milliseconds)."""
        ms = self.now_ms + offset_hours * 3_600_000
        return time.strftime("%Y%m%d%H%M%S", time.gmtime(ms // 1000)) + f"{ms % 1000:03d}"

    def elapsed_ms(self) -> int:
        return self.now_ms - self.start_ms


def _dashed(digits: str) -> str:
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"
