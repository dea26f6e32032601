"""The leaderboard finds every database under --runs and says which it shows, with intervals and
links to the games; a run downloads as a zip and a report's tables as CSV (issue 26, items 6 and 9)."""

import csv
import io
import os
import re
import zipfile

import pytest


@pytest.fixture
def no_default_db(tmp_path, monkeypatch):
    """No default leaderboard database (``$MAS_DATA_HOME`` points at an empty folder)."""
    monkeypatch.setenv("MAS_DATA_HOME", str(tmp_path / "home"))


def app_client(runs, db=None):
    from fastapi.testclient import TestClient

    from mas_agents.web.app import create_app
    return TestClient(create_app(runs["root"], db))


def test_a_tournament_database_inside_runs_is_found_and_named(runs, no_default_db):
    c = app_client(runs)                        # no --db, no default database: those in --runs
    r = c.get("/leaderboard")
    assert r.status_code == 200 and "No leaderboard database" not in r.text
    offered = re.findall(r'<option value="([^"]+\.sqlite)"', r.text)
    assert offered == ["ablate/spy/wis.sqlite", "spy-tour-db/wis.sqlite"]    # the ablation keeps one too
    shown = re.search(r'id="db-path">Database <code>([^<]+)</code>', r.text).group(1)
    assert shown == str(runs["root"] / "ablate/spy/wis.sqlite")              # says which file it shows
    r = c.get("/leaderboard?db=spy-tour-db/wis.sqlite").text
    assert f"<code>{runs['db_in']}</code>" in r and '<option value="spy-tour-db/wis.sqlite" selected>' in r
    agents = re.findall(r'<tr><td>\d+</td><td><a href="[^"]*agent=([^"#&]+)', r)
    assert set(agents) == {"plain", "plain%2Breasoning"}
    # the tournament's run page links to its own database and tournament
    run = c.get("/run/spy-tour-db").text
    assert re.search(r'href="/leaderboard\?db=spy-tour-db/wis.sqlite&amp;tournament=t-\w+" id="board-link"', run)


def test_every_database_is_offered_and_one_is_picked(runs):
    c = app_client(runs, runs["db"])            # --db outside --runs, and one inside
    r = c.get("/leaderboard").text
    assert '<option value="--db" selected>' in r and '<option value="spy-tour-db/wis.sqlite">' in r
    assert f"<code>{runs['db']}</code>" in r
    inside = c.get("/leaderboard?db=spy-tour-db/wis.sqlite").text
    assert f"<code>{runs['db_in']}</code>" in inside
    # a database that is not one, or outside --runs, is refused in plain words
    assert c.get("/leaderboard?db=spy-kettle/config.json").status_code == 404
    assert c.get("/leaderboard?db=../wis.sqlite").status_code == 403
    assert c.get("/leaderboard?db=spy-tour-db/wis.sqlite&tournament=t-nope").status_code == 404


def test_missing_database_says_where_it_looked(tmp_path, no_default_db):
    from fastapi.testclient import TestClient

    from mas_agents.web.app import create_app
    (tmp_path / "runs").mkdir()
    r = TestClient(create_app(tmp_path / "runs", tmp_path / "nope.sqlite")).get("/leaderboard").text
    assert 'id="no-db"' in r and str(tmp_path / "nope.sqlite") in r and str((tmp_path / "runs").resolve()) in r


def test_rank_table_has_intervals_with_n_and_rows_link_to_games(runs):
    from mas_agents.graphs.wis.leaderboard import Leaderboard
    from mas_agents.graphs.wis.rating import rank_table, t_interval, wilson
    games = Leaderboard(runs["db"]).games()
    rows = {r["agent"]: r for r in rank_table(games)}
    plain = rows["plain"]
    w = plain["win_civilian"]
    assert w["n"] > 0 and 0 <= w["low"] <= w["rate"] <= w["high"] <= 1
    assert (w["low"], w["high"]) == pytest.approx(wilson(w["k"], w["n"]))
    assert plain["avg_score"]["n"] == plain["seats"] and plain["avg_score"]["low"] <= plain["avg_score"]["mean"]
    # textbook values: Wilson 95 % of 0/10 is [0, 0.2775]; t of 1,2,3 is 2 +- 4.303 * 1 / sqrt(3)
    assert wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert t_interval([1, 2, 3]) == pytest.approx((2 - 2.4841, 2 + 2.4841), abs=1e-3)

    c = app_client(runs, runs["db"])
    page = c.get("/leaderboard").text
    assert "Wilson 95 %" in page and "percentile bootstrap 95 %" in page
    assert re.search(r'<span class="ci">\[\d+, \d+\]</span> <span class="n">\d+/\d+</span>', page)
    assert re.search(r'<span class="n">n=\d+</span>', page)
    # an agent's row links to its games; each game links to its replay under --runs
    mine = c.get("/leaderboard?db=--db&agent=plain%2Breasoning").text
    assert '<h2 id="games">Games of plain+reasoning' in mine
    assert 'href="/replay/tour/games/g0000"' in mine and 'href="/run/tour"' in mine
    csv_text = c.get("/leaderboard.csv").text
    head, *body = list(csv.reader(io.StringIO(csv_text)))
    assert "win_spy_low95_wilson" in head and "avg_score_low95_bootstrap" in head and {b[1] for b in body} == set(rows)


def test_a_run_downloads_as_a_zip_without_links_out_of_runs(runs):
    c = app_client(runs)
    d = runs["wis"]
    os.symlink(runs["outside"] / "config.json", d / "leak.json")
    try:
        r = c.get("/zip/spy-kettle")
        assert r.status_code == 200 and r.headers["content-type"] == "application/zip"
        assert "attachment" in r.headers["content-disposition"]
        zf = zipfile.ZipFile(io.BytesIO(r.content))
        names = set(zf.namelist())
        for f in ("config.json", "events.jsonl", "result.json", "llm_calls.jsonl"):
            assert f"spy-kettle/{f}" in names
            assert zf.read(f"spy-kettle/{f}") == (d / f).read_bytes()
        assert "spy-kettle/leak.json" not in names and "leak.json" in zf.read("spy-kettle/SKIPPED.txt").decode()
    finally:
        (d / "leak.json").unlink()
    tour = zipfile.ZipFile(io.BytesIO(c.get("/zip/tour").content)).namelist()
    assert "tour/games/g0001/events.jsonl" in tour                # sub-runs included
    assert c.get("/zip/escape").status_code == 403 and c.get("/zip/no-such-run").status_code == 404


def test_each_report_table_has_a_csv_link_that_returns_it(runs):
    from mas_agents.web.downloads import markdown_tables
    c = app_client(runs)
    html = c.get("/report/ablate").text
    links = re.findall(r'href="(/csv/ablate\?table=\d+)"', html)
    tables = markdown_tables((runs["ablate"] / "report.md").read_text())
    assert tables and len(links) == len(tables) == html.count("</table>")
    r = c.get(links[0])
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(r.text)))
    from mas_agents.eval.reports.cells import numeric_columns
    assert rows == numeric_columns(tables[0]) and len(rows) >= 2 and len(rows[0]) >= 2
    assert c.get("/csv/ablate?table=99").status_code == 404
    assert c.get("/csv/spy-kettle?table=0").status_code == 404          # no report.md
