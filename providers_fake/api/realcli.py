"""
Finding and running the pinned real CLIs against a fake model API.

The fakes are only worth what the real programs confirm, so the test suite
runs the published ``claude`` (2.1.328), ``codex`` (0.169.0) and
``codebuddy`` (2.117.0) binaries against `LoopbackServer`.  They are
installed outside the repository by ``scripts/install-real-clis.sh`` (into
``$HARNESS_REAL_CLIS_DIR``, or the user cache folder) and started the way
the captures were taken: offline
environment variables, a throwaway ``HOME`` (and ``CODEX_HOME``), nothing
inherited from the caller's environment but ``PATH`` (so no real API key or
proxy can leak in), a timeout, and the whole process group killed and reaped
when it expires.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import TypeAlias

    #: Wraps a CLI's argv so that it runs confined to its throwaway folder (given
    #: with the environment it gets), for runs in which it may execute commands.
    Confine: TypeAlias = Callable[[list[str], Path, Mapping[str, str]], list[str]]
    #: Seconds the CLI has spent waiting on answers the fake API held back
    #: (`LoopbackServer.held`): the clock a run's timeout is counted on.
    Held: TypeAlias = Callable[[], float]

CLAUDE_PACKAGE, CLAUDE_VERSION = "@anthropic-ai/claude-code", "2.1.328"
CODEX_PACKAGE, CODEX_VERSION = "@openai/codex", "0.169.0"
#: CodeBuddy Code is published inside CodeBuddy's SDK package (0.3.201 ships
#: 2.117.0 as ``cli/``), so its version is read from ``cli/package.json``.
CODEBUDDY_PACKAGE, CODEBUDDY_VERSION = "@tencent-ai/agent-sdk", "2.117.0"
CODEBUDDY_CLI = "cli"
#: Each CLI's npm package and pinned version (what ``--target real`` runs).
PACKAGES = {"claude": CLAUDE_PACKAGE, "codex": CODEX_PACKAGE, "codebuddy": CODEBUDDY_PACKAGE}
PINNED = {"claude": CLAUDE_VERSION, "codex": CODEX_VERSION, "codebuddy": CODEBUDDY_VERSION}
DIR_ENV = "HARNESS_REAL_CLIS_DIR"
SWITCH_ENV = "HARNESS_REAL_CLIS"  # "off": the suite does not run the real binaries
INSTALL_HINT = "scripts/install-real-clis.sh"
DEFAULT_TIMEOUT = 30.0
#: With a `Held` clock, the seconds of its own a CLI may take on top of the
#: timeout before it is killed anyway: a bound on a run that hangs by itself,
#: far above what a run needs on a loaded machine (docs/model-api.md: the
#: slowest case of the catalogue, four claude processes in one session, took
#: 5 s on a quiet 2-core machine and 24 s at a load average of 16).
OWN_TIME = 150.0


def default_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "structured-output-harness" / "real-clis"


def install_dir() -> Path:
    return Path(os.environ.get(DIR_ENV) or default_dir())


def enabled() -> bool:
    return os.environ.get(SWITCH_ENV, "").strip().lower() != "off"


def _version(root: Path, package: str) -> str | None:
    try:
        document = json.loads((root / "node_modules" / package / "package.json").read_text())
    except (OSError, ValueError):
        return None
    version = document.get("version") if isinstance(document, dict) else None
    return version if isinstance(version, str) else None


def _codex_native(root: Path) -> Path | None:
    """The native Codex binary (what ``codex.js`` execs), skipping Node's start-up."""
    arch = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}
    machine = arch.get(platform.machine().lower())
    if machine is None:
        return None
    short = "x64" if machine == "x86_64" else "arm64"
    vendor = root / "node_modules" / "@openai" / f"codex-linux-{short}" / "vendor"
    binary = vendor / f"{machine}-unknown-linux-musl" / "bin" / "codex"
    return binary if os.access(binary, os.X_OK) else None


def version_dir(cli: str, version: str, root: Path | None = None) -> Path:
    """Where ``install-real-clis.sh DIR CLI=VERSION`` puts one version: its own npm prefix."""
    return (install_dir() if root is None else root) / f"{cli}-{version}"


def release(cli: str, version: str) -> str:
    """``@openai/codex@0.169.0``; CodeBuddy's version is its CLI's, not its package's."""
    if cli == "codebuddy":
        return f"CodeBuddy Code {version} ({PACKAGES[cli]})"
    return f"{PACKAGES[cli]}@{version}"


