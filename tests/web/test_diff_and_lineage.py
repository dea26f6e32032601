"""``/diff?a=&b=`` (two runs of one game compared, as ``mas diff`` prints it) and a fork's lineage on
its run page (issue 59 item 4): a Who-is-Spy game on a fake model and its fork at round 2 with another
agent in one seat, served from one ``--runs`` folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from mas_agents.eval.rerun.fork import fork
from mas_agents.game.runner import run
from mas_agents.web.app import create_app
from tests.eval.test_fork import PAIR, LiveModels, vague_player
from tests.fakes import RuleChat


def main(page: str) -> str:
    """The page without its navigation bar (which names the --runs folder on every page)."""
    return page.split("<main>", 1)[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> tuple[TestClient, Path]:
    root = tmp_path_factory.mktemp("diffweb")
    run("wis", root / "parent", model=RuleChat(rule=vague_player), agents=["plain"] * 5, pair=PAIR, seed=3,
        spy_seat=4)
    fork(root / "parent", "round:2", {"Player 2": "plain+reasoning"}, root / "child", live=LiveModels())
    shutil.copytree(root / "parent", root / "copy")
    (root / "not-a-run").mkdir()
    return TestClient(create_app(root, root / "none.sqlite")), root


def test_the_fork_page_names_its_parent_the_fork_point_and_links_the_diff(served):
    client, root = served
    page = client.get("/run/child").text
    assert 'id="fork-of"' in page and 'href="/run/parent"' in page
    assert "Player 2 → plain+reasoning" in page
    assert 'href="/diff?a=parent&amp;b=child"' in page
    assert 'id="fork-of"' not in client.get("/run/parent").text       # a run that is no fork has no lineage


def test_the_diff_of_a_fork_and_its_parent_shows_the_first_difference_and_its_calls(served):
    client, root = served
    r = client.get("/diff", params={"a": "parent", "b": "child"})
    assert r.status_code == 200
    assert "They differ." in r.text and 'id="diff-report"' in r.text
    assert "the configurations differ" in r.text and "forked_from" in r.text
    assert "first difference (events.jsonl)" in r.text
    assert str(root) not in main(r.text)                               # paths as the runs list names them


def test_a_run_and_its_copy_are_identical(served):
    client, _ = served
    r = client.get("/diff", params={"a": "parent", "b": "copy"})
    assert r.status_code == 200 and "Identical." in r.text and "identical (wis" in r.text


@pytest.mark.parametrize("a, b, status, words", [
    ("", "", 200, 'id="diff-form"'),                       # no runs named: the form
    ("parent", "not-a-run", 400, 'id="diff-error"'),       # what mas diff refuses, in one line
    ("parent", "missing", 404, "Not found"),
    ("parent", "../../etc", 403, ""),
])
def test_bad_pairs_are_one_reason_on_the_page(served, a, b, status, words):
    client, root = served
    r = client.get("/diff", params={"a": a, "b": b})
    assert r.status_code == status, r.text[:300]
    assert words in r.text and "Traceback" not in r.text and str(root) not in main(r.text)
