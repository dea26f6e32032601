"""The ``pgm_paper`` planner block: MAgIC's PGM-aware agent as the paper built it (arXiv 2311.08562
§4.1, §4.2, App. A.7).

Before a decision the agent has the model write its two-hop analysis in the paper's fixed form
(its own view of every other player, then each other player's view as it imagines it), one
free-text model call with purpose ``pgm_analysis`` (Eq. 10: the PGM estimated from the game
context); the decision is then made with that analysis and the paper's PGM Decision Prompt in
the prompt (Eq. 11). The texts are :mod:`mas_agents.planners.pgm_paper.templates`, chosen by what
:class:`mas_agents.planners.base.GameInfo` says (:func:`templates_for`), never by a game's name.

When an analysis is written: the analysis is a function of what the seat has seen. The block
counts the events the agent sees (:meth:`PaperPGMBlock.on_event`, fed by ``Agent.observe``, which
passes only the events visible to the seat); a request made after something new was seen gets a
new analysis, one made with nothing new since the last analysis reuses it (no call). In MAgIC's
deduction games every seat so writes one analysis after each clue (the paper's PGM per clue,
§5 RQ1 / Figure 5), and the self-awareness question, the clue and the vote that follow use it; in
the game-theory scenarios every move and every cost-sharing vote follows a reveal, so each has
its own analysis. Analysis calls per seat on this block and game (counted on fakes,
``tests/planners/test_pgm_paper.py``): Chameleon 4 (one before the first clue, one after each of
the 3 clues; 5 for a caught chameleon, whose guess follows the public vote), Undercover 7 (1 + 6
clues), Cost Sharing 2 per round played (its proposal and its vote), Prisoner's Dilemma and Public
Good 5 (one per round). Own private acts (a hidden move, the questionnaires' answers) are no news
to the seat and do not count as something new (:meth:`PaperPGMBlock.on_event`).

What the analysis call holds: the seat's system message (the game's rules), the events the seat
has seen, one line each (its private information included, planning events left out), and the
form. Nothing else: no event the seat could not see, no role it was not told (the seat's role is
read only where ``GameInfo.holder_knows_role`` says the rules tell it).

What the decision gets: a :class:`mas_agents.planners.base.Contribution` whose ``context`` is
:data:`~mas_agents.planners.pgm_paper.templates.HEADER`, the analysis text, and the decision prompt written
for this request kind and stance (e.g. a clue in Chameleon: raise the suspicion of the analysis's
target); on other kinds of request (a vote, the metrics' questionnaires) the analysis with
:data:`~mas_agents.planners.pgm_paper.templates.USE_ANALYSIS`. It is context, not instructions: the reply
keeps the game's format (a thought line before the tagged answer is what the agent adds for
instructions). The analysis is also a private ``pgm_analysis`` planning event (content: its
text; ``data``: template, source, stance, target, verdict; ``llm_call_ids``: the call), so the
run's transcript and the call viewer both show it.

Where no template fits (an investigation game such as the murder mystery; a request in another
language than English, ``request.context["lang"]``; a seat that is not among ``persona.players``)
the block contributes nothing and makes no call. A failed analysis call (``Agent.think`` returns
"") contributes nothing for that information state.
"""

from __future__ import annotations

import re
import threading
from typing import Any, Mapping

from mas_agents.planners.base import UNSPECIFIED, BlockAgent, Contribution, GameInfo
from mas_agents.utterance import quote
from mas_agents.planners.pgm_paper.templates import (ANALYSIS_HEAD, HEADER, NOTHING_YET, TEMPLATES, USE_ANALYSIS, Analysis,
                                          Decision, GameTemplates)

#: Completion budget of one analysis call (tokens): the three-player forms run 6-8 lines.
ANALYSIS_MAX_TOKENS = 256
#: Characters of one event's content in the analysis prompt (a clue is short; a cap keeps a long
#: reply of another game from crowding the form out).
EVENT_CHARS = 400


def templates_for(game: GameInfo) -> GameTemplates | None:
    """The templates for a game, from its capabilities (see :mod:`mas_agents.planners.pgm_paper.templates`).

    Returns None for a game the paper wrote no PGM prompt for (an investigation game, a game
    with neither a clue-found hidden role nor a repeated move).
    """
    if game.investigation:
        return None
    if game.hidden_role and game.word_clues:
        return TEMPLATES["told_role" if game.holder_knows_role else "untold_role"]
    if game.moves in ("shares", "binary", "amount"):
        return TEMPLATES[game.moves]
    return None


