"""Replays from ``events.jsonl`` alone: display rows for the three games, grouped by round and
phase, with a players panel, a "seen by" rule and plain sentences in the game's language.

An event (``mas_agents/events.py``) is ``{step, phase, round, actor, kind, content, visible_to,
llm_call_ids, data}``; a private event has ``visible_to`` other than ``["*"]`` (a player's own
planning: ``[actor]``; the harness's own records: ``["game"]``). :func:`rows` turns events into
:class:`Row` objects the templates render:

* **Groups** (:func:`layout`): the setup, the introductions (murder mystery), one group per round
  (anchor ``#r1``, ``#r2``...), the vote and the end (``#setup``, ``#intro``, ``#vote``, ``#end``);
  inside a group, one heading per phase (descriptions, the judge, the vote...) when the group has
  more than one. A private planning event (``phase`` ``planning``/``gameplay``) is written by an
  agent just before the action it plans for, often with ``round`` 0 in the middle of a round (the
  MAgIC belief tables), so it never opens a group: it joins the group being played and the phase of
  the next action there, or, when none follows (PLAYER*'s readings after a questioning round), a
  phase of its own ("after the round"). Every event keeps the anchor ``#ev-<step>``.
* **Sentences** (:func:`sentence`): every kind as a plain sentence built from its ``data``, in the
  game's language (:func:`lang_of`: English, or Chinese for a ``zh`` Who-is-Spy game or murder
  mystery); MAgIC is English only. An unknown kind shows its actor and content, never its key.
* **Tables**: consecutive PLAYER* ``sensor`` readings (and ``pgm_reading`` clue readings) of one
  reader become one small table; ``belief_table`` (the ``pgm`` block's posteriors) and MAgIC's
  ``belief`` questionnaire are tables too.
* **Seen by** (:func:`seen_by`): what a seat could see is exactly what the game let its agent
  observe (:func:`mas_agents.events.is_visible`, the rule ``Agent.observe`` applies): the public
  events and those whose ``visible_to`` names the seat. Events are in the order they happened, so
  the events before a seat's action are what it had seen when it acted. An event the harness keeps
  for itself (``visible_to == ["game"]``: MAgIC's ground-truth setup and the self-awareness answers,
  which carry the true role) is seen by no seat, not even by its actor.
* **Players** (:func:`players_panel`): seat, agent spec, the model the seat ran (:func:`seat_model`:
  ``config.json``'s ``seat_models``, else the spec's ``@MODEL``, else the run's ``model``) and role
  (MAgIC's game-theory seats: challenger or defender); in a hidden-role game (Who is Spy, the murder
  mystery, Chameleon, Undercover) the roles, and a murder mystery's per-seat agent and model when the
  murderer plays another, are shown only once the game has ended, on the private view, or when the
  game stopped before its end (its process is gone: it will not end).
* **Phase headings** (:func:`phase_headings`): where a group has several phases, and in every round
  once one round has them; never one repeating its group's title.

Text is never marked safe here: the templates escape every field (agents write prompt
injections on purpose).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from eval import games as game_registry
from mas_agents.events import EVERYONE, is_visible

#: Kinds rendered as the game's headline moments (bold, own colour).
_MAJOR = {"accuse", "outcome", "vote_result", "foul", "guess", "pd_reveal", "pg_reveal"}
#: Phases of private planning: such an event joins the group being played (see the module doc).
_PLANNING = {"planning", "gameplay"}
#: Kinds merged into one table per reader when consecutive.
_READINGS = {"sensor", "pgm_reading"}

_T: dict[str, dict[str, str]] = {
    "en": {
        "setup": "Setup", "intro": "Introductions", "round": "Round {n}", "vote_mmg": "The vote (private ballots)",
        "vote": "The vote", "end_mmg": "The verdict", "end_wis": "End of the game", "end": "Outcome",
        "eval": "Evaluation", "after": "After the round: what each player concluded",
        "before": "Planning before the questions", "planning": "Planning",
        "ph_questioning": "Questions and answers", "ph_speaking": "Descriptions", "ph_judging": "The judge",
        "ph_voting": "The vote", "ph_clues": "Clues", "ph_negotiation": "Proposals and votes", "ph_moves": "Moves",
        "ph_guess": "The chameleon's guess", "ph_outcome": "Outcome", "ph_setup": "Setup",
        "ph_introduction": "Introductions", "ph_evaluation": "Evaluation",
        "nobody": "nobody", "abstained": "abstains", "no_desc": "(no description)",
    },
    "zh": {
        "setup": "准备", "intro": "自我介绍", "round": "第{n}轮", "vote_mmg": "投票（不公开）", "vote": "投票",
        "end_mmg": "结果", "end_wis": "游戏结束", "end": "结果", "eval": "评测", "after": "本轮之后：每位玩家的结论",
        "before": "提问之前的计划", "planning": "计划",
        "ph_questioning": "提问与回答", "ph_speaking": "描述", "ph_judging": "裁判", "ph_voting": "投票",
        "ph_clues": "线索", "ph_negotiation": "提议与投票", "ph_moves": "行动", "ph_guess": "猜词",
        "ph_outcome": "结果", "ph_setup": "准备", "ph_introduction": "自我介绍", "ph_evaluation": "评测",
        "nobody": "无人", "abstained": "弃权", "no_desc": "（没有描述）",
    },
}
#: Who-is-Spy fouls (``graphs.wis.rules.FOUL_TEXT``) in Chinese.
FOUL_ZH = {"own_word": "说出了自己的词语", "repeat": "重复了之前的描述", "timeout": "没有按时回答",
           "no_answer": "没有给出有效描述"}
END_REASON = {"en": {"spy_eliminated": "the spy was voted out", "max_rounds": "the last round was played",
                     "few_players": "fewer than 3 players were left"},
              "zh": {"spy_eliminated": "卧底被投票出局", "max_rounds": "已进行到最后一轮", "few_players": "剩余玩家不足3人"}}
ROLE_TEXT = {"en": {"spy": "spy", "civilian": "civilian", "murderer": "murderer", "chameleon": "the chameleon",
                    "non_chameleon": "not the chameleon", "undercover": "the undercover", "player": "player",
                    "test_seat": "player", "evaluated": "answers the questions"},
             "zh": {"spy": "卧底", "civilian": "平民", "murderer": "凶手", "player": "玩家"}}
#: Readable names of the planning kinds of the baselines (ThinkThrice, O-CoT, Werewolf).
_PLAN_LABEL = {"thinkthrice_timeline": "timeline", "thinkthrice_check": "consistency check",
               "ocot_reflection": "reflection", "werewolf_template": "question template",
               "werewolf_reflection": "reflection", "relations": "relationship map", "reasoning": "reasoning"}


@dataclass
class Table:
    """A small table of a reader's readings: ``caption``, ``headers`` and ``rows`` (strings)."""

    caption: str
    headers: list[str]
    rows: list[list[str]]


