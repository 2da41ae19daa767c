"""Claims a final answer makes, and the events that must back each of them (English and Chinese).

:func:`find_claims` reads the answer sentence by sentence. A sentence that
negates (``not``, ``n't``, ``still fail``, ``未``, ``没``, ``失败`` …) makes no
positive claim. Kinds:

- ``tests-pass``: "all tests pass", "3 passed", "测试全部通过";
- ``compiles``: "it compiles", "builds cleanly", "编译成功";
- ``committed``: "committed", "已提交";
- ``changed``: a change verb with a named file ("fixed calc.py", "修改了 utils.py");
- ``deleted``: a deletion verb with a named file ("removed temp.txt", "删除了 temp.txt").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from k1412_ls.core.evidence.admissions import admits_unfinished
from k1412_ls.core.evidence.figures import answer_counts, answer_figures
from k1412_ls.core.evidence.proof import (
    Evidence,
    FileState,
    Problem,
    committed,
    last_code_write,
    passing_tests_after,
    same_path,
    unresolved_failures,
)
from k1412_ls.text.vocabulary import extract_targets

# Sentences end at . ! ? followed by a space (not inside calc.py), or at 。！？；; and line breaks.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|[。！？；;\n]+")
_NEGATION = re.compile(
    r"\b(?:not|no|never|cannot|can't|couldn't|didn't|don't|doesn't|isn't|aren't|wasn't|weren't|won't|without|"
    r"fail|fails|failed|failing|failure|unable|broken|error|errors|still\s+red|unless|if|whether|should|would|"
    r"could|might|may|todo|next\s+step|nothing|none)\b|未|没|不|失败|错误|报错|无法|如果|是否|尚未|仍然?有",
    re.IGNORECASE)
_TESTS_PASS = re.compile(
    r"\b(?:all\s+|the\s+|every\s+|\d+\s+)?(?:unit\s+)?tests?\s+(?:now\s+|still\s+|all\s+)?(?:pass|passes|passed|"
    r"passing|succeed|succeeded|are\s+(?:passing|green|ok)|(?:is|are)\s+green|run\s+green)\b|\b\d+\s+passed\b|"
    r"\btest\s+suite\s+(?:passes|passed|is\s+green)\b|\bgreen\s+tests?\b|\ball\s+green\b|"
    r"测试[^。！？\n]{0,8}(?:通过|成功|全绿)|(?:全部|都|均)(?:已)?通过|用例[^。！？\n]{0,6}通过|单测[^。！？\n]{0,6}通过",
    re.IGNORECASE)
# "builds"/"built" alone is too common a verb ("builds its query with an f-string", "a built-in"): as a claim of a
# compile it needs its subject (it, the project, everything …) or its outcome (fine, cleanly …).
_COMPILES = re.compile(r"\b(?:compiles|compiled)\s*(?:now\s+)?(?:fine|cleanly|successfully|without|ok)?"
                       r"|\b(?:builds|built)\s+(?:now\s+)?(?:fine|cleanly|successfully|without\s+(?:errors?|warnings?)|ok)\b"
                       r"|\b(?:it|project|code|everything|binary|program|crate|package|library|app)\s+(?:now\s+|still\s+)?"
                       r"(?:builds|is\s+built|was\s+built|built)\b"
                       r"|\bcompilation\s+succeeds?\b|编译(?:成功|通过|没问题)|构建成功|编得过|能编过|可以编译|能编译", re.IGNORECASE)
_COMMITTED = re.compile(r"\b(?:committed|created\s+a\s+commit|made\s+a\s+commit)\b|已提交|提交了|完成了?提交",
                        re.IGNORECASE)
_CHANGED = re.compile(r"\b(?:fixed|updated|changed|modified|edited|created|added|wrote|written|renamed|inserted|"
                      r"bumped|patched|rewrote|rewritten|replaced|refactored|implemented|corrected|saved)\b"
                      r"|修复了?|修改了?|更新了?|创建了?|添加了?|写入了?|插入了?|改成了?|改为|改好了?|替换了?|重构了?|实现了?|保存|加入了?|加了|"
                      r"加上了?|新增了?|重命名|升级了?|修正了?|升到|升至|改到|改至|调到|换成|变成|改好|更新至|调整为",
                      re.IGNORECASE)
_DELETED = re.compile(r"\b(?:deleted|removed|erased|got\s+rid\s+of|cleaned\s+up|wiped)\b|删除了?|删掉了?|移除了?|去掉了?|"
                      r"清理掉了?|清理了|清除了?|清空了?", re.IGNORECASE)
# A directory named in a claim: "the build directory", "build/", "build 目录".
_DIRECTORY = re.compile(r"\b(?:the\s+)?([A-Za-z0-9_.-]+)\s+(?:directory|folder|dir)\b|\b([A-Za-z0-9_.-]+)/(?=\s|$|[,.;])"
                        r"|([A-Za-z0-9_.-]+)\s*(?:目录|文件夹)", re.IGNORECASE)


# Phrases that sound negative but claim success ("no problem", "没有问题", "without errors", "0 failed").
_NOT_NEGATIONS = re.compile(r"\bno\s+(?:problems?|issues?|errors?|warnings?|failures?|failing\s+tests?)\b|\bwithout\s+"
                            r"(?:errors?|warnings?|problems?|issues?|failures?)\b|\b(?:0|zero|none)\s+(?:tests?\s+)?"
                            r"(?:failed|failures?|failing|errors?)\b|\bfailed:?\s*0\b|\berrors?:?\s*0\b|没有?问题|没有?报错|"
                            r"没有错误|没有警告|无错误|无警告|零错误|0\s*(?:个)?(?:失败|错误)|失败\s*[:：]?\s*0|没有失败|无失败",
                            re.IGNORECASE)
# Any wording that says tests (a suite, a runner, a check target) came out well, wherever the words stand in
# the clause: "the suite is green", "make test: 0 failed", "用例全绿 ✅", "单测也都跑过了". Found by co-occurrence, not
# by phrase, so a wording no pattern names is still checked.
_TEST_SUBJECT = re.compile(
    r"\b(?:unit\s+)?tests?\b|\btest\s*suite\b|\bsuite\b|\bspecs?\b|\bpytest\b|\bunittest\b|\bjest\b|\bvitest\b"
    r"|\bmocha\b|\bcargo\s+test\b|\bgo\s+test\b|\bctest\b|\bmake\s+(?:test|check)\b|\bnpm\s+(?:run\s+)?test\b"
    r"|\bdoctests?\b|\bregression\s+checks?\b|测试|用例|单测|单元测试|回归",
    re.IGNORECASE)
_GOOD_OUTCOME = re.compile(
    r"\b(?:pass|passes|passed|passing|green|succeed|succeeds|succeeded|successful|successfully|ok|okay|clean|"
    r"all\s+good|fine|works?|working)\b|✅|✔|✓|\b(?:0|zero)\s+(?:tests?\s+)?(?:failed|failures?|errors?)\b"
    r"|通过|全绿|绿了|变绿|没问题|正常|成功|跑过|跑通|全过|都过|过了",
    re.IGNORECASE)
# A change claimed in the first person or the perfect, with no file named ("Updated the footer", "已修改").
_DID_CHANGE = re.compile(r"^\s*(?:i\s+(?:have\s+)?|i've\s+|we\s+|(?:it|this|that)\s+(?:is|was|has\s+been)\s+)?"
                         r"(?:fixed|updated|changed|modified|edited|bumped|patched|renamed|replaced|corrected|"
                         r"inserted|added)\b|已经?(?:修复|修改|更新|改|升|替换|添加|加|重命名|删除)|(?:改|升|换|修)(?:好|完)了|升到|升至|改为|改成|改至|换成|更新至|调整为|"
                         r"已[^，。；]{0,12}(?:升到|改为|改成|换成|加入|加上|添加)",
                         re.IGNORECASE)
# "3 tests", "3 个测试", "3 passed": a count of tests the run must have seen.
_TEST_COUNT = re.compile(r"\b(\d+)\s+(?:unit\s+)?tests?\b(?!\s+(?:file|module)s?)|(\d+)\s*(?:个|条)\s*(?:单元)?(?:测试|用例)"
                         r"|\b(\d+)\s+passed\b", re.IGNORECASE)
_VALUE_AFTER = re.compile(r"(?:改为|改成|换成|变成|替换为|替换成|升到|指向|\bto|\binto)\s*[`'\"“]?([\w./-]+\.[A-Za-z0-9]+)",
                          re.IGNORECASE)
_CLAUSE_END = re.compile(r"[，、：:]|\s(?:but|then|so|while|and\s+then|which|where)\s", re.IGNORECASE)


@dataclass(frozen=True)
class Claim:
    """One positive claim of the answer: its kind, the file it names (if any) and the sentence."""

    kind: str
    path: str | None
    sentence: str


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def find_claims(answer: str) -> list[Claim]:
    """Every positive claim in ``answer`` (see the module docstring)."""
    claims: list[Claim] = []
    for sentence in _sentences(answer):
        # A count of tests is a figure whatever the sentence says around it ("3 passed, 1 failed").
        if _NEGATION.search(_NOT_NEGATIONS.sub(" ", sentence)):
            claims.extend(Claim("test-count", next(g for g in m.groups() if g), sentence)
                          for m in _TEST_COUNT.finditer(sentence))
            continue
        if _TESTS_PASS.search(sentence) or (_TEST_SUBJECT.search(sentence) and (
                _GOOD_OUTCOME.search(sentence) or _NOT_NEGATIONS.search(sentence))):
            claims.append(Claim("tests-pass", None, sentence))
        if _COMPILES.search(sentence):
            files = [f for f in extract_targets(sentence) if re.search(r"\.(?:c|cc|cpp|h|rs|go|java|ts)$", f)]
            claims.append(Claim("compiles", files[0] if files else None, sentence))
        if _COMMITTED.search(sentence):
            claims.append(Claim("committed", None, sentence))
        for kind, verb_pattern in (("deleted", _DELETED), ("changed", _CHANGED)):
            clause = next((c for c in _CLAUSE_END.split(sentence) if verb_pattern.search(c)), None)
            if clause is None:
                continue
            # The files a verb acts on stand in its clause, before or after it ("Fixed calc.py and utils.py",
            # "legacy.py 已经删除"), not in another clause ("已删除 build 目录，ls 确认只剩 main.py").
            # A file after "改为", "换成", "to" is the new value ("已改为 hello.c", "renamed it to b.py"), not
            # the file that was changed.
            values = {m.group(1) for m in _VALUE_AFTER.finditer(clause)}
            files = tuple(f for f in extract_targets(clause) if f not in values)
            claims.extend(Claim(kind, f, sentence) for f in files)
            if kind == "deleted" and not files:
                claims.extend(Claim("deleted-dir", next(g for g in m.groups() if g), sentence)
                              for m in _DIRECTORY.finditer(clause))
            if not files and kind == "changed" and _DID_CHANGE.search(clause):
                claims.append(Claim("changed-something", None, sentence))
            break
        for match in _TEST_COUNT.finditer(sentence):
            claims.append(Claim("test-count", next(g for g in match.groups() if g), sentence))
    return claims


def _resolve_claimed(ev: Evidence, name: str, deleted: bool) -> FileState | None:
    files = ev.files
    exact = next((s for p, s in files.items() if same_path(p, name)), None)
    if exact is not None or "/" in name:
        return exact
    stem_only = name.isupper() and "." not in name  # "README" for README.md
    matches = [s for p, s in files.items() if p.rsplit("/", 1)[-1] == name
               or (stem_only and p.rsplit("/", 1)[-1].split(".")[0] == name)]
    return matches[0] if len(matches) == 1 else None


def _why_not_full(ev: Evidence) -> str:
    """Why the last test run that looked like a pass does not count (narrowed, or its outcome unknown)."""
    for run in reversed(ev.runs):
        for test in reversed(run.outcome.tests):
            if test.outcome == "pass" and test.suite.narrowed:
                return f" (the last passing run was narrowed: {test.suite.describe()})"
            if test.outcome == "pass" and not test.suite.whole:
                return f" (the last passing run covered only {test.suite.describe()})"
            if test.outcome == "unknown" and test.why:
                return f" ({test.why})"
    return ""


def _named_run_passed(ev: Evidence, sentence: str) -> bool:
    """Whether the sentence names the files of a test run that passed after the last change, unnarrowed
    (a claim about one named test file or doctest is held to that run, not to the whole suite)."""
    named = [n for n in extract_targets(sentence)]
    if not named:
        return False
    after = last_code_write(ev)
    for run in ev.runs:
        if run.seq <= after:
            continue
        for test in run.outcome.tests:
            if test.outcome != "pass" or test.suite.narrowed or not test.suite.targets:
                continue
            if all(any(same_path(t, n) or t.rsplit("/", 1)[-1] == n for t in test.suite.targets) for n in named):
                return True
    return False


def check_claims(ev: Evidence) -> list[Problem]:
    """Rule ``claims``: every claim of the final answer is backed by this run's events."""
    problems: list[Problem] = [*answer_figures(ev), *answer_counts(ev)]
    said = None if ev.requirements.question else admits_unfinished(ev.final_message)
    if said:
        problems.append(Problem("claims", f"the answer itself says part of the work was not done (\"{said}\")",
                                "finish the remaining part and prove it, or end the run saying what is left."))
    seen: set[tuple[str, str | None]] = set()
    for claim in find_claims(ev.final_message):
        key = (claim.kind, claim.path)
        if key in seen:
            continue
        seen.add(key)
        if claim.kind == "tests-pass":
            failures = [f for f in unresolved_failures(ev) if f.what == "test"]
            if not failures and _named_run_passed(ev, claim.sentence):
                continue  # "test_x.py passes", "python3 -m doctest textutil.py passes": the claim's own scope
            if failures or not passing_tests_after(ev, last_code_write(ev)):
                problems.append(Problem("claims", "the answer says the tests pass, but no full test run after the "
                                        f"last change passed{'' if failures else _why_not_full(ev)}",
                                        "run the whole test suite with run_command and report its real result."))
        elif claim.kind == "compiles":
            ok = [b for r in ev.runs for b in r.outcome.builds if b.ok and (
                claim.path is None or any(s == claim.path or s.endswith("/" + claim.path) for s in b.sources))]
            open_builds = [f for f in unresolved_failures(ev) if f.what == "build"]
            if not ok or open_builds:
                problems.append(Problem("claims", "the answer says it compiles, but no compile succeeded",
                                        "compile it with run_command and report the compiler's real output."))
        elif claim.kind == "committed":
            if not any(committed(r) for r in ev.runs):
                problems.append(Problem("claims", "the answer says the work was committed, but no git commit "
                                        "succeeded", "commit with run_command (git commit) or do not claim it."))
        elif claim.kind == "changed-something":
            if not any(s.present or s.last.removes for s in ev.files.values()) and not ev.skipped:
                problems.append(Problem("claims", "the answer says something was changed, but this run changed no "
                                        "file", "make the change with a tool (and verify it), or do not claim it."))
        elif claim.kind == "test-count" and claim.path:
            seen = {n for r in ev.runs for n in r.numbers if r.outcome.tests}
            if claim.path not in seen:
                problems.append(Problem("claims", f"the answer counts {claim.path} tests, but no test run printed "
                                        "that number", "report the counts the test runner printed."))
        elif claim.kind == "deleted-dir" and claim.path:
            directory = claim.path.strip("/")
            if not any(not s.present and (p == directory or p.startswith(directory + "/"))
                       for p, s in ev.files.items()):
                problems.append(Problem("claims", f"the answer says {directory}/ was removed, but this run deleted "
                                        "nothing in it", f"delete {directory} with run_command (rm -r) and confirm "
                                        "with list_files, or do not claim it."))
        elif claim.kind in ("changed", "deleted") and claim.path:
            state = _resolve_claimed(ev, claim.path, claim.kind == "deleted")
            if claim.kind == "deleted":
                ok = state is not None and not state.present
            else:  # changed, created, or renamed away: any change of it in this run
                ok = state is not None or any(
                    same_path(p, claim.path) or p.rsplit("/", 1)[-1] == claim.path for p in ev.skipped)
            if not ok and claim.path in extract_targets(ev.requirements.request) and claim.path in \
                    ev.requirements.inputs:
                ok = True  # "tests for calc.py" — the answer names its input, not a change
            if not ok:
                verb = "deleted" if claim.kind == "deleted" else "changed"
                problems.append(Problem("claims", f"the answer says {claim.path} was {verb}, but this run never "
                                        f"{verb} it", f"make that change to {claim.path} with a tool, or do not "
                                        "claim it."))
    return problems
