"""An evaluation suite (``k1412 eval SUITE.toml``): tasks, arms, and the configuration each arm runs with.

```toml
experiment = "hello-suite"         # optional; default: the file name and the start time
config = "k1412.toml"              # optional; default: the usual search (not a fixture's own file)
check_timeout_s = 120              # optional
[[task]]
id = "hello"
task = "Create hello.py that prints hello world and run it"
workspace = "fixtures/empty"       # optional: copied fresh for every run
check = "python3 hello.py | grep -qx 'hello world'"   # optional: judges the work independently
[[arm]]
name = "luna"
model = "luna"
[arm.config]                       # optional: merged over the configuration for this arm only
budget = { max_cost = 0.5 }
```
"""

from __future__ import annotations

import copy
import tomllib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from k1412_ls.config import K1412Config, build_config, read_toml
from k1412_ls.locations import ConfigError, find_config_file


class TaskSpec(BaseModel):
    """One ``[[task]]``."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    task: str = Field(min_length=1)
    workspace: str | None = None
    check: str | None = None


class ArmSpec(BaseModel):
    """One ``[[arm]]``: a model and optional configuration overrides."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    model: str = Field(min_length=1)
    config: dict[str, Any] = Field(default_factory=dict)


class SuiteSpec(BaseModel):
    """The whole suite file."""

    model_config = ConfigDict(extra="forbid")

    experiment: str | None = Field(default=None, min_length=1)
    config: str | None = None
    check_timeout_s: float = Field(default=120.0, gt=0, le=3600)
    task: list[TaskSpec] = Field(min_length=1)
    arm: list[ArmSpec] = Field(min_length=1)

    @field_validator("task")
    @classmethod
    def _unique_tasks(cls, tasks: list[TaskSpec]) -> list[TaskSpec]:
        ids = [t.id for t in tasks]
        duplicate = next((i for i in ids if ids.count(i) > 1), None)
        if duplicate:
            raise ValueError(f"task id {duplicate!r} is used twice")
        return tasks

    @field_validator("arm")
    @classmethod
    def _unique_arms(cls, arms: list[ArmSpec]) -> list[ArmSpec]:
        names = [a.name for a in arms]
        duplicate = next((n for n in names if names.count(n) > 1), None)
        if duplicate:
            raise ValueError(f"arm name {duplicate!r} is used twice")
        return arms


class Suite:
    """A validated suite: tasks with resolved fixture dirs, arms with their full configuration."""

    def __init__(self, path: Path, spec: SuiteSpec, base: dict[str, Any], base_source: str,
                 experiment: str) -> None:
        self.path = path
        self.spec = spec
        self.experiment = experiment
        self.base = base
        self.base_source = base_source
        self.arm_configs: dict[str, dict[str, Any]] = {arm.name: deep_merge(base, arm.config) for arm in spec.arm}

    @property
    def tasks(self) -> list[TaskSpec]:
        return self.spec.task

    @property
    def arms(self) -> list[ArmSpec]:
        return self.spec.arm

    def fixture(self, task: TaskSpec) -> Path | None:
        return (self.path.parent / task.workspace).resolve() if task.workspace else None

    def arm_config(self, arm: ArmSpec) -> K1412Config:
        return build_config(copy.deepcopy(self.arm_configs[arm.name]), self.source_of(arm))

    def source_of(self, arm: ArmSpec) -> str:
        extra = f" with arm '{arm.name}' overrides from {self.path}" if arm.config else ""
        return f"{self.base_source}{extra}"


def deep_merge(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """``overrides`` laid over ``base``, table by table."""
    merged = copy.deepcopy(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(part) for part in err["loc"]) or "(top level)"
    message = str(err["msg"]).removeprefix("Value error, ")
    return f"key '{where}': {message}"


def load_suite(path: Path, config_file: str | None = None, now: datetime | None = None) -> Suite:
    """Read and check a suite; ConfigError with one sentence naming the file and what is wrong."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"Suite file {path} does not exist.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"Cannot read suite file {path}: {exc}.") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"Invalid TOML in suite file {path}: {exc}.") from None
    try:
        spec = SuiteSpec.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"Invalid suite {path}: {_first_error(exc)}.") from None
    for task in spec.task:
        if task.workspace and not (path.parent / task.workspace).is_dir():
            raise ConfigError(f"Invalid suite {path}: task '{task.id}' names workspace '{task.workspace}', "
                              "which is not a directory next to the suite.")
    chosen = config_file or (str(path.parent / spec.config) if spec.config else None)
    config_path = find_config_file(chosen, None)
    base = read_toml(config_path) if config_path else {}
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
    suite = Suite(path, spec, base, str(config_path) if config_path else "built-in defaults",
                  spec.experiment or f"{path.stem}-{stamp}")
    for arm in spec.arm:
        config = suite.arm_config(arm)
        try:
            model = config.model_spec(arm.model)
        except ConfigError as exc:
            raise ConfigError(f"Suite {path}: arm '{arm.name}': {exc}") from None
        if config.budget.max_cost is not None and model.pricing is None:
            raise ConfigError(f"Suite {path}: arm '{arm.name}' has a cost budget but model '{arm.model}' has no "
                              "pricing; add pricing to the model or use a token budget (max_tokens).")
    return suite


__all__ = ["ArmSpec", "Suite", "SuiteSpec", "TaskSpec", "deep_merge", "load_suite"]