@dataclass
class Row:
    """One event (or a run of one reader's readings) as the replay shows it.

    Attributes:
        step: the event's ``step`` (the first one's, for merged readings). steps: every step shown.
        group, group_title: the round or part of the game (``r1``, ``setup``...; its anchor id).
        phase, phase_title: the phase heading within the group (``r1/speaking``...).
        section: the group title (kept for callers of the first version).
        actor, kind, round: as in the event. text: the sentence to show (plain text, escaped later).
        private: not visible to everyone. owner: whose private event (``visible_to`` joined).
        visible_to: the event's ``visible_to``. css: extra CSS classes (``major``, ``foul``...).
        details: pretty JSON of a private planning payload worth showing, or "".
        table: a :class:`Table` of readings or beliefs, or None. calls: LLM call ids.
    """

    step: int
    section: str
    actor: str
    kind: str
    round: int
    text: str
    private: bool = False
    owner: str = ""
    css: str = ""
    details: str = ""
    calls: list[str] = field(default_factory=list)
    group: str = ""
    group_title: str = ""
    phase: str = ""
    phase_title: str = ""
    visible_to: list[str] = field(default_factory=list)
    steps: list[int] = field(default_factory=list)
    table: Table | None = None


@dataclass
class Seat:
    """One line of the players panel.

    Attributes:
        seat: 1-based. name: the seat's name as the events write it (``Player 1``, a character).
        agent: its agent spec. model: the model spec it ran (:func:`seat_model`), "" when unknown.
        role: readable role, "" when unknown or hidden. hidden: True while the role is not shown.
        stopped: the role is shown because the game stopped before its end (it will not end).
        folder: the seat's folder name under ``<run>/human/``
            (:func:`eval.runs.human.seat_dirname`: ``Player 1`` -> ``Player_1``), to match the
            human seats a run has to their names.
    """

    seat: int
    name: str
    agent: str
    model: str
    role: str
    hidden: bool
    stopped: bool = False
    folder: str = ""


def load_events(path: Path) -> list[dict[str, Any]]:
    """The events of ``path``, tolerating a half-written last line (a game in progress appends
    to the file while it is read); other malformed lines are skipped. Missing file: []."""
    path = Path(path)
    if not path.is_file():
        return []
    out = []
    # split on "\n" only: str.splitlines() also splits on U+2028/U+2029/U+0085, which JSON text
    # written with ensure_ascii=False holds unescaped, and would break (hide) such an event
    for line in path.read_text(encoding="utf-8", errors="replace").split("\n"):
        if not line.strip():
            continue
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if isinstance(e, dict):
            out.append(e)
    return out


def game_of(events: list[dict[str, Any]], kind_hint: str = "") -> str:
    """``"mmg"``, ``"wis"`` or ``"magic"``: ``kind_hint`` when it is one, else from the kinds;
    the kind of a game registered beyond them (:mod:`eval.games`) when ``kind_hint`` is one."""
    if kind_hint in ("mmg", "wis", "magic"):
        return kind_hint
    if game_registry.find(kind_hint) is not None:
        return kind_hint
    kinds = {e.get("kind") for e in events}
    if kinds & {"describe", "word"}:
        return "wis"
    if kinds & {"clue", "proposal", "pd_choice", "contribution", "self_awareness"}:
        return "magic"
    return "mmg"


def lang_of(events: list[dict[str, Any]], game: str, config: Mapping[str, Any] | None = None) -> str:
    """The language a replay is written in: ``"zh"`` for a Chinese Who-is-Spy game (its ``start``
    event's ``data.lang``, else ``config["lang"]``) or murder mystery (``config["lang"]``), else
    ``"en"`` (MAgIC is English only)."""
    if game == "magic":
        return "en"
    lang = ""
    if game == "wis":
        lang = next((str((e.get("data") or {}).get("lang") or "") for e in events if e.get("kind") == "start"), "")
    lang = lang or str((config or {}).get("lang") or "en")
    return "zh" if lang == "zh" else "en"


