"""``k1412 eval`` at scale (slow tier): a 10-task suite × 2 arms × 2 repeats in the local process pool and on a
real local Ray head give the same per-arm counts; the HTML report renders in Chromium."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import k1412
from tests.support.eval_model import EvalModelServer, expected_counts, write_suite
from tests.support.png import count_color

pytestmark = pytest.mark.slow
COUNTS = ("runs", "completed", "unverified", "failed", "check_passed", "gate_precision", "gate_recall")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def ray_head() -> Iterator[tuple[str, Path]]:
    """A Ray head on this machine (``ray start --head --block``), stopped with its whole process group."""
    ray_cli = shutil.which("ray")
    if ray_cli is None:
        pytest.fail("the ray command is missing: pip install -e '.[dev]' installs it")
    port = _free_port()
    temp = tempfile.mkdtemp(prefix="k1412ray", dir="/tmp")  # short: Ray's socket paths must fit
    head = subprocess.Popen(
        [ray_cli, "start", "--head", "--block", f"--port={port}", "--num-cpus=2", f"--temp-dir={temp}",
         "--include-dashboard=false", "--disable-usage-stats"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if head.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the Ray head did not start (exit {head.poll()})")
                time.sleep(0.3)
        yield f"127.0.0.1:{port}", Path(temp)
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        try:
            head.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
            head.wait()
        shutil.rmtree(temp, ignore_errors=True)


def _per_arm(report: dict[str, object]) -> dict[str, tuple[object, ...]]:
    return {arm["name"]: tuple(arm[key] for key in COUNTS) for arm in report["arms"]}  # type: ignore[index,union-attr]


def test_local_pool_and_ray_give_the_same_per_arm_counts(tmp_path: Path, ray_head: tuple[str, Path]) -> None:
    address, ray_temp = ray_head
    with EvalModelServer() as server:
        suite = write_suite(tmp_path, server.base_url, tasks=10)
        local = k1412("eval", str(suite), "--repeat", "2", "--json", cwd=tmp_path,
                      env={"K1412_HOME": str(tmp_path / "local")}, timeout=280)
        on_ray = k1412("eval", str(suite), "--repeat", "2", "--ray", address, "--json", cwd=tmp_path,
                       env={"K1412_HOME": str(tmp_path / "ray")}, timeout=280)
    assert local.code == 0, local.stderr
    assert on_ray.code == 0, on_ray.stderr
    pooled, clustered = json.loads(local.stdout), json.loads(on_ray.stdout)
    assert clustered["executor"]["kind"] == "ray" and pooled["executor"]["kind"] == "local"
    assert _per_arm(pooled) == _per_arm(clustered)
    expected = expected_counts(10, 2)
    for name, counts in _per_arm(clustered).items():
        assert counts[:5] == (20, expected[name]["completed"], expected[name]["unverified"], 0,
                              expected[name]["check_passed"])
    # Ray's runs came back: their logs are in the caller's state dir, with experiment and arm in meta.
    logs = sorted((tmp_path / "ray" / "runs").glob("*.jsonl"))
    assert len(logs) == 40
    arms = {json.loads(path.read_text().splitlines()[0])["meta"]["arm"] for path in logs}
    assert arms == {"careful", "hasty"}
    # The runs really ran in the head's Ray workers: Ray names each worker's log after its process id.
    worker_logs = {path.name for path in ray_temp.glob("session_*/logs/worker-*")}
    pids = {row["worker"].split(":")[1] for row in clustered["runs"]}
    assert pids and all(any(name.rsplit(".", 1)[0].endswith(f"-{pid}") for name in worker_logs) for pid in pids)
    assert not any(any(name.rsplit(".", 1)[0].endswith(f"-{row['worker'].split(':')[1]}") for name in worker_logs)
                   for row in pooled["runs"])


def test_html_report_opens_in_chromium(tmp_path: Path) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.fail("chromium is missing: .ci/run installs it (apt-get install chromium)")
    report = tmp_path / "report.html"
    with EvalModelServer() as server:
        suite = write_suite(tmp_path, server.base_url, tasks=10)
        run = k1412("eval", str(suite), "--repeat", "2", "--html", str(report), cwd=tmp_path,
                    env={"K1412_HOME": str(tmp_path / "state")}, timeout=280)
    assert run.code == 0, run.stderr
    page = report.read_text()
    assert "<script" not in page and "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    shot = tmp_path / "shot.png"
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--screenshot={shot}", "--window-size=1200,900", report.as_uri()],
                   capture_output=True, timeout=120, check=False, cwd=tmp_path)
    assert shot.is_file() and shot.stat().st_size > 10_000
    # The verdict bars are drawn to scale: 28 completed and 12 unverified runs over both arms.
    green = count_color(shot, (0x2E, 0x7D, 0x32))
    amber = count_color(shot, (0xF9, 0xA8, 0x25))
    red = count_color(shot, (0xC6, 0x28, 0x28))
    assert green > 5000 and amber > 2000
    assert 1.8 < green / amber < 3.0
    assert red < 400  # only the legend's swatch: no run failed
