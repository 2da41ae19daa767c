"""The ``k1412`` command line: a thin adapter over the core runtime."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from k1412_ls import __version__
from k1412_ls.locations import ConfigError, state_dir

if TYPE_CHECKING:
    from k1412_ls.core.events import Event
    from k1412_ls.core.run_outcomes import RunResult

# Heavy modules (pydantic models, the runtime, the SDK) are imported inside the commands
# that need them, so `k1412 lsp` starts as lean as the server itself.

EXIT_USAGE = 2
EXIT_FAILED = 4


class CliError(Exception):
    """A usage or configuration problem: one line, exit code 2."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="k1412", description="K1412: an accountable coding agent.")
    parser.add_argument("--version", action="version", version=f"k1412 {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run one task headless and print its verdict")
    run.add_argument("task", help="what to do, in plain words")
    run.add_argument("--workspace", default=".", help="workspace root (default: current directory)")
    run.add_argument("--model", help="model id (default: the configured default_model)")
    run.add_argument("--config", help="configuration file (TOML)")
    run.add_argument("--user", default=None, help="user name for memories and plans (default: $USER)")
    run.add_argument("--conversation", help="continue this conversation id")
    run.add_argument("--events", help="also append this run's events (JSONL) to FILE")
    run.add_argument("--json", action="store_true", help="print the result object as JSON")
    run.add_argument("--max-cost", type=_positive(float), metavar="USD",
                     help="stop the run (unverified) once it has cost this much (default: [budget] max_cost)")
    run.add_argument("--max-tokens", type=_positive(int), metavar="N",
                     help="stop the run (unverified) once it has used this many tokens (default: [budget] max_tokens)")

    lsp = sub.add_parser("lsp", help="start the language server (stdio by default)")
    lsp.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")

    acp = sub.add_parser("acp", help="serve the Agent Client Protocol on stdio (Zed, JetBrains, Neovim, Emacs …)")
    acp.add_argument("--config", help="configuration file (TOML)")
    acp.add_argument("--model", help="model id (default: the configured default_model)")
    acp.add_argument("--user", default=None, help="user name for memories, plans and sessions (default: $USER)")

    models = sub.add_parser("models", help="list the configured models")
    models.add_argument("--config", help="configuration file (TOML)")
    models.add_argument("--workspace", default=".", help="workspace whose .k1412/config.toml applies")
    models.add_argument("--json", action="store_true", help="print a JSON list")

    replay = sub.add_parser("replay", help="render a recorded run and re-check its verdict")
    replay.add_argument("run", metavar="RUN_ID_OR_FILE")
    replay.add_argument("--json", action="store_true", help="print the re-check as JSON")
    replay.add_argument("--export", choices=("atif",), help="print the run as an ATIF trajectory instead")

    from k1412_ls.experiments.cli_commands import add_commands
    from k1412_ls.judge.cli_command import add_command as add_judge

    add_commands(sub)
    add_judge(sub)

    mcp = sub.add_parser("mcp", help="the configured MCP servers")
    mcp_sub = mcp.add_subparsers(dest="mcp_command", required=True)
    mcp_list = mcp_sub.add_parser("list", help="start each configured MCP server, show its state and tools, stop it")
    mcp_list.add_argument("--config", help="configuration file (TOML)")
    mcp_list.add_argument("--workspace", default=".", help="workspace the servers start in (its config may disable some)")
    mcp_list.add_argument("--json", action="store_true", help="print a JSON list")

    undo = sub.add_parser("undo", help="restore every path a run changed to its state before the run")
    undo.add_argument("run", metavar="RUN_ID")
    undo.add_argument("--json", action="store_true", help="print the result object as JSON")
    return parser


