"""Tests of the Who is Spy? HTML replay (mas_agents.graphs.wis.replay_html)."""

from __future__ import annotations

import html
import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from mas_agents.graphs.wis.replay_html import replay_html, write_replay
from mas_agents.graphs.wis.rules import game_scores

CIV, SPY = "lighthouse", "windmill"
NAMES = [f"Player {i}" for i in range(1, 7)]
SPY_NAME = "Player 4"

R1_DESCS = [
    ("Player 3", "It stands tall near the sea.", None),
    ("Player 4", "Tall structure, & it <script>alert('x')</script> moves with wind", None),
    ("Player 5", "It stands tall near the sea.", "repeat"),
    ("Player 6", "它是一座很高的建筑，晚上很亮。", None),
    ("Player 1", "Sailors are glad to see it at night.", None),
    ("Player 2", "Often painted with \"stripes\".", None),
]
R1_VOTES = {"Player 3": "Player 4", "Player 4": "Player 1", "Player 6": "Player 1",
            "Player 1": "Player 4", "Player 2": None}
R2_DESCS = [
    ("Player 3", "You find it on a rocky coast.", None),
    ("Player 4", "It has big rotating parts.", None),
    ("Player 6", "Its light turns around.", None),
    ("Player 1", "A keeper used to live inside.", None),
    ("Player 2", "Ships steer by it.", None),
]
R2_VOTES = {"Player 3": "Player 4", "Player 4": "Player 6", "Player 6": "Player 4",
            "Player 1": "Player 4", "Player 2": "Player 4"}