def _t(lang: str, key: str, **kw: Any) -> str:
    return _T[lang][key].format(**kw)


def _group_of(game: str, e: Mapping[str, Any]) -> str:
    """The group key of an action (not a planning event): ``setup``, ``intro``, ``r<n>``, ``vote``,
    ``end``, ``eval`` or the phase."""
    phase, rnd = str(e.get("phase") or ""), int(e.get("round") or 0)
    if phase == "setup":
        return "setup"
    if phase == "outcome":
        return "end"
    if rnd > 0:
        return f"r{rnd}"
    if phase == "introduction":
        return "intro"
    if phase in ("voting", "guess"):
        return "vote"
    if phase == "evaluation":
        return "eval"
    return phase or "setup"


def _group_title(game: str, key: str, lang: str) -> str:
    base = key.split("-")[0]
    if base.startswith("r") and base[1:].isdigit():
        return _t(lang, "round", n=int(base[1:]))
    if base == "vote":
        return _t(lang, "vote_mmg" if game == "mmg" else "vote")
    if base == "end":
        return _t(lang, {"mmg": "end_mmg", "wis": "end_wis"}.get(game, "end"))
    if base in ("setup", "intro", "eval"):
        return _t(lang, base)
    return base.replace("_", " ").capitalize()


def _phase_title(phase: str, group: str, lang: str) -> str:
    if phase == "_after":
        return _t(lang, "before" if group == "intro" else "after" if group.startswith("r") else "planning")
    return _T[lang].get(f"ph_{phase}") or phase.replace("_", " ").capitalize()


def layout(events: list[dict[str, Any]], game: str, lang: str = "en") -> list[tuple[str, str, str, str]]:
    """Where each event of ``events`` goes: ``[(group, group title, phase key, phase title)]``,
    one per event, in order (rules in the module docstring). A group key met again after another
    group gets a suffix (``r1-2``) so every anchor stays unique."""
    n = len(events)
    groups: list[str] = [""] * n
    current, seen, raw_current = "", set(), ""
    # the group of the next action after each event (a plan made for round n's first action
    # opens round n)
    ahead: list[str] = [""] * n
    nxt_key = ""
    for i in range(n - 1, -1, -1):
        ahead[i] = nxt_key
        if str(events[i].get("phase") or "") not in _PLANNING:
            nxt_key = _group_of(game, events[i])
    for i, e in enumerate(events):
        planning = str(e.get("phase") or "") in _PLANNING
        rnd = int(e.get("round") or 0)
        if planning and current and not (rnd > 0 and ahead[i] == f"r{rnd}" and raw_current != f"r{rnd}"):
            groups[i] = current
            continue
        key = ahead[i] if planning and rnd > 0 and ahead[i] == f"r{rnd}" else _group_of(game, e)
        if key != raw_current:
            raw_current = key
            k, j = key, 2
            while k in seen:
                k, j = f"{key}-{j}", j + 1
            seen.add(k)
            current = k
        groups[i] = current
    # a planning event takes the phase of the next action in its group, else "_after"
    phases: list[str] = [""] * n
    nxt = ""
    for i in range(n - 1, -1, -1):
        e = events[i]
        if i == n - 1 or groups[i + 1] != groups[i]:
            nxt = ""
        ph = str(e.get("phase") or "")
        if ph in _PLANNING:
            phases[i] = nxt or "_after"
        else:
            phases[i] = ph
            nxt = ph
    out = []
    for i, e in enumerate(events):
        g = groups[i]
        out.append((g, _group_title(game, g, lang), f"{g}/{phases[i]}", _phase_title(phases[i], g.split("-")[0], lang)))
    return out


# ---------------------------------------------------------------------------------- sentences
def _q(lang: str, s: Any) -> str:
    return f"“{s}”" if lang == "zh" else f"“{s}”"


def _names(xs: Iterable[Any], lang: str) -> str:
    return ("、" if lang == "zh" else ", ").join(str(x) for x in xs)


def _votes_text(votes: Mapping[str, Any], lang: str) -> str:
    t = _T[lang]
    return ("，" if lang == "zh" else ", ").join(f"{v} → {w or t['abstained']}" for v, w in votes.items())


def _vote_result(d: Mapping[str, Any], lang: str, game: str) -> str:
    out, votes, counts = d.get("out"), d.get("votes") or {}, d.get("counts") or {}
    ranked = [(p, c) for p, c in sorted(counts.items(), key=lambda kv: -kv[1]) if c]
    tally = ("，".join(f"{p} {c}票" for p, c in ranked) if lang == "zh"
             else "votes received: " + ", ".join(f"{p} {c}" for p, c in ranked))
    if lang == "zh":
        head = (f"{out} 被投票出局（得票：{tally}）。" if out else
                ("平票，无人出局。" if d.get("tie") else "没有有效投票，无人出局。"))
        return head + (f"投票：{_votes_text(votes, lang)}。" if votes else "")
    verb = "is accused" if game == "magic" else "is voted out"
    head = (f"{out} {verb} ({tally})." if out else
            ("A tie: no one is voted out." if d.get("tie") else "No valid vote: no one is voted out."))
    return head + (f" Votes: {_votes_text(votes, lang)}." if votes else "")


