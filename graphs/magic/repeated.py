"""The repeated-game graph of MAgIC's prisoner's dilemma and public good (§3, Appendix A): hidden
simultaneous moves revealed each round, five rounds. Split from
:mod:`mas_agents.graphs.magic.graph` (issue 51 item 6), which builds it by kind.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from mas_agents.events import make_event
from mas_agents.graphs.magic import rules as R
from mas_agents.graphs.magic.runtime import MagicRuntime, MagicState, _invalid, _setup_events


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
            forced = R.pg_forced(left)
            if forced is not None:   # nothing left: the player is not asked (rules.pg_forced)
                ev = make_event(phase="moves", actor=p, kind="contribution", round=rnd, visible_to=[p],
                                content=f"{forced} (no points left)",
                                data={"round": rnd, "amount": forced, "forced": True})
                return {"moves": [{"round": rnd, "player": p, "value": forced, "forced": True}], "events": [ev]}
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
            forced = [m["player"] for m in state["moves"] if m["round"] == rnd and m.get("forced")]
            msg = f"Round {rnd}: " + ", ".join(f"{p} put in {amounts[p]}" + (" (no points left)" if p in forced else "")
                                               for p in rt.players) + f" (pool now {total})."
            data = {"round": rnd, "amounts": amounts, "pool": sum(amounts.values()), "pool_total": total}
            if forced:   # who had nothing left and was not asked (rules.pg_forced)
                data["forced"] = [p for p in rt.players if p in forced]
            ev = make_event(phase="moves", actor="game", kind="pg_reveal", round=rnd, content=msg, data=data)
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