def _positive(kind: type[float] | type[int]) -> Any:
    """An argparse type: a number above zero, or one sentence saying what was wrong."""

    def parse(text: str) -> float | int:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text!r} must be above zero")
        return value

    return parse


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command not in ("lsp", "acp"):  # their stdio carries a protocol, not text for a person
        _show_controls_visibly()
    try:
        if args.command == "run":
            return _cmd_run(args)
        if args.command == "models":
            return _cmd_models(args)
        if args.command == "replay":
            return _cmd_replay(args)
        if args.command in ("stats", "eval"):
            from k1412_ls.experiments.cli_commands import run_command

            return run_command(args)
        if args.command == "judge":
            from k1412_ls.judge.cli_command import run_judge

            return run_judge(args)
        if args.command == "undo":
            return _cmd_undo(args)
        if args.command == "acp":
            return _cmd_acp(args)
        if args.command == "mcp":
            return _cmd_mcp(args)
        return _cmd_lsp(args)
    except (CliError, ConfigError) as exc:
        print(f"k1412: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:
        return _unexpected(exc)


def _show_controls_visibly() -> None:
    """Every later write to stdout/stderr shows control, bidi and format characters, never lets the terminal act
    on them (the model's and commands' text reaches the verdict, progress, replay, undo and stats output)."""
    from k1412_ls.text.lossless import VisibleStream

    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, VisibleStream):
            setattr(sys, name, VisibleStream(stream))


def _print_json(value: Any) -> None:
    """Exact JSON whose strings hold nothing a terminal interprets (k1412_ls/text/lossless.py)."""
    from k1412_ls.text.lossless import terminal_json

    print(terminal_json(value))


def _unexpected(exc: Exception) -> int:
    """One redacted line instead of a traceback (K1412_DEBUG=1 shows the traceback)."""
    import os

    from k1412_ls.text.redact import Redactor

    if os.environ.get("K1412_DEBUG"):
        raise exc
    from k1412_ls.state.store import StateError

    text = Redactor.from_environment().text(str(exc)).splitlines()[0] if str(exc) else type(exc).__name__
    if isinstance(exc, StateError | OSError):
        print(f"k1412: {text}", file=sys.stderr)
        return EXIT_USAGE
    print(f"k1412: internal error ({type(exc).__name__}): {text}; set K1412_DEBUG=1 to see the traceback.",
          file=sys.stderr)
    return EXIT_FAILED


def lsp_main() -> int:
    """Entry point of the ``k1412-ls`` script."""
    return main(["lsp", *sys.argv[1:]])


def _workspace(value: str) -> Path:
    path = Path(value).expanduser()
    if not path.is_dir():
        raise CliError(f"Workspace {path} is not a directory.")
    return path.resolve()


def _events_file(value: str | None) -> Path | None:
    """The --events file, checked to be appendable before the run starts."""
    if not value:
        return None
    path = Path(value).expanduser()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise CliError(f"Cannot write the --events file {path}: {exc.strerror or exc}.") from None
    return path


def _cmd_run(args: argparse.Namespace) -> int:
    from k1412_ls.assembly import build_runtime
    from k1412_ls.config import load_config
    from k1412_ls.core.run_request import RunRequest
    from k1412_ls.terminal_approval import terminal_approver
    from k1412_ls.tools.files.documents import sweep_write_temps

    if not args.task.strip():
        raise CliError("The task is empty; say what K1412 should do.")
    workspace = _workspace(args.workspace)
    sweep_write_temps(workspace)  # temp files of writes a killed process left behind
    events_file = _events_file(args.events)
    config = load_config(args.config, workspace)
    runtime = build_runtime(config)
    model = runtime.resolve_model(args.model)
    screen = _setup_screen(config, args, workspace)
    if screen is not None:
        print(screen, file=sys.stderr)
        return EXIT_USAGE
    request = RunRequest(
        task=args.task, workspace=workspace, model=args.model, user=args.user or _default_user(),
        conversation=args.conversation, events_file=events_file, approver=terminal_approver(),
        max_cost=args.max_cost, max_tokens=args.max_tokens,
        focus=(Path.cwd(),),  # instruction files between the workspace root and here are read
    )
    live = sys.stderr.isatty()
    sinks = [TerminalSink(sys.stderr)] if live else []
    result = asyncio.run(_run_with_signals(runtime, request, model, sinks))
    if args.json:
        _print_json(result.as_dict())
    else:
        _print_verdict(result, sys.stdout)
    return result.exit_code


