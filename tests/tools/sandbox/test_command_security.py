"""Hostile commands: nothing escapes, nothing hangs, no credential leaks, one clear result.

Each case runs a real command through the real tools. Survivors are looked
for by a unique ``sleep`` duration (``sleep 300.<random>``) in the host's
process list, so a process that escaped its group or namespace is found.
"""

from __future__ import annotations

import http.server
import json
import random
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.ports import RunServices, required
from k1412_ls.tools.processes import process_tools, run_command
from k1412_ls.tools.processes.child_processes import run_to_end, shell_argv
from k1412_ls.tools.processes.process_tools import ProcessTable
from k1412_ls.tools.registry import ToolContext, ToolRegistry, ToolResult
from k1412_ls.tools.sandbox.command_sandbox import NETWORK_OFF_LABEL, SANDBOXED, SandboxPolicy, bubblewrap
from k1412_ls.tools.sandbox.environment import scrubbed_env
from k1412_ls.tools.sandbox.process_cap import cgroup_parent

REGISTRY = ToolRegistry([*run_command.TOOLS, *process_tools.TOOLS])
REPO_ROOT = Path(__file__).resolve().parents[3]
OPENAI_CANARY = "sk-proj-" + "Zz9Yy8Xx7Ww6Vv5Uu4_Tt3-Ss2Rr1Qq0"
DEEPSEEK_CANARY = "plain-deepseek-canary-4815162342"  # matches no pattern: only scrubbing can hide it

needs_sandbox = pytest.mark.skipif(not bubblewrap().active, reason="bubblewrap PID namespace unavailable here")


@pytest.fixture
def ctx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ToolContext]:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_CANARY)
    monkeypatch.setenv("DEEPSEEK_API_KEY", DEEPSEEK_CANARY)
    monkeypatch.setenv("GIT_ASKPASS", "/usr/bin/false")
    ws = tmp_path / "ws"
    ws.mkdir()
    table = ProcessTable()
    yield ToolContext(workspace=Workspace(ws), documents=DiskDocumentStore(), run_id="r-sec",
                      services=RunServices(processes=table))
    table.kill_all()


def call(ctx: ToolContext, tool: str, **arguments: object) -> ToolResult:
    return REGISTRY.execute(tool, dict(arguments), ctx)


def marker() -> str:
    """A sleep duration no other process on the machine uses."""
    return f"300.{random.randrange(10**8, 10**9)}"


def survivors(mark: str) -> list[int]:
    found = subprocess.run(["pgrep", "-f", f"sleep {mark}"], capture_output=True, text=True, check=False)
    return [int(pid) for pid in found.stdout.split()]


def assert_no_survivors(mark: str) -> None:
    # The kernel may need a moment to finish tearing down a killed namespace.
    deadline = time.monotonic() + 5
    while survivors(mark) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert survivors(mark) == []


# --- processes that try to outlive their command ------------------------------------------------

ESCAPES: dict[str, str] = {
    "background grandchild": "sleep {m} & sleep {m}",
    "nohup and disown": "nohup sleep {m} >/dev/null 2>&1 & disown; sleep {m}",
    "subshell double fork": "( ( sleep {m} & ) & ); sleep {m}",
    "fifo reader that never ends": "mkfifo pipe-{n} && cat pipe-{n}; sleep {m}",
    "mass spawn": "for i in $(seq 100); do (sleep {m} &); done; sleep {m}",
    "ignores SIGTERM": "trap '' TERM; sleep {m} & wait",
    "grandchild holds the pipe": "(sleep {m}; echo late) & sleep {m}",
}
SANDBOX_ONLY_ESCAPES: dict[str, str] = {
    "setsid escape": "setsid sleep {m} & sleep {m}",
    "setsid double fork": "setsid bash -c '(sleep {m} &)' ; sleep {m}",
}


@pytest.mark.e2e
@pytest.mark.parametrize("template", list(ESCAPES.values()), ids=list(ESCAPES))
def test_timeout_leaves_no_survivor(ctx: ToolContext, template: str) -> None:
    mark = marker()
    started = time.monotonic()
    result = call(ctx, "run_command", command=template.format(m=mark, n=mark[4:]), timeout_s=1)
    assert time.monotonic() - started < 20
    assert result.data["timed_out"] is True
    assert result.data["ok"] is False
    assert_no_survivors(mark)


