"""What proof a request owes (policy ``agent-loop-v8``), derived from the shared vocabulary.

Derivation rules, by name (each appears in ``Requirements.rules``); they fail
closed, so an unfamiliar phrasing owes more, never less:

- ``need.artifact``: any verb that acts on the workspace (English or
  Chinese, ``change``/``artifact`` tags) → a change, verified after it;
- ``need.source``: write a script/function/program/tests → a source file;
- ``need.execution``: run, start, lint, benchmark … → a successful run
  (for a question, any run whose outcome is known);
- ``need.tests``: the request is about tests → a full-suite test run that
  passes after the last change (for a question: that ran, pass or fail);
- ``need.build``: compile/build → the named sources compile (for a
  question: a compile ran);
- ``need.commit``: commit → a ``git commit`` that succeeded;
- ``need.deletion``: delete/remove a named file → it is gone at the end;
- ``need.report`` / ``need.benchmark``: a report written after the run it
  describes, every figure in it printed by a successful command;
- ``need.inspection``: a question or anything else about this workspace
  → a read of the content it names (a listing or ``pwd`` reads nothing);
- ``need.look``: a request no rule recognises that still names files → a
  read of them. Greetings, memory chores and general questions owe nothing.

Named files are resolved against the workspace when the run starts (a
bare ``config.json`` is the root file if it exists, else the only file of
that name) and recorded, so a replay judges the same paths.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from k1412_ls.core.evidence.constraints import ChangeConstraints, change_constraints
from k1412_ls.core.evidence.request_parts import each_changed
from k1412_ls.core.evidence.requested_commands import requested_commands
from k1412_ls.core.evidence.shadows import probe_shadows
from k1412_ls.core.evidence.test_edits import asks_to_edit_tests, tests_are_oracle, tests_frozen
from k1412_ls.core.intent import IntentDecision, classify_intent
from k1412_ls.text.vocabulary import extract_targets, is_report_path, is_source_path

EVIDENCE_KINDS: tuple[str, ...] = ("artifact", "source", "execution", "tests", "build", "commit", "deletion",
                                   "report", "benchmark", "inspection")
TEST_FILE = re.compile(r"(?:^|/)(?:test_[^/]*|[^/]*_test\.[a-z]+|[^/]*\.(?:test|spec)\.[a-z]+)$")
# Words before a named file that make it material the request works from, not a file to change.
_INPUT_BEFORE = re.compile(
    r"(?:\bfor|\bfrom|\busing|\bbased\s+on|\bagainst|\bcovering|\bread(?:ing|s)?|\bparse|\bparsing|\bcount"
    r"|\bload|\bloads|\bloading|\bprocess(?:es|ing)?|\banaly[sz]e|\bsummari[sz]e|根据|针对|读取|基于|统计|处理|解析|分析|"
    r"读|扫描|遍历|加载|从)\s*(?:the\s+)?(?:functions?\s+in\s+|code\s+in\s+|module\s+|file\s+|data\s+in\s+|words\s+in\s+"
    r"|lines\s+in\s+)?`?$", re.IGNORECASE)
# A file the request names as the destination of results ("save the timings to bench.md", "写进 results.md").
_DESTINATION_BEFORE = re.compile(
    r"(?:\b(?:save|saving|write|writing|record|put|dump|export|store|log|append|output|redirect|copy|paste|report|"
    r"summari[sz]e|tabulate|collect|note)\w*\b[^.;\n]{0,50}?\b(?:to|into|in)|写入|写到|写进|写成|保存到|保存为|保存进|存到|"
    r"存为|存进|输出到|导出到|记录到|记录在|记到|记进|放到|放进|填到|填进|汇总到|整理到)"
    r"\s*(?:a\s+|the\s+)?(?:new\s+)?(?:file\s+)?(?:called\s+|named\s+)?`?$", re.IGNORECASE)

Resolver = Callable[[str], tuple[str, bool]]


@dataclass(frozen=True)
class Requirements:
    """The evidence kinds a request needs, the rules that derived them, and the files it names."""

    kinds: tuple[str, ...]
    rules: tuple[str, ...]
    targets: tuple[str, ...]
    request: str = ""
    question: bool = False
    inputs: tuple[str, ...] = ()        # named files the request works from (need not change)
    existing: tuple[str, ...] = ()      # named files that existed when the run started
    destinations: tuple[str, ...] = ()  # named files the request sends results to
    tags: frozenset[str] = field(default_factory=frozenset)
    renames: bool = False  # a rename or move: the old name may end gone
    test_files: tuple[str, ...] | None = None  # the workspace's test files when the run started (None: unknown)
    resolved: bool = False  # named files were looked up in the workspace (``existing`` is meaningful)
    shadows: tuple[str, ...] = ()  # root modules that shadow a test runner when the run started (``pytest/``)
    hollow: tuple[str, ...] = ()  # test runners that ran no test when the run started (``hollow_runners``)
    each_target: tuple[str, ...] = ()  # named files a change clause names: every one must change
    test_edits: bool = False  # the request asks for tests themselves to change (``test_edits``)
    tests_frozen: bool = False  # the request forbids changing the existing tests
    tests_oracle: bool = True  # the tests judge the work (a fix, passing tests asked for): changed checks bend them
    commit_all: bool = False  # "commit all my changes": nothing may stay uncommitted
    constraints: ChangeConstraints = field(default_factory=ChangeConstraints)  # limits on what may change

    def needs(self, kind: str) -> bool:
        """Whether ``kind`` of evidence is required."""
        return kind in self.kinds

    @property
    def source_targets(self) -> tuple[str, ...]:
        """Named source files the request asks to write (inputs excluded)."""
        return tuple(t for t in self.targets if is_source_path(t) and t not in self.inputs)

    @property
    def report_targets(self) -> tuple[str, ...]:
        """Named files that can hold a report (a report request must write one of them)."""
        return tuple(t for t in self.targets if is_report_path(t) and t not in self.inputs)

    @property
    def change_targets(self) -> tuple[str, ...]:
        """Named files that must end changed (or deleted): every named file that is not an input."""
        return tuple(t for t in self.targets if t not in self.inputs)

    def as_record(self) -> dict[str, object]:
        """What ``run.created`` records so that a replay judges the same paths."""
        record: dict[str, object] = {"targets": list(self.targets), "existing": list(self.existing)}
        if self.test_files is not None:
            record["test_files"] = list(self.test_files)
        if self.shadows:
            record["shadows"] = list(self.shadows)
        if self.hollow:
            record["hollow"] = list(self.hollow)
        return record


def _positions(request: str, name: str) -> list[int]:
    return [m.start() for m in re.finditer(re.escape(name), request)]


# A named file the work must make pass is its oracle, not a file to change: "so that tests/test_calc.py passes",
# "让 test_stack.py 通过", "test_stack.py must pass".
_PASSES_AFTER = re.compile(r"^`?\s*(?:(?:must|should|will|to|can)\s+|now\s+|still\s+|all\s+)?(?:pass|passes|passing|succeeds?|"
                           r"goes\s+green|is\s+green|runs?\s+green)\b|^`?\s*(?:能|可以|也|都)?(?:通过|跑通|变绿|全绿|跑过)",
                           re.IGNORECASE)


def _is_input(request: str, name: str, tags: frozenset[str]) -> bool:
    positions = _positions(request, name)
    if TEST_FILE.search(name) and positions and all(
            _PASSES_AFTER.search(request[p + len(name):p + len(name) + 30]) for p in positions):
        return True
    before = [request[max(0, p - 40):p] for p in positions]
    if "tests" in tags and "source" in tags and not TEST_FILE.search(name):
        return True  # "add tests for calc.py": calc.py is what the tests exercise
    return bool(before) and all(_INPUT_BEFORE.search(b) for b in before)


def derive_requirements(request: str, resolve: Resolver | None = None,
                        recorded: Mapping[str, object] | None = None,
                        test_files: tuple[str, ...] | None = None,
                        decision: IntentDecision | None = None, hollow: tuple[str, ...] = ()) -> Requirements:
    """The evidence ``request`` needs before a run may say ``completed``.

    ``resolve`` maps a named file to its workspace path and whether it
    exists (the runtime's workspace lookup); ``recorded`` is what an earlier
    derivation recorded (replay), which wins over both. ``decision`` is the
    request's intent (``classify_intent`` of the request without its
    prohibitions) when the caller has classified it already.
    """
    if decision is None:
        decision = classify_intent(without_prohibitions(request))
    tags = decision.tags
    kinds: set[str] = set()
    rules: list[str] = []

    def need(kind: str, rule: str) -> None:
        kinds.add(kind)
        if rule not in rules:
            rules.append(rule)

    named = extract_targets(without_quoted_context(request))
    targets, existing = _resolved(named, resolve, recorded)
    # Asking to find out (run, check, answer, report) rather than to change: failures found are findings.
    destinations = _destinations(request, named, targets)
    report_only = ("report" in tags or bool(destinations)) and not tags & {"source", "commit", "deletion", "rename",
                                                                         "action"} and all(
        is_report_path(t) for t in targets) and not _FIXING.search(request)
    constraints = change_constraints(request)
    # A request that forbids every change ("don't change anything", "只读") asks to find out, whatever verbs it
    # also uses: it cannot owe a change of the files it names.
    question = asks_question(request, tags) or report_only or constraints.no_change or not tags & {
        "change", "artifact", "source", "commit", "deletion", "action"}
    if question and ("report" in tags or destinations):
        tags = tags - {"change"}
    if not question and tags & {"artifact", "change"}:
        need("artifact", "need.artifact")
    elif "report" in tags or (question and destinations):
        need("artifact", "need.report")
    if "source" in tags:
        need("source", "need.source")
        need("artifact", "need.source")
    if "execution" in tags or "lint" in tags:
        need("execution", "need.execution")
    if not question and requested_commands(without_prohibitions(request)):
        need("execution", "need.requested-command")  # "check `sh greet.sh Ana`": that command, after the change
    if "tests" in tags and (question or tags & {"execution", "change", "artifact"} or "workspace" in tags):
        need("tests", "need.tests")
    if "build" in tags:
        need("build", "need.build")
    if "commit" in tags and not question:
        need("commit", "need.commit")
        kinds.discard("execution")
    if "deletion" in tags and not question and not _PART_DELETION.search(request):
        need("deletion", "need.deletion")
    if "report" in tags or (destinations and tags & {"execution", "measurement"}):
        need("report", "need.report")
    if "measurement" in tags:
        need("benchmark", "need.benchmark")
        need("execution", "need.benchmark")
    about_workspace = "workspace" in tags or bool(targets)
    if "git" in tags or (tags & {"analysis", "comparison", "question"} and about_workspace):
        need("inspection", "need.inspection")
    if not kinds and "greeting" not in tags and "memory" not in tags and (targets or _CODE_REF.search(request)):
        need("inspection", "need.look")  # fail closed: nothing recognised still owes a real look
    if kinds - {"inspection"} and "inspection" in kinds:
        kinds.discard("inspection")
        rules = [r for r in rules if r not in ("need.inspection", "need.look")]
    if not kinds:
        rules.append("need.nothing")
    ordered = tuple(kind for kind in EVIDENCE_KINDS if kind in kinds)
    by_name = dict(zip(named, targets, strict=True))
    inputs = tuple(by_name[n] for n in named if _is_input(request, n, tags))
    if recorded is not None and isinstance(recorded.get("test_files"), list):
        test_files = tuple(str(t) for t in recorded["test_files"])  # type: ignore[union-attr]
    if recorded is not None:
        shadows = tuple(str(s) for s in recorded.get("shadows") or () if isinstance(s, str))  # type: ignore[union-attr]
        hollow = tuple(str(h) for h in recorded.get("hollow") or () if isinstance(h, str))  # type: ignore[union-attr]
    else:
        shadows = probe_shadows(resolve) if resolve is not None else ()
    each = () if question or not kinds & {"artifact"} else tuple(
        t for t in each_changed(without_quoted_context(request), targets, named, _asks_change) if t not in inputs)
    return Requirements(ordered, (*decision.rules, *rules), targets, request, question, inputs, existing,
                        destinations, tags, renames="rename" in tags, test_files=test_files,
                        resolved=resolve is not None or bool(recorded and "existing" in recorded), shadows=shadows,
                        hollow=hollow, each_target=each,
                        test_edits=asks_to_edit_tests(request), tests_frozen=tests_frozen(request),
                        tests_oracle=tests_are_oracle(request),
                        commit_all="commit" in tags and bool(_COMMIT_ALL.search(request)),
                        constraints=constraints)


def _asks_change(clause: str) -> bool:
    return bool(classify_intent(without_prohibitions(clause)).tags & {"change", "artifact", "rename", "deletion"})


def _destinations(request: str, named: tuple[str, ...], targets: tuple[str, ...]) -> tuple[str, ...]:
    """Named files the request sends results to ("save the timings to bench.md", "写进 results.md")."""
    return tuple(target for name, target in zip(named, targets, strict=True)
                 if not is_source_path(target) and any(_DESTINATION_BEFORE.search(request[max(0, p - 70):p])
                                                       for p in _positions(request, name)))


# "Don't change any code", "先不要改代码", "without touching tests": words that forbid, not ask.
_PROHIBITION = re.compile(
    r"\b(?:do\s+not|don't|dont|never|without|no\s+need\s+to|not\s+to)\s+(?:\w+\s+){0,2}?(?:change|modify|edit|touch|"
    r"fix|update|rewrite|delete|remove|add|create|write|commit|run|execute)\w*(?:\s+(?:any|the|a|anything|it|them)?"
    r"\s*\w+)?"
    r"|(?:不要|别|不用|无需|不必|勿|禁止|不许|不能)\s*(?:先)?(?:修改|改动|改|动|修|删除|删|添加|加|提交|写|运行|执行|跑)"
    r"[^，。,.;；！!]{0,12}",
    re.IGNORECASE)
# "Commit all my changes", "commit everything", "提交所有修改", "全部提交": the whole working tree, not a part.
_COMMIT_ALL = re.compile(
    r"\bcommit\s+(?:all|everything|every\s+change|each\s+change)\b|\bcommit\s+(?:\w+\s+){0,2}all\s+(?:of\s+)?"
    r"(?:the\s+|my\s+|your\s+)?(?:changes|modifications|edits|files|work)\b"
    r"|(?:提交|commit)\s*(?:所有|全部|一切)|(?:所有|全部)[^，。,.;；]{0,8}?(?:都)?提交|全部提交", re.IGNORECASE)
# Deleting a part of a file, not the file: "remove the unused import in app.py", "delete the function percent in
# fmt.py", "app.py has an unused import. Remove it", "删掉 utils.py 里的 debug 函数". The file must change, not go.
_PARTS_EN = (r"imports?|functions?|methods?|class(?:es)?|lines?|variables?|comments?|statements?|prints?|calls?"
             r"|parameters?|arguments?|fields?|keys?|entr(?:y|ies)|decorators?|blocks?|branch(?:es)?|cases?|tests?"
             r"|assertions?|rows?|columns?|sections?|paragraphs?|dependenc(?:y|ies)|options?|flags?|code|todos?|logs?")
_PART_DELETION = re.compile(
    rf"\b(?:delete|remove|drop|erase|strip|get\s+rid\s+of|clean\s+up)\s+(?:the\s+|all\s+|an?\s+|any\s+|every\s+)?"
    rf"(?:\w+\s+){{0,2}}?(?:{_PARTS_EN})\b"
    rf"|\b(?:unused|dead|duplicate|stale|debug|leftover)\s+(?:{_PARTS_EN})\b[^.?!\n]{{0,40}}[.?!]?\s*(?:please\s+)?"
    rf"(?:remove|delete|drop|get\s+rid\s+of)\s+(?:it|them)\b"
    r"|(?:删掉|删除|移除|去掉|清除|清理)[^。，,；;]{0,16}?(?:里|中|内)?的?[^。，,；;]{0,8}?(?:函数|导入|import|行|变量|注释|方法|类|"
    r"参数|字段|语句|打印|print|调用|代码|依赖|配置项|测试用例|断言)"
    r"|(?:函数|导入|import|变量|注释|方法|参数|字段|语句|依赖)[^。？！\n]{0,12}?(?:请|帮我)?(?:删掉|删除|移除|去掉)",
    re.IGNORECASE)
_CODE_REF = re.compile(r"`[^`]+`|\b[A-Za-z_][A-Za-z0-9_]*\(\)")
_FIXING = re.compile(r"\b(?:fix|bug|repair|broken)|修复|修一下|修好|改好|错误", re.IGNORECASE)
_ASKS = re.compile(r"(?:\?|？|吗|呢)\s*$")
_REQUEST_FORM = re.compile(r"^\s*(?:please|pls|can\s+you|could\s+you|would\s+you|will\s+you|can\s+u|请|麻烦|帮我|"
                           r"能不能帮|能否帮|可以帮|你能帮)", re.IGNORECASE)


# Text a request quotes as context rather than naming work: fenced code, tracebacks' "File ..." lines, and
# log lines. A file named only there is where an error happened, not a file the user asks to change.
_FENCED = re.compile(r"```.*?(?:```|\Z)", re.S)
_TRACEBACK_LINE = re.compile(r'^\s*File "[^"\n]+", line \d+.*$|^\s*(?:at\s+\S+\s+\(|Traceback \(most recent).*$', re.M)


def without_quoted_context(request: str) -> str:
    """The request without fenced code and traceback lines (what it quotes, not what it asks)."""
    return _TRACEBACK_LINE.sub(" ", _FENCED.sub(" ", request))


# What a document being written should say: "add a section that says to run `pytest -q`", "写明用 pytest 跑测试".
# Its words are the content to write, not work to do.
_DESCRIBED = re.compile(
    r"\b(?:that|which)\s+(?:says|tells\s+(?:users|people|readers|you)|explains|describes|documents|mentions|"
    r"instructs)\s+[^.;\n]*|\bsaying\s+(?:to|that|how)\s+[^.;\n]*|(?:写明|注明|写上|写清楚|标明)[^。；;\n]*",
    re.IGNORECASE)


def without_prohibitions(request: str) -> str:
    """The request with the things it forbids removed, so "don't change the code" asks for no change, and
    without what it asks a document to say ("a section that says to run the tests" asks for no run)."""
    return _DESCRIBED.sub(" ", _PROHIBITION.sub(" ", request))


def asks_question(request: str, tags: frozenset[str]) -> bool:
    """Whether the request is a question to answer ("do the tests still pass after my change?")."""
    return "question" in tags and bool(_ASKS.search(request.strip())) and not _REQUEST_FORM.search(request)


def _resolved(named: tuple[str, ...], resolve: Resolver | None,
              recorded: Mapping[str, object] | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if recorded is not None:
        targets = recorded.get("targets")
        existing = recorded.get("existing")
        if isinstance(targets, list) and len(targets) == len(named) and all(isinstance(t, str) for t in targets):
            exist = tuple(e for e in existing if isinstance(e, str)) if isinstance(existing, list) else ()
            return tuple(targets), exist
    if resolve is None:
        return named, ()
    targets: list[str] = []
    exist: list[str] = []
    for name in named:
        path, found = resolve(name)
        targets.append(path)
        if found:
            exist.append(path)
    return tuple(targets), tuple(exist)
