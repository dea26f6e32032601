"""Protocol fingerprints: which games a leaderboard may rate together (issue 56 item 4).

A leaderboard compares **models** (agents). Its numbers mean something only when every game it
pools was played under the same **protocol**: the same prompts, the same rules, the same game
settings and the same way of enforcing the reply format. A prompt sentence changed, or a switch to
Chinese, changes what is measured; pooling those games into one rating would compare agents on
different tests. So every leaderboard (``mas serve``'s ``/leaderboard``, its openskill ratings,
``mas spy tournament``'s table, ``mas spy leaderboard``) is keyed by :func:`protocol_fingerprint`,
and games under another fingerprint form another **season**, never mixed into one rating. This is
how arenas keep ratings valid across protocol changes (e.g. MINDGAMES, the Deception Arena).

One owner: a game collects its protocol's inputs (Who is Spy, the only game with a leaderboard:
:func:`mas_agents.graphs.wis.fingerprint.wis_protocol`, and
:func:`~mas_agents.graphs.wis.fingerprint.legacy_wis_protocol` for a tournament stored before
fingerprints existed), :func:`protocol_fingerprint` hashes them; :func:`protocol_summary` and
:func:`protocol_diff` say what a season covers and what changed between two.

What is NOT part of a fingerprint: the agents and their models (what the leaderboard compares),
seeds, the number of games, the word pairs drawn (a sample of the language's pairs file, as seeds
are a sample), concurrency, where runs are written.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["UNKNOWN", "canonical", "protocol_diff", "protocol_fingerprint", "protocol_summary"]

#: The value of every input a legacy tournament (stored before fingerprints) did not record.
UNKNOWN = "not recorded"


def canonical(value: Any) -> Any:
    """``value`` as it reads back from JSON (tuples become lists, keys strings)."""
    return json.loads(json.dumps(value, sort_keys=True, ensure_ascii=False))


def protocol_fingerprint(inputs: Mapping[str, Any]) -> str:
    """The fingerprint of a protocol: ``"p-"`` and the first 12 hex digits of the SHA-256 of
    ``inputs`` as canonical JSON (sorted keys, UTF-8). Stable across processes and machines; the
    inputs are whatever a game's protocol function returned (e.g. :func:`mas_agents.graphs.wis.fingerprint.wis_protocol`, or :func:`~mas_agents.graphs.wis.fingerprint.legacy_wis_protocol`)."""
    blob = json.dumps(canonical(inputs), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "p-" + hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]


def _flat(value: Any, path: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping) and value:
        out: dict[str, Any] = {}
        for k in sorted(value):
            out.update(_flat(value[k], f"{path}.{k}" if path else str(k)))
        return out
    return {path or "<inputs>": value}


def _short(value: Any, limit: int = 70) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _changed_words(old: str, new: str) -> tuple[str, str]:
    """The parts of two texts that differ (word by word, a few words of context), for a reader."""
    a, b = old.split(" "), new.split(" ")
    olds, news = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag != "equal":
            olds.append(" ".join(a[max(0, i1 - 3):i2 + 3]))
            news.append(" ".join(b[max(0, j1 - 3):j2 + 3]))
    return " … ".join(olds) or "(nothing)", " … ".join(news) or "(nothing)"


def protocol_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[dict[str, str]]:
    """What changed between the inputs of two protocols (two seasons).

    Returns:
        ``[{"field": dotted path, "old": text, "new": text}, ...]`` sorted by field, one per
        differing leaf (``prompts.rules``, ``lang``, ``speak_timeout``...). A long text shows only
        its changed words with a few around them; a field one side lacks shows ``(absent)``.
    """
    old, new = canonical(old), canonical(new)
    for k in set(old) & set(new):   # "not recorded" against a recorded group: one line, not one per field
        if isinstance(old[k], dict) != isinstance(new[k], dict):
            old[k], new[k] = (f"recorded ({len(v)} fields)" if isinstance(v, dict) else v for v in (old[k], new[k]))
    a, b = _flat(old), _flat(new)
    out = []
    for k in sorted(set(a) | set(b)):
        if k in a and k in b and a[k] == b[k]:
            continue
        va, vb = a.get(k, "(absent)"), b.get(k, "(absent)")
        if isinstance(va, str) and isinstance(vb, str) and max(len(va), len(vb)) > 70:
            va, vb = _changed_words(va, vb)
        out.append({"field": k, "old": _short(va, 160), "new": _short(vb, 160)})
    return out


def protocol_summary(inputs: Mapping[str, Any]) -> list[str]:
    """What a protocol covers, as short lines for a reader (the web leaderboard, ``mas spy
    leaderboard``): the game and rules, language, players, speaking limit, reply format, and each
    prompt template by the first 8 hex digits of its SHA-256 (its full text is in the inputs)."""
    i = dict(inputs)
    lines = []
    if i.get("recorded") is False:
        lines.append("protocol not recorded (a tournament stored before protocol fingerprints): "
                     "prompts, rules version and reply format unknown")
    st = i.get("speak_timeout")
    limit = "none" if st is None else (f"{st:g} s" if isinstance(st, (int, float)) else str(st))
    lines.append(f"game {i.get('game', '?')}, language {i.get('lang', '?')}, {i.get('players', '?')} players, "
                 f"speaking limit {limit}, reply format (--structured) {i.get('reply_format', '?')}")
    r = i.get("rules")
    if isinstance(r, Mapping):
        lines.append(f"rules version {r.get('version')}: descriptions up to {r.get('max_chars')} characters, "
                     f"{r.get('max_rounds')} rounds, ends below {r.get('min_alive')} alive, "
                     f"{r.get('total_points')} points a game")
    for key, title in (("prompts", "prompt templates"), ("judge", "judge's lines")):
        p = i.get(key)
        if isinstance(p, Mapping):
            lines.append(f"{title}: " + ", ".join(
                f"{k} {hashlib.sha256(str(v).encode('utf-8')).hexdigest()[:8]}" for k, v in sorted(p.items())))
    rec = i.get("record")
    if isinstance(rec, Mapping):
        lines.append(f"a seat's record: another seat's words as {rec.get('utterance')}, the host's as {rec.get('host')}")
    return lines