def magic_outcome(d: Mapping[str, Any], scenario: str) -> str:
    """A MAgIC game's outcome (``result.json`` ``outcome`` or the ``outcome`` event's data) as one
    English sentence, by scenario: who was accused and who wins, the agreed split, the payoffs."""
    acc = d.get("accused")
    if "code" in d and scenario in ("chameleon", ""):
        return {0: f"The chameleon, {acc}, was caught and guessed the secret word wrong: the other players win.",
                1: f"The chameleon, {acc}, was caught but guessed the secret word: the chameleon wins.",
                2: f"The vote accused {acc}, who is not the chameleon: the chameleon wins.",
                3: "The vote was a tie: no one was accused, and the chameleon escapes."}.get(int(d["code"]),
                                                                                            f"Outcome code {d['code']}.")
    if "code" in d and scenario == "undercover":
        return {0: f"The undercover, {acc}, was voted out: the civilians win.",
                1: f"The vote accused {acc}, a civilian: the undercover wins.",
                2: "The vote was a tie: no one was voted out, and the undercover escapes."}.get(int(d["code"]),
                                                                                                f"Outcome code {d['code']}.")
    if "agreed" in d:
        split = d.get("split")
        return (f"Agreement in round {d.get('rounds')}: the fee is split "
                + " / ".join(f"{x:g} %" for x in split) + "." if d.get("agreed") and split else
                f"No agreement after {d.get('rounds')} rounds.")
    if "totals" in d:
        return ("Total payoffs: " + ", ".join(f"{p} {v}" for p, v in d["totals"].items())
                + f". Winner(s): {', '.join(d.get('winners') or []) or 'none'}.")
    if "finals" in d:
        return ("Final coins: " + ", ".join(f"{p} {v:g}" for p, v in d["finals"].items())
                + f". Winner(s): {', '.join(d.get('winners') or []) or 'none'}.")
    return "The game is over."


def sentence(game: str, e: Mapping[str, Any], lang: str = "en", scenario: str = "") -> str:
    """The plain sentence of one event in ``lang`` (``"en"`` or ``"zh"``), built from its
    ``data`` where the game records one (never a raw key or a Python dict); ``scenario`` names the
    MAgIC game (for its outcome). Unknown kinds: ``"<actor>: <content>"``."""
    k, a = str(e.get("kind") or ""), str(e.get("actor") or "")
    c, d = str(e.get("content") or ""), dict(e.get("data") or {})
    zh = lang == "zh"
    t = _T[lang]
    if k == "start":
        if game == "wis" or not zh:
            return c
        return "游戏开始。"
    if k == "word":
        return (f"{d.get('player', a)} 拿到的词语是“{d.get('word')}”。" if zh
                else f"{d.get('player', a)} gets the word “{d.get('word')}”.")
    if k == "round_start":
        order = _names(d.get("order") or [], lang)
        rnd = int(e.get("round") or 0)
        return f"第{rnd}轮开始。发言顺序：{order}。" if zh else f"Round {rnd} begins. Speaking order: {order}."
    if k == "describe":
        body = c or t["no_desc"]
        foul = d.get("foul")
        tail = ""
        if foul:
            tail = f"（犯规：{FOUL_ZH.get(foul, foul)}）" if zh else f" (foul: {_foul_en(foul)})"
        return (f"{a}：{body}" if zh else f"{a}: {body}") + tail
    if k == "foul":
        foul = d.get("foul")
        p = d.get("player", a)
        return (f"{p} 犯规（{FOUL_ZH.get(foul, foul)}），被裁判淘汰。" if zh
                else f"{p} is out, eliminated by the judge: {p} {_foul_en(foul)}.")
    if k == "vote" and game in ("wis", "magic"):
        target = d.get("target")
        if zh:
            return f"{a} 投票给 {target}。" if target else f"{a} 弃权（没有有效投票）。"
        late = " (too late)" if d.get("late") else ""
        return f"{a} votes for {target}." if target else f"{a} abstains (no valid vote{late})."
    if k == "vote_result":
        return _vote_result(d, lang, game)
    if k == "outcome" and game == "wis":
        winner, spy = d.get("winner"), d.get("spy")
        why = END_REASON[lang].get(str(d.get("end_reason")), str(d.get("end_reason") or ""))
        rnd = d.get("rounds_played") or e.get("round")
        if zh:
            return f"第{rnd}轮后游戏结束：{'平民获胜' if winner == 'civilians' else '卧底获胜'}（{why}）。卧底是{spy}。"
        return (f"Game over after round {rnd}: {'the civilians win' if winner == 'civilians' else 'the spy wins'} "
                f"({why}). The spy was {spy}.")
    if k == "outcome" and game == "magic":
        return magic_outcome(d, scenario)
    if k == "reasoning":
        what = {"describe": ("before describing", "描述之前"), "vote": ("before voting", "投票之前")}.get(
            str(d.get("for")), ("", ""))
        return (f"{a} 的思考（{what[1]}）：{c}" if zh and what[1] else f"{a} 的思考：{c}" if zh
                else f"{a} thinks{' ' + what[0] if what[0] else ''}: {c}")
    if k == "invalid":
        errs = "; ".join(map(str, d.get("errors") or [])) or c
        act = d.get("action") or "act"
        return (f"{a} 的回答无法读取（{act}），视为弃权：{errs}" if zh
                else f"{a}'s reply could not be read ({act}); it counts as an abstention: {errs}")
    if game == "mmg":
        s = _mmg_sentence(k, a, c, d, e, lang)
        if s is not None:
            return s
    if game == "magic":
        s = _magic_sentence(k, a, c, d)
        if s is not None:
            return s
    if k == "belief_table":
        return (f"{a} 的贝叶斯网络信念：{c}" if zh else f"{a}'s Bayesian-network belief: {c}")
    if k == "mcq":
        res = "" if d.get("correct") is None else ((" (right)" if d["correct"] else " (wrong)") if not zh
                                                   else ("（正确）" if d["correct"] else "（错误）"))
        return (f"{a} 回答：{c}" if zh else f"{a} answers: {c}") + res
    if k in _PLAN_LABEL and a:
        return f"{a} 的{ {'reasoning': '思考'}.get(k, '记录')}：{c}" if zh else f"{a}'s {_PLAN_LABEL[k]}: {c}"
    if a and a != "game":
        return f"{a}：{c}" if zh else f"{a}: {c}"
    return c