@pytest.mark.e2e
@pytest.mark.parametrize("template", list(ESCAPES.values()), ids=list(ESCAPES))
def test_timeout_leaves_no_survivor_without_namespace(ctx: ToolContext, template: str) -> None:
    """Without the sandbox (K1412's own helpers) the group kill and the process cap catch everything."""
    mark = marker()
    done = run_to_end(shell_argv(template.format(m=mark, n=mark[4:])), ctx.workspace.root, scrubbed_env(),
                      timeout_s=1)
    assert done.timed_out is True
    assert done.sandbox.startswith("unsandboxed")
    assert_no_survivors(mark)


@pytest.mark.e2e
@needs_sandbox
@pytest.mark.parametrize("template", list(SANDBOX_ONLY_ESCAPES.values()), ids=list(SANDBOX_ONLY_ESCAPES))
def test_pid_namespace_catches_setsid(ctx: ToolContext, template: str) -> None:
    mark = marker()
    result = call(ctx, "run_command", command=template.format(m=mark), timeout_s=1)
    assert result.data["timed_out"] is True
    assert_no_survivors(mark)


@pytest.mark.e2e
@pytest.mark.parametrize("template", list(ESCAPES.values())[:3], ids=list(ESCAPES)[:3])
def test_cancel_leaves_no_survivor(ctx: ToolContext, template: str) -> None:
    mark = marker()
    threading.Timer(0.5, ctx.cancel.set).start()
    result = call(ctx, "run_command", command=template.format(m=mark, n=mark[4:]))
    assert result.data["cancelled"] is True
    assert_no_survivors(mark)


def test_normal_exit_takes_background_children_along(ctx: ToolContext) -> None:
    mark = marker()
    result = call(ctx, "run_command", command=f"sleep {mark} & echo left-behind")
    assert result.data["ok"] is True
    assert result.data["output"] == "left-behind\n"
    assert_no_survivors(mark)


@pytest.mark.parametrize("how", ["process_cancel", "kill_all"])
def test_background_process_group_is_killed(ctx: ToolContext, how: str) -> None:
    mark = marker()
    pid = call(ctx, "process_start", command=f"sleep {mark} & (sleep {mark} &); sleep {mark}").data["process_id"]
    deadline = time.monotonic() + 5
    while len(survivors(mark)) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(survivors(mark)) >= 3
    if how == "process_cancel":
        assert call(ctx, "process_cancel", process_id=pid).data["status"] == "killed"
    else:
        assert required(ctx.services.processes, "processes").kill_all() == [pid]
    assert_no_survivors(mark)


def test_without_namespace_setsid_is_caught_by_the_process_cgroup(ctx: ToolContext) -> None:
    """Outside the sandbox a setsid child leaves the process group; the command's pids cgroup still holds it.

    The positive control: the child really started (it wrote ``ready``) and left
    the group (its session id differs from the command's).
    """
    if cgroup_parent() is None:
        pytest.skip("no pids cgroup can be made here (the watchdog covers this case instead)")
    mark = marker()
    script = (f"setsid bash -c 'touch ready; exec sleep {mark}' >/dev/null 2>&1 & "
              "while [ ! -e ready ]; do sleep 0.02; done; echo started")
    done = run_to_end(shell_argv(script), ctx.workspace.root, scrubbed_env(), timeout_s=10)
    assert done.sandbox.startswith("unsandboxed")
    assert done.output == "started\n"
    assert (ctx.workspace.root / "ready").exists()
    assert_no_survivors(mark)


# --- resource limits ---------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("ulimit -v", "8388608"),  # address space, KiB
        ("ulimit -Hv", "8388608"),  # hard: the command cannot lift it
        ("ulimit -f", "1048576"),  # file size, 1 KiB blocks
        ("ulimit -c", "0"),  # no core dumps of secrets-laden memory
    ],
)
def test_rlimits_are_applied(ctx: ToolContext, command: str, expected: str) -> None:
    assert call(ctx, "run_command", command=command).data["output"].strip() == expected


def test_memory_hog_is_stopped_by_the_address_space_limit(ctx: ToolContext) -> None:
    result = call(ctx, "run_command", command=f"{sys.executable} -c 'bytearray(12 * 1024**3)'", timeout_s=60)
    assert result.data["ok"] is False
    assert "MemoryError" in result.data["output"]


# --- output floods -------------------------------------------------------------------------------------

