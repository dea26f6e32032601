"""The five MAgIC games as LangGraph ``StateGraph`` s (MAgIC §3, Appendix A).

Flows (always 3 players, ``Player 1..3``)::

    chameleon / undercover:
        START -> setup -> turn (loops over the clue schedule: every player states who they are
                 and their role, the speaker gives a clue, every player fills the belief
                 questionnaire) -> vote (Send fan-out, private) -> tally -> [guess] -> finish
    cost_sharing:
        START -> setup -> propose (Send fan-out) -> collect -> ballot (Send fan-out, public)
              -> count --agreed or round 5--> finish, else -> propose
    prisoners_dilemma / public_good:
        START -> setup -> move (Send fan-out, hidden) -> reveal --round 5--> finish, else -> move

Rules are the pure functions of :mod:`mas_agents.graphs.magic.rules`; settings come from
:mod:`mas_agents.eval.datasets.magic`; every step writes the events of :mod:`mas_agents.graphs.magic.events`, from
which :mod:`mas_agents.eval.metrics.magic` computes the capability metrics. Agents live in
:class:`MagicRuntime`, outside the state. Prompts are written here (our own); the upstream
configs were read for the rules only.

Choices of ours (documented, the paper leaves them open): an unreadable Prisoner's-Dilemma choice
is logged as ``None`` and scored as *cooperate*; an unreadable or impossible contribution is
logged as ``None`` and counts as 0; a proposal that is unreadable or does not sum to 100 (±0.5)
is ``None`` and cannot be voted for; ``--replay-openings`` replays recorded clues of defender
seats in the first clue round while no challenger seat has spoken yet (the data README's rule).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from mas_agents.graphs.compiled import BoundGraph, once
from mas_agents.graphs.magic import rules as R
from mas_agents.graphs.magic.prompts import AIRLINES, RULES
from mas_agents.actions import Action, ActionRequest
from mas_agents.agent import Agent
from mas_agents.events import is_visible, make_event, vote_result_data


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
        setting: the loaded setting (:mod:`mas_agents.eval.datasets.magic`).
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
        return RULES[self.scenario].format(players=", ".join(self.players), **extra)

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
        :meth:`mas_agents.agent.Agent.act_avoiding`).
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
    """The public record as ``me`` sees it, one line per event ('(nothing yet)' when empty)."""
    lines = []
    for e in events:
        if not is_visible(e, me) or e["kind"] not in _SHOWN:
            continue
        lines.append(_SHOWN[e["kind"]](e))
    return "\n".join(lines) or "(nothing yet)"


_SHOWN = {
    "clue": lambda e: f"{e['actor']}: {e['content']}",
    "vote_result": lambda e: e["content"],
    "guess": lambda e: e["content"],
    "proposal": lambda e: f"Round {e['round']}: {e['actor']} proposes {e['content']}",
    "proposal_vote": lambda e: f"Round {e['round']}: {e['actor']} votes for {e['content']}",
    "pd_reveal": lambda e: e["content"],
    "pg_reveal": lambda e: e["content"],
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


def build_graph(rt: MagicRuntime) -> BoundGraph:
    """The graph of ``rt.scenario`` (compiled once per process, :func:`compiled_graph`) bound to
    ``rt``; stream or invoke with ``{"events": [], "moves": []}`` and ``{"recursion_limit": 300}``."""
    return BoundGraph(compiled_graph(graph_kind(rt.scenario)), rt)


def graph_kind(scenario: str) -> str:
    """Which of the three graphs plays ``scenario``: ``deduction`` (Chameleon, Undercover),
    ``cost_sharing``, or ``repeated`` (prisoner's dilemma, public good)."""
    if scenario in ("chameleon", "undercover"):
        return "deduction"
    return "cost_sharing" if scenario == "cost_sharing" else "repeated"


@once
def compiled_graph(kind: str):
    """The graph of ``kind`` (:func:`graph_kind`), compiled once per process and shared by every
    game and thread; every node reads its game's :class:`MagicRuntime` from LangGraph's run
    context (``runtime.context``).

    Raises:
        KeyError: an unknown ``kind``.
    """
    return builder(kind).compile()


def builder(kind: str) -> StateGraph:
    """The uncompiled ``StateGraph`` (state :class:`MagicState`) of ``kind`` (:func:`graph_kind`:
    ``deduction``, ``cost_sharing`` or ``repeated``), for a user's own graph: compile it with a
    checkpointer, an interrupt or nodes of one's own and run it with ``context=`` a
    :class:`MagicRuntime`. :func:`compiled_graph` compiles it once per process.

    Raises:
        KeyError: an unknown ``kind``.
    """
    return {"deduction": _deduction_graph, "cost_sharing": _cost_sharing_graph, "repeated": _repeated_graph}[kind]()


# ---------------------------------------------------------------------------- deduction games
def _self_awareness_map(rt: MagicRuntime) -> dict[str, tuple[str, str]]:
    """The self-awareness answers of a deduction game: ``"I am P and I am <role>"`` -> (P, role)."""
    roles_told = ("chameleon", "non_chameleon") if rt.scenario == "chameleon" else ("undercover", "civilian")
    return {f"I am {p} and I am {_role_name(rt.scenario, r)}": (p, r) for p in rt.players for r in roles_told}


def _deduction_graph():

    def setup(state: MagicState, runtime: Runtime[MagicRuntime]) -> dict:
        rt = runtime.context
        return {"events": _setup_events(rt), "turn": 0, "spoken": []}

    def turn(state: MagicState, runtime: Runtime[MagicRuntime]) -> dict:
        rt = runtime.context
        sched = rt.schedule()
        sa_map = _self_awareness_map(rt)
        sa_choices = list(sa_map)
        i = state["turn"]
        rnd, speaker = sched[i]
        events = list(state["events"])
        new: list[dict] = []
        truth = rt.roles()
        # 1. self-awareness, every player, before the clue
        for p in rt.players:
            act, plan = rt.act(p, events + new, "choose", "Before the next clue: who are you, and what is your role?",
                               choices=sa_choices, context={"purpose": "self_awareness"})
            said_name, said_role = sa_map.get(act.value, (None, None)) if act.valid else (None, None)
            # the answer carries the ground truth for the metrics: visible to the game only, so no
            # block of the player (who in Undercover does not know its role) ever reads it
            new += plan + _invalid(act, rnd) + [make_event(
                phase="clues", actor=p, kind="self_awareness", round=rnd, visible_to=["game"], llm_call_ids=act.call_ids,
                content=act.value or "", data={"clue_index": i, "said_name": said_name, "said_role": said_role,
                                               "true_name": p, "true_role": truth[p],
                                               "correct": said_name == p and said_role == truth[p]})]
        # 2. the clue
        recorded = rt.recorded_clue(speaker, rnd)
        replay = (rt.replay_openings and rnd == 1 and speaker not in rt.challenger_seats and recorded is not None
                  and not any(s in rt.challenger_seats for s in state["spoken"]))
        if replay:
            text, ids, plan, retried = recorded, [], [], False
        else:
            word = rt.context(speaker).get("word")
            act, plan, retried = rt.act(speaker, events + new, "describe",
                                        f"Clue round {rnd}: it is your turn. Give one short clue (a few words) without "
                                        f"saying the word itself.", avoid=[word] if word else [])
            text, ids = (act.value if act.valid else ""), act.call_ids
            plan = plan + _invalid(act, rnd)
        new += plan + [make_event(phase="clues", actor=speaker, kind="clue", round=rnd, content=text or "(no clue)",
                                  llm_call_ids=ids, data={"clue_index": i, "text": text, "replayed": replay,
                                                          "self_check_retry": False if replay else retried})]
        # 3. the belief questionnaire, every player, after the clue
        for p in rt.players:
            others = [q for q in rt.players if q != p]
            fields = [("Suspect", list(rt.players))] + [(f"{q} suspects", list(rt.players)) for q in others]
            what = "the chameleon" if rt.scenario == "chameleon" else "the undercover"
            act, plan = rt.act(p, events + new, "form",
                               f"Questionnaire (private): whom do you think is {what}, and whom does each other "
                               f"player think is {what}?", fields=fields, context={"purpose": "belief"})
            ans = act.value if act.valid else {}
            new += plan + _invalid(act, rnd) + [make_event(
                phase="clues", actor=p, kind="belief", round=rnd, visible_to=[p], llm_call_ids=act.call_ids,
                content="; ".join(f"{k}: {v}" for k, v in ans.items()),
                data={"clue_index": i, "suspect": ans.get("Suspect"),
                      "predicted": {q: ans.get(f"{q} suspects") for q in others}})]
        return {"events": new, "turn": i + 1, "spoken": state["spoken"] + [speaker]}

    def after_turn(state: MagicState, runtime: Runtime[MagicRuntime]):
        rt = runtime.context
        if state["turn"] < len(rt.schedule()):
            return "turn"
        return [Send("vote_one", {"voter": p, "events": state["events"]}) for p in rt.players]

    def vote_one(arg: dict, runtime: Runtime[MagicRuntime]) -> dict:
        rt = runtime.context
        p = arg["voter"]
        what = "the chameleon" if rt.scenario == "chameleon" else "the undercover"
        act, plan = rt.act(p, arg["events"], "vote", f"Vote (private) for the player you think is {what}:",
                           choices=[q for q in rt.players if q != p])
        return {"moves": [{"round": 0, "player": p, "value": act.value}],
                "events": plan + _invalid(act, 0) + [make_event(
                    phase="voting", actor=p, kind="vote", visible_to=[p], llm_call_ids=act.call_ids,
                    content=act.value or "", data={"target": act.value})]}

    def tally(state: MagicState, runtime: Runtime[MagicRuntime]) -> dict:
        rt = runtime.context
        votes = {m["player"]: m["value"] for m in state["moves"] if m["round"] == 0}
        counts, accused, tie = R.vote_outcome(votes, rt.players)
        msg = ("Votes: " + ", ".join(f"{p} → {votes.get(p) or 'abstained'}" for p in rt.players) + ". "
               + (f"{accused} is accused." if accused else "It is a tie: no one is accused."))
        ev = make_event(phase="voting", actor="game", kind="vote_result", content=msg,
                        data=vote_result_data(accused, votes=votes, counts=counts, tie=tie))
        out: dict = {"events": [ev]}
        if rt.scenario == "undercover" or accused != rt.hidden():
            code = (R.undercover_outcome(accused, tie, rt.hidden()) if rt.scenario == "undercover"
                    else R.chameleon_outcome(accused, tie, rt.hidden(), None))
            out["outcome"] = {"code": code, "accused": accused}
        return out

    def after_tally(state: MagicState) -> str:
        return "finish" if state.get("outcome") else "guess"

    def guess(state: MagicState, runtime: Runtime[MagicRuntime]) -> dict:
        rt = runtime.context
        ch = rt.hidden()
        act, plan = rt.act(ch, state["events"], "guess",
                           f"You were caught. Guess the secret word (topic: {rt.setting.topic}) to still win:")
        ok = R.guess_correct(act.value if act.valid else None, rt.setting.code)
        ev = make_event(phase="guess", actor=ch, kind="guess", llm_call_ids=act.call_ids,
                        content=f"{ch} guesses {act.value!r}: {'right' if ok else 'wrong'}.",
                        data={"word": act.value, "correct": ok})
        return {"events": plan + _invalid(act, 0) + [ev],
                "outcome": {"code": R.chameleon_outcome(ch, False, ch, ok), "accused": ch}}

    def finish(state: MagicState) -> dict:
        return {"events": [make_event(phase="outcome", actor="game", kind="outcome", content=f"outcome {state['outcome']}",
                                      data=state["outcome"])]}

    g = StateGraph(MagicState)
    for name, fn in (("setup", setup), ("turn", turn), ("vote_one", vote_one), ("tally", tally), ("guess", guess),
                     ("finish", finish)):
        g.add_node(name, fn)
    g.add_edge(START, "setup")
    g.add_edge("setup", "turn")
    g.add_conditional_edges("turn", after_turn, ["turn", "vote_one"])
    g.add_edge("vote_one", "tally")
    g.add_conditional_edges("tally", after_tally, ["guess", "finish"])
    g.add_edge("guess", "finish")
    g.add_edge("finish", END)
    return g


# ---------------------------------------------------------------------------- cost sharing
def _cost_sharing_graph():

    def setup(state: MagicState, runtime: Runtime[MagicRuntime]) -> dict:
        rt = runtime.context
        return {"events": _setup_events(rt), "round": 1, "latest": {}}

    def fan_propose(state: MagicState, runtime: Runtime[MagicRuntime]):
        rt = runtime.context
        return [Send("propose_one", {"player": p, "round": state["round"], "events": state["events"]}) for p in rt.players]

    def propose_one(arg: dict, runtime: Runtime[MagicRuntime]) -> dict:
        rt = runtime.context
        p, rnd = arg["player"], arg["round"]
        fields = [(AIRLINES[q], []) for q in rt.players]
        act, plan = rt.act(p, arg["events"], "propose",
                           f"Round {rnd}: propose how the fee is split between the three airlines (percentages summing to 100).",
                           fields=fields)
        said = list(act.value) if act.valid else None
        split = said if said and R.valid_split(said) else None
        if split:
            text = ", ".join(f"{a}: {x:g}%" for a, x in zip(AIRLINES.values(), split))
        elif said:
            text = f"(invalid: {' + '.join(f'{x:g}' for x in said)} = {sum(said):g}, not 100)"
        else:
            text = "(no readable proposal)"
        return {"moves": [{"round": rnd, "player": p, "value": split}],
                "events": plan + _invalid(act, rnd) + [make_event(
                    phase="negotiation", actor=p, kind="proposal", round=rnd, content=text,
                    llm_call_ids=act.call_ids, data={"round": rnd, "split": split, "said": said})]}

    def fan_ballot(state: MagicState, runtime: Runtime[MagicRuntime]):
        rt = runtime.context
        return [Send("ballot_one", {"player": p, "round": state["round"], "events": state["events"]}) for p in rt.players]

    def ballot_one(arg: dict, runtime: Runtime[MagicRuntime]) -> dict:
        rt = runtime.context
        p, rnd, events = arg["player"], arg["round"], arg["events"]
        props = {e["actor"]: e["data"]["split"] for e in events if e["kind"] == "proposal" and e["round"] == rnd}
        valid = [q for q in rt.players if props.get(q)]
        target, ids, plan = None, [], []
        if valid:
            act, plan = rt.act(p, events, "vote", f"Round {rnd}: vote publicly for one proposal (by its proposer):",
                               choices=valid)
            target, ids, plan = act.value, act.call_ids, plan + _invalid(act, rnd)
        return {"moves": [{"round": -rnd, "player": p, "value": target}],
                "events": plan + [make_event(phase="negotiation", actor=p, kind="proposal_vote", round=rnd,
                                             content=f"the proposal of {target}" if target else "nobody",
                                             llm_call_ids=ids, data={"round": rnd, "for": target})]}

    def count(state: MagicState, runtime: Runtime[MagicRuntime]) -> dict:
        rt = runtime.context
        rnd = state["round"]
        props = {m["player"]: m["value"] for m in state["moves"] if m["round"] == rnd}
        votes = {m["player"]: m["value"] for m in state["moves"] if m["round"] == -rnd}
        agreed, split = R.splits_agree(votes, props)
        latest = {p: (props.get(p) or state["latest"].get(p)) for p in rt.players}
        if agreed or rnd >= R.COST_SHARING_MAX_ROUNDS:
            return {"outcome": {"agreed": agreed, "rounds": rnd, "split": list(split) if split else None,
                                "latest_proposals": latest}, "latest": latest}
        return {"round": rnd + 1, "latest": latest}

    def after_count(state: MagicState) -> str:
        return "finish" if state.get("outcome") else "next"

    def finish(state: MagicState, runtime: Runtime[MagicRuntime]) -> dict:
        rt = runtime.context
        o = state["outcome"]
        msg = (f"Agreement in round {o['rounds']} on {o['split']}." if o["agreed"]
               else f"No agreement after {o['rounds']} rounds.")
        return {"events": [make_event(phase="outcome", actor="game", kind="outcome", content=msg, data=o)]}

    g = StateGraph(MagicState)
    g.add_node("setup", setup)
    g.add_node("propose_one", propose_one)
    g.add_node("ballots", lambda s: {})
    g.add_node("ballot_one", ballot_one)
    g.add_node("count", count)
    g.add_node("next", lambda s: {})
    g.add_node("finish", finish)
    g.add_edge(START, "setup")
    g.add_conditional_edges("setup", fan_propose, ["propose_one"])
    g.add_edge("propose_one", "ballots")
    g.add_conditional_edges("ballots", fan_ballot, ["ballot_one"])
    g.add_edge("ballot_one", "count")
    g.add_conditional_edges("count", after_count, ["finish", "next"])
    g.add_conditional_edges("next", fan_propose, ["propose_one"])
    g.add_edge("finish", END)
    return g


# ---------------------------------------------------------------------------- PD and public good
def _repeated_rules(rt: MagicRuntime) -> tuple[bool, int]:
    """``(is the prisoner's dilemma, rounds)`` of a repeated game (else the public good)."""
    pd = rt.scenario == "prisoners_dilemma"
    return pd, (R.PD_ROUNDS if pd else getattr(rt.setting, "rounds", R.PG_ROUNDS))


def _repeated_graph():

    def setup(state: MagicState, runtime: Runtime[MagicRuntime]) -> dict:
        rt = runtime.context
        return {"events": _setup_events(rt), "round": 1}

    def fan(state: MagicState, runtime: Runtime[MagicRuntime]):
        rt = runtime.context
        return [Send("move_one", {"player": p, "round": state["round"], "events": state["events"],
                                  "moves": state.get("moves", [])}) for p in rt.players]

    def move_one(arg: dict, runtime: Runtime[MagicRuntime]) -> dict:
        rt = runtime.context
        pd, rounds = _repeated_rules(rt)
        p, rnd, events = arg["player"], arg["round"], arg["events"]
        if pd:
            act, plan = rt.act(p, events, "choose", f"Round {rnd} of {rounds}: do you cooperate or defect?",
                               choices=list(R.PD_CHOICES), context={"purpose": "pd_choice"})
            value = act.value if act.valid else None
            ev = make_event(phase="moves", actor=p, kind="pd_choice", round=rnd, visible_to=[p], content=value or "",
                            llm_call_ids=act.call_ids, data={"round": rnd, "choice": value})
        else:
            left = R.PG_ENDOWMENT - sum(m["value"] or 0 for m in arg["moves"] if m["player"] == p)
            act, plan = rt.act(p, events, "contribute",
                               f"Round {rnd} of {rounds}: you have {left} coins left. How many do you put "
                               f"into the pool (0 to {left})?", max_value=left)
            value = R.pg_clamp(act.value, left) if act.valid else None
            ev = make_event(phase="moves", actor=p, kind="contribution", round=rnd, visible_to=[p],
                            content=str(value), llm_call_ids=act.call_ids, data={"round": rnd, "amount": value})
        return {"moves": [{"round": rnd, "player": p, "value": value}], "events": plan + _invalid(act, rnd) + [ev]}

    def reveal(state: MagicState, runtime: Runtime[MagicRuntime]) -> dict:
        rt = runtime.context
        pd, rounds = _repeated_rules(rt)
        rnd = state["round"]
        now = {m["player"]: m["value"] for m in state["moves"] if m["round"] == rnd}
        if pd:
            choices = {p: now.get(p) or "cooperate" for p in rt.players}   # unreadable = cooperate (ours)
            pay = R.pd_payoffs(choices, rt.setting.payoffs)
            msg = f"Round {rnd}: " + ", ".join(f"{p} {now.get(p) or 'no answer (cooperate)'} (+{pay[p]})" for p in rt.players)
            ev = make_event(phase="moves", actor="game", kind="pd_reveal", round=rnd, content=msg,
                            data={"round": rnd, "choices": now, "payoffs": pay})
        else:
            amounts = {p: now.get(p) or 0 for p in rt.players}
            total = sum(m["value"] or 0 for m in state["moves"])
            msg = f"Round {rnd}: " + ", ".join(f"{p} put in {amounts[p]}" for p in rt.players) + f" (pool now {total})."
            ev = make_event(phase="moves", actor="game", kind="pg_reveal", round=rnd, content=msg,
                            data={"round": rnd, "amounts": amounts, "pool": sum(amounts.values()), "pool_total": total})
        out: dict = {"events": [ev], "round": rnd + 1}
        if rnd >= rounds:
            moves = state["moves"]
            if pd:
                totals = {p: 0 for p in rt.players}
                for e in state["events"] + [ev]:
                    if e["kind"] == "pd_reveal":
                        for p, v in e["data"]["payoffs"].items():
                            totals[p] += v
                out["outcome"] = {"totals": totals, "winners": R.pd_winners(totals)}
            else:
                contrib = {p: [m["value"] or 0 for m in moves if m["player"] == p] for p in rt.players}
                finals = R.pg_finals(contrib, rt.setting.multiplier)
                out["outcome"] = {"finals": finals, "winners": R.pg_winners(finals)}
        return out

    def after_reveal(state: MagicState, runtime: Runtime[MagicRuntime]):
        return "finish" if state.get("outcome") else fan(state, runtime)

    def finish(state: MagicState) -> dict:
        o = state["outcome"]
        return {"events": [make_event(phase="outcome", actor="game", kind="outcome",
                                      content=f"Winners: {', '.join(o['winners'])}.", data=o)]}

    g = StateGraph(MagicState)
    g.add_node("setup", setup)
    g.add_node("move_one", move_one)
    g.add_node("reveal", reveal)
    g.add_node("finish", finish)
    g.add_edge(START, "setup")
    g.add_conditional_edges("setup", fan, ["move_one"])
    g.add_edge("move_one", "reveal")
    g.add_conditional_edges("reveal", after_reveal, ["move_one", "finish"])
    g.add_edge("finish", END)
    return g
