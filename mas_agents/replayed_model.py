"""Replayed models: answer every call with the completion a run recorded for the same request
(issue 50).

A run records what each model was asked and what it answered (``llm_calls.jsonl`` and the prompt
log beside it, :data:`mas_agents.prompt_log.PROMPTS_FORMAT`). :class:`Recording` reads every such
pair under a run directory (a single game, or every cell of an experiment run) and
:class:`ReplayChat` is a chat model that answers a request with the recorded completion of the
same request, so a run re-executes offline, with no model and no server:

* ``--model replay:RUN_DIR`` or a seat's ``plain@replay:RUN_DIR`` (:func:`make_replay_chat`, the
  ``replay`` scheme of :data:`mas_agents.model_specs.SPEC_SCHEMES`): answers from any model of the run;
* :func:`replaying` (what ``mas rerun`` uses): every spec of the re-executed run answers from the
  calls the run recorded *for that spec* (``llm_calls.jsonl``'s ``model`` label), and keeps the
  spec's name, so ``config.json`` and ``result.json`` name the models the run named.

**The request** is the messages (role and text, in order), the reply format the call carried (its
structured-output fields, rebuilt from the :class:`mas_agents.grammar.ReplyFormat` in the
dialect the recorded call used: ``{"grammar": GBNF}`` for the embedded model, a server's
dialect otherwise) and the reply cap (``max_tokens``: equal for the embedded model; a remote
call's recorded cap may be lower than the asked one, the remote client lowers it to fit the
server's context window; a model that took no cap matches any). Requests are matched by
content, not by order, so concurrent calls (a round's fanned-out votes, ``--concurrency``)
replay whatever the threads' order; a request asked several times gets its recorded answers in
the recorded order. Temperature and seed are the run's (``config.json``), not per call.

**The answer** is what the model returned: the completion text (for a server's JSON dialect the
JSON object, rendered to tagged lines as the remote client does), the token usage and the
prompt-cache count, the finish reason, the reply cap and format the call record holds; so the
re-executed run's ``llm_calls.jsonl`` (but its clocks and call ids), events and ``result.json``
are those of the original. A recorded failure is replayed as a failure of this one request
(the game's no-answer rule), with the recorded error's type name and text.

**A request the recording does not hold** raises :class:`ReplayMismatch`, naming the run, the
actor, the call's purpose and the first message that differs from the nearest recorded request,
with a short unified diff (``difflib``) -- never a made-up answer. It is a
:class:`mas_agents.errors.RunStopped`: the run stops with that message.

One idea in about 500 lines, the replay model: the index of a recording, the matching of a request
to it (messages, reply format, token cap, actor) and the mismatch report are read together, and
the chat model is their only user.
"""

from __future__ import annotations

import difflib
import json
import sys
import threading
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.ai import InputTokenDetails, UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatResult

from mas_agents.prompt_log import message_dicts, prompt_paths, read_prompts
from mas_agents.call_log import read_calls
from mas_agents.errors import RunStopped
from mas_agents.rundir import CALLS_FILE, RunDir

__all__ = ["PREFIX", "NotReplayable", "ReplayMismatch", "Recording", "ReplayChat", "make_replay_chat",
           "replaying", "recording", "replayable"]

#: The model-spec scheme: ``replay:RUN_DIR``.
PREFIX = "replay:"
#: Lines of a mismatch's unified diff kept in its message.
DIFF_LINES = 24
#: Characters of one diff line kept, around where the recorded and the asked line part.
LINE_CHARS = 240


class NotReplayable(ValueError):
    """The run directory cannot be replayed: no call log, or prompts not recorded
    (``--no-record-prompts``). The message names the directory and why, in one line."""