def _setup_screen(config: Any, args: argparse.Namespace, workspace: Path) -> str | None:
    """What to do first, when no model is configured and the default local server is not running."""
    from k1412_ls.locations import find_config_file
    from k1412_ls.models.first_run import setup_screen

    has_file = find_config_file(args.config, workspace) is not None
    return setup_screen(config, config.model_spec(args.model or config.default_model), has_file)


async def _run_with_signals(runtime: Any, request: Any, model: Any, sinks: list[Any]) -> RunResult:
    run_id = runtime.new_run_id()
    loop = asyncio.get_running_loop()
    # Ctrl-C (and SIGTERM) cancel the run cleanly: children die, run.cancelled is logged, exit 130.
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, runtime.cancel, run_id)
    try:
        return await runtime.run(request, sinks=sinks, run_id=run_id, model=model)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def _default_user() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "default"


class TerminalSink:
    """Live progress: one short line per interesting event."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def __call__(self, event: Event) -> None:
        from k1412_ls.core.render import describe_event
        from k1412_ls.text.lossless import visible

        line = describe_event(event)
        if line:
            self.stream.write(visible(line, keep_lines=False) + "\n")
            self.stream.flush()


def _print_verdict(result: RunResult, out: TextIO) -> None:
    from k1412_ls.core.render import describe_verification

    if result.message:
        out.write(result.message.rstrip() + "\n\n")
    out.write(f"status: {result.status}\n")
    out.write(f"{describe_verification(result.evidence)}\n")
    contract = result.evidence.get("contract") or []
    if contract:
        out.write("done when:\n" + "".join(f"  {item}\n" for item in contract))
    if result.files_changed:
        out.write("files changed: " + ", ".join(result.files_changed) + "\n")
    from k1412_ls.core.cost import Cost, describe_cost

    tokens = int(result.usage.get("prompt_tokens", 0)) + int(result.usage.get("completion_tokens", 0))
    out.write(f"cost: {describe_cost(Cost.from_dict(result.cost))} ({tokens:,} tokens)\n")
    out.write(f"events: {result.events_path}\n")


def _cmd_models(args: argparse.Namespace) -> int:
    from k1412_ls.config import load_config

    config = load_config(args.config, _workspace(args.workspace))
    rows = config.models_listing()
    servers = _managed_servers(config)
    for row in rows:
        if row["id"] in servers:
            row["server"] = servers[row["id"]]
    if args.json:
        _print_json(rows)
        return 0
    table = [("id", "provider", "provider model", "thinking", "effort", "iterations", "context chars",
              "USD / M tokens in·cached·out", "server")]
    for row in rows:
        label = f" ({row['thinking_label']})" if row["thinking_label"] else ""
        table.append((row["id"] + (" (default)" if row["default"] else ""), row["provider"], row["provider_model"],
                      ("yes" + label) if row["thinking"] else "no", row["reasoning_effort"] or "-",
                      str(row["max_iterations"]), str(row["context_chars"]), _price(row["pricing"]),
                      _server_cell(row.get("server"))))
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    for line in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip())
    return 0


def _managed_servers(config: Any) -> dict[str, dict[str, Any]]:
    """The state of each managed model's llama.cpp server (``k1412 models``), by model id."""
    managed = {model_id: spec for model_id, spec in config.models.items() if config.provider_for(spec).managed}
    if not managed:
        return {}
    from k1412_ls.models.managed_llama import server_status

    return {model_id: server_status(config.provider_for(spec), spec) for model_id, spec in managed.items()}


