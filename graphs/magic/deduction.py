"""The deduction graph of MAgIC's Chameleon and Undercover (MAgIC §3, Appendix A): the clue
schedule with the belief questionnaire, the private vote, the tally and the chameleon's guess.
Split from :mod:`mas_agents.graphs.magic.graph` (issue 51 item 6), which builds it by kind.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from mas_agents.events import make_event, vote_result_data
from mas_agents.graphs.magic import rules as R
from mas_agents.graphs.magic.runtime import MagicRuntime, MagicState, _invalid, _role_name, _setup_events
from mas_agents.utterance import quote


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
                        content=(f"{ch} guesses {quote(act.value) if act.valid else 'nothing'}: "
                                 f"{'right' if ok else 'wrong'}."),
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
