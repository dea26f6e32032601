"""What every MAgIC graph shares: the graph state (:class:`MagicState`), the game's runtime outside
the state (:class:`MagicRuntime`: agents, setting, seats), the public record as a player sees it
(:func:`history`) and the setup and invalid-move events. Split from
:mod:`mas_agents.graphs.magic.graph` (issue 51 item 6).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

from mas_agents.planners.base import Action, ActionRequest
from mas_agents.agents import Agent
from mas_agents.events import is_visible, make_event
from mas_agents.graphs.magic import rules as R
from mas_agents.graphs.magic.prompts import AIRLINES, RULES
from mas_agents.utterance import NOTE, host_line, utterance


class MagicState(TypedDict, total=False):
    """Graph state (JSON-able). ``events`` and ``moves`` grow through ``operator.add``."""

    events: Annotated[list[dict], operator.add]
    moves: Annotated[list[dict], operator.add]   # per-round simultaneous moves {round, player, value}
    turn: int                                   # next index in the clue schedule
    round: int
    spoken: list[str]                           # speakers so far (replay rule)
    latest: dict                                # cost sharing: each player's latest valid proposal
    outcome: dict | None


@dataclass
class MagicRuntime:
    """Everything a game needs that is not state.

    Attributes:
        scenario: one of :data:`mas_agents.graphs.magic.events.SCENARIOS`.
        setting: the loaded setting (:mod:`mas_agents.graphs.magic.dataset`).
        agents: name -> agent (``Player 1..3``).
        challenger_seats: seats played by the challenger spec.
        side: the challenger's side (``chameleon``, ``non_chameleon``, ``undercover``, ``civilian``,
            ``test_seat``).
        replay_openings: replay recorded clues of defenders seated before the challenger.
    """

    scenario: str
    setting: Any
    agents: dict[str, Agent]
    challenger_seats: list[str]
    side: str
    replay_openings: bool = False
    players: list[str] = field(default_factory=lambda: list(R.PLAYERS))
    stats: dict[str, int] = field(default_factory=lambda: {"invalid_actions": 0, "model_actions": 0})

    # -- roles and private facts -----------------------------------------------------------
    def roles(self) -> dict[str, str]:
        if self.scenario in ("chameleon", "undercover"):
            return dict(self.setting.roles)
        return {p: "player" for p in self.players}

    def hidden(self) -> str | None:
        """The chameleon / undercover seat, or None."""
        if self.scenario == "chameleon":
            return self.setting.chameleon
        if self.scenario == "undercover":
            return self.setting.undercover
        return None

    def private_info(self, p: str) -> str:
        s = self.setting
        if self.scenario == "chameleon":
            if p == s.chameleon:
                return f"You are {p}. The topic is {s.topic}. You are the chameleon: you do not know the secret word."
            return f"You are {p}. The topic is {s.topic}. The secret word is \"{s.code}\". You are not the chameleon."
        if self.scenario == "undercover":
            return f"You are {p}. Your word is \"{s.words[p]}\"."
        if self.scenario == "cost_sharing":
            return f"You are {p} and represent {AIRLINES[p]}.\n{s.topic}"
        return f"You are {p}."

    def system(self) -> str:
        s = self.setting
        extra = dict(s.payoffs) if self.scenario == "prisoners_dilemma" else {}
        if self.scenario == "public_good":
            extra["multiplier"] = s.multiplier
        return RULES[self.scenario].format(players=", ".join(self.players), **extra) + "\n" + NOTE["en"]

    def context(self, p: str) -> dict:
        """Structured facts for the agent's blocks (never the hidden role)."""
        s = self.setting
        ctx: dict[str, Any] = {}
        if self.scenario == "chameleon":
            ctx["topic"] = s.topic
            if p != s.chameleon:
                ctx["word"] = s.code
        elif self.scenario == "undercover":
            ctx["word"] = s.words[p]
        elif self.scenario == "prisoners_dilemma":
            ctx["payoffs"] = dict(s.payoffs)
        elif self.scenario == "public_good":
            ctx["multiplier"] = s.multiplier
        return ctx

    # -- acting ----------------------------------------------------------------------------
    def act(self, p: str, events: list[dict], kind: str, task: str, *, avoid: list[str] | None = None,
            **kw: Any):
        """Let ``p`` read its visible events, then answer one request built from ``task``.

        Returns ``(action, planning events)``, or ``(action, planning events, retried)`` when
        ``avoid`` is given (words the agent checks its own reply for, see
        :meth:`mas_agents.agents.Agent.act_avoiding`).
        """
        agent = self.agents[p]
        agent.observe(events)
        prompt = f"What has happened so far:\n{history(events, p)}\n\n{self.private_info(p)}\n{task}"
        ctx = {**self.context(p), **kw.pop("context", {})}
        request = ActionRequest(kind=kind, actor=p, prompt=prompt, context=ctx, game=R.GAMES[self.scenario], **kw)
        if avoid is not None:
            action, retried = agent.act_avoiding(request, avoid, phase="gameplay")
        else:
            action, retried = agent.act(request, phase="gameplay"), None
        self.stats["model_actions"] += 1
        if not action.valid:
            self.stats["invalid_actions"] += 1
        if avoid is not None:
            return action, agent.drain_events(), retried
        return action, agent.drain_events()

    def schedule(self) -> list[tuple[int, str]]:
        """The clue turns ``(clue round, speaker)`` of the deduction games."""
        rounds = R.CHAMELEON_CLUE_ROUNDS if self.scenario == "chameleon" else R.UNDERCOVER_CLUE_ROUNDS
        return [(r, p) for r in range(1, rounds + 1) for p in self.players]

    def recorded_clue(self, p: str, rnd: int) -> str | None:
        s = self.setting
        if self.scenario == "chameleon":
            return s.clues.get(p) if rnd == 1 else None
        clues = s.clues.get(p) or []
        return clues[rnd - 1] if len(clues) >= rnd else None


