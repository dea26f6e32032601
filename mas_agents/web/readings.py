"""Tables of a replay: a reader's consecutive readings (PLAYER*'s ``sensor``, the ``pgm``
block's ``pgm_reading``), the ``pgm`` block's posteriors (``belief_table``), and the JSON shown
under a private planning record."""

from __future__ import annotations

import json
from typing import Any, Mapping

from mas_agents.game.view import Table
from mas_agents.game.view import names as _names

_SENSOR_ZH = {"emotion": "情绪", "motivation": "动机", "opportunity": "作案机会", "information": "信息"}


def sensor_table(run: list[Mapping[str, Any]], lang: str) -> Table:
    zh = lang == "zh"
    a, rnd = str(run[0].get("actor")), int(run[0].get("round") or 0)
    sensors = list(dict.fromkeys(str((e.get("data") or {}).get("sensor")) for e in run))
    victims = list(dict.fromkeys(str((e.get("data") or {}).get("victim")) for e in run))
    cells: dict[tuple[str, str], dict[str, str]] = {}
    for e in run:
        d = e.get("data") or {}
        cells.setdefault((str(d.get("character")), str(d.get("victim"))), {})[str(d.get("sensor"))] = str(d.get("value"))
    many = len(victims) > 1
    heads = (["人物"] + (["受害者"] if many else []) + [_SENSOR_ZH.get(s, s) for s in sensors] if zh
             else ["Character"] + (["Victim"] if many else []) + sensors)
    rows = [[ch] + ([v] if many else []) + [vals.get(s, "") for s in sensors] for (ch, v), vals in cells.items()]
    cap = (f"{a} 的传感器读数（第{rnd}轮" + ("" if many else f"，受害者 {victims[0]}") + "）" if zh
           else f"{a}'s sensor readings, round {rnd}" + ("" if many else f" (victim {victims[0]})"))
    return Table(cap, heads, rows)


def clue_table(run: list[Mapping[str, Any]]) -> Table:
    a = str(run[0].get("actor"))
    rows = [[str((e.get("data") or {}).get("subject")), str((e.get("data") or {}).get("clue") or ""),
             str((e.get("data") or {}).get("reading") or "unreadable")] for e in run]
    return Table(f"{a}'s readings of the clues (does each fit the secret?)", ["Player", "Clue", "Reading"], rows)


def belief_table(e: Mapping[str, Any], lang: str) -> tuple[str | None, Table | None]:
    """The sentence and table of a ``belief_table`` event (the ``pgm`` block's posteriors);
    ``(None, None)`` for a model it does not draw (the event keeps its plain sentence)."""
    zh = lang == "zh"
    a, d = str(e.get("actor")), dict(e.get("data") or {})
    model = d.get("model")
    if d.get("shown") is False:
        return ((f"{a} 的贝叶斯网络信念：还没有观察，没有给模型看任何内容。" if zh
                 else f"{a}'s Bayesian-network belief: no observations yet, so nothing was shown to the model."), None)
    if model == "hidden_role" and isinstance(d.get("posterior"), dict):
        post = d["posterior"]
        pred = d.get("predicted_suspects") or {}
        rows = [[p, f"{float(v):.2f}", _names([q for q, s in pred.items() if s == p], lang)]
                for p, v in sorted(post.items(), key=lambda kv: -float(kv[1]))]
        heads = ["玩家", "持有隐藏身份的概率", "（推测）怀疑他的玩家"] if zh else \
            ["Player", "P(holds the hidden role)", "Suspected by (as predicted)"]
        n = d.get("n_evidence", 0)
        text = (f"{a} 的贝叶斯网络信念（{n} 条观察），最可能：{d.get('most_likely')}" if zh
                else f"{a}'s Bayesian-network belief about who holds the hidden role ({n} observations); "
                     f"most likely {d.get('most_likely')}")
        if d.get("vote_suggestion"):
            text += (f"；建议投票：{d['vote_suggestion']}" if zh else f"; vote suggestion: {d['vote_suggestion']}")
        return text + ("。" if zh else "."), Table("", heads, rows)
    if model == "moves" and isinstance(d.get("predict"), dict):
        moves = list(d.get("moves") or [])
        rows = [[q] + [f"{float(dist.get(m, 0)):.2f}" for m in moves] for q, dist in d["predict"].items()]
        text = f"{a}'s Bayesian-network prediction of the others' next moves"
        if d.get("best_response"):
            text += f"; best response: {d['best_response']}"
        return text + ".", Table("", ["Player"] + [f"P({m})" for m in moves], rows)
    if model == "shares" and isinstance(d.get("limit_mean"), dict):
        exp = d.get("expects_of_me_mean") or {}
        rows = [[q, f"{v:g} %", f"{exp.get(q, '')} %"] for q, v in d["limit_mean"].items()]
        split = d.get("implied_split") or []
        text = (f"{a}'s Bayesian-network belief about the shares"
                + (f"; implied split {' / '.join(f'{x:g} %' for x in split)}" if split else ""))
        return text + ".", Table("", ["Player", "Most they accept to pay (mean)", "What they expect of me (mean)"], rows)
    return None, None



def details(e: Mapping[str, Any], private: bool) -> str:
    """Pretty JSON of a private planning payload (a suspect list, a relation map...), else ""."""
    if not private or str(e.get("kind")) in ("word", "script", "vote", "belief", "self_awareness", "private_info",
                                               "setup", "reasoning", "invalid", "mcq", "pd_choice", "contribution"):
        return ""
    d = dict(e.get("data") or {})
    return json.dumps(d, ensure_ascii=False, indent=1, default=str)[:6000] if d else ""
