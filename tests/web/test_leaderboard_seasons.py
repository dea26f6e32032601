"""Issue 56 item 4 on the web: ``/leaderboard`` shows one season (one protocol fingerprint) at a
time, lists every season with what changed, and neither its rank table, its rating nor its CSV
holds another season's games. Three tournaments into one database: English, English with a prompt
sentence changed (patched into the template at run time), Chinese; the seeded fake model of
``scripts/fake_runs.py`` plays them. The browser test looks at the page in headless Chromium."""

from __future__ import annotations

import re

import pytest

from mas_agents.graphs.wis.leaderboard import Leaderboard
from mas_agents.graphs.wis import player
from tests.eval.test_wis_seasons import NEW, OLD, PAIRS


@pytest.fixture(scope="module")
def three_seasons(tmp_path_factory):
    """``(runs root, database)``: season 1 en ``plain,plain+reasoning``; season 2 the same with
    the rules prompt changed; season 3 zh ``plain,plain+attack``."""
    from mas_agents.graphs.wis.tournament import TournamentConfig, run_tournament
    from mas_agents.game.fake_chat import HashChat

    root = tmp_path_factory.mktemp("seasons")
    db = root / "runs" / "board" / "wis.sqlite"

    def play(out: str, agents: list[str], lang: str = "en") -> None:
        run_tournament(TournamentConfig(agents=agents, games=2, pairs=PAIRS[lang], players=4, lang=lang,
                                        model=HashChat(), db=db, out=root / "runs" / out))

    play("t-en", ["plain", "plain+reasoning"])
    rules_en = player.RULES["en"]
    player.RULES["en"] = rules_en.replace(OLD, NEW)
    try:
        play("t-en-changed", ["plain", "plain+reasoning"])
    finally:
        player.RULES["en"] = rules_en
    play("t-zh", ["plain", "plain+attack"], lang="zh")
    return root / "runs", db


@pytest.fixture
def client(three_seasons, tmp_path, monkeypatch):
    from fastapi.testclient import TestClient

    from mas_agents.web.app import create_app
    monkeypatch.setenv("MAS_DATA_HOME", str(tmp_path / "home"))
    return TestClient(create_app(three_seasons[0], None))


def rating_rows(html: str) -> dict[str, int]:
    table = html.split('id="rating"')[1].split("</table>")[0]
    return {a: int(n) for a, n in re.findall(r"<tr><td>([^<]+)</td>(?:\s*<td>[^<]*</td>){4}<td>(\d+)</td></tr>", table)}


def test_each_season_alone_with_what_changed(client, three_seasons):
    board = Leaderboard(three_seasons[1], read_only=True)
    s1, s2, s3 = board.seasons()
    html = client.get("/leaderboard").text                  # default: the latest tournament's season
    assert 'id="seasons-table"' in html and html.count('<tr class="current">') == 1
    assert f'<option value="{s3["fingerprint"]}" selected>season 3: {s3["fingerprint"]}' in html
    assert rating_rows(html) == {"plain": 2, "plain+attack": 2}       # 2 games, never 6
    assert "language zh" in html
    # season 2 against the season before it: one field, the changed sentence
    html = client.get(f"/leaderboard?db=board/wis.sqlite&season={s2['fingerprint']}").text
    diff = html.split('id="season-diff"')[1].split("</table>")[0]
    assert re.findall(r"<code>([^<]+)</code>", diff) == ["prompts.rules"] and "not even the spy" in diff
    assert rating_rows(html) == {"plain": 2, "plain+reasoning": 2}
    assert re.search(r'id="scope">2 games of 1 tournament, season 2\.', html)
    # compared with the Chinese season: the language and every template differ
    html = client.get(f"/leaderboard?season=2&compare={s3['fingerprint']}").text
    fields = re.findall(r"<code>([^<]+)</code>", html.split('id="season-diff"')[1].split("</table>")[0])
    assert {"lang", "rules.max_chars", "prompts.rules", "prompts.identity"} <= set(fields)
    # a tournament's page is its season's; the CSV holds one season
    tid = s1["tournaments"][0]
    html = client.get(f"/leaderboard?tournament={tid}").text
    assert f'<option value="{s1["fingerprint"]}" selected>' in html and "(first season)" in html
    csv_text = client.get(f"/leaderboard.csv?season={s1['fingerprint']}").text
    assert [line.split(",")[2] for line in csv_text.splitlines()[1:]] == ["4", "4"]     # seats of season 1 only
    # a season this database does not hold (picked in another database, then the database changed):
    # the latest season, saying so; as CSV, the error page
    r = client.get("/leaderboard?season=9")
    assert r.status_code == 200 and "Traceback" not in r.text
    assert re.search(r'id="season-missing">season (&#39;|\')9(&#39;|\'): not found in .*; showing the latest season', r.text)
    assert f'<option value="{s3["fingerprint"]}" selected>' in r.text
    # a season picked in the form while a tournament of another season was still selected
    r = client.get(f"/leaderboard?season={s3['fingerprint']}&tournament={tid}").text
    assert f"tournament {tid} is not in season 3: showing the whole season" in r and "2 games of 1 tournament, season 3" in r
    r = client.get("/leaderboard.csv?season=9")
    assert r.status_code == 404 and re.search(r"season (&#39;|')9(&#39;|'): not found", r.text) and "showing" not in r.text
    r = client.get(f"/leaderboard?season=2&compare=nope")
    assert r.status_code == 200 and "compare: season" in r.text and 'id="season-diff"' in r.text