def history(events: list[dict], me: str) -> str:
    """The public record as ``me`` sees it, one line per event ('(nothing yet)' when empty): a
    clue, the one thing a player says in its own words, as one quoted line after its name
    (``Player 2: «...»``), every other line as the game's, ``Host: ...``
    (:mod:`mas_agents.utterance`, issue 57 E1: no clue can pass for the game or another player)."""
    lines = []
    for e in events:
        if not is_visible(e, me) or e["kind"] not in _SHOWN:
            continue
        lines.append(_SHOWN[e["kind"]](e))
    return "\n".join(lines) or "(nothing yet)"


_SHOWN = {
    "clue": lambda e: (utterance(e["actor"], e["content"]) if (e.get("data") or {}).get("text", e["content"])
                       else host_line(f"{e['actor']} gave no clue.")),
    "vote_result": lambda e: host_line(e["content"]),
    "guess": lambda e: host_line(e["content"]),
    "proposal": lambda e: host_line(f"Round {e['round']}: {e['actor']} proposes {e['content']}"),
    "proposal_vote": lambda e: host_line(f"Round {e['round']}: {e['actor']} votes for {e['content']}"),
    "pd_reveal": lambda e: host_line(e["content"]),
    "pg_reveal": lambda e: host_line(e["content"]),
}


def _setup_events(rt: MagicRuntime) -> list[dict]:
    s = rt.setting
    data: dict[str, Any] = {"scenario": rt.scenario, "setting_id": s.id, "players": rt.players,
                            "challenger_seats": rt.challenger_seats, "roles": rt.roles(), "side": rt.side}
    if rt.scenario == "chameleon":
        data.update(topic=s.topic, code=s.code)
    elif rt.scenario == "undercover":
        data.update(words=dict(s.words))
    elif rt.scenario == "prisoners_dilemma":
        data.update(payoffs=dict(s.payoffs))
    elif rt.scenario == "public_good":
        data.update(multiplier=s.multiplier)
    elif rt.scenario == "cost_sharing":
        data.update(fee=s.fee)
    # ground truth: visible to no player, read by the metrics only
    evs = [make_event(phase="setup", actor="game", kind="setup", content=f"{rt.scenario} setting {s.id}",
                      visible_to=["game"], data=data)]
    for p in rt.players:
        evs.append(make_event(phase="setup", actor="game", kind="private_info", content=rt.private_info(p),
                              visible_to=[p]))
    return evs


def _invalid(action: Action, rnd: int) -> list[dict]:
    if action.valid:
        return []
    return [make_event(phase="gameplay", actor=action.actor, kind="invalid", round=rnd, visible_to=[action.actor],
                       content=f"({action.kind} abstained: {'; '.join(action.errors)})", llm_call_ids=action.call_ids,
                       data={"action": action.kind, "raw": action.raw, "errors": action.errors})]


def _role_name(scenario: str, role: str) -> str:
    return {"non_chameleon": "not the chameleon", "chameleon": "the chameleon", "undercover": "the undercover",
            "civilian": "a civilian"}[role]
