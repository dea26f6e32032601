"""How ``mas serve`` shows a Who-is-Spy game (:class:`mas_agents.game.view.GameView` of the game ``wis``):
its runs-list headline, its sentences in English and Chinese, its seats and the truth at the end.

Rules worded here: the judge's fouls (:data:`mas_agents.graphs.wis.rules.FOUL_TEXT`), the end reasons and
scores of the outcome (WiS paper, Appendix A "Detailed rules"). Pure Python: no I/O.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from mas_agents.game.view import GameView, SeatInfo, players_of, vote_sentence
from mas_agents.graphs.wis import play_form as wis_play
from mas_agents.graphs.wis.rules import FOUL_TEXT, MAX_CHARS
from mas_agents.utterance import quote

#: The judge's fouls (:data:`mas_agents.graphs.wis.rules.FOUL_TEXT`) in Chinese.
FOUL_ZH = {"own_word": "说出了自己的词语", "repeat": "重复了之前的描述", "timeout": "没有按时回答",
           "no_answer": "没有给出有效描述"}
#: Why a game ended (``outcome`` ``end_reason``), per language.
END_REASON = {"en": {"spy_eliminated": "the spy was voted out", "max_rounds": "the last round was played",
                     "few_players": "fewer than 3 players were left"},
              "zh": {"spy_eliminated": "卧底被投票出局", "max_rounds": "已进行到最后一轮", "few_players": "剩余玩家不足3人"}}
ROLE_TEXT = {"en": {"spy": "spy", "civilian": "civilian", "player": "player"},
             "zh": {"spy": "卧底", "civilian": "平民", "player": "玩家"}}
TITLES = {"en": {"end": "End of the game", "ph_speaking": "Descriptions", "ph_judging": "The judge"},
          "zh": {"end": "游戏结束", "ph_speaking": "描述", "ph_judging": "裁判"}}


def headline(config: dict, result: dict) -> str:
    """The runs list's line: the winner, the round, the spy and the word pair; "playing" before
    the outcome."""
    oc = result.get("outcome") or {}
    if not oc:
        return "playing"
    pair = config.get("pair") or {}
    return (f"{oc.get('winner')} win after round {oc.get('rounds_played')}; spy {oc.get('spy')}; "
            f"pair {pair.get('civilian')}/{pair.get('spy')}")


def seat_specs(config: dict) -> list[str]:
    """The seats' agent specs in seat order (``config.json`` ``agents``)."""
    return [str(a) for a in config.get("agents") or []]


def foul_en(foul: Any) -> str:
    """A foul key in English (:data:`mas_agents.graphs.wis.rules.FOUL_TEXT`)."""
    return FOUL_TEXT.get(str(foul), "broke a rule")


def sentence(e: Mapping[str, Any], lang: str, variant: str = "") -> str | None:
    """The sentence of a Who-is-Spy event (``start``, ``word``, ``round_start``, ``describe``,
    ``foul``, ``vote``, ``outcome``) in ``lang``; None for the others."""
    k, a = str(e.get("kind") or ""), str(e.get("actor") or "")
    c, d = str(e.get("content") or ""), dict(e.get("data") or {})
    zh = lang == "zh"
    if k == "start":
        return c
    if k == "word":
        return (f"{d.get('player', a)} 拿到的词语是“{d.get('word')}”。" if zh
                else f"{d.get('player', a)} gets the word “{d.get('word')}”.")
    if k == "round_start":
        order = ("、" if zh else ", ").join(str(x) for x in d.get("order") or [])
        rnd = int(e.get("round") or 0)
        return f"第{rnd}轮开始。发言顺序：{order}。" if zh else f"Round {rnd} begins. Speaking order: {order}."
    if k == "describe":
        body = quote(c) if c else ("（没有描述）" if zh else "(no description)")
        foul = d.get("foul")
        tail = ""
        if foul:
            tail = f"（犯规：{FOUL_ZH.get(foul, foul)}）" if zh else f" (foul: {foul_en(foul)})"
        return (f"{a}：{body}" if zh else f"{a}: {body}") + tail
    if k == "foul":
        foul = d.get("foul")
        p = d.get("player", a)
        return (f"{p} 犯规（{FOUL_ZH.get(foul, foul)}），被裁判淘汰。" if zh
                else f"{p} is out, eliminated by the judge: {p} {foul_en(foul)}.")
    if k == "vote":
        return vote_sentence(e, lang)
    if k == "outcome":
        winner, spy = d.get("winner"), d.get("spy")
        why = END_REASON[lang].get(str(d.get("end_reason")), str(d.get("end_reason") or ""))
        rnd = d.get("rounds_played") or e.get("round")
        if zh:
            return f"第{rnd}轮后游戏结束：{'平民获胜' if winner == 'civilians' else '卧底获胜'}（{why}）。卧底是{spy}。"
        return (f"Game over after round {rnd}: {'the civilians win' if winner == 'civilians' else 'the spy wins'} "
                f"({why}). The spy was {spy}.")
    return None


