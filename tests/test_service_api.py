"""
The service-api seam: targets, the HTTP binding, and services that misbehave.

The reference services are reached three ways and must agree on every
scenario: in process (``reference-inproc`` and ``reference``), and as an
``http:`` target routed to them by a mock transport or served on a real loopback
socket.  A service that is down, slow or answers with something that is
not JSON errors only its own scenario; the run goes on.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from harness import engine, net, targets
from harness.adaptor.launch import InProcess
from harness.catalogue import loader
from harness.catalogue.scenario import Scenario, Seam
from harness.cli import main
from harness.exceptions import BadTargetSpec, NoSuchTarget
from harness.seams.case import CaseResult, execute
from harness.systems.service import ReferenceService
from harness.targets import HttpService
from harness.targets.http import Connection
from tests.service_server import serving

ROOT = Path(__file__).resolve().parent.parent
SUT = "http://sut.test"
Handle = Callable[[net.Request], net.Response]


@pytest.fixture(scope="module")
def services(catalogue: loader.Loaded) -> list[Scenario]:
    return [s for s in catalogue.scenarios if s.seam is Seam.SERVICE_API]


def _by_id(services: list[Scenario]) -> dict[str, Scenario]:
    return {s.id: s for s in services}


def _in_process(scenario: Scenario, handle: Handle) -> CaseResult:
    """Run one scenario on an http: target whose service ``handle`` answers in process."""

    class Routed(HttpService):
        def connect(self) -> Connection:
            client = net.Client(base_url=self.url, transport=net.MockTransport(handle))
            return Connection(client, self.url, self.grace)

    return execute(scenario, Routed.from_spec(f"http:{SUT}"))


def _reference() -> Handle:
    return ReferenceService(InProcess()).handle


def _same(a: CaseResult, b: CaseResult) -> bool:
    return (a.status, a.outcome, a.mismatches) == (b.status, b.outcome, b.mismatches)


# -- the catalogue on every way of reaching the reference ----------------------


def test_catalogue_is_large_enough_and_cites_every_service_clause(
    services: list[Scenario],
) -> None:
    assert len(services) >= 30
    cited = {clause for s in services for clause in s.clauses}
    assert {f"THR-0{n}" for n in range(1, 9)} <= cited
    assert {f"T3-0{n}" for n in range(1, 7)} <= cited
    rows = [s for s in services if s.path.name == "validation.yaml"]
    assert len(rows) >= 20  # seed 000's table, one scenario per row


def test_http_target_through_a_mock_transport_agrees(
    services: list[Scenario],
) -> None:
    inproc = targets.create("reference-inproc")
    differing = []
    for scenario in services:
        a = execute(scenario, inproc)
        b = _in_process(scenario, _reference())  # a fresh service per scenario, like inproc
        assert a.status == "passed", (scenario.id, a.mismatches, a.reason)
        if not _same(a, b):
            differing.append(scenario.id)
    assert differing == []


def test_subprocess_and_inproc_fakes_give_identical_outcomes(services: list[Scenario]) -> None:
    inproc = targets.create("reference-inproc")
    real = targets.create("reference")
    assert [s.id for s in services if not _same(execute(s, inproc), execute(s, real))] == []


def test_whole_seam_over_a_real_socket(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`harness run --target http:URL` against the reference served on loopback."""
    with serving(ReferenceService(InProcess()).handle) as url:
        code = main(
            [
                "run",
                str(ROOT / "scenarios" / "service-api"),
                "--target",
                f"http:{url}",
                "--reports",
                str(tmp_path),
            ]
        )
    out = capsys.readouterr().out
    assert code == 0, out
    document = json.loads((tmp_path / "report.json").read_text())
    assert {c["status"] for c in document["cases"]} == {"passed"}
    assert {c["seam"] for c in document["cases"]} == {"service-api"}


def test_agent_cli_targets_skip_service_scenarios(services: list[Scenario]) -> None:
    result = execute(services[0], targets.create("python:tests.adaptors:reference"))
    assert result.status == "skipped"
    assert "does not serve the service-api seam" in (result.reason or "")