def _foul_en(foul: Any) -> str:
    from graphs.wis.rules import FOUL_TEXT
    return FOUL_TEXT.get(str(foul), "broke a rule")


def _mmg_sentence(k: str, a: str, c: str, d: Mapping[str, Any], e: Mapping[str, Any], lang: str) -> str | None:
    zh = lang == "zh"
    if k == "script":
        who = (e.get("visible_to") or [a])[0]
        role = ROLE_TEXT[lang].get(str(d.get("role")), str(d.get("role")))
        return f"{who} 收到自己的私密剧本，身份：{role}。" if zh else f"{who} receives their private script; role: {role}."
    if k == "introduce":
        return f"{a} 自我介绍：{c}" if zh else f"{a} introduces themself: {c}"
    if k == "ask":
        return f"{a} 问 {d.get('target', '?')}：{d.get('question') or c}" if zh else \
            f"{a} asks {d.get('target', '?')}: {d.get('question') or c}"
    if k == "answer":
        return f"{a} 回答 {d.get('asker', '')}：{c}" if zh else f"{a} answers {d.get('asker', '')}: {c}"
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
        mur = _names(d.get("murderers") or [], lang)
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
            return f"{a} 关于 {v} 的嫌疑人：{_names(new, lang) or '无'}" + (f"（排除：{_names(removed, lang)}）" if removed else "")
        return (f"{a}'s suspects for the murder of {v}: {_names(new, lang) or 'none'}"
                + (f" (ruled out {_names(removed, lang)}: {d.get('reason')})" if removed and d.get("reason") else
                   f" (ruled out {_names(removed, lang)})" if removed else "") + ".")
    if k == "relations":
        return f"{a} 的人物关系图：{c}" if zh else f"{a}'s relationship map: {c}"
    return None


def _magic_sentence(k: str, a: str, c: str, d: Mapping[str, Any]) -> str | None:
    if k == "setup":
        return f"The game is set up ({c}); the roles and the secret are revealed at the end."
    if k == "private_info":
        return f"{a if a != 'game' else 'The game'} tells it privately: {c}"
    if k == "self_awareness":
        ok = d.get("correct")
        return f"{a} says who it is: “{c}”" + ("" if ok is None else (" (right)" if ok else " (wrong)"))
    if k == "clue":
        return f"{a} gives the clue: {c}"
    if k == "belief":
        return f"{a}'s answers to the belief questionnaire (whom each player suspects):"
    if k == "guess":
        return f"{a} guesses the secret word “{d.get('word') or ''}”: {'right' if d.get('correct') else 'wrong'}."
    if k == "proposal":
        return f"{a} proposes: {c}"
    if k == "proposal_vote":
        return f"{a} votes for the proposal of {d.get('for')}." if d.get("for") else f"{a} votes for no proposal."
    if k == "pd_choice":
        ch = d.get("choice")
        return f"{a} chooses to {ch}." if ch else f"{a} gives no readable choice (counted as cooperate)."
    if k == "contribution":
        amt = d.get("amount")
        return f"{a} puts {amt} coins into the pool." if amt is not None else f"{a} gives no readable amount."
    if k == "pd_reveal":
        ch, pay = d.get("choices") or {}, d.get("payoffs") or {}
        return (f"Round {d.get('round')}, the choices are revealed: "
                + ", ".join(f"{p} {ch.get(p) or 'no answer (cooperate)'} (+{pay.get(p)})" for p in pay) + ".")
    if k == "pg_reveal":
        am = d.get("amounts") or {}
        return (f"Round {d.get('round')}, the contributions are revealed: " + ", ".join(f"{p} {v}" for p, v in am.items())
                + f"; the pool holds {d.get('pool_total')} coins.")
    if k == "pgm_reading":
        return f"{a} reads the clue of {d.get('subject')}: {d.get('reading') or 'unreadable'}."
    return None


# ---------------------------------------------------------------------------------- tables
_SENSOR_ZH = {"emotion": "情绪", "motivation": "动机", "opportunity": "作案机会", "information": "信息"}


def _sensor_table(run: list[Mapping[str, Any]], lang: str) -> Table:
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


def _clue_table(run: list[Mapping[str, Any]]) -> Table:
    a = str(run[0].get("actor"))
    rows = [[str((e.get("data") or {}).get("subject")), str((e.get("data") or {}).get("clue") or ""),
             str((e.get("data") or {}).get("reading") or "unreadable")] for e in run]
    return Table(f"{a}'s readings of the clues (does each fit the secret?)", ["Player", "Clue", "Reading"], rows)