def test_yes_flood_is_capped_with_tail_and_count(ctx: ToolContext) -> None:
    result = call(ctx, "run_command", command="yes | head -c 20000000; echo TAIL-INTACT", timeout_s=120)
    data = result.data
    assert len(data["output"].encode()) < 200_000
    assert data["output_bytes"] == 20_000_000 + len("TAIL-INTACT\n")
    assert data["output"].endswith("y\ny\nTAIL-INTACT\n")
    assert f"[… {data['omitted_bytes']} bytes omitted …]" in data["output"]
    assert data["omitted_bytes"] > 19_000_000


RSS_PROBE = textwrap.dedent(
    """
    import json, sys
    from k1412_ls.tools.processes.run_command import TOOLS
    from k1412_ls.tools.files.documents import DiskDocumentStore
    from k1412_ls.tools.registry import ToolContext, ToolRegistry
    from k1412_ls.tools.files.workspace import Workspace

    def hwm_kib():
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1])

    registry = ToolRegistry(TOOLS)
    ctx = ToolContext(workspace=Workspace(sys.argv[1]), documents=DiskDocumentStore())
    registry.execute("run_command", {"command": "echo warm"}, ctx)
    before = hwm_kib()
    result = registry.execute("run_command", {"command": sys.argv[2], "timeout_s": 120}, ctx)
    print(json.dumps({"delta_kib": hwm_kib() - before, "bytes": result.data["output_bytes"],
                      "chars": len(result.data["output"])}))
    """
)


@pytest.mark.e2e
def test_one_100mb_line_keeps_server_memory_bounded(ctx: ToolContext) -> None:
    command = "head -c 100000000 /dev/zero | tr '\\0' x"
    probe = subprocess.run([sys.executable, "-c", RSS_PROBE, str(ctx.workspace.root), command],
                           capture_output=True, text=True, timeout=180, cwd=REPO_ROOT, check=True)
    measured = json.loads(probe.stdout)
    assert measured["bytes"] == 100_000_000
    assert measured["chars"] < 200_000
    assert measured["delta_kib"] < 30 * 1024  # the 100 MB never sits in the server's memory


# --- credentials -----------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "command",
    ["env", "/usr/bin/env", "bash -c env", "printenv", "cat /proc/self/environ | tr '\\0' '\\n'",
     f"{sys.executable} -c 'import os; print(dict(os.environ))'"],
)
def test_child_environment_has_no_provider_keys(ctx: ToolContext, command: str) -> None:
    output = call(ctx, "run_command", command=command).data["output"]
    assert "PATH=" in output or "'PATH'" in output
    for leaked in ("OPENAI_API_KEY", "DEEPSEEK_API_KEY", DEEPSEEK_CANARY, OPENAI_CANARY[:20], "GIT_ASKPASS"):
        assert leaked not in output


@pytest.mark.parametrize(
    ("name", "value", "kept"),
    [
        ("OPENAI_API_KEY", "anything-at-all", False),
        ("DEEPSEEK_API_KEY", "anything-at-all", False),
        ("HF_TOKEN", "hf_abcdefghij", False),
        ("GITHUB_TOKEN", "x" * 20, False),
        ("AWS_SECRET_ACCESS_KEY", "x" * 20, False),
        ("DB_PASSWORD", "hunter22", False),
        ("SSH_AUTH_SOCK", "/run/agent.sock", False),  # no borrowing the user's ssh keys
        ("DATABASE_URL", "postgres://app:s3cret@db:5432/app", False),
        ("INNOCENT_NAME", "ghp_" + "a" * 36, False),  # the value is a credential
        ("MY_PROVIDER_CRED_VAR", "x" * 20, False),
        ("GIT_ASKPASS", "/usr/bin/ksshaskpass", False),
        ("HOME", "/home/dev", True),
        ("LANG", "C.UTF-8", True),
        ("VIRTUAL_ENV", "/work/.venv", True),
        ("DATABASE_URL", "postgres://db:5432/app", False),  # not on the allow list: name it in [sandbox] env
        ("MYSQL_PWD", "hunter22", False),
        ("SSHPASS", "hunter22", False),
        ("BORG_PASSPHRASE", "correct horse", False),
        ("SLACK_WEBHOOK_URL", "https://hooks.example/T0/B0/abcdef", False),
        ("CONTAINER_NAME", "web", False),  # whatever its value, a name nobody listed is not passed
        ("PIP_FIND_LINKS", "/opt/wheels", True),
        ("PIP_INDEX_URL", "https://u:s3cret@pkgs.example/simple", False),  # allowed name, credential value
        ("CC", "gcc", True),
        ("LC_ALL", "C.UTF-8", True),
    ],
)
def test_scrubbed_env_policy(name: str, value: str, kept: bool) -> None:
    env = scrubbed_env({"PATH": "/usr/bin", name: value}, extra_secret_names=["MY_PROVIDER_CRED_VAR"])
    assert (env.get(name) == value) is kept
    assert env["PATH"] == "/usr/bin"
    assert env["GIT_TERMINAL_PROMPT"] == "0" and env["PAGER"] == "cat" and env["GIT_PAGER"] == "cat"
    assert env["TERM"] == "dumb" and env["NO_COLOR"] == "1"