def test_http_target_skips_agent_cli_scenarios(catalogue: loader.Loaded) -> None:
    scenario = next(s for s in catalogue.scenarios if s.seam is Seam.AGENT_CLI)
    assert execute(scenario, HttpService.from_spec(f"http:{SUT}")).status == "skipped"


@pytest.mark.parametrize(
    ("spec", "url"),
    [
        ("http:http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("http:https://sut.example/base/", "https://sut.example/base"),
        ("http://127.0.0.1:9", "http://127.0.0.1:9"),
    ],
)
def test_http_target_specs(spec: str, url: str) -> None:
    target = targets.create(spec)
    assert isinstance(target, HttpService)
    assert (target.url, target.kind, target.name) == (url, "http", spec)


def test_named_http_target_and_bad_spec() -> None:
    assert targets.create("staging=http:http://127.0.0.1:1").name == "staging"
    with pytest.raises(BadTargetSpec, match="give a base URL"):
        targets.create("http:sut.test")
    with pytest.raises(NoSuchTarget, match="http:BASE_URL"):
        targets.create("htp:http://sut.test")


# -- a misbehaving service errors its own scenario; the run goes on ------------

SUBSET = ["throng-format-absent", "throng-object-result-v1", "t3-typed-result-on-task-status"]


def _broken(mode: str) -> Handle:
    reference = _reference()

    def handle(request: net.Request) -> net.Response:
        path = request.url.path
        if mode == "down":
            raise net.ConnectError("[Errno 111] Connection refused", request=request)
        if mode == "slow":
            raise net.ReadTimeout("timed out", request=request)
        if mode == "hung-up":
            raise net.RemoteProtocolError("Server disconnected", request=request)
        if mode == "html":
            html = {"content-type": "text/html"}
            return net.Response(502, text="<html>Bad gateway</html>", headers=html)
        if mode == "empty":
            return net.Response(200, content=b"")
        if mode == "no-sandbox" and path == "/api/initialise":
            return net.Response(202, json={"accepted": True})
        if mode == "binding-500" and path.endswith("/options"):
            return net.Response(500, json={"error": "boom"})
        return reference(request)

    return handle


@pytest.mark.parametrize(
    ("mode", "fragment"),
    [
        ("down", "cannot connect for POST /api/initialise: [Errno 111] Connection refused"),
        ("slow", "POST /api/initialise got no answer within 5.0 s"),
        ("hung-up", "POST /api/initialise failed: RemoteProtocolError: Server disconnected"),
        ("html", "POST /api/initialise answered 502 with a body that is not JSON (text/html)"),
        ("empty", "answered 200 with a body that is not JSON"),
        ("no-sandbox", "answered 202 without a sandboxId string"),
        ("binding-500", "/options answered 500"),
    ],
)
def test_one_bad_service_does_not_stop_the_run(
    services: list[Scenario], mode: str, fragment: str
) -> None:
    by_id = _by_id(services)
    victim = SUBSET[1]
    results = [
        _in_process(by_id[i], _broken(mode) if i == victim else _reference()) for i in SUBSET
    ]
    assert [r.status for r in results] == ["passed", "errored", "passed"]
    reason = results[1].reason or ""
    assert reason.startswith(SUT), reason
    assert fragment in reason, reason


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_down_service_on_a_real_socket(services: list[Scenario]) -> None:
    target = HttpService.from_spec(f"http:http://127.0.0.1:{_closed_port()}")
    result = execute(_by_id(services)["throng-format-absent"], target)
    assert result.status == "errored"
    assert "cannot connect for POST /api/initialise" in (result.reason or "")


def test_slow_service_on_a_real_socket(services: list[Scenario]) -> None:
    def slow(request: net.Request) -> net.Response:
        time.sleep(1.0)
        return net.Response(202, json={"sandboxId": "late"})

    with serving(slow) as url:
        target = HttpService(f"http:{url}", url, grace=0.2)
        started = time.monotonic()
        result = execute(_by_id(services)["throng-format-absent"], target)
        elapsed = time.monotonic() - started
    assert result.status == "errored"
    assert f"{url}: POST /api/initialise got no answer within 0.2 s" == result.reason
    assert elapsed < 0.9


def test_non_json_service_on_a_real_socket(services: list[Scenario]) -> None:
    def html(request: net.Request) -> net.Response:
        html = {"content-type": "text/html"}
        return net.Response(200, text="<h1>It works!</h1>", headers=html)

    with serving(html) as url:
        result = execute(_by_id(services)["t3-capabilities"], HttpService.from_spec(f"http:{url}"))
    assert result.status == "errored"
    assert "orchestrator_capabilities answered 200 with a body that is not JSON" in (
        result.reason or ""
    )
    assert "'<h1>It works!</h1>'" in (result.reason or "")


def test_a_wrong_json_answer_is_a_failure_not_an_error(services: list[Scenario]) -> None:
    """Non-conformance is data: a 400 naming the wrong field fails with a diff."""
    reference = _reference()

    def wrong_field(request: net.Request) -> net.Response:
        if request.url.path == "/api/initialise":
            return net.Response(400, json=[{"field": "output_format", "reason": "bad"}])
        return reference(request)

    result = _in_process(_by_id(services)["throng-format-null"], wrong_field)
    assert result.status == "failed"
    [mismatch] = result.mismatches
    assert mismatch.field == "errors"
    assert '"field": "agent.output_format"' in mismatch.expected
    assert '"field": "output_format"' in mismatch.actual


def test_strange_json_shapes_never_crash_the_comparison(services: list[Scenario]) -> None:
    """Answers of any JSON shape compare as mismatches, never as harness errors."""
    shapes: list[object] = [None, 7, "text", [], {}, [1, 2], {"parts": 3}]
    for index, scenario in enumerate(services):
        shape = shapes[index % len(shapes)]

        def odd(request: net.Request, shape: object = shape) -> net.Response:
            status = 202 if request.url.path == "/api/initialise" and shape == {} else 200
            body = {"sandboxId": "s"} if status == 202 else shape
            return net.Response(status, json=body)

        result = _in_process(scenario, odd)
        assert result.status in {"failed", "errored"}, scenario.id
        if result.status == "errored":
            assert result.reason is not None
            assert "Error:" not in result.reason, result.reason  # a clear reason, no crash


# -- reports and the engine -----------------------------------------------------


@pytest.fixture(scope="module")
def outcome_validator() -> jsonschema.Draft202012Validator:
    text = resources.files("harness").joinpath("schemas/service-outcome.schema.json").read_text()
    schema = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_outcomes_fit_their_schema_and_survive_the_engine(
    services: list[Scenario], outcome_validator: jsonschema.Draft202012Validator
) -> None:
    target = targets.create("reference-inproc")
    for scenario in services:
        result = execute(scenario, target)
        assert result.outcome is not None
        data = result.outcome.to_json()
        assert [e.message for e in outcome_validator.iter_errors(data)] == [], scenario.id
        # pytest-xdist carries results between processes as JSON.
        assert engine.result_from_json(engine.result_to_json(result)) == result


def test_failure_summary_names_what_the_service_did(services: list[Scenario]) -> None:
    by_id = _by_id(services)
    target = targets.create("reference-inproc")
    outcome = execute(by_id["throng-unsatisfiable-retries-exhausted"], target).outcome
    assert outcome is not None
    assert outcome.summary() == "initialise 202, turn failed"
    outcome = execute(by_id["t3-cursor-schema-fails-fast"], target).outcome
    assert outcome is not None
    assert outcome.summary() == "delegate_task failed: result_schema_unsupported"


def test_show_documents_a_service_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "t3-backslash-through-follow-up", str(ROOT / "scenarios")]) == 0
    out = capsys.readouterr().out
    assert "seam: service-api" in out
    assert "T3-06: Values pass through byte-exact" in out
    # The family's lines and the case's, as written.
    assert "  service: t3\n" in out
    assert "  - id: t3-backslash-through-follow-up\n" in out
    assert "typed_result: " in out


def test_show_documents_a_throng_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "throng-object-result-v03", str(ROOT / "scenarios")]) == 0
    out = capsys.readouterr().out
    assert "  service: throng\n" in out
    assert "turn: {a2a: v0.3}" in out
    assert "steps: [init, {structured_output: {status: green}}, result]" in out
