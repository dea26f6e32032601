"""A two-suspect interrogation, written as a user's own LangGraph graph with mas-agents' agents.

The game is not one of the project's: the night watchman of a museum was found dead; two
suspects, Ada Finch and Ben Hollis, are held; one of them did it and knows it (Ben). Two
inspectors question them in turn and each names the murderer at the end:

* Inspector Gray plays ``plain+player_star`` (PLAYER*'s sensors, questioning and suspect pruner),
* Inspector Moss plays ``plain+pgm`` (two-hop Bayesian beliefs over who is the murderer, read from
  the suspects' statements),
* the suspects play ``plain``.

Every decision is a node made by ``mas.node`` (an agent answering a request built from the
graph's state); the rest (the brief, whose answer comes next, the round counter, the verdict) is
ordinary LangGraph. Every model call is recorded in ``OUT/llm_calls.jsonl`` and the prompt log,
the events in ``OUT/events.jsonl``, the verdict in ``OUT/result.json`` and a readable
``OUT/transcript.md``.

Run it::

    python examples/interrogation.py --model local --out runs/interrogation     # the embedded SmolLM2
    python examples/interrogation.py --model openai:NAME --rounds 3              # any OpenAI-compatible server

What a seat is told is what the game shows it: each suspect's script (its private facts) is in
its own persona only; the events all are public (questions, answers, statements), and the
inspectors' planning events (sensor readings, beliefs) are their own.
"""

from __future__ import annotations

import argparse
import json
import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph

import mas_agents as mas
from mas_agents.events import make_event, write_events

TITLE = "The Museum Night"
VICTIM = "Silas Crane"
SUSPECTS = ["Ada Finch", "Ben Hollis"]
INSPECTORS = {"Inspector Gray": "plain+player_star", "Inspector Moss": "plain+pgm"}
MURDERER = "Ben Hollis"
#: What the blocks may know of this game; its dialogue (what each seat's memory keeps of what it
#: heard): the opening statements (``speak`` nodes: kind ``introduce``) and each answer with its question.
INFO = mas.GameInfo(name="interrogation", hidden_role="murderer", holder_knows_role=True, investigation=True,
                    dialogue=frozenset({"introduce", "answer"}))

CASE = (f"Silas Crane, the night watchman of the city museum, was found dead at the foot of the east stairs at "
        f"11:40 pm. The back door was unlocked from the inside. Two people were in the building after closing: "
        f"Ada Finch, the restorer, and Ben Hollis, the night cashier. One of them killed him.")
SCRIPTS = {
    "Ada Finch": ("You are Ada Finch, the museum's restorer. You stayed late to varnish a painting in the "
                  "basement workshop from 9 pm to midnight; the workshop log shows you signed in at 8:55 pm. "
                  "You heard a loud argument upstairs at about 11:30 pm, a man shouting about money. "
                  "You did not kill Silas. You dislike Ben, who owes you 200 pounds."),
    "Ben Hollis": ("You are Ben Hollis, the night cashier. You killed Silas Crane. At 11:30 pm he caught you "
                   "taking cash from the safe and threatened to call the police; you argued on the east stairs "
                   "and you pushed him. You then unlocked the back door so that it would look like an outsider. "
                   "Hide this: say you were counting the till in the office all evening and heard nothing."),
}
RULES = (f"This is an interrogation game, \"{TITLE}\". {CASE} Inspectors Gray and Moss question the two "
         f"suspects, {', '.join(SUSPECTS)}, and each inspector names the murderer at the end.")


def system_prompt(name: str) -> str:
    """What seat ``name`` is told: the rules and its own part (the murderer knows it is one)."""
    if name in INSPECTORS:
        part = "You are an inspector. Find out which suspect killed Silas Crane; question them sharply."
    elif name == MURDERER:
        part = "You are the murderer. Do not confess; keep the inspectors away from the truth."
    else:
        part = "You are innocent. Answer truthfully and help the inspectors find the murderer."
    return f"{RULES}\n\nYou are {name}. Speak as {name}, in the first person. {part}"


def persona(name: str) -> mas.Persona:
    """The persona of seat ``name``: the players an inspector suspects are the two suspects."""
    role = "murderer" if name == MURDERER else ("inspector" if name in INSPECTORS else "suspect")
    players = [name, *SUSPECTS] if name in INSPECTORS else [*INSPECTORS, *SUSPECTS]
    goals = ("Name the murderer of Silas Crane." if name in INSPECTORS
             else "Avoid being accused." if name == MURDERER else "Help find the murderer.")
    return mas.Persona(name=name, title=TITLE, role=role, script=SCRIPTS.get(name, ""), goals=goals,
                       victims=[VICTIM], players=players, system=system_prompt(name))


class State(TypedDict, total=False):
    events: Annotated[list, operator.add]
    round: int
    verdict: dict


def last(state: State, kind: str) -> dict:
    """The last event of ``kind`` in the state."""
    return next(e for e in reversed(state["events"]) if e["kind"] == kind)


