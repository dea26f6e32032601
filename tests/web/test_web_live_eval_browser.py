"""In a real headless Chromium: the page of a running WellPlay evaluation follows it (its "k of N
answered" line and characters table change as the runner logs calls, without a reload by hand),
and the pages of a runs folder raise no console error (the favicon included)."""

from __future__ import annotations

import json
import time

import pytest

from mas_agents.rundir import write_json, write_run_marker
from tests.web.browser import chromium, need_chromium, serve, shot

pytestmark = pytest.mark.integration


def _call(i: int, actor: str, purpose: str = "mcq#1") -> str:
    return json.dumps({"call_id": f"{i:032x}", "actor": actor, "purpose": purpose, "model": "stub",
                       "input_tokens": 5, "output_tokens": 2, "latency_s": 0.1, "retries": 0, "ok": True,
                       "error": None, "started_at": "2026-11-28T05:29:00.000Z", "prompt_chars": 9,
                       "output_chars": 9, "phase": "evaluation"}) + "\n"


def test_a_running_evaluation_page_follows_the_run(tmp_path, real_data_root):
    need_chromium()
    from mas_agents.graphs.mmg.dataset import load_script
    from mas_agents.web.app import create_app
    sc = load_script(real_data_root, "Sin", "en")
    who = next(c.name for c in sc.characters if sc.questions.get(c.name))
    n_all, n_who = len(sc.all_questions()), len(sc.questions[who])
    root = tmp_path / "runs"
    d = root / "pp-live"
    d.mkdir(parents=True)
    write_json(d / "config.json", {"kind": "wellplay-eval", "method": "pp", "agent": "plain", "scripts": ["Sin"],
                                   "lang": "en", "model": "openai:stub", "seed": 0, "runs": 1, "shuffle": True,
                                   "scoring": "strict", "run": None})
    write_run_marker(d)
    (d / "llm_calls.jsonl").write_text(_call(0, who) + _call(1, who, "mcq#2") + _call(2, who))
    app = create_app(root, tmp_path / "none.sqlite", data_root=real_data_root)
    with serve(app) as base, chromium() as ctx:
        pg = ctx.new_page()
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        pg.goto(base + "/eval/pp-live")
        assert pg.locator("#progress").inner_text().startswith(f"2 of {n_all} answered")
        with (d / "llm_calls.jsonl").open("a") as fh:
            fh.write(_call(3, who) + _call(4, who))
        t0 = time.monotonic()    # polled from here: the page's CSP allows no evaluated script
        while time.monotonic() - t0 < 15 and f"4 of {n_all} answered" not in pg.locator("#progress").inner_text():
            time.sleep(0.2)
        assert pg.locator("#progress").inner_text().startswith(f"4 of {n_all} answered")
        row = pg.locator(f'#eval-characters tr[data-character="{who}"]').inner_text()
        assert f"4 of {n_who}" in row, row
        shot(pg, "web-eval-running.png", tmp_path, publish=False)
        for url in ("/", "/run/pp-live", "/leaderboard", "/play"):
            pg.goto(base + url)
        time.sleep(0.5)
        assert not errors, errors