def install_command(cli: str, version: str, root: Path) -> str:
    """The command that installs ``cli`` at ``version`` where `locate` looks for it (the pins: the
    script without versions installs them all)."""
    if version == PINNED[cli] and root == install_dir():
        return f"{INSTALL_HINT} {root}"
    return f"{INSTALL_HINT} {root} {cli}={version}"


def locate(cli: str, root: Path | None = None, version: str | None = None) -> Path:
    """
    The executable of `cli` (``claude``, ``codex`` or ``codebuddy``) at
    `version` (the pinned one by default) under `root`: in the version's own
    folder (`version_dir`), or for the pinned claude and codex also in `root`
    itself, where the pinned pair is installed (CodeBuddy always has its own
    folder, even at its pin).

    Raises FileNotFoundError saying what is missing and how to install it,
    also when another version is installed there (captures pin one version).
    """
    root = install_dir() if root is None else root
    wanted = PINNED[cli] if version is None else version
    places = [version_dir(cli, wanted, root)]
    if wanted == PINNED[cli] and cli != "codebuddy":  # the pinned pair shares `root`
        places.insert(0, root)
    package = PACKAGES[cli]
    inside = f"{package}/{CODEBUDDY_CLI}" if cli == "codebuddy" else package
    found = [(place, _version(place, inside)) for place in places]
    chosen = next((place for place, seen in found if seen == wanted), None)
    if chosen is None:
        place, seen = found[0]
        what = "is not installed" if seen is None else f"is version {seen}"
        command = install_command(cli, wanted, root)
        raise FileNotFoundError(
            f"{release(cli, wanted)} {what} under {place}; run `{command}`, "
            f"point {DIR_ENV} at an install, or set {SWITCH_ENV}=off to leave the real CLIs out "
            "(`harness doctor` lists what is installed)"
        )
    if cli == "codex":
        native = _codex_native(chosen)
        if native is not None:
            return native
    binary = chosen / "node_modules" / ".bin" / cli
    if cli == "codebuddy":  # the SDK declares no executable; its CLI folder does
        binary = chosen / "node_modules" / package / CODEBUDDY_CLI / "bin" / cli
    if not os.access(binary, os.X_OK):
        raise FileNotFoundError(
            f"{binary} is missing or not executable; rerun `{install_command(cli, wanted, root)}`"
        )
    return binary


@dataclass(frozen=True)
class RealRun:
    """One finished (or killed) run of a real CLI."""

    argv: tuple[str, ...]
    exit_code: int
    stdout: bytes
    stderr: bytes
    seconds: float
    timed_out: bool
    #: The files the run left in its working directory (relative path, text), sorted.
    files: tuple[tuple[str, str], ...] = ()
    #: Exit codes of the earlier runs of the same session (see `run_claude`).
    earlier: tuple[int, ...] = ()
    #: The throwaway folder the run lived in (HOME, working directory, schema file),
    #: gone by now; callers mask it in what the CLI printed.
    workdir: str = ""


def _base_env(work: Path, extra: Mapping[str, str] | None) -> dict[str, str]:
    home, tmp = work / "home", work / "tmp"
    home.mkdir()
    tmp.mkdir()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    env.update(extra or {})
    return env


def run_claude(
    binary: Path,
    base_url: str,
    *,
    prompt: str,
    schema: str,
    output_format: str = "json",
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    earlier: Sequence[str] = (),
    before_last: Callable[[], object] | None = None,
    confine: Confine | None = None,
    held: Held | None = None,
) -> RealRun:
    """
    ``claude -p PROMPT --json-schema SCHEMA --output-format F [--verbose] ARGS`` offline.

    With ``earlier`` prompts, each is first run the same way in the same HOME
    and working directory, one session resumed from the next (``--resume``),
    and the returned run resumes it too: a session with earlier turns.  The
    earlier runs' exit codes are in `RealRun.earlier`; ``before_last`` is
    called just before the returned run starts (to tell its requests apart).
    With ``held``, ``timeout`` counts the time the CLI waits on held-back
    answers, not the wall clock (see `_run`).
    """

    def _claude_argv(turn: str, session: str | None, last: bool) -> list[str]:
        argv = [str(binary), "-p", turn, "--json-schema", schema]
        # Text is the default format, so it is asked for by leaving the flag out; an
        # earlier turn prints JSON instead, which names the session to resume.
        shown = output_format if output_format != "text" or not last else None
        argv += [] if shown is None else ["--output-format", "json" if shown == "text" else shown]
        if output_format == "stream-json":
            argv.append("--verbose")  # the CLI refuses stream-json in print mode without it
        argv.extend(args)
        return argv if session is None else [*argv, "--resume", session]

    with tempfile.TemporaryDirectory(prefix="real-claude-") as scratch:
        work = Path(scratch)
        offline = {
            "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": "sk-ant-fake",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
        }
        full = _base_env(work, {**offline, **(env or {})})
        probe = _probe(work)
        session: str | None = None
        codes: list[int] = []
        for turn in earlier:
            run = _run(
                _claude_argv(turn, session, False), full, probe, timeout, False, confine, held
            )
            codes.append(run.exit_code)
            session = session_id(run.stdout) or session
        if before_last is not None:
            before_last()
        run = _run(_claude_argv(prompt, session, True), full, probe, timeout, False, confine, held)
        return replace(run, earlier=tuple(codes))