def test_background_process_environment_has_no_provider_keys(ctx: ToolContext) -> None:
    pid = call(ctx, "process_start", command="env").data["process_id"]
    output = call(ctx, "process_poll", process_id=pid, wait_s=10).data["output"]
    assert "PATH=" in output
    assert "DEEPSEEK_API_KEY" not in output and DEEPSEEK_CANARY not in output


def test_dotenv_secret_is_redacted_in_output(ctx: ToolContext) -> None:
    (ctx.workspace.root / ".env").write_text(f"OPENAI_API_KEY={OPENAI_CANARY}\nAWS=AKIAABCDEFGHIJKLMNOP\n")
    result = call(ctx, "run_command", command="cat .env")
    assert OPENAI_CANARY not in result.to_message()
    assert "AKIAABCDEFGHIJKLMNOP" not in result.to_message()
    assert OPENAI_CANARY not in json.dumps(result.facts)
    assert result.data["output"].count("[REDACTED]") == 2


# --- nothing waits for input ------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cat; echo got-eof", "got-eof"),
        ("read line; echo read-status=$?", "read-status=1"),
        (f"{sys.executable} -c 'input()' 2>&1 | tail -1", "EOFError"),
        ("cat /dev/tty 2>&1; echo no-tty", "no-tty"),
    ],
)
def test_stdin_and_terminal_are_unavailable(ctx: ToolContext, command: str, expected: str) -> None:
    started = time.monotonic()
    result = call(ctx, "run_command", command=command, timeout_s=20)
    assert time.monotonic() - started < 15
    assert "timed_out" not in result.data
    assert expected in result.data["output"]


class _AuthRequired(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="k1412"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.mark.e2e
def test_git_clone_does_not_wait_for_credentials(ctx: ToolContext) -> None:
    ctx.services.sandbox = SandboxPolicy(network=True)  # the user allowed the network
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AuthRequired)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/private.git"
        result = call(ctx, "run_command", command=f"git clone {url} cloned", timeout_s=30)
    finally:
        server.shutdown()
        server.server_close()
    assert result.data.get("timed_out") is None
    assert result.data["exit_code"] == 128
    assert "terminal prompts disabled" in result.data["output"]


# --- confinement and arguments -------------------------------------------------------------------------

@pytest.mark.parametrize("cwd", ["..", "/", "/etc", "../..", "link-out"])
def test_cwd_outside_workspace_is_refused(ctx: ToolContext, cwd: str) -> None:
    (ctx.workspace.root / "link-out").symlink_to(ctx.workspace.root.parent)
    result = call(ctx, "run_command", command="touch planted", cwd=cwd)
    assert result.data["ok"] is False
    assert "outside the workspace" in result.data["error"]
    assert not (ctx.workspace.root.parent / "planted").exists()


@needs_sandbox
def test_commands_report_the_sandbox_in_facts(ctx: ToolContext) -> None:
    result = call(ctx, "run_command", command="echo $$")
    assert result.facts["sandbox"] == f"{SANDBOXED}, {NETWORK_OFF_LABEL}"
    assert "sandbox" not in result.data  # only a degraded sandbox is worth the model's attention
    assert result.data["output"].strip() == "2"  # pid 1 is the namespace's init


@pytest.mark.parametrize(
    ("scenario", "check"),
    [
        ("cancel twice", lambda c, p: call(c, "process_cancel", process_id=p).data["already_ended"] is True),
        ("poll after cancel", lambda c, p: call(c, "process_poll", process_id=p).data["status"] == "killed"),
        ("unknown id", lambda c, p: "use one of: p1" in call(c, "process_poll", process_id="p7").data["error"]),
    ],
)
def test_process_lifecycle_edges(ctx: ToolContext, scenario: str, check: Callable[[ToolContext, str], bool]) -> None:
    pid = call(ctx, "process_start", command="sleep 60").data["process_id"]
    assert call(ctx, "process_cancel", process_id=pid).data["ok"] is True
    assert check(ctx, pid), scenario