def _or(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def render_analysis_prompt(analysis: Analysis, *, me: str, players: list[str], role: str, word: str,
                           history: list[str]) -> str:
    """The user message of one analysis call.

    Args:
        analysis: the template.
        me: the seat; players: every seat, in seat order (``me`` among them).
        role: ``GameInfo.hidden_role`` ("" without one); word: the seat's own word ("" = none,
            and the intro sentences holding ``{word}`` are left out).
        history: what the seat has seen, one line each (empty: :data:`NOTHING_YET`).

    Returns:
        :data:`ANALYSIS_HEAD`, the history, the intro and the form, blank-line separated.
    """
    others = [p for p in players if p != me]
    fill = {"me": me, "role": role, "word": word, "others_or": _or(others), "players_or": _or(players)}
    intro = " ".join(s.format(**fill) for s in analysis.intro if word or "{word}" not in s)
    form = []
    for line in analysis.lines:
        if "{other}" not in line.text:
            form.append(line.text.format(**fill))
            continue
        for other in others:
            view = "; ".join(line.item.format(who=w) for w in [me] + [q for q in others if q != other])
            form.append(line.text.format(other=other, view=view, **fill))
    return "\n\n".join([ANALYSIS_HEAD, "\n".join(history) or NOTHING_YET, intro, "\n".join(form)])


def _labelled(text: str, label: str) -> str | None:
    """The rest of the first line of ``text`` that starts with ``label`` (case-insensitive, after
    list marks and spaces), or None."""
    want = label.lower()
    for line in text.splitlines():
        s = line.strip().lstrip("-*•>0123456789. ").strip()
        if s.lower().startswith(want):
            return s[len(label):].strip()
    return None


def _first_named(text: str, names: list[str]) -> str | None:
    """The name of ``names`` that ``text`` mentions first (whole names: ``Player 1`` is not found in
    ``Player 10``), or None."""
    best: tuple[int, int, str] | None = None
    for n in names:
        m = re.search(re.escape(n) + r"(?![\w])", text, re.I)
        if m and (best is None or (m.start(), -len(n)) < best[:2]):
            best = (m.start(), -len(n), n)
    return best[2] if best else None


def parse_analysis(text: str, analysis: Analysis, *, me: str, players: list[str], role: str) -> tuple[str | None, str | None]:
    """``(target, verdict)`` read back from an analysis reply.

    ``target``: the first player named on the template's ``target_label`` line (None without
    such a line or name). ``verdict``: ``yes`` / ``no`` / ``not sure`` on its ``verdict_label``
    line, or None.
    """
    fill = {"me": me, "role": role}
    target = verdict = None
    if analysis.target_label:
        rest = _labelled(text, analysis.target_label.format(**fill))
        target = _first_named(rest, players) if rest is not None else None
    if analysis.verdict_label:
        rest = _labelled(text, analysis.verdict_label.format(**fill))
        if rest is not None:
            r = rest.lower().lstrip(" <\"'")
            verdict = ("not sure" if r.startswith(("not sure", "unsure", "maybe")) else "yes" if r.startswith("yes")
                       else "no" if r.startswith("no") else None)
    return target, verdict


def event_line(event: Mapping[str, Any]) -> str:
    """One seen event as a line of the analysis prompt: ``Round r. Actor (kind): content`` (no
    round prefix in round 0), the content one quoted utterance (:func:`mas_agents.utterance.quote`);
    an event of the game itself is its content alone (a sentence, which names its round where it
    has one)."""
    content = " ".join(str(event.get("content") or "").split())[:EVENT_CHARS]
    actor, kind = str(event.get("actor") or ""), str(event.get("kind") or "")
    if actor in ("", "game"):
        return content
    rnd = int(event.get("round", 0) or 0)
    return f"{'Round %d. ' % rnd if rnd else ''}{actor} ({kind}): {quote(content)}"


class PaperPGMBlock:
    """MAgIC's PGM-aware agent as the paper built it (``name = "pgm_paper"``): the LLM writes the
    two-hop analysis, then decides with it. See the module docstring for when it calls the model
    and what each call holds.

    State per agent: the lines of the events seen so far and the last analysis (its text, call id,
    how many events it had seen, its stance and target).
    """

    name = "pgm_paper"

    def __init__(self) -> None:
        self.history: list[str] = []       # the events the seat has seen (non-planning), one line each
        self.analysis: dict[str, Any] | None = None
        self._lock = threading.RLock()

    # -- events ------------------------------------------------------------------------------
    def on_event(self, agent: BlockAgent, event: Mapping[str, Any]) -> None:
        """Keep one line per event the seat sees (``Agent.observe`` passes only visible ones);
        left out: planning events (this and other blocks' private notes, not game events) and the
        seat's own private acts after the set-up (its hidden move, its answers to the metrics'
        questionnaires), which tell it nothing new; a reveal or a public event carries what the
        others learn. What the set-up tells the seat alone (its word, its role) is kept."""
        if event.get("phase") == "planning":
            return
        if (event.get("actor") == agent.name and list(event.get("visible_to") or []) == [agent.name]
                and event.get("phase") != "setup"):
            return
        with self._lock:
            self.history.append(event_line(event))

    # -- contributing ------------------------------------------------------------------------
    def contribute(self, agent: BlockAgent, request: Any) -> Contribution | None:
        """The analysis (written now if the seat has seen something new) and the decision prompt
        for ``request``, as context; None where no template fits. Thread-safe (one agent's
        parallel requests wait for one analysis)."""
        with self._lock:
            return self._contribute(agent, request)

    def _game(self, agent: BlockAgent, request: Any) -> GameInfo:
        game = getattr(request, "game", UNSPECIFIED)
        if game is UNSPECIFIED:
            game = getattr(agent, "game", UNSPECIFIED)
        return game

    def _contribute(self, agent: BlockAgent, request: Any) -> Contribution | None:
        ctx = request.context
        if ctx.get("private") or ctx.get("lang", "en") != "en":
            return None
        game = self._game(agent, request)
        templates = templates_for(game)
        players = [str(p) for p in (getattr(agent.persona, "players", None) or [])]
        if templates is None or agent.name not in players or len(players) < 2:
            return None
        role = game.hidden_role or ""
        told_holder = bool(game.holder_knows_role and role and getattr(agent.persona, "role", "") == role)
        told_stance = "holder" if told_holder else "other"
        analysis = templates.analyses.get("any") or templates.analyses[told_stance]
        word = str(ctx.get("word") or "")
        if self.analysis is None or self.analysis["seen"] != len(self.history):
            self.analysis = self._write(agent, request, templates, analysis, players=players, role=role, word=word,
                                        told_stance=told_stance)
        a = self.analysis
        if not a["text"]:
            return None
        decision = next((d for d in templates.decisions.get(a["stance"], ()) if request.kind in d.kinds), None)
        text = f"{HEADER}\n{a['text']}\n\n{self._decision_text(decision, agent.name, role, a['target'])}"
        return Contribution(context=text, notes={"pgm_analysis": a["call_id"], "stance": a["stance"],
                                                 "target": a["target"],
                                                 "decision": decision.source if decision else None})

    @staticmethod
    def _decision_text(decision: Decision | None, me: str, role: str, target: str | None) -> str:
        if decision is None:
            return USE_ANALYSIS
        return decision.text.format(me=me, role=role, target=target or decision.target_fallback)

    def _write(self, agent: BlockAgent, request: Any, templates: GameTemplates, analysis: Analysis, *, players: list[str],
               role: str, word: str, told_stance: str) -> dict[str, Any]:
        """One analysis call (purpose ``pgm_analysis``), its stance and target, and its private
        ``pgm_analysis`` planning event."""
        me = agent.name
        prompt = render_analysis_prompt(analysis, me=me, players=players, role=role, word=word, history=self.history)
        text, call_id = agent.think(prompt, purpose="pgm_analysis", max_tokens=ANALYSIS_MAX_TOKENS, with_memory=False)
        text = (text or "").strip()
        target, verdict = parse_analysis(text, analysis, me=me, players=players, role=role)
        others = [p for p in players if p != me]
        if analysis.verdict_label:   # the seat was not told its role: its own verdict decides (A.7 Undercover)
            if verdict == "yes" or (verdict is None and target == me):
                stance, target = "holder", None
            elif verdict != "not sure" and target in others:
                stance = "other"
            else:
                stance, target = "unsure", None
        else:
            stance = "any" if "any" in templates.analyses else told_stance
            if target not in others:
                target = None
        out = {"text": text, "call_id": call_id, "seen": len(self.history), "stance": stance, "target": target,
               "verdict": verdict}
        agent.emit("pgm_analysis", text or "(no analysis: the call failed or the reply was empty)",
                   data={"template": templates.key, "row": templates.row, "source": analysis.source,
                         "stance": stance, "target": target, "verdict": verdict, "events_seen": len(self.history),
                         "request": request.kind},
                   round=int(request.context.get("round", 0) or 0), llm_call_ids=[call_id] if call_id else [])
        return out
