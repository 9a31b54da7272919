"""The one assertion every broken-scenario table shares: exactly one clear line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.cli import main


def assert_one_clear_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    document: str,
    line: int,
    field: str,
    fragment: str,
) -> None:
    """``harness lint`` on ``document`` prints one ``file:line:col: field: message`` line."""
    path = tmp_path / "broken.yaml"
    path.write_text(document)
    assert main(["lint", str(path)]) == 4
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert len(lines) == 1, out
    match = re.fullmatch(re.escape(str(path)) + r":(\d+):(\d+): ([^:]+): (.+)", lines[0])
    assert match, lines[0]
    assert (int(match[1]), match[3]) == (line, field), lines[0]
    assert fragment in match[4], lines[0]
    assert "Traceback" not in out + err