@pytest.mark.integration
def test_the_seasons_in_chromium(three_seasons, tmp_path, monkeypatch):
    from mas_agents.web.app import create_app
    from tests.web.browser import chromium, need_chromium, serve, shot
    need_chromium()
    monkeypatch.setenv("MAS_DATA_HOME", str(tmp_path / "home"))
    s1, s2, s3 = Leaderboard(three_seasons[1], read_only=True).seasons()
    with serve(create_app(three_seasons[0], None)) as base, chromium() as ctx:
        pg = ctx.new_page()
        pg.goto(base + "/leaderboard")
        options = pg.locator("#season-select option").all_inner_texts()
        assert [o.split(":")[0] for o in options] == ["season 1", "season 2", "season 3"]
        pg.select_option("#season-select", s2["fingerprint"])
        pg.click("form.filters button")
        assert pg.locator("#season-protocol h2").inner_text().startswith("season 2")
        assert pg.locator("#season-diff tbody tr").count() == 1
        assert "prompts.rules" in pg.locator("#season-diff").inner_text()
        assert pg.locator("#rating tbody tr").count() == 2
        shot(pg, "web-leaderboard-seasons.png", tmp_path, publish=False)
        pg.select_option("#compare-select", s3["fingerprint"])
        pg.click("#season-protocol form button")
        assert "season 3" in pg.locator("#season-diff thead").inner_text()
        assert pg.locator("#season-diff tbody tr").count() > 5
        pg.goto(base + "/leaderboard?season=nope")
        assert "not found" in pg.locator("#season-missing").inner_text()
        assert pg.locator("#season-protocol h2").inner_text().startswith("season 3")
        shot(pg, "web-leaderboard-bad-season.png", tmp_path, publish=False)
        pg.goto(base + f"/leaderboard?season={s2['fingerprint']}#seasons")
        shot(pg, "web-leaderboard-seasons-list.png", tmp_path, publish=False)


def test_an_old_database_shows_as_an_unknown_protocol_season_and_is_not_changed(tmp_path, monkeypatch):
    from fastapi.testclient import TestClient

    from mas_agents.web.app import create_app
    from tests.eval.test_wis_seasons import old_database
    monkeypatch.setenv("MAS_DATA_HOME", str(tmp_path / "home"))
    (tmp_path / "runs" / "old").mkdir(parents=True)
    db = tmp_path / "runs" / "old" / "wis.sqlite"
    old_database(db)
    before = sorted(p.name for p in db.parent.iterdir()), db.read_bytes()
    html = TestClient(create_app(tmp_path / "runs", None)).get("/leaderboard").text
    assert "season 1 (unknown protocol)" in html and "protocol not recorded" in html
    assert re.search(r'id="leaderboard">.*<td>plain</td>|agent=plain"', html, re.S)
    assert (sorted(p.name for p in db.parent.iterdir()), db.read_bytes()) == before     # read-only: untouched