def session_id(stdout: bytes) -> str | None:
    """The session a ``claude -p`` run reports (json or stream-json), if any."""
    for raw in reversed(stdout.decode(errors="replace").split("\n")):  # JSON lines: LF only
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        found = record.get("session_id") if isinstance(record, dict) else None
        if isinstance(found, str):
            return found
    return None


def run_codex(
    binary: Path,
    base_url: str,
    *,
    prompt: str,
    schema: str,
    model: str = "gpt-probe",
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    confine: Confine | None = None,
    held: Held | None = None,
    json_lines: bool = True,
    earlier: Sequence[str] = (),
    before_last: Callable[[], object] | None = None,
) -> RealRun:
    """
    ``codex exec --json --output-schema FILE -m MODEL`` against `base_url` (``.../v1``).

    The provider has its retries off, as in the captures: one scripted
    failure stays one request and one ``turn.failed``.  ``held``: as for `run_claude`.
    Without ``json_lines`` the run prints text (no ``--json``).  With ``earlier``
    prompts, each is first run the same way (``--json``, without ``args``), and
    each later run resumes the session (``codex exec resume --last``), the
    returned one too; ``before_last`` as for `run_claude`.
    """
    provider = (
        f'model_providers.fake={{name="fake",base_url="{base_url}",wire_api="responses",'
        'env_key="FAKE_KEY",request_max_retries=0,stream_max_retries=0}'
    )
    with tempfile.TemporaryDirectory(prefix="real-codex-") as scratch:
        work = Path(scratch)
        schema_file = work / "schema.json"
        schema_file.write_text(schema)
        codex_home = work / "codex-home"
        codex_home.mkdir()

        def argv(turn: str, resumed: bool, last: bool) -> list[str]:
            return [
                str(binary), "exec", *(["resume", "--last"] if resumed else []),
                *(["--json"] if json_lines or not last else []), "--skip-git-repo-check",
                "--output-schema", str(schema_file), "-m", model,
                "-c", "model_provider=fake", "-c", provider, *(args if last else ()), turn,
            ]  # fmt: skip

        # CODEX_HOME outside TMPDIR, or Codex warns that it will not create helper binaries.
        offline = {"CODEX_HOME": str(codex_home), "FAKE_KEY": "sk-fake"}
        full = _base_env(work, {**offline, **(env or {})})
        probe = _probe(work)
        codes: list[int] = []
        for number, turn in enumerate(earlier):
            # A terminal on stdin: otherwise Codex says it reads "additional input from stdin".
            run = _run(argv(turn, number > 0, False), full, probe, timeout, True, confine, held)
            codes.append(run.exit_code)
        if before_last is not None:
            before_last()
        run = _run(argv(prompt, bool(earlier), True), full, probe, timeout, True, confine, held)
        return replace(run, earlier=tuple(codes))


def run_codebuddy(
    binary: Path,
    base_url: str,
    *,
    prompt: str,
    schema: str,
    output_format: str = "stream-json",
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    confine: Confine | None = None,
) -> RealRun:
    """
    ``codebuddy -p --output-format F [--verbose] --json-schema SCHEMA ARGS PROMPT`` offline.

    ``CODEBUDDY_BASE_URL`` names the Chat Completions endpoint (the CLI posts
    to ``BASE/chat/completions``), ``CODEBUDDY_API_KEY`` any key.  The CLI
    retries an HTTP error for minutes and a schema it never gets without end
    (docs/codebuddy.md), so `timeout` is what ends such a run.
    """
    argv = [str(binary), "-p", "--output-format", output_format]
    if output_format == "stream-json":
        argv.append("--verbose")  # as for claude: stream-json in print mode wants it
    argv += ["--json-schema", schema, *args, prompt]
    with tempfile.TemporaryDirectory(prefix="real-codebuddy-") as scratch:
        work = Path(scratch)
        offline = {"CODEBUDDY_BASE_URL": base_url, "CODEBUDDY_API_KEY": "sk-fake"}
        full = _base_env(work, {**offline, **(env or {})})
        return _run(argv, full, _probe(work), timeout, False, confine)


