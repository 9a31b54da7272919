"""
An agent CLI is one record (`harness.catalogue.agents`): every list of CLIs derives from it.

The lists that cannot import the harness (the fakes' table, the console
scripts, the packaged schemas' files) are held to the registry here; a
throwaway fifth CLI, added to the registry alone in a fresh interpreter,
shows every derived list taking it in; and the tree is searched for any
other file that types every CLI's name, so a hand-written list cannot come
back unnoticed.  docs/architecture.md names the files a new CLI touches.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

import providers_fake
from harness.adaptor import drivers, pipeline
from harness.catalogue import agents, clauses, loader
from harness.targets import protocol
from providers_fake.cli import main as fake_main
from providers_fake.cli.replay import cli_spec

ROOT = Path(__file__).resolve().parent.parent
#: The files that may list every CLI: the registry, and the fakes' own table.
REGISTRIES = {"harness/catalogue/agents.py", "providers_fake/__init__.py"}
#: An enum that names agents without being the registry's: T3's child providers
#: (its own vocabulary, with ``opencode``, which the harness does not drive).
FOREIGN_ENUMS = {"$defs/t3_request/properties/agent"}


def test_the_fakes_table_holds_the_registry_s_clis() -> None:
    assert list(providers_fake.MODULES) == list(agents.DRIVERS)
    assert frozenset(agents.DRIVERS) == providers_fake.CLIS
    for cli in agents.AGENT_CLIS:
        assert cli_spec(cli.name).name == cli.name


def test_every_fake_has_its_console_script_and_no_other() -> None:
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    fakes = {
        name: entry
        for name, entry in settings["project"]["scripts"].items()
        if entry.startswith("providers_fake.cli.main:")
    }
    assert fakes == {cli.fake: f"providers_fake.cli.main:{cli.name}" for cli in agents.AGENT_CLIS}
    for cli in agents.AGENT_CLIS:
        assert callable(getattr(fake_main, cli.name))
    with pytest.raises(AttributeError, match="no attribute 'fifth'"):
        getattr(fake_main, "fifth")  # noqa: B009 - the module's __getattr__ is under test


def test_every_cli_has_a_driver_that_declares_what_its_record_says() -> None:
    assert pipeline.__name__  # the drivers register when the pipeline is imported
    for cli in agents.AGENT_CLIS:
        driver = drivers.get(cli.name)
        assert driver.name == cli.name
        assert getattr(driver, "native_schema", True) == cli.descriptor.native
        assert getattr(driver, "extra_flags", ()) == cli.flags


def test_every_clause_a_record_names_is_in_the_clause_list() -> None:
    known = clauses.registry()
    for cli in agents.AGENT_CLIS:
        named = {cli.clause, cli.import_default, *(c for _, c in cli.import_clauses)}
        assert named <= set(known), cli.name
        assert cli.family in clauses.families(), cli.name
        assert cli.import_clause("no such outcome") is None


def _enums(schema: Any, path: str = "") -> dict[str, list[Any]]:
    """Every enum in ``schema`` that names an agent CLI, by its path."""
    found: dict[str, list[Any]] = {}
    if isinstance(schema, dict):
        enum = schema.get("enum")
        if isinstance(enum, list) and set(agents.DRIVERS) & set(enum):
            found[path] = enum
        for key, value in schema.items():
            found |= _enums(value, f"{path}/{key}".lstrip("/"))
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            found |= _enums(value, f"{path}/{index}")
    return found


def test_the_scenario_schema_s_enums_are_the_registry_s() -> None:
    loaded = _enums(loader.scenario_schema())
    assert {path: enum for path, enum in loaded.items() if path not in FOREIGN_ENUMS} == {
        "$defs/model-api/properties/by_version/propertyNames": list(agents.REAL),
        "$defs/model_api_request/properties/cli": list(agents.REAL),
        "$defs/request/properties/driver": list(agents.DRIVERS),
    }
    text = resources.files("harness").joinpath("schemas/scenario.schema.json").read_text()
    assert set(_enums(json.loads(text))) == FOREIGN_ENUMS  # the file types none of them


def test_the_protocol_s_enums_are_the_registry_s() -> None:
    found = {
        f"{name}:{path}": enum
        for name, validator in protocol.validators().items()
        for path, enum in _enums(validator.schema).items()
    }
    assert found == {
        "run:properties/request/properties/driver": list(agents.DRIVERS),
        "started:properties/implementation/properties/drivers/items": list(agents.DRIVERS),
    }


def test_a_schema_keyword_names_a_list_the_registry_has() -> None:
    assert agents.fill_enums({"x-agent-clis": "real", "type": "string"}) == {
        "type": "string",
        "enum": list(agents.REAL),
    }
    with pytest.raises(KeyError):
        agents.fill_enums({"x-agent-clis": "every"})


FIFTH = """
import dataclasses, json
from importlib import resources
from harness.catalogue import agents
fifth = dataclasses.replace(agents.get("codebuddy"), name="fifth", command="fifth-agent",
                            flags=("--yes",), volatile=frozenset({"trace"}), records=None,
                            stream_json=False, versioned=False)