def make_record() -> dict:
    players = [{"name": n, "seat": i, "agent": f"fake:agent-{i}" if n != "Player 6" else "http://a.example/x?a=1&b=2",
                "role": "spy" if n == SPY_NAME else "civilian", "word": SPY if n == SPY_NAME else CIV}
               for i, n in enumerate(NAMES)]
    alive_end = ["Player 1", "Player 2", "Player 3", "Player 6"]
    scores = game_scores({p["name"]: p["role"] for p in players}, 2, alive_end, [R1_VOTES, R2_VOTES])
    return {
        "game_id": "wis-test-0001", "lang": "en", "seed": 7,
        "pair": {"civilian": CIV, "spy": SPY},
        "players": players,
        "first_speaker": "Player 3",
        "rounds": [
            {"round": 1, "order": [d[0] for d in R1_DESCS],
             "descriptions": [{"player": p, "text": t, "foul": f, "seconds": 1.25} for p, t, f in R1_DESCS],
             "fouled": ["Player 5"], "votes": R1_VOTES,
             "vote_counts": {"Player 4": 2, "Player 1": 2}, "voted_out": None,
             "alive_after": ["Player 1", "Player 2", "Player 3", "Player 4", "Player 6"]},
            {"round": 2, "order": [d[0] for d in R2_DESCS],
             "descriptions": [{"player": p, "text": t, "foul": f, "seconds": 2.0} for p, t, f in R2_DESCS],
             "fouled": [], "votes": R2_VOTES,
             "vote_counts": {"Player 4": 4, "Player 6": 1}, "voted_out": "Player 4",
             "alive_after": alive_end},
        ],
        "outcome": {"winner": "civilians", "spy": SPY_NAME, "spy_eliminated_round": 2,
                    "end_reason": "spy_eliminated", "rounds_played": 2},
        "eliminated": {"Player 5": {"round": 1, "by": "foul"}, "Player 4": {"round": 2, "by": "vote"}},
        "scores": scores,
        "llm": {}, "wall_time_s": 12.5, "invalid_actions": 0,
    }


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Checker(HTMLParser):
    """Checks tag balance and collects table rows (cell texts) by table class."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.tags: list[str] = []
        self.tables: dict[str, list[list[str]]] = {}
        self._table: str | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag in VOID:
            return
        self.stack.append(tag)
        a = dict(attrs)
        if tag == "table":
            self._table = a.get("class") or ""
            self.tables.setdefault(self._table, [])
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unexpected </{tag}>, open: {self.stack[-3:]}")
            return
        self.stack.pop()
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None and self._table is not None:
            self.tables[self._table].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def check(page: str) -> Checker:
    c = Checker()
    c.feed(page)
    c.close()
    assert not c.errors, c.errors
    assert not c.stack, f"unclosed tags: {c.stack}"
    for tag in ("html", "head", "body", "main", "details", "summary", "table", "section"):
        assert tag in c.tags, tag
    return c


def test_descriptions_are_escaped_and_present():
    page = replay_html(make_record())
    assert '<meta charset="utf-8">' in page
    for _, text, _ in R1_DESCS + R2_DESCS:
        assert html.escape(text) in page
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "它是一座很高的建筑" in page
    assert "wis-test-0001" in page
    assert html.escape("http://a.example/x?a=1&b=2") in page


def test_players_and_seats_in_header():
    c = check(replay_html(make_record()))
    seats = c.tables[""][1:]  # the first table without a class is the seat table
    assert [row[1].split(" first speaker")[0] for row in seats[:6]] == NAMES
    assert [row[0] for row in seats[:6]] == [str(i) for i in range(6)]
    assert "fake:agent-0" in seats[0][2]


def test_foul_tie_abstention_and_votes():
    page = replay_html(make_record())
    c = check(page)
    # the foul: badge with its reason, on Player 5's description
    assert "foul: repeated an earlier description" in page and "(repeat)" in page
    assert page.count('class="desc fouled"') == 1
    # every vote, in round order
    rows = [r for r in c.tables["votes"] if r != ["Voter", "Votes for"]]
    expected = [[v, t if t is not None else "abstained"] for votes in (R1_VOTES, R2_VOTES) for v, t in votes.items()]
    assert rows == expected
    counts = [r for r in c.tables["counts"] if r != ["Player", "Votes"]]
    assert counts == [["Player 1", "2"], ["Player 4", "2"], ["Player 4", "4"], ["Player 6", "1"]]
    r1 = page[page.index('id="round-1"'):page.index('id="round-2"')]
    r2 = page[page.index('id="round-2"'):page.index("</main>")]
    assert "no one (tie)" in r1 and "Eliminated by the judge:</b> Player 5" in r1
    assert "Voted out: <b>Player 4</b>" in r2
    assert "Player 3 → Player 4 → Player 5 → Player 6 → Player 1 → Player 2" in r1


def test_words_revealed_only_after_rounds_and_scores_shown():
    record = make_record()
    page = replay_html(record)
    c = check(page)
    last_round = page.rindex('class="round"')
    reveal = page.index("Reveal words and roles")
    assert last_round < page.index("</main>") < reveal
    for word in (CIV, SPY):
        assert page.index(word) > reveal
    roles = {r[0]: r for r in c.tables["roles"][1:]}
    assert roles[SPY_NAME][1:3] == ["spy", SPY] and roles["Player 1"][1:3] == ["civilian", CIV]
    assert "Winner: <b>civilians</b>" in page and "spy_eliminated" in page
    scores = {r[0]: r[1] for r in c.tables["scores"][1:]}
    assert scores == {"Player 1": "4", "Player 2": "3", "Player 3": "4", "Player 4": "-2",
                      "Player 5": "0", "Player 6": "3", "Total": "12"}
    assert page.index('id="scores"') > reveal


def test_write_replay_with_events(tmp_path: Path):
    game = tmp_path / "game"
    game.mkdir()
    (game / "result.json").write_text(json.dumps(make_record(), ensure_ascii=False), encoding="utf-8")
    events = [
        {"step": 1, "phase": "speak", "round": 1, "actor": "Player 4", "kind": "reasoning",
         "content": f"My word is {SPY}; others seem to have {CIV} <b>", "visible_to": ["Player 4"],
         "llm_call_ids": [], "data": {}},
        {"step": 2, "phase": "speak", "round": 1, "actor": "Player 4", "kind": "speech",
         "content": "ignored", "visible_to": None, "llm_call_ids": [], "data": {}},
    ]
    (game / "events.jsonl").write_text("\n".join(json.dumps(e) for e in events) + "\n", encoding="utf-8")
    out = write_replay(game)
    assert out == game / "replay.html" and out.is_file()
    page = out.read_text(encoding="utf-8")
    check(page)
    assert f"My word is {SPY}; others seem to have {CIV} &lt;b&gt;" in page
    assert page.index("My word is") > page.index("Reveal words and roles")
    other = write_replay(game, tmp_path / "sub" / "r.html")
    assert other.read_text(encoding="utf-8") == page


def test_missing_or_bad_record(tmp_path: Path):
    with pytest.raises(FileNotFoundError, match="result.json") as exc:
        write_replay(tmp_path)
    assert str(tmp_path / "result.json") in str(exc.value)
    (tmp_path / "result.json").write_text(json.dumps({"game_id": "x", "players": []}), encoding="utf-8")
    with pytest.raises(ValueError, match="rounds") as exc:
        write_replay(tmp_path)
    assert str(tmp_path / "result.json") in str(exc.value)
    (tmp_path / "result.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="result.json"):
        write_replay(tmp_path)
    with pytest.raises(ValueError, match="players"):
        replay_html({"game_id": "x", "players": [{"seat": 0}], "rounds": []})


def test_minimal_record_without_outcome():
    page = replay_html({"game_id": "g", "players": [{"name": "A"}], "rounds": [
        {"round": 1, "order": ["A"], "descriptions": [{"player": "A", "text": "", "foul": "no_answer"}],
         "fouled": ["A"], "votes": {}}]})
    check(page)
    assert "No vote was held" in page and "Outcome not recorded" in page and "Scores not recorded" in page
    assert "gave no valid description" in page
