"""
Nothing is fetched for a ``$ref``: not over the network, not from the file system.

Every validator of a scenario's schema is built with a registry holding only
the document's own resources.  A listener on a loopback port stands where a
remote schema would be; whatever the harness does with a schema pointing at
it, no connection may arrive.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import targets
from harness.catalogue import loader
from harness.catalogue.outcome import Outcome
from harness.seams.case import execute


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    yield server
    server.close()


def _arrived(server: socket.socket) -> int:
    count = 0
    while True:
        try:
            connection, _ = server.accept()
        except BlockingIOError:
            return count
        connection.close()
        count += 1


def _schemas(port: int, secret: Path) -> list[object]:
    remote = f"http://127.0.0.1:{port}/schema.json"
    return [
        {"$ref": remote},
        {"type": "object", "properties": {"cause": {"$ref": remote}}},
        {"properties": {"a": {"$id": f"http://127.0.0.1:{port}/a", "$ref": "b.json"}}},
        {"$ref": secret.as_uri()},
    ]


def _agent_cli(folder: Path, schema: object) -> Path:
    (folder / "fetch.yaml").write_text(
        json.dumps(
            {
                "id": "fetch-probe",
                "title": "A schema pointing elsewhere",
                "description": "Its $ref names a resource outside the document.",
                "clauses": ["SCH-05"],
                "seam": "agent-cli",
                "request": {"driver": "codex", "schema": schema},
                "provider": {
                    "steps": [
                        "thread.started",
                        "turn.started",
                        {"agent_message": '{"cause": "x"}'},
                        "turn.completed",
                    ]
                },
                "expect": {"error": "invalid_output_schema", "launches": 0},
            }
        ),
        encoding="utf-8",
    )
    return folder


@pytest.mark.parametrize("index", range(4))
def test_an_adaptor_schema_never_fetches(
    tmp_path: Path, listener: socket.socket, index: int
) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text('{"type": "string"}', encoding="utf-8")
    schema = _schemas(listener.getsockname()[1], secret)[index]
    loaded = loader.load([_agent_cli(tmp_path, schema)])
    assert loaded.problems == ()
    result = execute(loaded.scenarios[0], targets.create("reference-inproc"))
    assert result.status == "passed", (result.mismatches, result.reason)
    outcome = result.outcome
    assert isinstance(outcome, Outcome)
    assert "resolves nowhere" in (outcome.message or "")
    assert _arrived(listener) == 0


def test_a_model_api_schema_never_fetches(tmp_path: Path, listener: socket.socket) -> None:
    remote = f"http://127.0.0.1:{listener.getsockname()[1]}/schema.json"
    (tmp_path / "fetch.yaml").write_text(
        json.dumps(
            {
                "id": "model-fetch-probe",
                "title": "A schema pointing elsewhere",
                "description": "Claude Code cannot resolve it and refuses the schema.",
                "clauses": ["LOOP-02"],
                "seam": "model-api",
                "request": {"cli": "claude", "schema": {"$ref": remote}},
                "provider": {"model_script": [{"tool": {"cause": "x"}}]},
                # What the real binary does (can't resolve reference), so the case
                # lints complete; this test checks only that nothing is fetched.
                "expect": {
                    "exit_code": 1,
                    "requests": 0,
                    "line_types": [],
                    "no_structured_output": True,
                },
            }
        ),
        encoding="utf-8",
    )
    loaded = loader.load([tmp_path])
    assert loaded.problems == ()
    execute(loaded.scenarios[0], targets.create("reference-inproc"))
    assert _arrived(listener) == 0
