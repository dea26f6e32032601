"""Protocol fingerprints: which games a leaderboard may rate together (issue 56 item 4).

A leaderboard compares **models** (agents). Its numbers mean something only when every game it
pools was played under the same **protocol**: the same prompts, the same rules, the same game
settings and the same way of enforcing the reply format. A prompt sentence changed, or a switch to
Chinese, changes what is measured; pooling those games into one rating would compare agents on
different tests. So every leaderboard (``mas serve``'s ``/leaderboard``, its openskill ratings,
``mas spy tournament``'s table, ``mas spy leaderboard``) is keyed by :func:`protocol_fingerprint`,
and games under another fingerprint form another **season**, never mixed into one rating. This is
how arenas keep ratings valid across protocol changes (e.g. MINDGAMES, the Deception Arena).

One owner: :func:`wis_protocol` collects the inputs of a Who-is-Spy tournament (the only game with
a leaderboard), :func:`protocol_fingerprint` hashes them; :func:`legacy_wis_protocol` stands in for
a tournament stored before fingerprints existed; :func:`protocol_summary` and
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

__all__ = ["UNKNOWN", "legacy_wis_protocol", "protocol_diff", "protocol_fingerprint", "protocol_summary",
           "wis_protocol"]

#: The value of every input a legacy tournament (stored before fingerprints) did not record.
UNKNOWN = "not recorded"


def _canonical(value: Any) -> Any:
    """``value`` as it reads back from JSON (tuples become lists, keys strings)."""
    return json.loads(json.dumps(value, sort_keys=True, ensure_ascii=False))


def wis_protocol(*, lang: str, players: int, speak_timeout: float | None, structured: str | None = None
                 ) -> dict[str, Any]:
    """The fingerprint's inputs of a Who-is-Spy tournament, as ``config.json`` records them.

    Covers (every field below; nothing else):

    * ``game``: ``"wis"``.
    * ``rules``: :data:`mas_agents.graphs.wis.rules.RULES_VERSION` (bumped when the judge's code
      changes a rule) and the rule constants of WiS §3.1 and Appendix A as this repository plays
      them: ``max_chars`` (the description limit in ``lang``), ``max_rounds``, ``min_alive``,
      ``total_points``, ``spy_points_by_round``, ``fouls``.
    * ``lang``: ``en`` or ``zh`` (``--lang``; it picks the prompts and the word-pair file).
    * ``players``: seats per game (``--players``).
    * ``speak_timeout``: the speaking limit in seconds as resolved for the tournament, None for
      none (``--speak-timeout``; a late description is a foul, so it is a rule).
    * ``reply_format``: the reply-format mode asked for (``--structured``: auto, grammar, json,
      prompt; it applies to seats on remote models, the embedded model always decodes under
      its grammar); None: the process-wide setting of :func:`mas_agents.remote.endpoints.settings`.
    * ``prompts``: the full text of every prompt template a seat's model reads in ``lang``:
      ``rules`` (the system message, :data:`mas_agents.graphs.wis.player.RULES`), ``identity``
      (``IDENTITY``), ``task.history``, ``task.describe``, ``task.vote``, ``task.nothing``
      (``TASKS``), the answer-format lines of the two actions (``answer.describe``,
      ``answer.vote``, :func:`mas_agents.prompts.format_instruction`) and the re-prompt
      (``reprompt``, :func:`mas_agents.prompts.reprompt`). The templates are read when called, so
      a changed sentence (in the source, or patched at run time) changes the fingerprint.
    * ``judge``: what the judge announces to every seat in ``lang``
      (:data:`mas_agents.graphs.wis.runtime.HOST`: the rules introduction, the players line, the
      turn, the round and the foul lines) and the foul sentences
      (:data:`mas_agents.graphs.wis.rules.FOUL_TEXT`).
    * ``record``: how a seat's record renders another seat's words and the host's lines
      (:func:`mas_agents.utterance.utterance` and :func:`~mas_agents.utterance.host_line` applied to
      placeholders, so a change of the quotation marks or of the host marker is a new protocol).

    Not covered: agents, models, planner blocks (part of an agent), seeds, games, word pairs.

    Returns:
        A JSON-ready dict (keys sorted when hashed); see :func:`protocol_fingerprint`.

    Raises:
        ValueError: ``lang`` is not a language of the game.
    """
    from mas_agents.planners.base import ActionRequest
    from mas_agents.remote import endpoints
    from mas_agents.graphs.wis import player, rules, runtime
    from mas_agents.prompts import format_instruction, reprompt
    from mas_agents.utterance import host_line, utterance

    rules.check_lang(lang)
    tasks = player.TASKS[lang]
    vote = ActionRequest(kind="vote", actor="{name}", prompt="", choices=["{candidate}"], game=rules.GAME)
    describe = ActionRequest(kind="describe", actor="{name}", prompt="", game=rules.GAME)
    return _canonical({
        "game": "wis",
        "rules": {"version": rules.RULES_VERSION, "max_chars": rules.MAX_CHARS[lang], "max_rounds": rules.MAX_ROUNDS,
                  "min_alive": rules.MIN_ALIVE, "total_points": rules.TOTAL_POINTS,
                  "spy_points_by_round": rules.SPY_POINTS_BY_ROUND, "fouls": list(rules.FOULS)},
        "lang": lang,
        "players": int(players),
        "speak_timeout": None if speak_timeout is None else float(speak_timeout),
        "reply_format": structured if structured is not None else endpoints.settings().structured,
        "prompts": {"rules": player.RULES[lang], "identity": player.IDENTITY[lang],
                    **{f"task.{k}": v for k, v in sorted(tasks.items())},
                    "answer.describe": format_instruction(describe), "answer.vote": format_instruction(vote),
                    "reprompt": reprompt("{error}", describe)},
        "judge": {**{k: v for k, v in sorted(runtime.HOST[lang].items())},
                  **{f"foul.{k}": v for k, v in sorted(rules.FOUL_TEXT.items())}},
        "record": {"utterance": utterance("{name}", "{text}"), "host": host_line("{text}")},
    })


def legacy_wis_protocol(config: Mapping[str, Any]) -> dict[str, Any]:
    """The inputs of a tournament stored before fingerprints existed, from its leaderboard
    ``config`` (which records ``lang``, ``players`` and the resolved ``speak_timeout``; its run
    directory's ``config.json`` records no more of the protocol): the fields it recorded, and
    :data:`UNKNOWN` for ``rules``, ``reply_format``, ``prompts``, ``judge`` and ``record``, with
    ``recorded: False``.

    Such tournaments form "unknown protocol" seasons, one per recorded ``lang`` / ``players`` /
    ``speak_timeout``: never pooled with a fingerprinted season, nor English with Chinese."""
    st = config.get("speak_timeout")
    return _canonical({"game": "wis", "recorded": False, "rules": UNKNOWN, "lang": config.get("lang", UNKNOWN),
                       "players": config.get("players", UNKNOWN),
                       "speak_timeout": float(st) if isinstance(st, (int, float)) else st,
                       "reply_format": UNKNOWN, "prompts": UNKNOWN, "judge": UNKNOWN, "record": UNKNOWN})


def protocol_fingerprint(inputs: Mapping[str, Any]) -> str:
    """The fingerprint of a protocol: ``"p-"`` and the first 12 hex digits of the SHA-256 of
    ``inputs`` as canonical JSON (sorted keys, UTF-8). Stable across processes and machines; the
    inputs are whatever :func:`wis_protocol` (or :func:`legacy_wis_protocol`) returned."""
    blob = json.dumps(_canonical(inputs), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
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
    old, new = _canonical(old), _canonical(new)
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
