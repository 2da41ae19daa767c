"""Run the real ``k1412`` CLI as a subprocess against a scripted model server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import write_config


@dataclass
class CliRun:
    code: int
    stdout: str
    stderr: str

    @property
    def result(self) -> dict[str, Any]:
        return json.loads(self.stdout)

    def events(self) -> list[dict[str, Any]]:
        path = Path(self.result["events_path"])
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def k1412(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 60) -> CliRun:
    """Run ``python -m k1412_ls.cli ARGS`` (the same entry point as the console script)."""
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run([sys.executable, "-m", "k1412_ls.cli", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return CliRun(proc.returncode, proc.stdout, proc.stderr)


def config_for(tmp_path: Path, base_url: str, extra: str = "") -> Path:
    return write_config(tmp_path / "k1412.toml", base_url, extra=extra)
