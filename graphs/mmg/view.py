"""How ``mas serve`` shows a murder-mystery game (:class:`mas_agents.game.view.GameView` of the game
``mmg``, PLAYER* on WellPlay): its runs-list headline, its sentences in English and Chinese, its
seats (the murderer's agent hidden while the game is played) and the truth at the end.
Pure Python: no I/O.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from mas_agents.game.view import GameView, SeatInfo, names, players_of, role_word
from mas_agents.utterance import quote

ROLE_TEXT = {"en": {"murderer": "murderer", "civilian": "civilian", "player": "player"},
             "zh": {"murderer": "凶手", "civilian": "平民", "player": "玩家"}}
TITLES = {"en": {"vote": "The vote (private ballots)", "end": "The verdict", "ph_questioning": "Questions and answers",
                 "ph_introduction": "Introductions"},
          "zh": {"vote": "投票（不公开）", "end": "结果", "ph_questioning": "提问与回答", "ph_introduction": "自我介绍"}}


def headline(config: dict, result: dict) -> str:
    """The runs list's line: per victim whom the vote accused and whether rightly; then the calls
    and invalid actions; "playing" before the result."""
    oc = result.get("outcome") or {}
    parts = [f"{v['victim']}: accused {v.get('accused') or 'no one'}, "
             f"{'correct' if v.get('correct') else 'wrong'}" for v in oc.get("victims", [])]
    text = "; ".join(parts) or ("playing" if not result else "no outcome")
    if result:
        text += f"; {result.get('llm', {}).get('calls', 0)} LLM calls, {result.get('invalid_actions', 0)} invalid"
    return text


def seat_specs(config: dict) -> list[str]:
    """The agent specs a game seated: the characters' agent, then the murderer's."""
    return list(dict.fromkeys(str(x) for x in (config.get("agent"), config.get("murderer_agent")) if x))


def sentence(e: Mapping[str, Any], lang: str, variant: str = "") -> str | None:
    """The sentence of a murder-mystery event (``script``, ``introduce``, ``ask``, ``answer``,
    ``vote``, ``accuse``, PLAYER*'s ``target_choice``/``suspect_list``/``relations``...) in
    ``lang``; None for the others."""
    k, a = str(e.get("kind") or ""), str(e.get("actor") or "")
    c, d = str(e.get("content") or ""), dict(e.get("data") or {})
    zh = lang == "zh"
    if k == "script":
        who = (e.get("visible_to") or [a])[0]
        role = role_word(ROLE_TEXT, lang, str(d.get("role")))
        return f"{who} 收到自己的私密剧本，身份：{role}。" if zh else f"{who} receives their private script; role: {role}."
    if k == "introduce":
        return f"{a} 自我介绍：{quote(c)}" if zh else f"{a} introduces themself: {quote(c)}"
    if k == "ask":
        q = quote(d.get("question") or c)
        return f"{a} 问 {d.get('target', '?')}：{q}" if zh else f"{a} asks {d.get('target', '?')}: {q}"
    if k == "answer":
        return f"{a} 回答 {d.get('asker', '')}：{quote(c)}" if zh else f"{a} answers {d.get('asker', '')}: {quote(c)}"
    if k == "round_end":
        r = int(e.get("round") or 0)
        return f"第{r}轮提问结束。" if zh else f"Round {r} of questioning is over."
    if k == "announce":
        return "提问结束。每位玩家现在私下投票，选出凶手。" if zh else c
    if k == "vote":
        ch, victim = d.get("choice"), d.get("victim")
        if zh:
            return f"{a} 投票认为 {ch} 是杀害 {victim} 的凶手。" if ch else f"{a} 在 {victim} 一案中弃权。"
        return f"{a} votes {ch} for the murder of {victim}." if ch else f"{a} abstains on the murder of {victim}."
    if k == "accuse":
        acc, v = d.get("accused"), d.get("victim")
        tally = ", ".join(f"{p} {n}" for p, n in sorted((d.get("counts") or {}).items(), key=lambda kv: -kv[1]))
        mur = names(d.get("murderers") or [], lang)
        if zh:
            return (f"关于 {v} 被杀一案，投票指认 {acc or '无人（平票或没有有效投票）'}（{tally}）。"
                    f"真正的凶手：{mur or '未知'}。{'指认正确。' if d.get('correct') else '指认错误。'}")
        return (f"For the murder of {v}, the vote accuses {acc or 'no one (a tie or no valid vote)'} ({tally}). "
                f"The murderer was {mur or 'unknown'}: {'correct' if d.get('correct') else 'wrong'}.")
    if k == "target_choice":
        tgt, v, sc = d.get("target"), d.get("victim"), (d.get("scores") or {}).get(str(d.get("target")), {})
        score = f" (score {sc.get('score'):.2f})" if isinstance(sc.get("score"), (int, float)) else ""
        return (f"{a} 决定询问 {tgt}（关于 {v}）。" if zh else f"{a} decides to question {tgt} about {v}{score}.")
    if k == "suspect_list":
        new, removed, v = d.get("new") or [], d.get("removed") or [], d.get("victim")
        if zh:
            return f"{a} 关于 {v} 的嫌疑人：{names(new, lang) or '无'}" + (f"（排除：{names(removed, lang)}）" if removed else "")
        return (f"{a}'s suspects for the murder of {v}: {names(new, lang) or 'none'}"
                + (f" (ruled out {names(removed, lang)}: {d.get('reason')})" if removed and d.get("reason") else
                   f" (ruled out {names(removed, lang)})" if removed else "") + ".")
    if k == "relations":
        return f"{a} 的人物关系图：{c}" if zh else f"{a}'s relationship map: {c}"
    return None


def seats(events: list[dict[str, Any]], config: dict, result: dict) -> SeatInfo:
    """The characters (``result.players``, else the ``script`` events), their agents and roles
    (``result.agents``/``roles``, else the ``script`` events, else ``config.agent``). While the
    roles are hidden, seats whose agents or models differ show them all (the murderer may play
    another agent: ``<agent> (the murderer: <murderer_agent>)``)."""
    seat_names = [str(x) for x in result.get("players") or []] or [
        str((e.get("visible_to") or ["?"])[0]) for e in events if e.get("kind") == "script"] or players_of(events)
    agents: dict[str, str] = {}
    roles: dict[str, str] = {}
    for e in events:
        if e.get("kind") == "script":
            d, who = e.get("data") or {}, str((e.get("visible_to") or ["?"])[0])
            agents[who], roles[who] = str(d.get("agent") or ""), str(d.get("role") or "")
    agents.update({str(k): str(v) for k, v in (result.get("agents") or {}).items()})
    roles.update({str(k): str(v) for k, v in (result.get("roles") or {}).items()})
    for n in seat_names:
        agents.setdefault(n, str(config.get("agent") or ""))
    joined = (f"{config.get('agent')} (the murderer: {config.get('murderer_agent')})"
              if config.get("murderer_agent") and config.get("agent") else "")
    return SeatInfo(names=seat_names, agents=agents, roles=roles, uniform_while_hidden=True, hidden_agent_text=joined)


def truth(events: list[dict[str, Any]], lang: str, variant: str = "") -> list[str]:
    """Per victim the murderer(s) and whom the vote accused; every character's role and agent."""
    zh = lang == "zh"
    lines: list[str] = []
    for e in events:
        if e.get("kind") == "accuse":
            d = e.get("data") or {}
            if zh:
                lines.append(f"受害者 {d.get('victim')}：凶手是 {names(d.get('murderers') or [], lang)}；"
                             f"投票指认 {d.get('accused') or '无人'}（{'正确' if d.get('correct') else '错误'}）。")
            else:
                lines.append(f"Victim {d.get('victim')}: murderer {', '.join(d.get('murderers') or [])}; "
                             f"the vote accused {d.get('accused') or 'no one'} "
                             f"({'correct' if d.get('correct') else 'wrong'}).")
    # a script event is the game's, shown to its character only (visible_to = [character])
    roles = [f"{(e.get('visible_to') or ['?'])[0]}: "
             f"{(ROLE_TEXT.get(lang) or {}).get(str((e.get('data') or {}).get('role')), (e.get('data') or {}).get('role'))} "
             f"({(e.get('data') or {}).get('agent', '')})" for e in events if e.get("kind") == "script"]
    if roles:
        lines.append(("身份：" if zh else "Roles: ") + ("；" if zh else "; ").join(roles))
    return lines


VIEW = GameView(seat_template=Path(__file__).parent / "templates" / "seat.html", sentence=sentence, seats=seats, truth=truth, titles=TITLES, role_text=ROLE_TEXT,
                hidden_roles=lambda events, config: True, names={"en": "Murder mystery", "zh": "谋杀之谜"},
                recognizes=frozenset({"script", "introduce", "ask", "accuse"}), evaluations=True)
