"""``import mas_agents as mas`` (issue 49 items 1-2): a cheap import with an ``__all__``, agents
from specs, ``mas.play`` seating hand-built agents and recipes in Who is Spy and the murder
mystery (recorded as the CLI records), the registries and the games' uncompiled graphs."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

import mas_agents as mas
from tests.fakes import RuleChat, star_rule, wis_player

ROOT = Path(__file__).resolve().parents[1]
PAIR = {"civilian": "tea", "spy": "coffee"}


def _read(out: Path) -> tuple[dict, list[dict], list[dict]]:
    cfg = json.loads((out / "config.json").read_text())
    events = [json.loads(l) for l in (out / "events.jsonl").read_text().splitlines()]
    calls = [json.loads(l) for l in (out / "llm_calls.jsonl").read_text().splitlines()]
    return cfg, events, calls


def test_import_mas_agents_is_cheap_and_names_the_public_api():
    code = ("import json, sys, mas_agents as mas\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in {'torch', 'langgraph', 'langchain_core', "
            "'faiss'} or m.split('.')[:2] in ([\"mas_agents\", s] for s in ('eval', 'graphs', 'planners', 'memory')))\n"
            "print(json.dumps({'heavy': heavy, 'all': mas.__all__}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    got = json.loads(out)
    assert got["heavy"] == []
    assert {"agent", "recipe", "play", "evaluate", "reproduce", "node", "end_round", "builder", "games",
            "register_game", "blocks", "register_block", "recorder", "GameInfo", "BlockAgent"} <= set(got["all"])


def test_no_submodule_is_named_as_a_public_name_and_the_package_is_a_plain_module():
    """Nothing rewrites its own module class: the agent core's module is ``mas_agents.agents``,
    so importing it (or any submodule) binds nothing over ``mas.agent``."""
    import pkgutil
    import types

    assert mas.__class__ is types.ModuleType
    submodules = {m.name for m in pkgutil.iter_modules(mas.__path__)}
    assert "agents" in submodules and submodules & set(mas.__all__) == set()


def test_mas_agent_stays_the_function_when_the_agent_module_is_imported():
    import mas_agents.agents  # noqa: F401  (binds the attribute ``agents``, never ``agent``)
    from mas_agents.agents import Agent
    assert mas.agent.__module__ == "mas_agents.api"
    a = mas.agent("plain+pgm", model=RuleChat(rule=wis_player()), name="Me", game="wis")
    assert isinstance(a, Agent) and isinstance(a, mas.BlockAgent)
    assert a.spec == "plain+pgm" and [b.name for b in a.blocks] == ["cot", "pgm"]
    assert a.game.word_clues and a.name == "Me" and a.memory is None
    assert a.recipe.blocks == "plain+pgm"
    with pytest.raises(ValueError, match="unknown agent block"):
        mas.agent("plain+nonesuch")
    with pytest.raises(ValueError, match="family"):
        mas.agent("plain", game="magic")


def test_registries_and_builders():
    assert {"mmg", "wis", "magic"} <= set(mas.games())
    assert {"plain", "player_star", "pgm"} <= set(mas.blocks())
    from langgraph.graph import StateGraph
    for game, variant in (("mmg", None), ("wis", None), ("magic", "chameleon"), ("magic", "cost_sharing")):
        g = mas.builder(game, variant)
        assert isinstance(g, StateGraph) and "setup" in g.nodes
    with pytest.raises(ValueError, match="no game 'chess'; the games are: mmg, wis, magic"):
        mas.builder("chess")
    with pytest.raises(ValueError, match="name the scenario"):
        mas.builder("magic")
    with pytest.raises(ValueError, match="this game has one graph, no variant 'x'"):
        mas.builder("wis", "x")


def test_play_seats_a_hand_built_agent_in_who_is_spy(tmp_path):
    fake = RuleChat(rule=wis_player())
    me = mas.agent("plain+pgm", model=fake)
    out = tmp_path / "wis"
    res = mas.play("wis", agents=[me, "plain", "plain", "plain"], pair=PAIR, model=fake, seed=1, out=out)
    assert res["outcome"]["winner"] == "civilians"
    cfg, events, calls = _read(out)
    assert cfg["kind"] == "wis" and cfg["agents"] == ["plain+pgm", "plain", "plain", "plain"]
    assert cfg["seated"] == {"Player 1": "plain+pgm@RuleChat"}
    assert cfg["seat_models"] == {f"Player {i}": "RuleChat" for i in range(1, 5)} and cfg["models"] == ["RuleChat"]
    # the seat is played with the game's persona (its word, its name) and the agent's pgm block
    p1 = [c for c in calls if c["actor"] == "Player 1"]
    assert p1 and all(c["actor"] in {f"Player {i}" for i in range(1, 5)} for c in calls)
    assert any(e["actor"] == "Player 1" and e["kind"] == "belief_table" for e in events)
    assert not any(e["actor"] != "Player 1" and e["kind"] == "belief_table" for e in events)
    assert res["llm"]["calls"] == len(calls)


def test_play_seats_a_pickled_recipe_by_seat_name_and_refuses_an_unknown_seat(tmp_path):
    fake = RuleChat(rule=wis_player())
    r = pickle.loads(pickle.dumps(mas.recipe("plain+pgm")))
    assert r == mas.recipe("plain+pgm")
    out = tmp_path / "wis"
    res = mas.play("wis", agents=["plain", "plain", r, "plain"], pair=PAIR, model=fake, out=out, seed=1)
    assert res["outcome"]["winner"] == "civilians"
    cfg, events, _ = _read(out)
    assert cfg["agents"] == ["plain", "plain", "plain+pgm", "plain"]
    assert cfg["seated"] == {"Player 3": "plain+pgm"} and cfg["seat_models"]["Player 3"] == "RuleChat"
    assert {e["actor"] for e in events if e["kind"] == "belief_table"} == {"Player 3"}
    out2 = tmp_path / "wis2"
    with pytest.raises(ValueError, match="takes no list of seats"):
        mas.play("mmg", agents=["plain"], out=out2)
    with pytest.raises(ValueError, match="takes its seats as a list"):
        mas.play("wis", agents={"Player 3": r}, pair=PAIR, model=fake, out=out2)
    with pytest.raises(ValueError, match=r"seat 2 is a int"):
        mas.play("wis", agents=["plain", "plain", 7, "plain"], pair=PAIR, model=fake, out=out2)
    assert not out2.exists() or not (out2 / "config.json").exists()


def test_node_refuses_an_unknown_kind():
    a = mas.agent("plain", model=RuleChat(rule=wis_player()), name="X")
    with pytest.raises(ValueError, match="unknown kind 'shout'"):
        mas.node(a, "shout", "Shout.")


@pytest.mark.realdata
def test_play_seats_a_hand_built_agent_in_the_murder_mystery(tmp_path, real_data_root):
    from mas_agents.graphs.mmg.dataset import load_script
    sc = load_script(real_data_root, "Sin")
    civilian = next(c.name for c in sc.characters if not c.is_murderer)
    fake = RuleChat(rule=star_rule())
    me = mas.agent("plain+player_star", model=fake, game="mmg", script="Sin", name=civilian, data_dir=real_data_root)
    assert me.persona.name == civilian and "murder mystery" in me.persona.system and me.memory is not None
    out = tmp_path / "mmg"
    res = mas.play("mmg", script="Sin", data_dir=real_data_root, agents={civilian: me}, model=fake, rounds=1, out=out)
    cfg, events, calls = _read(out)
    assert cfg["agent"] == "plain" and cfg["seated"] == {civilian: "plain+player_star@RuleChat"}
    assert cfg["seat_models"][civilian] == "RuleChat"
    # only the hand-seated character reads PLAYER*'s sensors
    sensing = {e["actor"] for e in events if e["kind"] == "sensor"}
    assert sensing == {civilian}
    assert res["llm"]["calls"] == len(calls) and {c["actor"] for c in calls} >= {civilian}


def test_the_api_page_names_every_public_name():
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert [n for n in mas.__all__ if f"`{n}`" not in page] == []


def test_a_game_builder_takes_a_checkpointer_and_an_interrupt_of_the_users_own(tmp_path):
    """Who is Spy's uncompiled graph compiled by the user with a checkpointer and an interrupt
    before the votes (where a person would step in): it stops there, and resumes to the end."""
    from langgraph.checkpoint.memory import InMemorySaver

    from mas_agents.game.contract import get
    from mas_agents.game.seats import Seats
    from mas_agents.call_log import CallRecorder

    seats = Seats(CallRecorder(None), RuleChat(rule=wis_player()), seed=1)
    table = get("wis").setup(seats, out=tmp_path, agents=["plain"] * 4, pair=PAIR, spy_seat=0, first_speaker=0)
    graph = mas.builder("wis").compile(checkpointer=InMemorySaver(), interrupt_before=["voting"])
    cfg = {"configurable": {"thread_id": "t"}, "recursion_limit": table.step_bound}
    graph.invoke(table.start, cfg, context=table.graph.rt)
    snap = graph.get_state(cfg)
    assert snap.next == ("voting",)
    assert [e["actor"] for e in snap.values["events"] if e["kind"] == "describe"] == [f"Player {i}" for i in range(1, 5)]
    assert not any(e["kind"] == "vote" for e in snap.values["events"])
    final = graph.invoke(None, cfg, context=table.graph.rt)
    assert any(e["kind"] == "outcome" for e in final["events"])
    assert graph.get_state(cfg).next == ()


@pytest.mark.realdata
def test_evaluate_and_reproduce_are_the_cli_runners(tmp_path, real_data_root):
    res = mas.evaluate("always_a", out=tmp_path / "ev", script="Sin", data_dir=real_data_root)
    cfg = json.loads((tmp_path / "ev" / "config.json").read_text())
    assert cfg["method"] == "always_a" and res == json.loads((tmp_path / "ev" / "result.json").read_text())
    assert res["scripts"] and res["weighted_score"] is not None and res["per_character"]
    with pytest.raises(ValueError, match="unknown paper 'nonesuch'"):
        mas.reproduce("nonesuch", out=tmp_path / "rp", data_dir=real_data_root)


def test_servers_sets_what_the_cli_server_options_set_and_refuses_bad_values():
    import mas_agents as mas
    from mas_agents.remote import endpoints
    before = endpoints.settings()
    try:
        assert mas.servers() is before                       # nothing given: nothing changes
        s = mas.servers(structured="prompt", context_window=4096)
        assert endpoints.settings() is s and (s.structured, s.context_window, s.max_connections) == ("prompt", 4096, 8)
        with pytest.raises(ValueError, match="--structured must be one of"):
            mas.servers(structured="xml")
        with pytest.raises(TypeError):
            mas.servers(colour="red")
    finally:
        endpoints.configure(structured="auto", context_window=None, max_connections=8, adaptive=False)


def test_reproduce_passes_the_hooks_its_paper_takes_and_names_the_ones_it_does_not(monkeypatch, tmp_path,
                                                                                   real_data_root):
    """``mas.reproduce`` forwards the progress callback and the runners' hooks to the paper's
    typed configuration (as it forwarded them to the runner before), and refuses by name a hook
    the paper has no place for."""
    from mas_agents.eval.reproduce import registry
    monkeypatch.setattr(registry, "run", lambda config: config)
    tick = lambda *a: None   # noqa: E731
    cfg = mas.reproduce("magic", out=tmp_path / "m", model="local", data_dir=real_data_root, limit=1,
                        tick=tick, concurrency=2)
    assert cfg.tick is tick and cfg.concurrency == 2 and cfg.limit == 1
    with pytest.raises(ValueError, match="evaluate: mas reproduce wis takes no such hook; its hooks: tick, estimate, play"):
        mas.reproduce("wis", out=tmp_path / "w", model="local", data_dir=real_data_root, evaluate=tick)


def test_evaluate_still_takes_agent_spec_its_name_before_the_typed_configuration(monkeypatch, tmp_path,
                                                                                 real_data_root):
    import mas_agents.eval.wellplay.run as wr
    seen = []
    monkeypatch.setattr(wr, "run_wellplay_eval", lambda cfg, **hooks: seen.append(cfg) or {"ok": True})
    assert mas.evaluate("pp", out=tmp_path / "e", script="Sin", model="local", data_dir=real_data_root,
                        agent_spec="plain+player_star") == {"ok": True}
    assert seen[0].agent == "plain+player_star"
