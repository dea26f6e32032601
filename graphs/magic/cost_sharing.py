"""The cost-sharing graph of MAgIC (§3, Appendix A): proposals, a public ballot, up to five rounds.
Split from :mod:`mas_agents.graphs.magic.graph` (issue 51 item 6), which builds it by kind.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from mas_agents.events import make_event
from mas_agents.graphs.magic import rules as R
from mas_agents.graphs.magic.prompts import AIRLINES
from mas_agents.graphs.magic.runtime import MagicRuntime, MagicState, _invalid, _setup_events


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