def lang(events: list[dict[str, Any]], config: Mapping[str, Any]) -> str:
    """The game's language: its ``start`` event's ``data.lang``, else ``config.json``'s ``lang``."""
    got = next((str((e.get("data") or {}).get("lang") or "") for e in events if e.get("kind") == "start"), "")
    got = got or str((config or {}).get("lang") or "en")
    return "zh" if got == "zh" else "en"


def seats(events: list[dict[str, Any]], config: dict, result: dict) -> SeatInfo:
    """Seats from the ``start`` event (seat order), agents from ``config.agents`` (then
    ``result.players``), roles from ``result.players`` or, before the result, the ``word`` events
    (the seat whose word differs is the spy)."""
    start = next((e.get("data") or {} for e in events if e.get("kind") == "start"), {})
    names = [str(x) for x in start.get("seats") or []] or players_of(events)
    agents: dict[str, str] = {}
    roles: dict[str, str] = {}
    for i, a in enumerate(config.get("agents") or []):
        if i < len(names):
            agents[names[i]] = str(a)
    for p in result.get("players") or []:
        if isinstance(p, dict) and p.get("name"):
            agents.setdefault(str(p["name"]), str(p.get("agent") or ""))
            if p.get("role"):
                roles[str(p["name"])] = str(p["role"])
    if not roles:
        words = {str((e.get("data") or {}).get("player")): str((e.get("data") or {}).get("word"))
                 for e in events if e.get("kind") == "word"}
        if len(set(words.values())) == 2:
            counts = {w: list(words.values()).count(w) for w in set(words.values())}
            spy_word = min(counts, key=lambda w: counts[w])
            roles = {p: "spy" if w == spy_word else "civilian" for p, w in words.items()}
    return SeatInfo(names=names, agents=agents, roles=roles)


def truth(events: list[dict[str, Any]], lang: str, variant: str = "") -> list[str]:
    """The spy, who won and why, the scores and every seat's word; [] before the outcome."""
    zh = lang == "zh"
    lines: list[str] = []
    words = [f"{(e.get('data') or {}).get('player')}: {(e.get('data') or {}).get('word')}"
             for e in events if e.get("kind") == "word"]
    oc = next((e.get("data") or {} for e in events if e.get("kind") == "outcome"), {})
    if oc:
        why = END_REASON[lang].get(str(oc.get("end_reason")), str(oc.get("end_reason") or ""))
        if zh:
            lines.append(f"卧底是 {oc.get('spy')}；{'平民获胜' if oc.get('winner') == 'civilians' else '卧底获胜'}（{why}）。")
        else:
            lines.append(f"The spy was {oc.get('spy')}; "
                         f"{'the civilians win' if oc.get('winner') == 'civilians' else 'the spy wins'} ({why}).")
        lines.append(("得分：" if zh else "Scores: ") + ", ".join(
            f"{p} {round(s, 2):g}" if isinstance(s, (int, float)) else f"{p} {s}" for p, s in (oc.get("scores") or {}).items()))
    if words:
        lines.append(("词语：" if zh else "Words: ") + "; ".join(words))
    return lines


VIEW = GameView(seat_template=Path(__file__).parent / "templates" / "seat.html", sentence=sentence, seats=seats, truth=truth, titles=TITLES, role_text=ROLE_TEXT, lang=lang,
                hidden_roles=lambda events, config: True, names={"en": "Who is Spy?", "zh": "谁是卧底"},
                recognizes=frozenset({"describe", "word"}), play=wis_play.FORM, seat_page={"max_chars": MAX_CHARS})