def _belief_table(e: Mapping[str, Any], lang: str) -> tuple[str, Table | None]:
    """The sentence and table of a ``belief_table`` event (the ``pgm`` block's posteriors)."""
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
    return sentence("", e, lang), None


def _magic_belief_table(e: Mapping[str, Any]) -> Table:
    a, d = str(e.get("actor")), dict(e.get("data") or {})
    rows = [[f"{a} (its own answer)", str(d.get("suspect") or "(no answer)")]]
    rows += [[q, str(s or "(no answer)")] for q, s in (d.get("predicted") or {}).items()]
    return Table("", ["Player", "Suspects"], rows)


def _details(e: Mapping[str, Any], private: bool) -> str:
    """Pretty JSON of a private planning payload (a suspect list, a relation map...), else ""."""
    if not private or str(e.get("kind")) in ("word", "script", "vote", "belief", "self_awareness", "private_info",
                                               "setup", "reasoning", "invalid", "mcq", "pd_choice", "contribution"):
        return ""
    d = dict(e.get("data") or {})
    return json.dumps(d, ensure_ascii=False, indent=1, default=str)[:6000] if d else ""


# ---------------------------------------------------------------------------------- rows
def rows(events: list[dict[str, Any]], game: str, start: int = 0, lang: str = "en", scenario: str = "") -> list[Row]:
    """Display rows of ``events[start:]`` (see :class:`Row`), in the order written. Groups and
    phases are computed with every event in view, so rows fetched later (live) continue the
    headings; consecutive readings of one reader (``sensor``, ``pgm_reading``) become one row with
    a :class:`Table`."""
    places = layout(events, game, lang)
    out: list[Row] = []
    i = start
    while i < len(events):
        e = events[i]
        k = str(e.get("kind") or "")
        run = [e]
        if k in _READINGS:
            j = i + 1
            while (j < len(events) and events[j].get("kind") == k and events[j].get("actor") == e.get("actor")
                   and places[j][:3] == places[i][:3] and events[j].get("visible_to") == e.get("visible_to")):
                run.append(events[j])
                j += 1
        vis = [str(x) for x in e.get("visible_to") or []]
        private = EVERYONE not in vis
        d = e.get("data") or {}
        table = None
        text = sentence(game, e, lang, scenario)
        if k == "sensor":
            table, text = _sensor_table(run, lang), ""
        elif k == "pgm_reading":
            table, text = _clue_table(run), ""
        elif k == "belief_table":
            text, table = _belief_table(e, lang)
        elif k == "belief" and game == "magic":
            table = _magic_belief_table(e)
        css = " ".join(x for x in (f"k-{k}", "major" if k in _MAJOR else "", "foul" if d.get("foul") else "",
                                   ) if x)
        g, gt, ph, pt = places[i]
        calls = list(dict.fromkeys(str(x) for r in run for x in r.get("llm_call_ids") or []))
        steps = [int(r.get("step", i + n)) for n, r in enumerate(run)]
        out.append(Row(step=steps[0], section=gt, actor=str(e.get("actor", "")), kind=k, round=int(e.get("round") or 0),
                       text=text, private=private, owner=", ".join(vis) if private else "", css=css,
                       details="" if table else _details(e, private), calls=calls, group=g, group_title=gt, phase=ph,
                       phase_title=pt, visible_to=vis, steps=steps, table=table))
        i += len(run)
    shown = phase_headings(places)
    for r in out:
        if r.phase not in shown:
            r.phase_title = ""
    return out


def _is_round(group: str) -> bool:
    base = group.split("-")[0]
    return base.startswith("r") and base[1:].isdigit()


def phase_headings(places: list[tuple[str, str, str, str]]) -> set[str]:
    """The phase keys (``r1/speaking``...) whose heading is shown, of :func:`layout`'s ``places``.

    A group shows its phases' headings where it has more than one phase, and every round shows
    them once one round does (a last round without its "after the round" part keeps its "Moves"
    like the others); a heading that repeats its group's title (a "Setup" phase under the "Setup"
    group) is never shown."""
    phases: dict[str, set[str]] = {}
    for g, _, ph, _ in places:
        phases.setdefault(g, set()).add(ph)
    rounds_split = any(len(v) > 1 for g, v in phases.items() if _is_round(g))
    return {ph for g, gt, ph, pt in places
            if pt and pt != gt and (len(phases[g]) > 1 or (rounds_split and _is_round(g)))}


def heading_before(events: list[dict[str, Any]], game: str, start: int, lang: str = "en") -> tuple[str, str]:
    """``(group, phase)`` of the event before ``start`` (``("", "")`` at 0): where a fragment of
    rows fetched from ``start`` continues, so it repeats no heading."""
    if start <= 0 or not events:
        return "", ""
    g, _, ph, _ = layout(events, game, lang)[min(start, len(events)) - 1]
    return g, ph


def seen_by(event: Mapping[str, Any], seat: str) -> bool:
    """True when ``seat`` could see ``event``: it is public or its ``visible_to`` names the seat
    (:func:`mas_agents.events.is_visible`, what the seat's agent observed; see the module doc)."""
    return is_visible(dict(event), seat)


def players_of(events: list[dict[str, Any]]) -> list[str]:
    """The players of a game, in the order the events first name them as an actor or owner."""
    names: dict[str, None] = {}
    for e in events:
        for n in [e.get("actor")] + list(e.get("visible_to") or []):
            if n and n not in ("game", EVERYONE):
                names.setdefault(str(n), None)
    return list(names)


