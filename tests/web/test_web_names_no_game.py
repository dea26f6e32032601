"""The web app names no game (issue 51 item 1): the built-in games reach ``mas serve`` through
their ``GameDef`` hooks like a new game does, and a game registered here (a run directory written
by hand) gets its headline, round headings, players panel, sentences and "the truth" from its hooks
or from the defaults, with no line of ``mas_agents/web`` knowing it."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from mas_agents.game import contract as games
from mas_agents.game.view import GameView, SeatInfo
from mas_agents.web import views
from mas_agents.web import runs as rs
from mas_agents.web import run_kinds
from mas_agents.web.app import create_app

WEB = Path(__file__).resolve().parents[2] / "mas_agents" / "web"
BUILT_IN = ("mmg", "wis", "magic")


def test_no_file_of_the_web_app_compares_with_or_lists_a_game_kind():
    """The acceptance grep, and any other use of a built-in kind as a string in code or template
    (``in ("mmg", ...)``, a dict keyed by kind, a default ``or "wis"``)."""
    files = sorted(p for p in WEB.rglob("*") if p.suffix in (".py", ".html", ".js"))
    assert len(files) > 20
    compare = re.compile(r"""==\s*['"](mmg|wis|magic)['"]""")
    literal = re.compile(r"""['"](%s)['"]""" % "|".join(BUILT_IN))
    hits = [f"{p.relative_to(WEB)}:{i}: {line.strip()}" for p in files
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if compare.search(line) or literal.search(line)]
    assert hits == []


