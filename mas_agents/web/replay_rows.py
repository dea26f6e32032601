"""Replays from ``events.jsonl`` alone: display rows for any game, grouped by round and phase,
with a players panel, a "seen by" rule and plain sentences in the game's language.

What is a game's own comes from its view (:attr:`mas_agents.game.contract.GameDef.view`, an
:class:`mas_agents.game.view.GameView`: its sentences, seats, titles, roles, language, hidden roles,
tables and "the truth"); a game that sets none gets every default (round headings, a players panel
from the events and its ``seat_specs``, generic sentences). The ``game`` argument of the functions
here is a run kind: a registered game, or ``""`` (defaults). Nothing here names a game.

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
  game's language (:func:`lang_of`, the view's ``lang``: English or Chinese): the game's own
  sentence first, else the words of the kinds any game may write. An unknown kind shows its actor
  and content, never its key.
* **Tables**: consecutive PLAYER* ``sensor`` readings (and ``pgm_reading`` clue readings) of one
  reader become one small table; ``belief_table`` (the ``pgm`` block's posteriors) is one too, and
  so is any event the view's ``table`` hook makes one (MAgIC's ``belief`` questionnaire).
* **Seen by** (:func:`seen_by`): what a seat could see is exactly what the game let its agent
  observe (:func:`mas_agents.events.is_visible`, the rule ``Agent.observe`` applies): the public
  events and those whose ``visible_to`` names the seat. Events are in the order they happened, so
  the events before a seat's action are what it had seen when it acted. An event the harness keeps
  for itself (``visible_to == ["game"]``: MAgIC's ground-truth setup and the self-awareness answers,
  which carry the true role) is seen by no seat, not even by its actor.
* **Players** (:func:`players_panel`): seat, agent spec, the model the seat ran (:func:`seat_model`:
  ``config.json``'s ``seat_models``, else the spec's ``@MODEL``, else the run's ``model``) and role,
  as the view's ``seats`` hook reports them (MAgIC's game-theory seats: challenger or defender); in a
  hidden-role game (the view's ``hidden_roles``: Who is Spy, the murder mystery, Chameleon, Undercover) the roles, and a murder mystery's per-seat agent and model when the
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
from typing import Any, Mapping

from mas_agents.game.view import GameView, Table, vote_result_sentence, vote_sentence
from mas_agents.events import EVERYONE, is_visible
from mas_agents.utterance import quote
from mas_agents.web.readings import belief_table, clue_table, details, sensor_table
from mas_agents.web.views import view_of

#: What the pages and tests use from here, besides what is defined here: the players panel
#: (:mod:`mas_agents.web.panel`) and the run's view (:mod:`mas_agents.web.views`).
__all__ = [
    "Row",
    "heading_before",
    "layout",
    "load_calls",
    "load_events",
    "phase_headings",
    "rows",
    "seen_by",
    "sentence",
    "truth",
]

#: Kinds rendered as the game's headline moments (bold, own colour).
_MAJOR = {"accuse", "outcome", "vote_result", "foul", "guess", "pd_reveal", "pg_reveal"}
#: Phases of private planning: such an event joins the group being played (see the module doc).
_PLANNING = {"planning", "gameplay"}
#: Kinds merged into one table per reader when consecutive.
_READINGS = {"sensor", "pgm_reading"}

_T: dict[str, dict[str, str]] = {
    "en": {
        "setup": "Setup", "intro": "Introductions", "round": "Round {n}", "vote": "The vote", "end": "Outcome",
        "eval": "Evaluation", "after": "After the round: what each player concluded",
        "before": "Planning before the questions", "planning": "Planning",
        "ph_voting": "The vote", "ph_outcome": "Outcome", "ph_setup": "Setup", "ph_introduction": "Introductions",
        "ph_evaluation": "Evaluation", "nobody": "nobody", "abstained": "abstains",
    },
    "zh": {
        "setup": "准备", "intro": "自我介绍", "round": "第{n}轮", "vote": "投票", "end": "结果", "eval": "评测",
        "after": "本轮之后：每位玩家的结论", "before": "提问之前的计划", "planning": "计划",
        "ph_voting": "投票", "ph_outcome": "结果", "ph_setup": "准备", "ph_introduction": "自我介绍",
        "ph_evaluation": "评测", "nobody": "无人", "abstained": "弃权",
    },
}
#: Readable names of the planning kinds of the baselines (ThinkThrice, O-CoT, Werewolf).
_PLAN_LABEL = {"thinkthrice_timeline": "timeline", "thinkthrice_check": "consistency check",
               "ocot_reflection": "reflection", "werewolf_template": "question template",
               "werewolf_reflection": "reflection", "relations": "relationship map", "reasoning": "reasoning"}


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


def _t(lang: str, key: str, **kw: Any) -> str:
    return _T[lang][key].format(**kw)


def _title(view: GameView, lang: str, key: str) -> str | None:
    """The game's own title for ``key`` in ``lang``, else the web's, else None."""
    return (view.titles.get(lang) or {}).get(key) or _T[lang].get(key)


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
    if base in ("setup", "intro", "eval", "vote", "end"):
        return _title(view_of(game), lang, base) or base
    return base.replace("_", " ").capitalize()


def _phase_title(game: str, phase: str, group: str, lang: str) -> str:
    if phase == "_after":
        return _t(lang, "before" if group == "intro" else "after" if group.startswith("r") else "planning")
    return _title(view_of(game), lang, f"ph_{phase}") or phase.replace("_", " ").capitalize()


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
        out.append((g, _group_title(game, g, lang), f"{g}/{phases[i]}", _phase_title(game, phases[i], g.split("-")[0], lang)))
    return out



# ---------------------------------------------------------------------------------- sentences
def sentence(game: str, e: Mapping[str, Any], lang: str = "en", scenario: str = "") -> str:
    """The plain sentence of one event in ``lang`` (``"en"`` or ``"zh"``): the game's own
    (:attr:`mas_agents.game.view.GameView.sentence`, given ``scenario``: its variant), else the words of
    the kinds every game may write (``vote``, ``vote_result``, ``invalid``, ``reasoning``, the
    planner blocks' records, ``mcq``), built from the event's ``data`` (never a raw key or a Python
    dict). Unknown kinds: ``"<actor>: <content>"``."""
    hook = view_of(game).sentence
    if hook is not None:
        s = hook(e, lang, scenario)
        if s is not None:
            return s
    k, a = str(e.get("kind") or ""), str(e.get("actor") or "")
    c, d = str(e.get("content") or ""), dict(e.get("data") or {})
    zh = lang == "zh"
    if k == "start":
        return "游戏开始。" if zh else c
    if k == "vote" and "target" in d:
        return vote_sentence(e, lang)
    if k == "vote_result":
        return vote_result_sentence(d, lang)
    if k == "reasoning":
        what = {"describe": ("before describing", "描述之前"), "vote": ("before voting", "投票之前")}.get(
            str(d.get("for")), ("", ""))
        q = quote(c)
        return (f"{a} 的思考（{what[1]}）：{q}" if zh and what[1] else f"{a} 的思考：{q}" if zh
                else f"{a} thinks{' ' + what[0] if what[0] else ''}: {q}")
    if k == "invalid":
        errs = "; ".join(map(str, d.get("errors") or [])) or c
        act = d.get("action") or "act"
        return (f"{a} 的回答无法读取（{act}），视为弃权：{errs}" if zh
                else f"{a}'s reply could not be read ({act}); it counts as an abstention: {errs}")
    if k == "belief_table":
        return (f"{a} 的贝叶斯网络信念：{c}" if zh else f"{a}'s Bayesian-network belief: {c}")
    if k == "mcq":
        res = "" if d.get("correct") is None or c.endswith("-> (abstained)") else ((" (right)" if d["correct"] else " (wrong)") if not zh
                                                   else ("（正确）" if d["correct"] else "（错误）"))
        return (f"{a} 回答：{c}" if zh else f"{a} answers: {c}") + res
    if k in _PLAN_LABEL and a:
        return f"{a} 的{ {'reasoning': '思考'}.get(k, '记录')}：{c}" if zh else f"{a}'s {_PLAN_LABEL[k]}: {c}"
    if a and a != "game":   # a seat's words: one quoted utterance (mas_agents.utterance)
        return f"{a}：{quote(c)}" if zh else f"{a}: {quote(c)}"
    return c


# ---------------------------------------------------------------------------------- rows
def rows(events: list[dict[str, Any]], game: str, start: int = 0, lang: str = "en", scenario: str = "") -> list[Row]:
    """Display rows of ``events[start:]`` (see :class:`Row`), in the order written. Groups and
    phases are computed with every event in view, so rows fetched later (live) continue the
    headings; consecutive readings of one reader (``sensor``, ``pgm_reading``) become one row with
    a :class:`Table`."""
    places = layout(events, game, lang)
    view = view_of(game)
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
            table, text = sensor_table(run, lang), ""
        elif k == "pgm_reading":
            table, text = clue_table(run), ""
        elif k == "belief_table":
            drawn, table = belief_table(e, lang)
            text = drawn if drawn is not None else text
        elif view.table is not None:
            table = view.table(e)
        css = " ".join(x for x in (f"k-{k}", "major" if k in _MAJOR else "", "foul" if d.get("foul") else "",
                                   ) if x)
        g, gt, ph, pt = places[i]
        calls = list(dict.fromkeys(str(x) for r in run for x in r.get("llm_call_ids") or []))
        steps = [int(r.get("step", i + n)) for n, r in enumerate(run)]
        out.append(Row(step=steps[0], section=gt, actor=str(e.get("actor", "")), kind=k, round=int(e.get("round") or 0),
                       text=text, private=private, owner=", ".join(vis) if private else "", css=css,
                       details="" if table else details(e, private), calls=calls, group=g, group_title=gt, phase=ph,
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


def truth(events: list[dict[str, Any]], game: str, lang: str = "en", scenario: str = "") -> list[str]:
    """What the game hid, as lines for the end of a replay (in ``lang``): its
    :attr:`mas_agents.game.view.GameView.truth` (the murderer(s) and roles, the words and the spy, the
    MAgIC roles and secret and the outcome as a sentence; ``scenario``: its variant); [] while the
    game has not ended (no ``accuse`` nor ``outcome`` event) or when the game hides nothing."""
    if not any(e.get("kind") in ("accuse", "outcome") for e in events):
        return []
    hook = view_of(game).truth
    return list(hook(events, lang, scenario)) if hook else []


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
