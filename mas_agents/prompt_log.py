"""The prompt log: what each model call saw and said, beside the call log (``llm_prompts.jsonl`` while
a run writes it, ``llm_prompts.jsonl.gz`` once closed), the process-wide switch that turns it off
(``--no-record-prompts``), and its reader (:func:`read_prompts`). The format is :data:`PROMPTS_FORMAT`.
Split from :mod:`mas_agents.accounting` (issue 51 item 6); callers import these names from here;
:class:`mas_agents.call_log.CallRecorder` writes the lines.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from mas_agents import appender
from mas_agents.rundir import CALLS_FILE, PROMPTS_GZ, RunDir

if TYPE_CHECKING:   # annotations only: the module stays light (mas_agents.cells imports it at CLI start)
    from langchain_core.messages import BaseMessage

__all__ = ["PROMPTS_FILE", "PROMPTS_FORMAT", "clear_call_log", "message_dicts", "prompt_paths",
           "read_prompts", "record_prompts", "set_record_prompts"]

#: The prompt log beside ``llm_calls.jsonl`` while a run writes it (plain JSON lines, appended and
#: flushed per call under the recorder's lock, so a crashed run keeps every record made).
PROMPTS_FILE = "llm_prompts.jsonl"
# The same records once the recorder is closed: mas_agents.rundir.PROMPTS_GZ.

PROMPTS_FORMAT = """\
``llm_prompts.jsonl`` / ``llm_prompts.jsonl.gz``: UTF-8 JSON lines of two kinds, keyed by the
``call_id`` of ``llm_calls.jsonl`` (every call there has exactly one call line here when prompts
were recorded; ``config.json`` says whether they were: ``record_prompts``).

call line (written by :meth:`mas_agents.accounting.AccountedModel.chat`, with the ``llm_calls.jsonl`` line):
    call_id      str    the call's id
    messages     list   ``[{"role": "system" | "user" | "assistant", "content": str}]`` exactly as
                        given to the model (a re-prompt holds the first prompt, the unreadable
                        reply as ``assistant`` and the re-prompt as the last ``user`` message)
    structured   dict | null   the request fields that carried the reply format, as sent:
                        ``{"grammar": GBNF}`` for a local model or a llama.cpp server,
                        ``{"structured_outputs": {"grammar": GBNF}}`` (vLLM), ``{"ebnf": GBNF}``
                        (SGLang), ``{"response_format": {...json schema...}}`` (OpenAI-style),
                        ``{}`` when the format was in the prompt only; null when the call asked
                        for no format (free text, e.g. a reflection) or the model takes none, and
                        for a remote call that failed (its dialect is chosen inside the model)
    completion   str | null    the reply text as the model returned it (for the JSON dialect:
                        the JSON object); null when the call failed
    rendered     str    only for the JSON dialect: the tagged lines the parser read
    error        str    only when the call failed: ``"ExceptionType: message"``

agent line (written by :class:`mas_agents.agents.Agent` after it parsed the reply; absent for free
text, e.g. a reflection, which is not parsed):
    call_id      str    the call it describes
    parsed       dict | null   ``{"kind": action kind, "value": parsed value}`` (value: a string,
                        a ``{"target", "question"}`` object, an mcq's letters as a sorted list,
                        a form's field dict...)
                        or null when the reply was unreadable or the call failed
    parse_error  str | null    the strict parser's message for an unreadable reply
    reprompt_of  str | null    the call_id of the unreadable reply this call re-prompted

:func:`read_prompts` merges the lines of a call into one dict.
"""

#: Process-wide switch read by every :class:`mas_agents.call_log.CallRecorder` when it is created (the CLI's
#: ``--no-record-prompts`` clears it for the command's duration).
_RECORD_PROMPTS = True


def set_record_prompts(on: bool) -> bool:
    """Switch prompt recording for recorders created from now on; returns the previous setting."""
    global _RECORD_PROMPTS
    prev, _RECORD_PROMPTS = _RECORD_PROMPTS, bool(on)
    return prev


def record_prompts() -> bool:
    """Whether recorders created now record prompts (:func:`set_record_prompts`)."""
    return _RECORD_PROMPTS


def prompt_paths(calls_path: Path) -> tuple[Path, Path]:
    """``(llm_prompts.jsonl, llm_prompts.jsonl.gz)`` beside the call log ``calls_path`` (a call
    log with another name than ``llm_calls.jsonl``, e.g. ``mas spy serve-agent --calls x.jsonl``,
    gets ``x.prompts.jsonl`` / ``x.prompts.jsonl.gz``)."""
    calls_path = Path(calls_path)
    if calls_path.name == CALLS_FILE:
        return calls_path.with_name(PROMPTS_FILE), calls_path.with_name(PROMPTS_GZ)
    stem = calls_path.name.removesuffix(".jsonl")
    return calls_path.with_name(f"{stem}.prompts.jsonl"), calls_path.with_name(f"{stem}.prompts.jsonl.gz")


def clear_call_log(calls_path: Path) -> None:
    """Remove a call log and the prompt files beside it (a replayed game starts them afresh)."""
    Path(calls_path).unlink(missing_ok=True)
    for p in prompt_paths(calls_path):
        p.unlink(missing_ok=True)


_ROLES = {"system": "system", "human": "user", "ai": "assistant"}


def _json_default(obj: Any) -> Any:
    """JSON for what ``json`` does not write: a set as a sorted list (an mcq's letters), else ``str``."""
    if isinstance(obj, (set, frozenset)):
        return sorted(obj, key=str)
    return str(obj)


def message_dicts(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    """``[{"role", "content"}]`` of langchain messages: system / user / assistant (a
    ``ChatMessage`` keeps its role, other types their langchain type); content unchanged."""
    return [{"role": _ROLES.get(m.type) or getattr(m, "role", None) or m.type, "content": m.content}
            for m in messages]



def read_prompts(run_dir: Path) -> dict[str, dict[str, Any]]:
    """The prompt records of a run directory (or of the call log file given), one merged dict per
    call_id, in first-seen order.

    Reads ``llm_prompts.jsonl.gz`` (every gzip member) and then ``llm_prompts.jsonl`` (the part
    not compressed yet, e.g. of a run that stopped); the lines of one call are merged in file
    order (a later line's keys win). See :data:`PROMPTS_FORMAT` for the fields. Returns ``{}``
    when the run recorded no prompts.

    Raises:
        ValueError: a line is not a JSON object with a ``call_id`` (the message names the file
            and line), or the gzip file is corrupt.
    """
    appender.sync()
    run_dir = Path(run_dir)
    plain, gz = prompt_paths(run_dir if run_dir.suffix == ".jsonl" else RunDir(run_dir).calls)
    out: dict[str, dict[str, Any]] = {}

    def merge(path: Path, lines: Iterable[str]) -> None:
        for lineno, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{lineno}: not a prompt record ({exc.msg})") from exc
            if not isinstance(rec, dict) or not isinstance(rec.get("call_id"), str):
                raise ValueError(f"{path}:{lineno}: not a prompt record (no call_id)")
            out.setdefault(rec["call_id"], {}).update(rec)

    if gz.exists():
        try:
            text = gzip.decompress(gz.read_bytes()).decode("utf-8")
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            raise ValueError(f"{gz}: corrupt prompt log ({exc})") from exc
        merge(gz, text.splitlines())
    if plain.exists():
        with plain.open(encoding="utf-8") as fh:
            merge(plain, fh)
    return out