def _imported_modules(tree: ast.AST, package: str) -> list[str]:
    """Every module an ``import`` or ``from ... import`` anywhere in ``tree`` (module or function
    level) names, relative ones resolved against ``package``."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            out += [base] + [f"{base}.{a.name}" for a in node.names]
    return out


def test_no_module_of_the_web_app_imports_a_game():
    """The web reaches the games' leaderboards and datasets through their registrations
    (:attr:`mas_agents.game.experiments.ExperimentDef.board`, ``script``), never by importing a
    module of ``mas_agents.graphs`` (issue 58)."""
    files = sorted(WEB.rglob("*.py"))
    assert len(files) > 20
    hits = []
    for p in files:
        rel = p.relative_to(WEB.parent.parent).with_suffix("")
        package = ".".join(rel.parts[:-1])   # a module's package; an __init__'s is its folder
        for name in _imported_modules(ast.parse(p.read_text(encoding="utf-8")), package):
            if name == "mas_agents.graphs" or name.startswith("mas_agents.graphs."):
                hits.append(f"{p.relative_to(WEB)}: {name}")
    assert hits == []
    # the check sees a function-level import and a relative one
    probe = ast.parse("def f():\n    from mas_agents.graphs.wis import leaderboard\n"
                      "from ..graphs.mmg import dataset\n")
    assert {"mas_agents.graphs.wis", "mas_agents.graphs.mmg"} <= set(_imported_modules(probe, "mas_agents.web"))


def test_the_web_reaches_the_leaderboard_and_the_scripts_through_the_registry():
    from mas_agents.game import experiments

    board = experiments.board()
    assert board is not None and experiments.find("wis-tournament").board is board
    wellplay = experiments.find("wellplay-eval")
    assert wellplay is not None and wellplay.script is not None


def _write_run(d: Path, kind: str, *, finished: bool) -> None:
    """A two-round game of ``kind`` by hand: two seats, a private move each round, a result."""
    d.mkdir(parents=True)
    (d / "config.json").write_text(json.dumps({"kind": kind, "seats": ["alpha", "beta@openai:x"], "lang": "en",
                                               "model": "openai:stub", "models": ["openai:stub", "openai:x"]}))
    events = []
    for rnd in (1, 2):
        for seat in ("North", "South"):
            events.append({"step": len(events), "phase": "bidding", "round": rnd, "actor": seat, "kind": "bid",
                           "content": str(rnd * 3), "visible_to": [seat], "llm_call_ids": [],
                           "data": {"amount": rnd * 3}})
        events.append({"step": len(events), "phase": "scoring", "round": rnd, "actor": "game", "kind": "score",
                       "content": f"North {rnd}, South 0", "visible_to": ["*"], "llm_call_ids": [], "data": {}})
    if finished:
        events.append({"step": len(events), "phase": "outcome", "round": 0, "actor": "game", "kind": "outcome",
                       "content": "North wins", "visible_to": ["*"], "llm_call_ids": [],
                       "data": {"winner": "North"}})
        (d / "result.json").write_text(json.dumps({"winner": "North", "llm": {"calls": 0}}))
    (d / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))


def _bid_sentence(e, lang, variant):
    return f"{e['actor']} bids {e['data']['amount']} coins." if e.get("kind") == "bid" else None


def _seats(events, config, result):
    return SeatInfo(names=["North", "South"], agents=dict(zip(["North", "South"], config.get("seats") or [])),
                    roles={"North": "dealer", "South": "bidder"})


VIEW = GameView(sentence=_bid_sentence, seats=_seats, truth=lambda events, lang, variant: ["North dealt."],
                titles={"en": {"ph_bidding": "Sealed bids", "end": "The reckoning"}},
                role_text={"en": {"dealer": "the dealer", "bidder": "a bidder"}},
                hidden_roles=lambda events, config: True, names={"en": "Sealed auction"})


@pytest.fixture
def registered(tmp_path):
    """Two games registered in the test: ``auction`` with every view hook, ``plain_auction`` with none."""
    setup = lambda seats, *, out: None   # noqa: E731 (never played here: its runs are written by hand)
    games.register(games.GameDef(kind="auction", title="Auction", info=None, setup=setup, view=VIEW,
                                 headline=lambda cfg, res: f"won by {res['winner']}" if res else "bidding",
                                 seat_specs=lambda cfg: list(cfg.get("seats") or [])))
    games.register(games.GameDef(kind="plain_auction", title="Plain auction", info=None, setup=setup,
                                 seat_specs=lambda cfg: list(cfg.get("seats") or [])))
    root = tmp_path / "runs"
    _write_run(root / "a-done", "auction", finished=True)
    _write_run(root / "a-live", "auction", finished=False)
    _write_run(root / "p-done", "plain_auction", finished=True)
    yield root
    games.unregister("auction")
    games.unregister("plain_auction")


def test_a_new_game_gets_its_line_and_replay_from_its_hooks(registered):
    by_rel = {r.rel: r for r in rs.scan(registered)}
    assert by_rel["a-done"].headline == "won by North" and by_rel["a-done"].agents == ["alpha", "beta@openai:x"]
    assert by_rel["a-done"].is_game and by_rel["a-done"].kind in run_kinds.all_kinds()
    client = TestClient(create_app(registered, registered / "none.sqlite"))
    page = client.get("/replay/a-done?private=1").text
    assert '<h1>Sealed auction <span class="run-name">— ' in page
    for title in ("Round 1", "Round 2", "Sealed bids", "The reckoning"):
        assert f">{title}</" in page, title
    assert "North bids 3 coins." in page and "South bids 6 coins." in page
    # the panel: the seats, agents and models the hooks give, the roles in the game's words
    assert ("<td>North</td><td><code>alpha</code></td><td>openai:stub</td>\n<td class=\"role\">the dealer</td>"
            in page)
    assert "<td>South</td><td><code>beta@openai:x</code></td><td>openai:x</td>\n<td class=\"role\">a bidder</td>" in page
    assert re.search(r'id="truth".*North dealt\.', page, re.S)
    # while it is played its roles are hidden, and nothing is true yet
    live = client.get("/replay/a-live").text
    assert "the dealer" not in live and "hidden until the game ends" in live and 'id="truth"' not in live
    # its calls page links the replay, as a built-in game's does
    assert 'href="/replay/a-done"' in client.get("/calls/a-done").text


def test_a_game_without_view_hooks_gets_round_headings_and_a_players_panel(registered):
    client = TestClient(create_app(registered, registered / "none.sqlite"))
    page = client.get("/replay/p-done?private=1").text
    assert '<h1>Plain auction <span class="run-name">— ' in page
    assert '<a href="#r1" data-group="r1">Round 1</a><a href="#r2" data-group="r2">Round 2</a>' in page
    assert ">Bidding</" in page and ">Scoring</" in page and ">Outcome</" in page
    assert "<td>1</td><td>North</td><td><code>alpha</code></td><td>openai:stub</td>" in page
    assert "<td>2</td><td>South</td><td><code>beta@openai:x</code></td><td>openai:x</td>" in page
    assert "North: «3»" in page and "North wins" in page and 'id="truth"' not in page
    assert rs.describe(registered, registered / "p-done", "plain_auction").headline.startswith("Plain auction: 0 LLM calls")


def test_the_built_in_games_register_their_view_and_lines():
    for kind in BUILT_IN:
        game = games.get(kind)
        assert game.view is not None and game.headline is not None and game.seat_specs is not None, kind
        assert games.view_of(kind) is game.view
    assert views.game_of([{"kind": "describe"}]) == "wis" and views.game_of([{"kind": "clue"}]) == "magic"
    assert views.game_of([{"kind": "ask"}]) == "mmg" and views.game_of([{"kind": "mcq"}]) == ""
    assert games.get("wis").headline({"pair": {"civilian": "tea", "spy": "coffee"}},
                                     {"outcome": {"winner": "civilians", "rounds_played": 2, "spy": "Player 3"}}) == \
        "civilians win after round 2; spy Player 3; pair tea/coffee"