def _server_cell(server: dict[str, Any] | None) -> str:
    if not server:
        return "-"
    if server["state"] == "stopped":
        return "managed: stopped (starts on first use)"
    return f"managed: {server['state']} pid {server['pid']} port {server['port']}, {server['holders']} holding"


def _price(pricing: dict[str, Any] | None) -> str:
    if not pricing:
        return "unpriced"
    cached = pricing["input"] if pricing.get("cached_input") is None else pricing["cached_input"]
    return f"{pricing['input']:g} · {cached:g} · {pricing['output']:g}"


def _cmd_mcp(args: argparse.Namespace) -> int:
    from k1412_ls.config import load_config
    from k1412_ls.tools.mcp.listing import list_servers, render_rows

    workspace = _workspace(args.workspace)
    rows = list_servers(load_config(args.config, workspace), workspace)
    if args.json:
        _print_json(rows)
    else:
        print("\n".join(render_rows(rows)))
    return 0


def _cmd_replay(args: argparse.Namespace) -> int:
    from k1412_ls.core.render import describe_event, describe_verification
    from k1412_ls.core.replay_view import load_run_log, replay_report
    from k1412_ls.text.lossless import visible

    path = load_run_log(args.run, state_dir())
    report = replay_report(path)
    if args.export == "atif":
        from k1412_ls.judge.atif_export import to_atif

        _print_json(to_atif(report.events))
        return 0
    if args.json:
        _print_json(report.as_dict())
        return 0
    for event in report.events:
        line = describe_event(event)
        if line:
            print(f"{event.seq:>4} {event.ts} {visible(line, keep_lines=False)}")
    if report.agrees is None and report.recorded == "unfinished":
        print("\nrecorded verdict: unfinished (the log has no end: the run was killed or is still running)")
    else:
        print(f"\nrecorded verdict: {report.recorded}")
    print(f"re-checked verdict: {report.recomputed} · {describe_verification(report.evidence)}")
    print(report.describe_policies())
    if report.agrees is False:
        print("warning: the re-checked verdict disagrees with the recorded one.")
    return 0


def _cmd_undo(args: argparse.Namespace) -> int:
    from k1412_ls.core.undo_result import EXIT_UNKNOWN_RUN, UnknownRun, exit_code, undo_on_disk

    try:
        result = undo_on_disk(state_dir(), args.run, by="cli")
    except UnknownRun as exc:
        if args.json:
            _print_json({"ok": False, "run_id": args.run, "restored": [], "refused": [], "message": str(exc)})
        print(f"k1412: {exc}", file=sys.stderr)
        return EXIT_UNKNOWN_RUN
    if args.json:
        _print_json(result)
        return exit_code(result)
    print(result["message"])
    for path in result["restored"]:
        print(f"  restored  {path}")
    for refusal in result["refused"]:
        print(f"  refused   {refusal['path']}: {refusal['reason']}")
    print("not undone by design: " + "; ".join(result["not_undoable"]))
    return exit_code(result)


def _cmd_lsp(args: argparse.Namespace) -> int:
    from k1412_ls.lsp.startup_cache import cached_attrs_compile
    from k1412_ls.process_role import set_role

    set_role("lsp")  # a managed llama.cpp server this language server starts or uses goes with it
    with cached_attrs_compile():  # the LSP types' generated methods: compiled once, then loaded (~0.3 s)
        from k1412_ls.lsp.server import serve
    return serve(tcp=args.tcp)


def _cmd_acp(args: argparse.Namespace) -> int:
    from k1412_ls.acp.acp_server import AcpOptions, serve
    from k1412_ls.process_role import set_role

    set_role("lsp")  # a long-lived editor server like the language server: a managed model server goes with it
    return serve(AcpOptions(config_path=args.config, model=args.model, user=args.user))


if __name__ == "__main__":
    sys.exit(main())