_HIDDEN_SCENARIOS = {"chameleon", "undercover"}


def hidden_roles(game: str, events: list[dict[str, Any]], config: Mapping[str, Any] | None = None) -> bool:
    """True when ``game`` hides its roles from the players (Who is Spy, the murder mystery,
    MAgIC's Chameleon and Undercover)."""
    if game in ("wis", "mmg"):
        return True
    return scenario_of(events, config) in _HIDDEN_SCENARIOS


def scenario_of(events: list[dict[str, Any]], config: Mapping[str, Any] | None = None) -> str:
    """A MAgIC game's scenario (``setup`` event, else ``config["scenario"]``), or ""."""
    setup = next((e.get("data") or {} for e in events if e.get("kind") == "setup"), {})
    return str(setup.get("scenario") or (config or {}).get("scenario") or "")


def seat_model(name: str, agent: str, config: Mapping[str, Any] | None, result: Mapping[str, Any] | None) -> str:
    """The model spec seat ``name`` ran: ``config["seat_models"][name]`` (the run-record contract:
    what the runner resolved for the seat), else the ``@MODEL`` of its agent spec ``agent``
    (``plain@openai:stub`` -> ``openai:stub``, :func:`mas_agents.specs.split_model`; runs written
    before ``seat_models``), else the run's ``model`` (``config.json``, then ``result.json``); ""
    when none is known. A remote agent (``http://...``) answers with its own model: "remote"."""
    from mas_agents.specs import is_remote, split_model
    seat_models = (config or {}).get("seat_models")
    if isinstance(seat_models, Mapping) and seat_models.get(name):
        return str(seat_models[name])
    if agent and is_remote(agent):
        return "remote"
    try:
        spec_model = split_model(agent)[1] if agent else None
    except ValueError:
        spec_model = None
    return str(spec_model or (config or {}).get("model") or (result or {}).get("model") or "")


#: MAgIC's game-theory scenarios: every seat's role is "player"; the panel shows its part instead.
_OPEN_SCENARIOS = {"cost_sharing", "prisoners_dilemma", "public_good"}


def players_panel(events: list[dict[str, Any]], game: str, config: Mapping[str, Any] | None,
                  result: Mapping[str, Any] | None, reveal: bool, lang: str = "en", stopped: bool = False) -> list[Seat]:
    """The players panel: one :class:`Seat` per player, in seat order.

    Args:
        events: the game's events. game: ``mmg``/``wis``/``magic`` or a registered game.
        config, result: the run's ``config.json`` and ``result.json`` (None when missing).
        reveal: show hidden roles (the game has ended, or the private view was asked for).
        lang: the replay's language (role names).
        stopped: the game stopped before its end (its process is gone: it will not end); its
            roles are shown, each seat marked :attr:`Seat.stopped`.

    Sources: Who is Spy ``config.agents`` (seat order) and the roles of ``result.players`` or of
    the ``word`` events (the seat whose word differs is the spy); murder mystery ``result.agents``
    and ``result.roles``, else the ``script`` events and ``config.agent``/``murderer_agent``; MAgIC
    ``config.seats`` and the ``setup`` event's roles, and in the game-theory scenarios (every role
    "player") the seat's part: the challenger or a defender (MAgIC §3: challenger LLMs play against
    the same defender agents), from the setup's ``challenger_seats``; a WellPlay evaluation
    (``config.kind == "wellplay-eval"``): the characters that answered (the ``mcq`` events' actors),
    each with the evaluated method or agent. Models: :func:`seat_model`. While a murder mystery hides
    its roles, seats whose agents or models differ show the same joined text (else the odd one out
    would name the murderer).
    """
    cfg, res = dict(config or {}), dict(result or {})
    reveal = reveal or stopped
    hide = hidden_roles(game, events, cfg) and not reveal
    names = players_of(events)
    agents: dict[str, str] = {}
    roles: dict[str, str] = {}
    shown_roles: dict[str, str] = {}
    if cfg.get("kind") == "wellplay-eval":
        names = list(dict.fromkeys(str(e.get("actor")) for e in events if e.get("kind") == "mcq" and e.get("actor")))
        who = str(cfg.get("agent") or cfg.get("method") or "")
        agents = {n: who for n in names}
        roles = {n: "evaluated" for n in names}
        hide = False
    elif game == "wis":
        start = next((e.get("data") or {} for e in events if e.get("kind") == "start"), {})
        names = [str(x) for x in start.get("seats") or []] or names
        for i, a in enumerate(cfg.get("agents") or []):
            if i < len(names):
                agents[names[i]] = str(a)
        for p in res.get("players") or []:
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
    elif game == "mmg":
        names = [str(x) for x in res.get("players") or []] or [
            str((e.get("visible_to") or ["?"])[0]) for e in events if e.get("kind") == "script"] or names
        for e in events:
            if e.get("kind") == "script":
                d, who = e.get("data") or {}, str((e.get("visible_to") or ["?"])[0])
                agents[who], roles[who] = str(d.get("agent") or ""), str(d.get("role") or "")
        agents.update({str(k): str(v) for k, v in (res.get("agents") or {}).items()})
        roles.update({str(k): str(v) for k, v in (res.get("roles") or {}).items()})
        for n in names:
            agents.setdefault(n, str(cfg.get("agent") or ""))
    elif game == "magic":
        setup = next((e.get("data") or {} for e in events if e.get("kind") == "setup"), {})
        names = [str(x) for x in setup.get("players") or []] or names
        agents = {str(k): str(v) for k, v in (cfg.get("seats") or {}).items()}
        roles = {str(k): str(v) for k, v in (setup.get("roles") or {}).items()}
        challengers = {str(x) for x in setup.get("challenger_seats") or []}
        if challengers and scenario_of(events, cfg) in _OPEN_SCENARIOS:
            shown_roles = {n: f"player ({'challenger' if n in challengers else 'defender'})" for n in names}
    else:   # a registered game: its seats in order, their specs from its GameDef.seat_specs
        registered = game_registry.find(game)
        specs = registered.seat_specs(cfg) if registered is not None and registered.seat_specs else []
        names = [n for n in names if n != "game"]
        agents = {n: str(a) for n, a in zip(names, specs)}
    models = {n: seat_model(n, agents.get(n, ""), cfg, res) for n in names}
    if game == "mmg" and hide:
        # the murderer may play another agent or model: every seat shows them all until the end
        for per in (agents, models):
            differ = sorted({per.get(n, "") for n in names} - {""})
            if len(differ) > 1:
                joined = (f"{cfg.get('agent')} (the murderer: {cfg.get('murderer_agent')})"
                          if per is agents and cfg.get("murderer_agent") and cfg.get("agent") else " / ".join(differ))
                per.update({n: joined for n in names})
    from eval.runs.human import seat_dirname
    out = []
    for i, n in enumerate(names):
        r = roles.get(n, "")
        text = shown_roles.get(n) or ROLE_TEXT[lang].get(r, ROLE_TEXT["en"].get(r, r))
        try:
            folder = seat_dirname(n)
        except ValueError:
            folder = ""
        out.append(Seat(seat=i + 1, name=n, agent=agents.get(n, ""), model=models.get(n, ""),
                        role="" if hide else text, hidden=hide and bool(r), stopped=stopped and bool(r), folder=folder))
    return out