class ReplayMismatch(RunStopped):
    """A request the recording does not hold: the prompt, its reply format or its cap changed.

    Attributes:
        run: the recorded run directory.
        actor, purpose: who asked and why (as the call records name them; ``"?"`` when unknown).
        index: 0-based index of the first differing message (None: the messages are equal, the
            format or cap differs; or nothing was recorded for this model).
        nearest: the call id of the nearest recorded request (None when none).
        diff: the unified diff of the first differing message (nearest recorded -> asked), cut
            to :data:`DIFF_LINES` lines; ``""`` when the messages are equal.
    """

    def __init__(self, message: str, *, run: Path, actor: str, purpose: str, index: int | None,
                 nearest: str | None, diff: str):
        super().__init__(message)
        self.run, self.actor, self.purpose = run, actor, purpose
        self.index, self.nearest, self.diff = index, nearest, diff


def _canon(obj: Any) -> str:
    """A canonical JSON text of ``obj`` (sorted keys), to compare requests."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str)


@dataclass
class _Rec:
    """One recorded call: its ``llm_calls.jsonl`` record joined with its prompt record."""

    call: dict
    prompt: dict
    file: Path
    order: int = 0
    used: bool = False

    @property
    def messages(self) -> list[dict]:
        return self.prompt.get("messages") or []


@dataclass
class Recording:
    """Every recorded call under one run directory, indexed by request.

    Reads each ``llm_calls.jsonl`` under ``run`` (the directory itself or any cell below it) with
    its prompt log; a call without a prompt record (a run recorded with
    ``--no-record-prompts``) makes the run :class:`NotReplayable`. Thread-safe: concurrent calls
    take their answers under one lock.

    Attributes:
        run: the run directory.
        mismatches: every :class:`ReplayMismatch` raised so far, in order (a game that swallows a
            model error, e.g. a WiS broadcast, still leaves it here for ``mas rerun``).
        served: recorded call id -> how many times it was answered (at most once).

    Raises (constructor):
        NotReplayable: no ``llm_calls.jsonl`` under ``run``, or a call without a prompt record.
        ValueError: a corrupt call or prompt log (the message names the file and line).
    """

    run: Path
    mismatches: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self.run = Path(self.run)
        self._lock = threading.Lock()
        self._by_messages: dict[tuple[str, str], list[_Rec]] = defaultdict(list)
        self._by_model: dict[str, list[_Rec]] = defaultdict(list)
        self.records: list[_Rec] = []
        if not self.run.is_dir():
            raise NotReplayable(f"{self.run}: no such run directory")
        logs = sorted(self.run.rglob(CALLS_FILE))
        if not logs:
            raise NotReplayable(f"{self.run}: no llm_calls.jsonl: not a run directory that made model calls")
        for calls_path in logs:
            calls = read_calls(calls_path)
            if not calls:
                continue
            if not any(p.exists() for p in prompt_paths(calls_path)):
                raise NotReplayable(f"{calls_path.parent}: cannot be replayed: its prompts were not recorded "
                                    f"(a run made with --no-record-prompts)")
            prompts = read_prompts(calls_path.parent)
            for c in calls:
                p = prompts.get(c.call_id)
                if p is None or "messages" not in p:
                    raise NotReplayable(f"{calls_path}: call {c.call_id} has no prompt record: cannot be replayed")
                rec = _Rec(call=c.to_dict(), prompt=p, file=calls_path, order=len(self.records))
                self.records.append(rec)
                self._by_messages[(rec.call["model"], _canon(rec.messages))].append(rec)
                self._by_model[rec.call["model"]].append(rec)

    def labels(self) -> list[str]:
        """The model labels the recorded calls name (``llm_calls.jsonl``'s ``model``), sorted."""
        return sorted(self._by_model)

    def unused(self) -> list[dict]:
        """The call records never answered (a rerun that made fewer calls than the run)."""
        return [r.call for r in self.records if not r.used]

    def answer(self, messages: list[dict], fmt: Any, max_tokens: int | None, *, label: str | None,
               actor: str = "?", purpose: str = "?") -> _Rec:
        """The recorded call that answers this request (marked used), the first unused one in
        record order among those with the same messages, format and cap.

        Args:
            messages: ``[{"role", "content"}]`` as the prompt log writes them.
            fmt: the call's :class:`mas_agents.grammar.ReplyFormat`, or None (free text).
            max_tokens: the reply cap asked (None: none).
            label: only calls recorded for this model label; None: any model of the run.
            actor, purpose: for the error message.

        Raises:
            ReplayMismatch: no unused recorded call matches.
        """
        key = _canon(messages)
        labels = [label] if label is not None else self.labels()
        with self._lock:
            same = [r for lb in labels for r in self._by_messages.get((lb, key), ())]
            same.sort(key=lambda r: r.order)
            fitting = [r for r in same if _format_fits(r, fmt) and _cap_fits(r, max_tokens)]
            for r in fitting:
                if not r.used:
                    r.used = True
                    return r
            exc = self._mismatch(messages, fmt, max_tokens, labels, same, fitting, actor, purpose)
            self.mismatches.append(exc)
        raise exc

    def _mismatch(self, messages: list[dict], fmt: Any, max_tokens: int | None, labels: list[str],
                  same: list[_Rec], fitting: list[_Rec], actor: str, purpose: str) -> ReplayMismatch:
        who = f"{actor} ({purpose})"
        head = f"replay of {self.run}: the call of {who} is not in the recording"
        if fitting:
            return ReplayMismatch(f"{head}: its request was recorded {len(fitting)} time(s) and is asked once more "
                                  f"(first recorded as call {fitting[0].call['call_id']})",
                                  run=self.run, actor=actor, purpose=purpose, index=None,
                                  nearest=fitting[0].call["call_id"], diff="")
        if same:
            r = same[0]
            if not _format_fits(r, fmt):
                what = (f"its reply format differs (recorded {_canon(r.prompt.get('structured'))[:120]}, "
                        f"asked {_canon(_fields(fmt, r.call.get('structured')))[:120]})")
            else:
                what = f"its reply cap differs (recorded max_tokens {r.call.get('max_tokens')}, asked {max_tokens})"
            return ReplayMismatch(f"{head}: the messages equal call {r.call['call_id']}'s but {what}",
                                  run=self.run, actor=actor, purpose=purpose, index=None,
                                  nearest=r.call["call_id"], diff="")
        pool = [r for lb in labels for r in self._by_model.get(lb, ())]
        if not pool:
            return ReplayMismatch(f"{head}: the run recorded no call of model {', '.join(labels) or '?'} "
                                  f"(it recorded {', '.join(self.labels()) or 'none'})",
                                  run=self.run, actor=actor, purpose=purpose, index=None, nearest=None, diff="")
        r, i = _nearest(messages, pool, actor)
        old = r.messages[i] if i < len(r.messages) else None
        new = messages[i] if i < len(messages) else None
        diff = call_diff(old, new, r.call["call_id"])
        role = (new or old or {}).get("role", "?")
        return ReplayMismatch(
            f"{head}: message {i + 1} ({role}) differs from the nearest recorded request, call "
            f"{r.call['call_id']} of {r.call.get('actor')} ({r.call.get('purpose')}):\n{diff}",
            run=self.run, actor=actor, purpose=purpose, index=i, nearest=r.call["call_id"], diff=diff)


def first_difference(a: list[dict], b: list[dict]) -> int:
    """Index of the first message that differs between ``a`` and ``b`` (or the shorter length)."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def _nearest(messages: list[dict], pool: list[_Rec], actor: str) -> tuple[_Rec, int]:
    """The recorded request nearest to ``messages`` and the index of their first differing
    message: the longest run of equal leading messages, then the same actor, then the most
    similar first differing message (``difflib``'s ratio, over at most 64 candidates)."""
    scored = [(first_difference(r.messages, messages), r.call.get("actor") == actor, r) for r in pool]
    best = max(s[0] for s in scored)
    cands = [s for s in scored if s[0] == best]
    if any(s[1] for s in cands):
        cands = [s for s in cands if s[1]]
    cands = cands[:64]

    def ratio(r: _Rec) -> float:
        a = r.messages[best]["content"] if best < len(r.messages) else ""
        b = messages[best]["content"] if best < len(messages) else ""
        return difflib.SequenceMatcher(None, str(a), str(b), autojunk=False).quick_ratio()

    r = max(cands, key=lambda s: ratio(s[2]))[2] if len(cands) > 1 else cands[0][2]
    return r, best


def call_diff(old: dict | None, new: dict | None, call_id: str) -> str:
    """The unified diff of one message, recorded -> asked, at most :data:`DIFF_LINES` lines."""
    a = [] if old is None else str(old.get("content", "")).splitlines()
    b = [] if new is None else str(new.get("content", "")).splitlines()
    if old is not None and new is not None and old.get("role") != new.get("role"):
        a, b = [f"[role {old.get('role')}]"] + a, [f"[role {new.get('role')}]"] + b
    lines = list(difflib.unified_diff(a, b, fromfile=f"recorded (call {call_id})", tofile="asked now",
                                      lineterm="", n=1))
    minus = next((x[1:] for x in lines[2:] if x.startswith("-")), "")
    plus = next((x[1:] for x in lines[2:] if x.startswith("+")), "")
    at = next((i for i, (x, y) in enumerate(zip(minus, plus)) if x != y), min(len(minus), len(plus)))
    lines = [_window(x, at) if i >= 2 else x for i, x in enumerate(lines)]
    if len(lines) > DIFF_LINES:
        lines = lines[:DIFF_LINES] + [f"... ({len(lines) - DIFF_LINES} more diff lines)"]
    return "\n".join(lines)


def _window(line: str, at: int, width: int = LINE_CHARS) -> str:
    """A diff line cut to ``width`` characters around position ``at`` (where the first removed
    and added lines part), its one-character diff mark kept."""
    if len(line) <= width + 1:
        return line
    start = max(0, min(at - width // 3, len(line) - 1 - width))
    body = line[1 + start:1 + start + width]
    return line[0] + ("..." if start else "") + body + ("..." if 1 + start + width < len(line) else "")


def _fields(fmt: Any, dialect: str | None) -> dict | None:
    """The structured-output fields a call with reply format ``fmt`` carried under the recorded
    ``dialect`` (``llm_calls.jsonl``'s ``structured``): the embedded model's ``{"grammar": GBNF}``,
    a server dialect's fields (:meth:`mas_agents.remote.chat.RemoteChat._extra`), ``{}`` for
    ``prompt``; None without a format."""
    if fmt is None:
        return None
    if dialect == "grammar":
        return {"grammar": fmt.gbnf()}
    if dialect == "prompt":
        return {}
    from mas_agents.remote.chat import RemoteChat
    return RemoteChat._extra(None, fmt, dialect)     # uses no state of the model


def _format_fits(r: _Rec, fmt: Any) -> bool:
    """Whether the recorded call ``r`` carried the reply format ``fmt`` asks. A model that took
    no format (dialect None: a fake, a failed remote call) recorded none for any request."""
    dialect = r.call.get("structured")
    recorded = r.prompt.get("structured")
    if dialect is None:
        return fmt is None or recorded is None
    try:
        return _canon(_fields(fmt, dialect)) == _canon(recorded)
    except ValueError:       # a dialect this version does not know
        return False


def _cap_fits(r: _Rec, max_tokens: int | None) -> bool:
    """Whether the recorded call's reply cap is the one asked: equal; or lower for a server
    dialect (fitted to its context window); any when the model took no cap."""
    rec = r.call.get("max_tokens")
    if rec is None or max_tokens is None:
        return rec is None or r.call.get("structured") not in (None, "grammar")
    if r.call.get("structured") in (None, "grammar"):
        return rec == max_tokens
    return rec <= max_tokens


class ReplayedCallError(Exception):
    """Base of a recorded failure replayed (its subclass bears the recorded exception's type
    name). ``status_code`` 400 makes :class:`mas_agents.accounting.AccountedModel` treat it as a
    failure of this request (not retried: the recording holds one outcome), so the game applies
    its no-answer rule as it did."""

    status_code = 400


_ERROR_TYPES: dict[str, type] = {}


def _replayed_error(error: str) -> Exception:
    """The exception that replays a recorded ``"Type: message"`` error."""
    name, _, text = (error or "Error: (no message)").partition(": ")
    name = name if name.isidentifier() else "RecordedError"
    cls = _ERROR_TYPES.get(name)
    if cls is None:
        cls = _ERROR_TYPES[name] = type(name, (ReplayedCallError,), {"__module__": __name__})
    return cls(text)


def _caller() -> tuple[str, str]:
    """``(actor, purpose)`` of the accounted call in progress on this thread, read from the
    frame of :meth:`mas_agents.accounting.AccountedModel.chat` (which does not pass them to the
    model); ``("?", "?")`` when the model is called another way. Only for error messages."""
    from mas_agents.accounting import AccountedModel
    code = AccountedModel.chat.__code__
    f = sys._getframe(1)
    while f is not None:
        if f.f_code is code:
            return str(f.f_locals.get("actor", "?")), str(f.f_locals.get("purpose", "?"))
        f = f.f_back
    return "?", "?"


class ReplayChat(BaseChatModel):
    """A chat model answering from a :class:`Recording` (see the module text).

    Fields:
        recording: the run's recording (shared by every model replaying it).
        label: answer only calls recorded for this model label; None: any.
        spec: the spec this model stands for (``replay:RUN_DIR``, or the replayed run's spec).
        max_tokens: declared so the accounted wrapper passes each call's cap (compared with the
            recorded one); the value itself is unused.

    ``invoke(messages, reply_format=ReplyFormat | None, max_tokens=int | None)`` returns an
    ``AIMessage`` as the recorded model did (content, ``usage_metadata``, ``response_metadata``
    with ``finish_reason``, ``structured``, ``max_tokens``, ``structured_fields`` and for the JSON
    dialect ``raw_completion``).

    Raises:
        ReplayMismatch: the request is not in the recording.
        ReplayedCallError (a subclass named as the recorded error): the recorded call failed.
    """

    recording: Any
    label: str | None = None
    spec: str = ""
    max_tokens: int | None = None

    @property
    def _llm_type(self) -> str:
        return "replay"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"run": str(self.recording.run), "label": self.label}

    def constrain(self, fmt: Any) -> dict:
        """Invoke kwargs carrying the reply format ``fmt`` (compared in the recorded dialect)."""
        return {"reply_format": fmt}

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        fmt = kwargs.pop("reply_format", None)
        max_tokens = kwargs.pop("max_tokens", None)
        actor, purpose = _caller()
        rec = self.recording.answer(message_dicts(messages), fmt, max_tokens, label=self.label,
                                    actor=actor, purpose=purpose)
        call, prompt = rec.call, rec.prompt
        if not call.get("ok", True) or prompt.get("completion") is None:
            raise _replayed_error(call.get("error") or prompt.get("error") or "")
        meta: dict[str, Any] = {"finish_reason": call.get("finish_reason"), "structured": call.get("structured"),
                                "max_tokens": call.get("max_tokens"), "structured_fields": prompt.get("structured"),
                                "replayed_call": call["call_id"]}
        content = prompt["completion"]
        if "rendered" in prompt:
            meta["raw_completion"] = prompt["completion"]
            content = prompt["rendered"]
        usage = None
        if call.get("input_tokens") is not None or call.get("output_tokens") is not None:
            n_in, n_out = call.get("input_tokens") or 0, call.get("output_tokens") or 0
            extra = {} if call.get("cached_tokens") is None else {
                "input_token_details": InputTokenDetails(cache_read=call["cached_tokens"])}
            usage = UsageMetadata(input_tokens=n_in, output_tokens=n_out, total_tokens=n_in + n_out, **extra)
        msg = AIMessage(content=content, usage_metadata=usage, response_metadata=meta)
        return ChatResult(generations=[ChatGeneration(message=msg)])


_RECORDINGS: dict[Path, Recording] = {}
_REC_LOCK = threading.Lock()


def recording(run: str | Path) -> Recording:
    """The :class:`Recording` of ``run`` shared by this process's replay models (read once).

    Raises:
        NotReplayable, ValueError: see :class:`Recording`.
    """
    path = Path(run).expanduser().resolve()
    with _REC_LOCK:
        rec = _RECORDINGS.get(path)
        if rec is None:
            rec = _RECORDINGS[path] = Recording(path)
        return rec


def make_replay_chat(spec: str, **_settings: Any) -> ReplayChat:
    """The chat model of the spec ``replay:RUN_DIR`` (the ``replay`` scheme of
    :data:`mas_agents.model_specs.SPEC_SCHEMES`): answers from every model the run recorded. Sampling
    settings are ignored (the recorded answers were sampled with the run's own).

    Raises:
        ValueError: nothing after ``replay:``.
        NotReplayable: see :class:`Recording`.
    """
    run = spec.strip()[len(PREFIX):].strip()
    if not run:
        raise ValueError(f"model spec {spec!r}: missing run directory after 'replay:'")
    return ReplayChat(recording=recording(run), label=None, spec=spec.strip())


def replayable(run: str | Path) -> tuple[bool, str]:
    """Whether ``run`` can be replayed, and a one-line reason: ``config.json``'s
    ``record_prompts`` false, no call log, or a prompt log missing beside a call log that holds
    calls. Reads no prompt text (cheap enough for a runs list)."""
    run = Path(run)
    try:
        cfg = json.loads(RunDir(run).config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        cfg = {}
    if isinstance(cfg, dict) and cfg.get("record_prompts") is False:
        return False, "its prompts were not recorded (--no-record-prompts)"
    logs = sorted(run.rglob(CALLS_FILE))
    if not logs:
        return False, "it has no llm_calls.jsonl"
    for p in logs:
        if p.stat().st_size and not any(q.exists() for q in prompt_paths(p)):
            return False, f"{p.parent.relative_to(run) if p.parent != run else 'it'} has no prompt log"
    return True, "every call's prompt and answer are recorded"


@contextmanager
def replaying(run: str | Path) -> Iterator[Recording]:
    """While inside, every model spec string (:func:`mas_agents.llm.make_chat_model`, the pools
    of :class:`mas_agents.llm.ModelPool`) answers from ``run``'s recording the calls recorded for
    that spec (its :func:`mas_agents.model_specs.model_label`); a ``replay:`` spec still answers from its
    own run. Process-wide (every thread), not reentrant.

    Yields:
        The :class:`Recording` (read :attr:`Recording.mismatches` and :meth:`Recording.unused`
        after the run).

    Raises:
        NotReplayable, ValueError: see :class:`Recording` (before anything runs).
    """
    from mas_agents import llm
    from mas_agents import model_specs

    rec = Recording(Path(run).expanduser().resolve())

    def factory(spec: str, **settings: Any) -> BaseChatModel:
        if spec.startswith(PREFIX):
            return make_replay_chat(spec, **settings)
        return ReplayChat(recording=rec, label=model_specs.model_label(spec), spec=spec)

    prev = model_specs.set_spec_override(factory)
    try:
        yield rec
    finally:
        model_specs.set_spec_override(prev)
