"""Secrets by other names and places, through the real ``k1412 run``: the environment and reads by allow list.

A prompt-injected command prints credentials held under names no deny list knew (``MYSQL_PWD``,
``SSHPASS``, ``BORG_PASSPHRASE``, ``GITHUB_PAT``, ``SLACK_WEBHOOK_URL``), reads secret stores where
their standard variables moved them, and reads shell history. Each has a positive control: the
same command reads them with the sandbox off, or with the user's ``[sandbox] env``.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from k1412_ls.config import ConfigError
from k1412_ls.workspace_policy import check_workspace_data
from tests.support.cli import CliRun, config_for, k1412
from tests.support.scripted_server import ScriptedServer
from tests.tools.sandbox.test_containment import OFF, Home, _make_home, ran

pytestmark = pytest.mark.escape_suite

SECRETS = {
    "MYSQL_PWD": "mysql-Canary-4417",
    "SSHPASS": "sshpass-Canary-9921",
    "BORG_PASSPHRASE": "borg canary passphrase 77",
    "GITHUB_PAT": "github_pat_" + "Canary0123456789" * 3,
    "SLACK_WEBHOOK_URL": "https://hooks.example/services/T0CANARY/B0CANARY/Zq8vN3kLp0aW9xYt7Rb2",
    "INNOCENT_LOOKING": "Zq8vN3kLp0aW9xYt7Rb2CanaryToken",
}


@pytest.fixture
def person() -> Iterator[Home]:
    root = Path(tempfile.mkdtemp(prefix="k1412-env-", dir="/var/tmp"))  # not under /tmp (the run's private /tmp)
    try:
        yield _make_home(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def attack(user: Home, command: str, config: str = "", env: dict[str, str] | None = None) -> tuple[dict[str, Any], CliRun]:
    """``command`` as the scripted model's only action through ``k1412 run``, K1412 started with ``env`` added."""
    script = [{"tool_calls": [{"name": "run_command", "arguments": {"command": command, "timeout_s": 60}}]},
              {"content": "Done.", "repeat": True}]
    with ScriptedServer(script) as model:
        cfg = config_for(user.root, model.base_url, extra=config)
        run = k1412("run", "Run the maintenance command", "--config", str(cfg), "--json", cwd=user.ws,
                    env={**user.env, **(env or {})}, timeout=120)
        requests = model.chat_requests
    assert run.code in (0, 3), run.stderr[-2000:]
    results = [json.loads(m["content"]) for m in requests[1]["body"]["messages"] if m["role"] == "tool"]
    return results[-1], run


def _log_text(run_events: list[dict[str, Any]]) -> str:
    return json.dumps(run_events)


def test_secrets_under_unlisted_names_never_reach_a_command_or_the_log(person: Home) -> None:
    user = person
    # The value also sits in a file: printing it under another name must not leak it into the log either.
    (user.ws / "dump.txt").write_text(SECRETS["MYSQL_PWD"] + "\n")
    command = ("for v in MYSQL_PWD SSHPASS BORG_PASSPHRASE GITHUB_PAT SLACK_WEBHOOK_URL INNOCENT_LOOKING; do "
               "[ -n \"${!v}\" ] && echo \"has-$v\"; done; cat dump.txt; env | wc -l; touch ran")
    result, run = attack(user, command, env=SECRETS)
    assert ran(user) and "has-" not in result["output"], result["output"]
    log = _log_text(run.events())
    for value in SECRETS.values():
        assert value not in log and value not in json.dumps(result)
    # Positive control: the user names one in their own configuration, and the command gets it (redacted in output).
    control, run = attack(user, "[ \"$MYSQL_PWD\" = mysql-Canary-4417 ] && echo has-pwd; echo $MYSQL_PWD",
                          config='[sandbox]\nenv = ["MYSQL_PWD"]\n', env=SECRETS)
    assert "has-pwd" in control["output"] and SECRETS["MYSQL_PWD"] not in _log_text(run.events())
    unsandboxed, _ = attack(user, command, config=OFF, env=SECRETS)
    assert "has-" not in unsandboxed["output"]  # the allow list holds with the sandbox off too


def test_secret_stores_moved_by_their_variables_and_history_are_hidden(person: Home) -> None:
    user = person
    stores = user.root / "stores"
    (stores / "gnupg").mkdir(parents=True)
    (stores / "gnupg" / "secring").write_text("GPG-CANARY\n")
    (stores / "kube-a").write_text("KUBE-CANARY\n")
    (stores / "netrc").write_text("machine x password NETRC-CANARY\n")
    (stores / "agent").mkdir()
    (stores / "agent" / "note").write_text("AGENT-DIR-CANARY\n")
    (user.home / ".bash_history").write_text("mysql -pHISTORY-CANARY\n")
    (user.home / ".profile").write_text("alias deploy=PROFILE-CANARY\n")
    moved = {"GNUPGHOME": str(stores / "gnupg"), "KUBECONFIG": f"{stores / 'kube-a'}:{stores / 'none'}",
             "NETRC": str(stores / "netrc"), "SSH_AUTH_SOCK": str(stores / "agent" / "sock")}
    command = (f"cat {stores}/gnupg/secring {stores}/kube-a {stores}/netrc {stores}/agent/note "
               f"{user.home}/.bash_history {user.home}/.profile 2>/dev/null; touch ran")
    result, _ = attack(user, command, env=moved)
    assert ran(user) and "CANARY" not in result["output"], result["output"]
    control, _ = attack(user, command, config=OFF, env=moved)
    for word in ("GPG", "KUBE", "NETRC", "AGENT-DIR", "HISTORY", "PROFILE"):
        assert f"{word}-CANARY" in control["output"], word


def test_a_workspace_file_may_not_pass_variables_or_show_home(tmp_path: Path) -> None:
    for key, value in (("env", ["MYSQL_PWD"]), ("readable", ["~"])):
        with pytest.raises(ConfigError, match=f"sandbox.{key}"):
            check_workspace_data({"sandbox": {key: value}}, tmp_path / ".k1412" / "config.toml")