def truth(events: list[dict[str, Any]], game: str, lang: str = "en", scenario: str = "") -> list[str]:
    """What the game hid, as lines for the end of a replay (in ``lang``): the murderer(s) and
    roles, the words and the spy, the MAgIC roles and secret and the outcome as a sentence; [] while
    the game has not ended."""
    lines: list[str] = []
    zh = lang == "zh"
    ended = any(e.get("kind") in ("accuse", "outcome") for e in events)
    if not ended:
        return lines
    if game == "mmg":
        for e in events:
            if e.get("kind") == "accuse":
                d = e.get("data") or {}
                if zh:
                    lines.append(f"受害者 {d.get('victim')}：凶手是 {_names(d.get('murderers') or [], lang)}；"
                                 f"投票指认 {d.get('accused') or '无人'}（{'正确' if d.get('correct') else '错误'}）。")
                else:
                    lines.append(f"Victim {d.get('victim')}: murderer {', '.join(d.get('murderers') or [])}; "
                                 f"the vote accused {d.get('accused') or 'no one'} "
                                 f"({'correct' if d.get('correct') else 'wrong'}).")
        # a script event is the game's, shown to its character only (visible_to = [character])
        roles = [f"{(e.get('visible_to') or ['?'])[0]}: "
                 f"{ROLE_TEXT[lang].get(str((e.get('data') or {}).get('role')), (e.get('data') or {}).get('role'))} "
                 f"({(e.get('data') or {}).get('agent', '')})" for e in events if e.get("kind") == "script"]
        if roles:
            lines.append(("身份：" if zh else "Roles: ") + ("；" if zh else "; ").join(roles))
    elif game == "wis":
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
    else:
        setup = next((e.get("data") or {} for e in events if e.get("kind") == "setup"), {})
        if setup.get("roles"):
            challengers = set(setup.get("challenger_seats") or [])
            open_game = challengers and str(setup.get("scenario")) in _OPEN_SCENARIOS
            lines.append("Roles: " + "; ".join(
                f"{p}: player ({'challenger' if p in challengers else 'defender'})" if open_game
                else f"{p}: {ROLE_TEXT['en'].get(r, r)}" for p, r in setup["roles"].items()))
        secret = [f"{label} {setup[k]}" for k, label in (("topic", "topic"), ("code", "secret word"),
                                                          ("civilian_word", "the civilians' word"),
                                                          ("undercover_word", "the undercover's word")) if k in setup]
        if secret:
            lines.append("The secret: " + ", ".join(secret) + ".")
        oc = next((e for e in events if e.get("kind") == "outcome"), None)
        if oc:
            lines.append(magic_outcome(oc.get("data") or {}, scenario or str(setup.get("scenario") or "")))
    return lines


def load_calls(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The call log of a run and its totals ``{calls, input_tokens, output_tokens, latency_s,
    retries, failures}``; a missing file gives ``([], zeros)``."""
    calls = load_events(path)   # the same tolerant JSON-lines reading
    tot = {"calls": len(calls), "input_tokens": sum(int(c.get("input_tokens") or 0) for c in calls),
           "output_tokens": sum(int(c.get("output_tokens") or 0) for c in calls),
           "latency_s": round(sum(float(c.get("latency_s") or 0) for c in calls), 3),
           "retries": sum(int(c.get("retries") or 0) for c in calls),
           "failures": sum(1 for c in calls if c.get("ok") is False)}
    return calls, tot