agents.AGENT_CLIS = (*agents.AGENT_CLIS, fifth)
agents.DRIVERS = (*agents.DRIVERS, "fifth")

from harness import cli
from harness.adaptor import drivers, pipeline
from harness.adaptor.launch import EXECUTABLES
from harness.adaptor.negotiate import BUILTIN, Plan
from harness.catalogue import loader
from harness.fuzz import agent_cli
from harness.record import matcher, proposals
from harness.targets import announce, protocol, serve
from harness.targets.skeleton import SKELETONS

templates = resources.files("harness.targets").joinpath("skeletons")
schema = loader.scenario_schema()["$defs"]["request"]["properties"]["driver"]["enum"]
run = protocol.validators()["run"].schema["properties"]["request"]["properties"]["driver"]
print(json.dumps({
    "executable": EXECUTABLES["fifth"],
    "descriptor": BUILTIN["fifth"] == fifth.descriptor,
    "driver": drivers.get("fifth").argv("x", Plan(None, "batch"), None, "hi", None),
    "announced": "fifth" in announce.DRIVERS and "fifth" in serve.IMPLEMENTATION["drivers"],
    "import": cli.parser().parse_args(["import", "t.jsonl", "--driver", "fifth"]).driver,
    "fuzz": "fifth" in agent_cli.DRIVERS,
    "volatile": sorted(matcher.VOLATILE["fifth"] - matcher.VOLATILE["claude"]),
    "proposer": proposals.PROPOSERS["fifth"] is proposals.PROPOSERS["claude"],
    "schema": schema[-1],
    "protocol": run["enum"][-1],
    "skeletons": sorted(
        l for l, s in SKELETONS.items()
        if "fifth-agent" in s.fill(templates.joinpath(l, s.files[-1]).read_text())
    ),
}))
"""


@pytest.mark.subprocess
def test_a_fifth_cli_added_to_the_registry_alone_reaches_every_list() -> None:
    """The record is all the harness needs (the fake, its script and clause are apart)."""
    done = subprocess.run(
        [sys.executable, "-c", FIFTH], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "executable": "fake-fifth-agent",
        "descriptor": True,
        "driver": ["x", "-p", "--output-format", "json", "--yes", "hi"],
        "announced": True,
        "import": "fifth",
        "fuzz": True,
        "volatile": ["trace"],
        "proposer": True,
        "schema": "fifth",
        "protocol": "fifth",
        "skeletons": ["go", "node", "python"],
    }


def _names_in(path: Path) -> set[str]:
    """The CLI names ``path`` types as whole string literals."""
    if path.suffix == ".py":
        tree = ast.parse(path.read_text(encoding="utf-8"))
        strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)}
        return set(agents.DRIVERS) & strings
    text = path.read_text(encoding="utf-8", errors="replace")
    return {name for name in agents.DRIVERS if re.search(rf"[\"'`]{re.escape(name)}[\"'`]", text)}


def test_only_the_registries_list_every_cli() -> None:
    """A list typed by hand is found: every file naming all the CLIs is a registry."""
    listing = {
        str(path.relative_to(ROOT))
        for folder in ("harness", "providers_fake")
        for path in (ROOT / folder).rglob("*")
        if path.is_file()
        and path.suffix in (".py", ".json", ".yaml", ".mjs", ".go", ".ts")
        and "bundled" not in path.parts
        and "node_modules" not in path.parts
        and _names_in(path) == set(agents.DRIVERS)
    }
    assert listing == REGISTRIES
