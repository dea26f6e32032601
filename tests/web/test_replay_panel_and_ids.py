"""Issue 46 item 8 and the replay's items: call ids told apart on the call viewer, each seat's own
model in the players panel (``config.json`` ``seat_models``, else the agent spec's ``@MODEL``), a
stopped game's roles, an evaluation's players panel, MAgIC's parts and phase headings, the model
time's label beside the wall time, and one spelling of a seat's name."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from mas_agents.web import calls as cl
from mas_agents.web import replay_rows as rp
from mas_agents.web import panel as web_panel


def _client(root):
    from fastapi.testclient import TestClient

    from mas_agents.web.app import create_app
    return TestClient(create_app(root, root / "none.sqlite"))


def _panel(html: str) -> dict[str, list[str]]:
    """``{player: [seat, player, agent, model, role, link]}`` of the page's players table (tags
    stripped)."""
    body = html.split('id="players-table"', 1)[1].split("</table>", 1)[0]
    out = {}
    for tr in re.findall(r"<tr data-player=[^>]*>(.*?)</tr>", body, re.S):
        cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
        out[cells[1]] = cells
    return out


# -- item 8: call ids ------------------------------------------------------------------------------

def test_process_call_ids_show_their_counter_and_several_processes_their_heads():
    head_a, head_b = "4514722c" + "9f00aa11", "4514ffff" + "00000000"
    one = [f"{head_a}{n:016x}" for n in range(16)]
    short = cl.short_ids(one)
    assert [short[i] for i in one[:3]] == ["…0000", "…0001", "…0002"] and short[one[15]] == "…000f"
    # a counter past 4 hex digits widens every label of the run alike
    wide = cl.short_ids(one + [f"{head_a}{0x12345:016x}"])
    assert wide[one[1]] == "…00001" and wide[f"{head_a}{0x12345:016x}"] == "…12345"
    # two processes (a resumed game): the leading digits that tell them apart come first
    two = cl.short_ids(one[:2] + [f"{head_b}{n:016x}" for n in range(2)])
    assert two[one[0]] == "45147…0000" and two[f"{head_b}{1:016x}"] == "4514f…0001"
    assert len(set(two.values())) == 4
    # ids of another form (uuid4 of older runs): the shortest unique prefix, 8 characters at least
    other = cl.short_ids(["abcdef0123-1", "abcdef0123-2", "12345678-9999"])
    assert other == {"abcdef0123-1": "abcdef0123-1", "abcdef0123-2": "abcdef0123-2", "12345678-9999": "12345678"}


def test_every_row_of_the_call_list_reads_differently(client, runs):
    calls = [json.loads(x) for x in (runs["wis"] / "llm_calls.jsonl").read_text().splitlines() if x.strip()]
    assert len(calls) > 4 and len({c["call_id"][:8] for c in calls}) == 1     # the ids share their head
    html = client.get("/calls/spy-kettle").text
    labels = re.findall(r'<td class="id"><a [^>]*title="call id ([0-9a-f]{32})"><code>([^<]+)</code>', html)
    assert [i for i, _ in labels] == [c["call_id"] for c in calls]
    assert len({s for _, s in labels}) == len(calls)
    assert all(full.endswith(s.lstrip("…")) for full, s in labels)
    one = client.get(f"/calls/spy-kettle/{calls[3]['call_id']}").text
    shown = dict(labels)[calls[3]["call_id"]]
    assert f"<title>Call {shown} · spy-kettle" in one and f"call {shown}</small>" in one


# -- item 2 (display): each seat's model -------------------------------------------------------------

@pytest.fixture
def spec_runs(runs, tmp_path):
    """Copies of the Who-is-Spy game whose ``config.json`` names models as a spec-only run does:
    ``new`` with ``seat_models`` (the run-record contract), ``old`` without it (the agent specs'
    ``@MODEL`` only) and ``plain`` with neither (every seat ran ``model``)."""
    root = tmp_path / "runs"
    out = {}
    for name in ("new", "old", "plain"):
        d = root / name
        shutil.copytree(runs["wis"], d)
        cfg = json.loads((d / "config.json").read_text())
        for k in ("seat_models", "models", "default_model"):     # a run written before the contract
            cfg.pop(k, None)
        if name != "plain":
            cfg["agents"] = ["plain@openai:stub", "plain+reasoning@openai:other", "plain", "plain@local"]
            cfg["model"] = "local"
        if name == "new":
            cfg["seat_models"] = {"Player 1": "openai:stub", "Player 2": "openai:other", "Player 3": "local",
                                  "Player 4": "local"}
            cfg["models"] = ["local", "openai:other", "openai:stub"]
        (d / "config.json").write_text(json.dumps(cfg))
        out[name] = d
    return root, out


def test_each_seat_shows_the_model_it_ran(spec_runs):
    root, d = spec_runs
    client = _client(root)
    for name in ("new", "old"):
        panel = _panel(client.get(f"/replay/{name}").text)
        assert {p: row[3] for p, row in panel.items()} == {
            "Player 1": "openai:stub", "Player 2": "openai:other", "Player 3": "local", "Player 4": "local"}, name
        assert panel["Player 1"][2] == "plain@openai:stub"
    cfg = json.loads((d["plain"] / "config.json").read_text())
    assert {row[3] for row in _panel(client.get("/replay/plain").text).values()} == {cfg["model"]}


def test_seat_model_prefers_the_record_then_the_spec_then_the_run_model():
    cfg = {"model": "local", "seat_models": {"Ann": "openai:a"}}
    assert web_panel.seat_model("Ann", "plain@openai:b", cfg, None) == "openai:a"
    assert web_panel.seat_model("Bob", "plain@openai:b", cfg, None) == "openai:b"
    assert web_panel.seat_model("Cid", "plain", cfg, None) == "local"
    assert web_panel.seat_model("Dee", "plain", {}, {"model": "fake"}) == "fake"
    assert web_panel.seat_model("Eve", "http://127.0.0.1:9/agent", cfg, None) == "remote"


def test_a_hidden_murderer_keeps_its_model_hidden(runs):
    events = rp.load_events(runs["mmg"] / "events.jsonl")
    cfg = json.loads((runs["mmg"] / "config.json").read_text())
    res = json.loads((runs["mmg"] / "result.json").read_text())
    names = [s.name for s in web_panel.players_panel(events, "mmg", cfg, res, reveal=True)]
    murderer = next(n for n, r in res["roles"].items() if r == "murderer")
    cfg = {**cfg, "seat_models": {n: "openai:odd" if n == murderer else "local" for n in names}}
    live = web_panel.players_panel(events[:20], "mmg", cfg, None, reveal=False)
    assert {s.model for s in live} == {"local / openai:odd"}
    done = web_panel.players_panel(events, "mmg", cfg, None, reveal=True)
    assert {s.name: s.model for s in done}[murderer] == "openai:odd"


# -- a stopped game's roles ------------------------------------------------------------------------

def test_a_stopped_game_shows_its_roles_marked_stopped(client):
    html = client.get("/replay/spy-dead").text
    assert 'id="stopped-note"' in html                     # the run is stopped (its process is gone)
    panel = _panel(html)
    assert "hidden until the game ends" not in html
    assert {p: row[4] for p, row in panel.items()} == {
        "Player 1": "civilian", "Player 2": "civilian", "Player 3": "spy", "Player 4": "civilian"}   # spy_seat=2
    # marked: the Role column's heading and a line under the table say the game stopped
    assert re.search(r'<th>Role <span class="badge stopped" id="roles-stopped"[^>]*>game stopped</span></th>', html)
    assert 'id="stopped-roles"' in html
    # a game still being played keeps them hidden
    live = client.get("/replay/spy-live").text
    assert "hidden until the game ends" in live and 'id="stopped-roles"' not in live


# -- an evaluation's replay ------------------------------------------------------------------------

def test_an_evaluation_replay_lists_the_evaluated_characters(client, runs):
    from tests.data_roots import SIN_CHARACTERS
    html = client.get("/replay/pp-sin").text
    panel = _panel(html)
    assert sorted(panel) == sorted(SIN_CHARACTERS)
    assert {row[2] for row in panel.values()} == {"plain"}
    assert {row[4] for row in panel.values()} == {"answers the questions"}
    seen = re.search(r'<select id="seen-by">(.*?)</select>', html, re.S).group(1)
    assert sorted(re.findall(r'<option value="([^"]+)"', seen)) == sorted(SIN_CHARACTERS)
    one = client.get("/replay/pp-sin", params={"seen_by": SIN_CHARACTERS[0]})
    assert one.status_code == 200
    # every answer is a private event: an evaluation shows them without ?private=1
    assert re.search(r'<body class="show-private', html) and 'id="toggle-private" checked' in html
    mcq = [e for e in rp.load_events(runs["eval"] / "events.jsonl") if e["kind"] == "mcq"]
    assert len(mcq) > 4 and html.count('class="ev k-mcq private') == len(mcq)


# -- MAgIC: parts, headings ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pd_game(tmp_path_factory, real_data_root):
    """A MAgIC Prisoner's Dilemma game (5 rounds) whose challenger is ``plain+pgm`` (belief tables
    after each reveal), played by the runner on a fake model."""
    from mas_agents.graphs.magic.bench import MagicBenchConfig, run_magic
    from tests.data_roots import mixed_root
    from tests.fakes import RuleChat, magic_player
    base = tmp_path_factory.mktemp("pd")
    run_magic(MagicBenchConfig(data_root=mixed_root(base / "data", real_data_root), out=base / "runs" / "magic-pd",
                               scenarios=["prisoners_dilemma"], challenger="plain+pgm", defender="plain",
                               settings="0", model=RuleChat(rule=magic_player()), replay_openings=False))
    games = sorted((base / "runs" / "magic-pd" / "games").iterdir())
    return base / "runs", games[0]


def test_game_theory_seats_show_their_part_and_every_round_its_moves(pd_game):
    root, d = pd_game
    events = rp.load_events(d / "events.jsonl")
    cfg = json.loads((d / "config.json").read_text())
    setup = next(e["data"] for e in events if e["kind"] == "setup")
    panel = web_panel.players_panel(events, "magic", cfg, None, reveal=False)
    assert {s.name: s.role for s in panel} == {
        n: "player (challenger)" if n in setup["challenger_seats"] else "player (defender)" for n in setup["players"]}
    assert rp.truth(events, "magic", scenario="prisoners_dilemma")[0] == "Roles: " + "; ".join(
        f"{n}: player ({'challenger' if n in setup['challenger_seats'] else 'defender'})" for n in setup["players"])
    rows = rp.rows(events, "magic", scenario="prisoners_dilemma")
    rounds = [g for g in dict.fromkeys(r.group for r in rows) if g.startswith("r")]
    assert rounds == ["r1", "r2", "r3", "r4", "r5"]
    # the first row of every round is under its "Moves" heading, round 5 too
    firsts = [next(r for r in rows if r.group == g) for g in rounds]
    assert [r.phase_title for r in firsts] == ["Moves"] * 5
    html = _client(root).get(f"/replay/{d.relative_to(root).as_posix()}").text
    assert html.count('<h3 class="phase" data-group="r5"') >= 1
    roles = {p: row[4] for p, row in _panel(html).items()}
    assert sorted(roles.values()) == ["player (challenger)", "player (defender)", "player (defender)"]


def test_no_phase_heading_repeats_its_group():
    ev = [{"step": 0, "phase": "setup", "round": 0, "actor": "game", "kind": "setup", "content": "x",
           "visible_to": ["game"], "data": {"scenario": "public_good", "players": ["P1", "P2"]}},
          {"step": 1, "phase": "planning", "round": 0, "actor": "P1", "kind": "belief_table", "content": "b",
           "visible_to": ["P1"], "data": {"shown": False}}]
    rows = rp.rows(ev, "magic", scenario="public_good")
    assert [(r.group_title, r.phase_title) for r in rows] == [("Setup", ""), ("Setup", "Planning")]


# -- the model time's label; one spelling of a seat ------------------------------------------------

def test_model_time_is_labelled_and_shown_beside_the_wall_time(client, runs):
    res = json.loads((runs["wis"] / "result.json").read_text())
    _, tot = rp.load_calls(runs["wis"] / "llm_calls.jsonl")
    html = client.get("/replay/spy-kettle").text
    summary = re.sub(r"<[^>]+>|\s+", " ", html.split('id="calls-summary"', 1)[1].split("</span>\n", 1)[0])
    assert "summed over calls" in summary and "model time" in summary and "wall time" in summary
    wall = res["wall_time_s"]
    shown = f"{wall:.2f} s" if wall < 10 else f"{wall:.1f} s" if wall < 100 else f"{wall:,.0f} s"
    assert f"wall time {shown}" in summary
    assert re.search(r"model time \d[\d,.]* s, summed over calls", summary)
    assert str(tot["latency_s"]) not in summary or len(str(tot["latency_s"]).split(".")[-1]) <= 2


def test_a_human_seat_is_named_as_the_game_names_it(runs, tmp_path):
    root = tmp_path / "runs"
    d = root / "spy-human"
    shutil.copytree(runs["wis"], d)
    (d / "human" / "Player_2").mkdir(parents=True)
    (d / "human" / "Player_2" / "view.json").write_text(json.dumps({"seat": "Player 2"}))
    client = _client(root)
    html = client.get("/replay/spy-human").text
    links = re.findall(r'<a href="/play/spy-human\?seat=([^"]+)" class="human-seat">([^<]+)</a>', html)
    assert links == [("Player_2", "human seat Player 2")]
    assert "Player_2<" not in html
    run = client.get("/run/spy-human").text
    assert "Human seat Player 2</a>" in run and "Player_2<" not in run


def test_a_game_without_events_yet_has_no_empty_panel_or_seat_filters(runs, tmp_path):
    """A game that has written its ``config.json`` and no event yet (or an evaluation, whose events
    are written at its end) names no seat yet: the replay leaves out the players panel and the seat
    filters instead of showing them empty."""
    root = tmp_path / "runs"
    d = root / "spy-starting"
    d.mkdir(parents=True)
    shutil.copy(runs["wis"] / "config.json", d / "config.json")
    html = _client(root).get("/replay/spy-starting")
    assert html.status_code == 200
    assert 'id="players-table"' not in html.text and 'id="seen-by"' not in html.text
    assert 'id="owner-filter"' not in html.text and 'id="toggle-private"' in html.text