def _probe(work: Path) -> Path:
    probe = work / "probe"
    probe.mkdir()
    return probe


def _run(  # noqa: PLR0917 - the two runners' one shared step
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    timeout: float,
    tty_stdin: bool,
    confine: Confine | None = None,
    held: Held | None = None,
) -> RealRun:
    """
    One process, killed with its group when its time is up: ``timeout``
    seconds of the wall clock, or with ``held`` ``timeout`` seconds of
    waiting on held-back answers (then the CLI's own time, start-up
    included, is bounded by `OWN_TIME` on top).  A verdict that hangs on the
    timeout then depends on what the script holds back, not on how fast the
    machine starts the CLI.
    """
    shown = tuple(argv)
    if confine is not None:  # the run's throwaway folder is all it may write to
        argv = confine(argv, cwd.parent, env)
    master, slave = os.openpty() if tty_stdin else (-1, -1)
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            argv,
            env=env,
            cwd=cwd,
            stdin=slave if tty_stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group: a timeout kills helpers too
        )
        try:
            timed_out, stdout, stderr = _wait(process, started, timeout, held)
        finally:
            if process.poll() is None:  # an exception while waiting: never leave it running
                _kill_group(process)
                process.wait()
    finally:
        if tty_stdin:
            os.close(master)
            os.close(slave)
    seconds = time.monotonic() - started
    files = workdir_files(cwd)
    return RealRun(
        shown,
        process.returncode,
        stdout,
        stderr,
        seconds,
        timed_out,
        files,
        (),
        str(cwd.parent),
    )


#: How much of one file, and how many files, a snapshot of the working directory keeps.
FILE_LIMIT, FILES_LIMIT = 64 * 1024, 100


def workdir_files(root: Path) -> tuple[tuple[str, str], ...]:
    """What a CLI left in ``root``: side effects a scenario may check (LOOP-16)."""
    found: list[tuple[str, str]] = []
    for path in sorted(root.rglob("*")):
        if len(found) >= FILES_LIMIT:
            break
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as handle:
                data = handle.read(FILE_LIMIT)
            found.append((path.relative_to(root).as_posix(), data.decode(errors="replace")))
    return tuple(found)


def _wait(
    process: subprocess.Popen[bytes], started: float, timeout: float, held: Held | None
) -> tuple[bool, bytes, bytes]:
    """The process's output, and whether it was killed at its timeout."""
    limit = timeout if held is None else timeout + OWN_TIME
    while True:
        wall = limit - (time.monotonic() - started)
        # The held clock runs no faster than the wall clock: waiting for what is
        # left of it cannot overshoot, and between holds nothing is polled.
        left = wall if held is None else min(wall, timeout - held())
        if left <= 0:
            break
        try:
            stdout, stderr = process.communicate(timeout=left)
        except subprocess.TimeoutExpired:
            continue
        return False, stdout, stderr
    _kill_group(process)
    stdout, stderr = process.communicate()
    return True, stdout, stderr


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    # Only while the leader is unreaped: its pid (the group id) cannot be reused yet.
    # What left the group (a daemon's setsid) but is still below the leader (handed
    # to the harness's custody shim, a subreaper) is killed first: once the shim
    # is gone its orphans would go to init, out of anyone's reach.  The group
    # itself dies in one stroke, as before, so the leader is killed by the
    # signal (exit -9) rather than exiting on its child's death.
    for _ in range(10):  # a fork between two looks is caught by the next
        strays = [pid for pid in _descendants(process.pid) if _group(pid) != process.pid]
        if not strays:
            break
        for pid in strays:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def _group(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


def _descendants(pid: int) -> list[int]:
    """The live processes below ``pid``, from /proc (none where there is no /proc)."""
    tree: dict[int, list[int]] = {}
    # listdir, not a glob: a glob stats each entry, and one that has just exited
    # raises ProcessLookupError from inside the glob.
    try:
        names = os.listdir("/proc")
    except OSError:
        names = []  # no /proc: nothing to find
    for name in names:
        if not name.isdigit():
            continue
        try:
            fields = Path("/proc", name, "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z":
            tree.setdefault(int(fields[1]), []).append(int(name))
    found, stack = [], [pid]
    while stack:
        for child in tree.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found
