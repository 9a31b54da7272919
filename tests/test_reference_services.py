"""
The reference services off the happy path, and the reports of the service-api seam.

The catalogue pins the contract; these tests pin what the reference does
with requests no scenario makes (unknown routes, ids, providers, bodies), so
that a broken binding call is always a JSON answer, and they check that the
coverage table and the edge-case catalogue show Throng and T3.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness import net, targets
from harness.adaptor.launch import InProcess
from harness.catalogue import loader
from harness.catalogue.outcome import Outcome
from harness.catalogue.scenario import Json, Seam
from harness.reports import render
from harness.seams.case import execute
from harness.systems.service import ReferenceService
from harness.systems.throng import field_errors, publication, wrapper_options

ROOT = Path(__file__).resolve().parent.parent


def _call(method: str, path: str, body: Any = None, raw: bytes | None = None) -> tuple[int, Any]:
    app = ReferenceService(InProcess())
    content = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    response = app.handle(net.Request(method, f"http://ref.test{path}", content=content))
    assert response.headers["content-type"] == "application/json"
    return response.status_code, json.loads(response.content)


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "answer"),
    [
        ("GET", "/nowhere", None, 404, {"error": "no route for GET /nowhere"}),
        ("GET", "/api/initialise", None, 404, {"error": "no route for GET /api/initialise"}),
        (
            "GET",
            "/conformance/throng/sandboxes/s-9/options",
            None,
            404,
            {"error": "no sandbox 's-9'"},
        ),
        ("POST", "/conformance/throng/sandboxes/s-9/turns", {}, 404, {"error": "no sandbox 's-9'"}),
        ("POST", "/conformance/t3/tools/cancel_task", {}, 404, {"error": "no tool 'cancel_task'"}),
        (
            "POST",
            "/api/initialise",
            [],
            400,
            [{"field": "manifest", "reason": "must be a JSON object"}],
        ),
        (
            "POST",
            "/api/initialise",
            {"agent": "claude"},
            400,
            [{"field": "agent", "reason": "must be an object"}],
        ),
    ],
)
def test_every_answer_is_json(method: str, path: str, body: Any, status: int, answer: Any) -> None:
    assert _call(method, path, body) == (status, answer)


def test_a_body_that_is_not_json_is_a_json_400() -> None:
    assert _call("POST", "/api/initialise", raw=b"{nope") == (
        400,
        {"error": "the request body is not JSON"},
    )


def test_an_unknown_a2a_version_is_refused() -> None:
    app = ReferenceService(InProcess())

    def call(method: str, path: str, body: Any) -> tuple[int, Any]:
        request = net.Request(method, f"http://ref.test{path}", json=body)
        response = app.handle(request)
        return response.status_code, json.loads(response.content)

    status, created = call("POST", "/api/initialise", {"agent": {"platform": "claude"}})
    assert (status, created) == (202, {"sandboxId": "sandbox-1"})
    turn = call("POST", "/conformance/throng/sandboxes/sandbox-1/turns", {"a2a": "v2"})
    assert turn == (400, {"error": "unknown A2A version 'v2'"})


@pytest.mark.parametrize(
    ("tool", "arguments", "code"),
    [
        ("delegate_task", {"provider": "gemini"}, "unknown_provider"),
        ("delegate_task", {}, "unknown_provider"),
        ("delegate_task", {"provider": "opencode"}, "provider_unavailable"),
        ("task_status", {"taskId": "task-9"}, "unknown_task"),
        ("task_status", {}, "unknown_task"),
    ],
)
def test_t3_refusals_are_error_codes(tool: str, arguments: dict[str, Any], code: str) -> None:
    status, answer = _call("POST", f"/conformance/t3/tools/{tool}", {"arguments": arguments})
    assert status == 200
    assert answer["error"]["code"] == code


@pytest.mark.parametrize("operation", ["follow-up", "thread"])
def test_t3_unknown_task_in_binding_operations(operation: str) -> None:
    method = "POST" if operation == "follow-up" else "GET"
    body = {"arguments": {"prompt": "again"}} if method == "POST" else None
    status, answer = _call(method, f"/conformance/t3/tasks/task-9/{operation}", body)
    assert (status, answer["error"]["code"]) == (200, "unknown_task")


def test_wrapper_options_rename_outer_keys_only() -> None:
    schema = {"type": "object", "properties": {"budget_tokens": {"type": "integer"}}}
    agent = {
        "platform": "claude",
        "model": "m",
        "effort": "high",
        "permission_mode": "plan",
        "thinking": {"type": "enabled", "budget_tokens": 10},
        "output_format": {"type": "json_schema", "schema": schema},
        "unknown_key": 1,
    }
    assert wrapper_options(agent) == {
        "model": "m",
        "effort": "high",
        "permissionMode": "plan",
        "thinking": {"type": "enabled", "budgetTokens": 10},
        "outputFormat": {"type": "json_schema", "schema": schema},
    }
    assert wrapper_options({"thinking": "off"}) == {"thinking": "off"}


def test_field_errors_accept_a_good_format() -> None:
    good = {"agent": {"output_format": {"type": "json_schema", "schema": {"type": "object"}}}}
    assert field_errors(good) == []


def test_other_turn_failures_keep_their_message() -> None:
    failed = Outcome.failed("execution_error", "API Error: 529 overloaded", cause="api_error")
    assert publication(failed, True, "v1", "a") == {
        "state": "failed",
        "error": "API Error: 529 overloaded",
    }
    exhausted = Outcome.failed(
        "execution_error", "after 5 attempts", cause="max_structured_output_retries"
    )
    assert (
        publication(exhausted, True, "v0.3", "a")["error"] == "Structured output retries exhausted."
    )
    ok = Outcome.ok(Json.of({"a": 1}), text="prose")
    assert publication(ok, False, "v1", "a")["artifact"]["parts"] == [{"text": "prose"}]


# -- reports -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def report(catalogue: loader.Loaded) -> render.Report:
    target = targets.create("reference")
    services = [s for s in catalogue.scenarios if s.seam is Seam.SERVICE_API]
    results = [execute(s, target) for s in services]
    return render.Report.build(services, results, (), ROOT)


def test_every_service_clause_has_passing_scenarios_on_the_reference(
    report: render.Report,
) -> None:
    rows = [r for r in report.coverage() if r["family"] in {"THR", "T3"}]
    assert len(rows) == 14
    assert [r["clause"] for r in rows if not r["passing_scenarios"]] == []
    text = render.coverage(report)
    assert "## THR: Throng initialise API and A2A artifact" in text
    assert "## T3: T3 delegate_task typed results" in text
    for row in rows:
        passing = len(row["passing_scenarios"])
        assert f"| {row['clause']} | service-api | " in text
        assert f"covered ({passing} passing) |" in text


def test_edge_case_catalogue_has_throng_and_t3_sections(report: render.Report) -> None:
    text = render.catalogue(report)
    assert "## scenarios/service-api/throng" in text
    assert "## scenarios/service-api/t3" in text
    assert "- initialise answers `400`" in text
    assert "- a field error names `agent.output_format.schema`" in text
    assert "- the turn fails with `Structured output retries exhausted.`" in text
    assert '- typedResult: `{"value":{"pattern":"\\\\("}}`' in text
    assert "- delegate_task fails with `result_schema_unsupported`" in text


def test_json_report_names_each_case_seam(report: render.Report) -> None:
    document = json.loads(render.to_json(report))
    assert document["version"] == 2
    assert {c["seam"] for c in document["cases"]} == {"service-api"}
    assert {c["outcome"]["service"] for c in document["cases"]} == {"throng", "t3"}


def test_by_target_expectations_on_the_service_seam(tmp_path: Path) -> None:
    path = tmp_path / "differs.yaml"
    path.write_text(
        "id: throng-differs\n"
        "title: Differs on http targets\n"
        "description: A per-target expectation merged over the shared one.\n"
        "clauses: [THR-03]\n"
        "seam: service-api\n"
        "request: {service: throng, manifest: {agent: {platform: claude}}}\n"
        "expect: {status: 202, options_unset: [outputFormat]}\n"
        "by_target: {http: {status: 200}}\n"
    )
    loaded = loader.load([path])
    assert loaded.problems == ()
    [scenario] = loaded.scenarios
    merged = scenario.expectation_for("http")
    assert getattr(merged, "status", None) == 200
    assert getattr(merged, "options_unset", None) == ("outputFormat",)
    assert getattr(scenario.expectation_for("reference"), "status", None) == 202
    report = render.Report.build([scenario], [], [], tmp_path)
    assert (
        "- on `http` targets the expectation differs: initialise answers `200`; "
        "option `outputFormat` is left unset" in render.catalogue(report)
    )
    result = execute(scenario, targets.create("reference-inproc"))
    assert result.status == "passed"