def build(agents: dict[str, Any], rounds: int) -> StateGraph:
    """The interrogation's uncompiled graph: compile it with a checkpointer or an interrupt of
    your own if you like (``build(...).compile(checkpointer=InMemorySaver())``)."""
    gray, moss = agents["Inspector Gray"], agents["Inspector Moss"]

    def brief(state: State) -> dict:
        return {"round": 1, "events": [make_event(phase="setup", actor="game", kind="start", content=CASE,
                                                  data={"players": [*INSPECTORS, *SUSPECTS], "victims": [VICTIM]})]}

    def ask_prompt(state: State) -> str:
        return (f"Round {state['round']} of {rounds}. Choose one suspect to question and ask one short, "
                f"pointed question about the death of {VICTIM}.")

    def answer_prompt(state: State) -> str:
        q = last(state, "ask")
        return f"{q['actor']} asks you: \"{q['content']}\" Reply in one or two sentences."

    def answer_context(state: State) -> dict:
        q = last(state, "ask")
        return {"asker": q["actor"], "question": q["content"]}

    vote_prompt = f"The questioning is over. Who killed {VICTIM}? Name one suspect."

    def next_round(state: State) -> dict:
        return {"round": state["round"] + 1}

    def verdict(state: State) -> dict:
        named = {e["actor"]: e["content"] for e in state["events"] if e["kind"] == "vote"}
        v = {"murderer": MURDERER, "named": named, "correct": {i: named.get(i) == MURDERER for i in INSPECTORS}}
        text = "; ".join(f"{i} names {named.get(i) or 'no one'}" for i in INSPECTORS) + f". The murderer: {MURDERER}."
        return {"verdict": v, "events": [make_event(phase="outcome", actor="game", kind="verdict", content=text, data=v)]}

    def to_answer(state: State) -> str:
        target = last(state, "ask")["data"].get("target")
        return f"answer {target}" if target in SUSPECTS else after_question(state)

    def after_question(state: State) -> str:
        return "moss asks" if last(state, "ask")["actor"] == "Inspector Gray" else "round end"

    g = StateGraph(State)
    g.add_node("brief", brief)
    for s in SUSPECTS:
        g.add_node(f"statement {s}", mas.node(agents[s], "speak", "Make a short opening statement to the inspectors "
                                                                   "about where you were tonight."))
        g.add_node(f"answer {s}", mas.node(agents[s], "answer", answer_prompt, context=answer_context))
    g.add_node("gray asks", mas.node(gray, "question", ask_prompt, choices=SUSPECTS, context=lambda s: {"round": s["round"]}))
    g.add_node("moss asks", mas.node(moss, "question", ask_prompt, choices=SUSPECTS, context=lambda s: {"round": s["round"]}))
    g.add_node("round end", mas.end_round(agents.values()))
    g.add_node("next round", next_round)
    g.add_node("gray names", mas.node(gray, "vote", vote_prompt, choices=SUSPECTS, context={"victim": VICTIM}))
    g.add_node("moss names", mas.node(moss, "vote", vote_prompt, choices=SUSPECTS, context={"victim": VICTIM}))
    g.add_node("verdict", verdict)

    g.add_edge(START, "brief")
    g.add_edge("brief", f"statement {SUSPECTS[0]}")
    g.add_edge(f"statement {SUSPECTS[0]}", f"statement {SUSPECTS[1]}")
    g.add_edge(f"statement {SUSPECTS[1]}", "gray asks")
    answers = [f"answer {s}" for s in SUSPECTS]
    for asker in ("gray asks", "moss asks"):
        g.add_conditional_edges(asker, to_answer, [*answers, "moss asks", "round end"])
    for a in answers:
        g.add_conditional_edges(a, after_question, ["moss asks", "round end"])
    g.add_edge("round end", "next round")
    g.add_conditional_edges("next round", lambda s: "gray asks" if s["round"] <= rounds else "gray names",
                            ["gray asks", "gray names"])
    g.add_edge("gray names", "moss names")
    g.add_edge("moss names", "verdict")
    g.add_edge("verdict", END)
    return g


def transcript(events: list[dict]) -> str:
    """Markdown: the public events in order, then each inspector's private planning notes."""
    lines = [f"# {TITLE}", ""]
    for e in events:
        if e["visible_to"] == ["*"]:
            who = e["actor"] if e["actor"] == "game" else f"**{e['actor']}**"
            to = f" (to {e['data']['target']})" if e["kind"] == "ask" and e["data"].get("target") else ""
            lines.append(f"- {who} [{e['kind']}{to}]: {e['content'] or '(no readable reply)'}")
    lines += ["", "## Private planning", ""]
    lines += [f"- {e['actor']} [{e['kind']}]: {e['content']}" for e in events if e["visible_to"] != ["*"]]
    return "\n".join(lines) + "\n"


def main(model: Any = "local", out: str | Path = "runs/interrogation", rounds: int = 2, seed: int = 0) -> dict:
    """Play one interrogation into ``out`` and return ``result.json`` (the verdict and the calls)."""
    out = Path(out)
    rec = mas.recorder(out)
    agents = {name: mas.agent(spec, model=model, game=INFO, persona=persona(name), recorder=rec, seed=seed)
              for name, spec in {**INSPECTORS, **{s: "plain" for s in SUSPECTS}}.items()}
    graph = build(agents, rounds).compile()
    final = graph.invoke({"events": []}, {"recursion_limit": 20 + 8 * rounds})
    write_events(out / "events.jsonl", final["events"])
    (out / "transcript.md").write_text(transcript(final["events"]), encoding="utf-8")
    result = {"game": "interrogation", "specs": {n: a.spec for n, a in agents.items()}, **final["verdict"],
              "llm": rec.totals()}
    (out / "result.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    rec.close()
    return result


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="local", help="local | openai:NAME (default local)")
    ap.add_argument("--out", default="runs/interrogation", help="run directory (default runs/interrogation)")
    ap.add_argument("--rounds", type=int, default=2, help="questioning rounds (default 2)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    res = main(args.model, args.out, args.rounds, args.seed)
    print(json.dumps({k: res[k] for k in ("named", "correct", "murderer")}, indent=1))
    print(f"transcript: {Path(args.out) / 'transcript.md'}")
