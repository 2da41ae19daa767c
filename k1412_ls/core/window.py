"""Context policy ``recent-visible-v3`` inside a run: every model request fits the model's window.

The loop hands every message to a :class:`ContextWindow` and asks it for the
messages of each request. What it sends is measured in characters
(:func:`request_chars`: message texts, tool-call names and arguments, a small
overhead per message, **and the tool schemas**) against the run's
:class:`ContextBudget`.

* **Fresh results.** A tool result (or the arguments of a tool call) larger than
  a tenth of the budget is cut when it arrives: head and tail kept, the middle
  replaced by a marker saying how to see it (``read_file`` with the omitted line
  range, a narrower command).
* **Chunked compaction.** Nothing changes while the request stays under 90 % of
  the budget, so each request extends the previous one byte for byte (prompt
  caches hit). Above 90 % the window compacts down to 50 % in one go, oldest
  first: (1) old tool results become stubs (call, arguments, ok / exit code,
  path, a short head and tail, "re-read with read_file"), big arguments of old
  calls become their size and hash; (2) if that is not enough, whole older
  steps fold into the run digest (:mod:`k1412_ls.core.digest`, built from the
  events), attached to the task message; (3) only then the last step's results,
  the digest, conversation history and the task itself are cut, down to a
  minimum; if even that does not fit, :class:`ContextTooSmall` says so.
* **Overflow.** When the provider refuses anyway, :meth:`ContextBudget.learn`
  lowers the budget for the rest of the run (from the window the provider
  states, else by 30 %) and :meth:`ContextWindow.shrink` compacts again.

The step that is answering (the last assistant message and its results) is never
folded, and the gate never reads what was folded: it judges events.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from k1412_ls.core.model_port import ContextOverflow
from k1412_ls.core.result_cuts import BIG_ARGUMENT, cut_call_arguments, cut_result, cut_text, result_stub

POLICY_NAME = "recent-visible-v3"
HIGH_WATER = 0.9  # compact when a request would pass this share of the budget …
LOW_WATER = 0.5  # … down to this share
RESULT_SHARE = 0.1  # a fresh tool result (or call arguments) may take this share of the budget
MIN_RESULT_CHARS = 1_200
DIGEST_SHARE = 0.15
TASK_SHARE = 0.3  # a task longer than this share of the budget is cut (head and tail kept)
MIN_DIGEST_CHARS = 1_200
MIN_TASK_CHARS = 2_000
MESSAGE_OVERHEAD = 8  # role and separators, as chat templates render them
OVERFLOW_SHRINK = 0.7  # no window stated: try 70 % of what was refused
SAFETY = 0.9  # a stated window is used at 90 %, whatever the characters-per-token estimate
CHARS_PER_TOKEN = 3.0  # conservative estimate when the provider did not count the request
DIGEST_SEPARATOR = "\n\n"


class ContextTooSmall(Exception):
    """Even the minimum context (rules, schemas, the task's head, the last step) does not fit the budget."""


def message_chars(message: dict[str, Any]) -> int:
    """The characters one message puts into the model's window."""
    size = MESSAGE_OVERHEAD
    content = message.get("content")
    if isinstance(content, str):
        size += len(content)
    elif content is not None:
        size += len(json.dumps(content, ensure_ascii=False))
    reasoning = message.get("reasoning_content")
    if isinstance(reasoning, str):
        size += len(reasoning)
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        size += len(str(function.get("name", ""))) + len(str(function.get("arguments", ""))) + MESSAGE_OVERHEAD
    return size


def schemas_chars(schemas: list[dict[str, Any]]) -> int:
    """The characters the tool schemas take in the window (they count toward the budget)."""
    return len(json.dumps(schemas, ensure_ascii=False)) if schemas else 0


def request_chars(messages: list[dict[str, Any]], schema_chars: int = 0) -> int:
    """The characters a request puts into the model's window."""
    return schema_chars + sum(message_chars(m) for m in messages)


@dataclass
class ContextBudget:
    """The run's budget in characters: the configured one, lowered by what providers said (shared by sub-agents)."""

    configured: int
    learned: int | None = None
    window_tokens: int | None = None
    max_output_tokens: int | None = None
    accepted: int = 0  # the largest request the provider answered: the window holds at least this much

    def note_accepted(self, sent_chars: int) -> None:
        """A request of ``sent_chars`` was answered: a budget learned below it was too cautious."""
        self.accepted = max(self.accepted, sent_chars)
        if self.learned is not None and sent_chars > self.learned:
            self.learned = min(self.configured, sent_chars)

    @property
    def chars(self) -> int:
        return min(self.configured, self.learned) if self.learned is not None else self.configured

    def learn(self, overflow: ContextOverflow, sent_chars: int, output_tokens: int) -> dict[str, Any]:
        """Lower the budget after a refusal of ``sent_chars``; return what was learned (the event payload)."""
        before = self.chars
        window = overflow.window_tokens
        completion = overflow.completion_tokens
        cap_was_the_problem = False
        if window:
            if completion and completion >= window // 2 and (self.max_output_tokens or completion) > window // 4:
                # The output cap alone fills the window (vLLM says so): lower it for the rest of the run.
                self.max_output_tokens = max(256, window // 4)
                cap_was_the_problem = True
            cap = self.max_output_tokens or output_tokens
            reserve = completion if completion and completion < window // 2 else min(cap, window // 4)
            if overflow.prompt_tokens:
                per_token = sent_chars / overflow.prompt_tokens
            else:
                per_token = min(CHARS_PER_TOKEN, sent_chars / window)
            new = int((window - reserve) * per_token * SAFETY)
            self.window_tokens = window
        else:
            new = int(min(sent_chars, before) * OVERFLOW_SHRINK)
        # Each refusal shrinks what is sent, so retries converge (unless only the output cap was lowered) ...
        new = min(new, before) if cap_was_the_problem else min(new, int(sent_chars * SAFETY), before)
        # ... but never below what the provider already answered: the window lies between the two.
        if not cap_was_the_problem and self.accepted < sent_chars:
            new = min(max(new, self.accepted), sent_chars - 1)
        new = max(1, new)
        self.learned = new
        return {"budget_chars_before": before, "budget_chars": new, "sent_chars": sent_chars,
                "window_tokens": window, "prompt_tokens": overflow.prompt_tokens,
                "completion_tokens": completion, "max_output_tokens": self.max_output_tokens,
                "learned_window": window is not None}


@dataclass
class _Call:
    name: str
    arguments: str


@dataclass
class Compaction:
    """What one compaction did (the ``context.compacted`` payload)."""

    reason: str
    before_chars: int
    after_chars: int = 0
    budget_chars: int = 0
    results_elided: int = 0
    arguments_elided: int = 0
    steps_folded: int = 0
    results_cut: int = 0
    history_dropped: int = 0
    digest_cut: bool = False
    task_cut: bool = False

    def payload(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class ContextWindow:
    """The messages of one agent's requests, kept within the budget (see the module docstring).

    ``head`` leading messages are the prepared context (system contract,
    memories, conversation, the task last); ``digest(folded_call_ids,
    steps_folded, limit)`` builds the run digest from events.
    """

    messages: list[dict[str, Any]]
    head: int
    budget: ContextBudget
    digest: Callable[[set[str], int, int], str]
    schema_chars: int = 0
    emit: Callable[[str, dict[str, Any]], Any] | None = None
    _calls: dict[str, _Call] = field(default_factory=dict)
    _stubbed: dict[int, dict[str, Any]] = field(default_factory=dict)  # messages already elided, by id
    _folded_calls: set[str] = field(default_factory=set)
    _steps_folded: int = 0
    _task: str = ""
    _digest_text: str = ""
    compactions: int = 0
    at_minimum: bool = False  # the last compaction sent the least context there is

    def __post_init__(self) -> None:
        self.head = max(1, min(self.head, len(self.messages)))
        task = self.messages[self.head - 1].get("content")
        self._task = task if isinstance(task, str) else ""
        for message in self.messages[self.head:]:
            self._remember_calls(message)

    # -- measuring ------------------------------------------------------------------------------
    def size(self) -> int:
        return request_chars(self.messages, self.schema_chars)

    # -- growing ----------------------------------------------------------------------------------
    def append(self, message: dict[str, Any]) -> None:
        """Add a message; a result or arguments bigger than a tenth of the budget are cut on arrival."""
        message = dict(message)
        cap = max(MIN_RESULT_CHARS, int(self.budget.chars * RESULT_SHARE))
        if message.get("role") == "tool" and isinstance(message.get("content"), str) and len(message["content"]) > cap:
            call = self._calls.get(str(message.get("tool_call_id")))
            message["content"] = cut_result(message["content"], cap, call.name if call else "")
        if message.get("tool_calls"):
            message["tool_calls"] = [cut_call_arguments(call, cap) for call in message["tool_calls"]]
        self._remember_calls(message)
        self.messages.append(message)

    def _remember_calls(self, message: dict[str, Any]) -> None:
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            self._calls[str(call.get("id"))] = _Call(str(function.get("name", "")), str(function.get("arguments", "")))

    # -- the request --------------------------------------------------------------------------------
    def for_request(self) -> list[dict[str, Any]]:
        """The messages to send now; compacts in one chunk when they would pass 90 % of the budget."""
        budget = self.budget.chars
        if self.size() > budget * HIGH_WATER:
            self._compact(int(budget * LOW_WATER), "budget")
        return self.messages

    def shrink(self, *, minimum: bool = False) -> list[dict[str, Any]]:
        """After the provider refused for length (the budget already lowered): compact to the new budget.

        With ``minimum`` (the last retry, or when the lowered budget is below the minimum), compact to the
        least context a request can have and send that whatever the estimate says: only the provider
        can tell whether it fits. Raises ContextTooSmall when the lowered budget cannot hold the minimum.
        """
        if minimum:
            self._compact(0, "overflow", floor=True)
            self.at_minimum = True
            # What is sent now is the minimum; the budget must let it through (and hold later steps to it).
            self.budget.learned = max(self.budget.learned or 0, math.ceil(self.size() / HIGH_WATER))
        else:
            self._compact(int(self.budget.chars * LOW_WATER), "overflow")
        return self.messages

    # -- compaction -----------------------------------------------------------------------------------
    def _groups(self) -> list[tuple[int, int]]:
        """``(start, end)`` of each step after the head: an assistant message and what answers it."""
        starts = [i for i in range(self.head, len(self.messages)) if self.messages[i].get("role") == "assistant"]
        if not starts or starts[0] != self.head:
            starts = [self.head, *starts] if len(self.messages) > self.head else starts
        return [(start, starts[k + 1] if k + 1 < len(starts) else len(self.messages)) for k, start in enumerate(starts)]

    def _compact(self, target: int, reason: str, *, floor: bool = False) -> None:
        budget = self.budget.chars
        record = Compaction(reason, before_chars=self.size(), budget_chars=budget)
        groups = self._groups()
        older = groups[:-1]
        # 1. old tool results become stubs, big arguments of old calls their size and hash; oldest first.
        for start, end in older:
            if self.size() <= target:
                break
            for index in range(start, end):
                elided_result, elided_args = self._elide(index)
                record.results_elided += elided_result
                record.arguments_elided += elided_args
        # 2. whole older steps fold into the run digest, oldest first.
        if self.size() > target and older:
            self._fold(target, record)
        # 3. the minimum: cut the last step, the digest, the history and the task until the budget holds.
        if floor:
            self._squeeze(0, record)
        elif self.size() > budget:
            self._squeeze(budget, record)
        record.after_chars = self.size()
        self.compactions += 1
        if self.emit is not None:
            self.emit("context.compacted", record.payload())
        if record.after_chars > budget and not floor:
            raise ContextTooSmall(
                f"The context window ({budget} characters) cannot hold even the minimum context "
                f"({record.after_chars} characters: the rules, the tool schemas, the task's head and the last "
                "step); raise context_chars for this model or the provider's context size."
            )

    def _elide(self, index: int) -> tuple[int, int]:
        message = self.messages[index]
        if id(message) in self._stubbed:
            return 0, 0
        if message.get("role") == "tool" and isinstance(message.get("content"), str):
            call = self._calls.get(str(message.get("tool_call_id")))
            stub = result_stub(message["content"], call.name if call else "tool", call.arguments if call else "")
            if len(stub) >= len(message["content"]):
                return 0, 0
            new = {**message, "content": stub}
            self.messages[index] = new
            self._stubbed[id(new)] = new
            return 1, 0
        if message.get("tool_calls"):
            calls = [cut_call_arguments(call, BIG_ARGUMENT, stub=True) for call in message["tool_calls"]]
            changed = sum(1 for old, new in zip(message["tool_calls"], calls, strict=True) if old is not new)
            new = {**message, "tool_calls": calls}
            self.messages[index] = new
            self._stubbed[id(new)] = new
            return 0, changed
        return 0, 0

    def _fold(self, target: int, record: Compaction) -> None:
        """Fold the oldest steps into the digest until the target holds (the last step always stays)."""
        limit = max(MIN_DIGEST_CHARS, int(self.budget.chars * DIGEST_SHARE))
        while self.size() > target:
            groups = self._groups()
            if len(groups) < 2:
                break
            start, end = groups[0]
            for message in self.messages[start:end]:
                self._stubbed.pop(id(message), None)
                for call in message.get("tool_calls") or []:
                    self._folded_calls.add(str(call.get("id")))
            del self.messages[start:end]
            self._steps_folded += 1
            record.steps_folded += 1
            self._set_digest(self.digest(set(self._folded_calls), self._steps_folded, limit))

    def _set_digest(self, text: str) -> None:
        self._digest_text = text
        task_index = self.head - 1
        task = self._task
        content = f"{task}{DIGEST_SEPARATOR}{text}" if text else task
        self.messages[task_index] = {**self.messages[task_index], "content": content}

    def _squeeze(self, budget: int, record: Compaction) -> None:
        """The minimum: history, then the digest, the task (to a share) and the last step, then the task again."""
        # a. conversation history between the system messages and the task.
        first_history = next((i for i in range(1, self.head - 1) if self.messages[i].get("role") != "system"),
                             self.head - 1)
        if first_history < self.head - 1:
            dropped = self.head - 1 - first_history
            del self.messages[first_history:self.head - 1]
            self.head -= dropped
            record.history_dropped = dropped
        # b. the digest, to what is left but never below its minimum.
        if self.size() > budget and self._digest_text:
            limit = max(MIN_DIGEST_CHARS, budget - (self.size() - len(self._digest_text)))
            if len(self._digest_text) > limit:
                self._set_digest(cut_text(self._digest_text, limit, "digest entries"))
                record.digest_cut = True
        # c. a huge task keeps at most its share, so later steps still have room.
        if self.size() > budget:
            self._cut_task(max(MIN_TASK_CHARS, int(budget * TASK_SHARE)), record)
        # d. the last step's results and arguments, to their minimum.
        if self.size() > budget:
            for index in range(self.head, len(self.messages)):
                message = self.messages[index]
                content = message.get("content")
                if message.get("role") == "tool" and isinstance(content, str) and len(content) > MIN_RESULT_CHARS:
                    call = self._calls.get(str(message.get("tool_call_id")))
                    self.messages[index] = {**message, "content": cut_result(content, MIN_RESULT_CHARS,
                                                                              call.name if call else "")}
                    record.results_cut += 1
                elif message.get("tool_calls"):
                    self.messages[index] = {**message, "tool_calls": [
                        cut_call_arguments(call, MIN_RESULT_CHARS) for call in message["tool_calls"]]}
        # e. the task, down to its minimum.
        if self.size() > budget:
            spare = budget - (self.size() - len(self._task)) - len(DIGEST_SEPARATOR)
            self._cut_task(max(MIN_TASK_CHARS, spare), record)

    def _cut_task(self, limit: int, record: Compaction) -> None:
        if len(self._task) > limit:
            self._task = cut_text(self._task, limit, "the task text")
            self._set_digest(self._digest_text)
            record.task_cut = True


# -- cutting text -----------------------------------------------------------------------------------------

__all__ = ["POLICY_NAME", "ContextBudget", "ContextTooSmall", "ContextWindow", "cut_result", "cut_text",
           "message_chars", "request_chars", "result_stub", "schemas_chars"]
