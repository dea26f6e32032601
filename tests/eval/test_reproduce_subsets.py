"""A PLAYER* run you can finish on a laptop (issue 47 item 3): `--langs`, `--methods` and
`--eval-runs` subsets of `mas reproduce player-star` (the report lists what was left out and marks
itself partial), and a WellPlay evaluation cut off midway resuming at its next unanswered question.

Games are real (`play_script`) on the rule fake of tests/eval/test_reproduce_player_star.py; the
evaluations are the real `run_wellplay_eval` with fake answering agents.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mas_agents.eval.reproduce import player_star as ps
from mas_agents.eval.reproduce import player_star_protocol
from mas_agents.accounting import AccountedModel
from tests.eval.test_reproduce_player_star import CountingAgent, fake_rule
from tests.eval.test_wellplay_eval import oracle_rule
from tests.fakes import RuleChat


# ------------------------------------------------------------------ subsets of the protocol


@pytest.fixture(scope="module")
def smoke(tmp_path_factory, real_data_root):
    """The README's smoke subset on fakes: --limit 1 --langs en --methods player_star,pp --eval-runs 1."""
    from mas_agents.graphs.mmg.session import play_script
    from mas_agents.eval.wellplay.run import WellPlayEvalConfig, run_wellplay_eval
    out = tmp_path_factory.mktemp("sub") / "ps"
    plays, evals, asked = [], [], Counter()

    def play(cfg, **kw):
        plays.append((cfg.lang, cfg.agent))
        return play_script(cfg, **kw)

    def evaluate(cfg):
        evals.append((cfg.lang, cfg.method, cfg.runs, Path(cfg.out).parts[-4]))

        def make_agent(sc, name, m, events, model_, seed, **_):
            return CountingAgent(name, asked, (Path(cfg.out).parts[-4], seed)), None
        return run_wellplay_eval(cfg, make_agent=make_agent)

    res = ps.reproduce(ps.PlayerStarRun(data_root=real_data_root, out=out, model=RuleChat(rule=fake_rule()), limit=1,
                                        langs="en", methods="player_star,pp", eval_runs=1, play=play, evaluate=evaluate))
    return {"out": out, "res": res, "plays": plays, "evals": evals, "asked": asked, "root": real_data_root}


@pytest.mark.realdata
def test_a_subset_runs_only_its_languages_methods_and_evaluation_runs(smoke):
    assert smoke["plays"] == [("en", "player_star")]                     # pp plays no game; no zh
    assert sorted(smoke["evals"]) == sorted([("en", "session", 1, "player_star"), ("en", "pp", 1, "pp"),
                                             ("en", "always_a", 1, "always_a"), ("en", "random", 1, "random")])
    # Deadly Fountain has 36 questions: one evaluation run of each model method, seed 0 only
    assert smoke["asked"] == {("player_star", 0): 36, ("pp", 0): 36}
    r = smoke["res"]
    assert list(r["langs"]) == ["en"] and r["methods"] == ["player_star", "pp", "always_a", "random"]
    assert r["eval_runs"] == 1 and r["partial"] is True
    assert r["left_out"] == ["language zh", "methods Werewolf, O-CoT, ThinkThrice, OP", "evaluation runs 2 of 3 (ran 1)"]
    assert r["langs"]["en"]["methods"]["player_star"]["pooled"]["runs"] == 1
    assert r["headline"].endswith("1 of 12 scripts per language (partial)")


@pytest.mark.realdata
def test_the_report_marks_itself_partial_and_lists_what_was_left_out(smoke):
    rep = (smoke["out"] / "report.md").read_text(encoding="utf-8")
    assert ("> **Partial run: a subset of the protocol.** Left out: language zh; methods Werewolf, O-CoT, "
            "ThinkThrice, OP; evaluation runs 2 of 3 (ran 1).") in rep
    assert "1 evaluation run (option shuffle and model seed 0; the same for every method; the paper: 3)" in rep
    assert "## Chinese" not in rep
    assert "- Left out of the protocol (a subset run): language zh;" in rep.split("## Protocol differences")[1]
    # a claim that needs a method left out cannot be told
    assert "- PLAYER* is above OP on objective questions: **cannot tell**" in rep
    assert "- English scores above Chinese: **cannot tell**" in rep
    cfg = json.loads((smoke["out"] / "config.json").read_text())
    assert cfg["langs"] == ["en"] and cfg["eval_runs"] == 1 and cfg["methods"] == ["player_star", "pp", "always_a", "random"]


@pytest.mark.realdata
def test_a_rerun_may_add_methods_but_not_change_the_evaluation_runs(smoke):
    kw = dict(data_root=smoke["root"], out=smoke["out"], model=RuleChat(rule=fake_rule()), limit=1, langs="en")
    with pytest.raises(ValueError, match=r"config.json: field 'eval_runs' is 1 but this run asks for 3"):
        ps.reproduce(ps.PlayerStarRun(**kw, methods="player_star,pp"))
    # the same subset again: every cell reused, nothing played or evaluated
    res = ps.reproduce(ps.PlayerStarRun(**kw, methods="pp,player_star", eval_runs=1,
                                        play=lambda *a, **k: pytest.fail("a finished game was played again"),
                                        evaluate=lambda *a, **k: pytest.fail("a finished evaluation was run again")))
    assert res["left_out"] == smoke["res"]["left_out"]


@pytest.mark.parametrize("kw, msg", [
    (dict(langs="en,fr"), "--langs: unknown 'fr'; choose from en, zh"),
    (dict(methods="player_star,plain"), "--methods: unknown 'plain'; choose from player_star, werewolf, ocot, "
                                        "thinkthrice, pp, op"),
    (dict(methods="ocot,ocot"), "--methods: ocot given twice"),
    (dict(methods=""), "--methods: give a comma-separated list"),
    (dict(eval_runs=0), "--eval-runs: 1 to 3 (the paper's 3 passes), got 0"),
    (dict(eval_runs=4), "--eval-runs: 1 to 3"),
])
def test_bad_subsets_are_refused_before_anything_is_written(tmp_path, kw, msg):
    with pytest.raises(ValueError, match=re.escape(msg)):
        ps.reproduce(ps.PlayerStarRun(data_root=tmp_path, out=tmp_path / "out", model="local", **kw))
    assert not (tmp_path / "out").exists()


def test_the_cli_refuses_a_subset_option_of_another_paper(tmp_path):
    from mas_agents.cli import app
    r = CliRunner().invoke(app, ["reproduce", "magic", "--langs", "en", "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "error: --langs: only for 'mas reproduce player-star', not magic" in r.output
    r = CliRunner().invoke(app, ["reproduce", "player-star", "--conditions", "vanilla", "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "error: --conditions: only for 'mas reproduce magic', not player-star" in r.output
    assert not (tmp_path / "o").exists()


def test_left_out_names_every_part_of_the_protocol_not_run():
    assert player_star_protocol.left_out(player_star_protocol.LANGS, player_star_protocol.METHODS, 3) == []
    assert player_star_protocol.left_out(("zh",), ("op",), 2) == ["language en", "methods PLAYER*, Werewolf, O-CoT, ThinkThrice, PP",
                                                "evaluation runs 1 of 3 (ran 2)"]


# ------------------------------------------------------------------ resuming an evaluation


class PowerCut(AssertionError):
    """The process stops here (an AssertionError: the accounted model does not retry it)."""


def counting_factory(rule, prompts: list, cut_after: int | None = None):
    """tests/eval/test_wellplay_eval.py's fake agents, counting the questions put to the model and
    stopping the run (PowerCut) at question ``cut_after + 1``."""
    def counted(messages):
        if cut_after is not None and len(prompts) == cut_after:
            raise PowerCut("the run stops here")
        prompts.append(str(messages[1].content))
        return rule(messages)

    def make(sc, name, method, events, model, seed, *, recorder, settings=None, accounted=None, spec="plain"):
        from mas_agents.graphs.mmg.players import persona_for
        from mas_agents.specs import build_agent
        from mas_agents.memory import HashEmbedder
        accounted = accounted or AccountedModel(RuleChat(rule=counted), recorder, label="fake", phase="evaluation")
        return build_agent(persona_for(sc, name), "plain", accounted, HashEmbedder()), accounted
    return make


@pytest.mark.realdata
def test_an_evaluation_cut_off_midway_resumes_at_its_next_unanswered_question(tmp_path, real_data_root):
    from mas_agents.graphs.mmg.dataset import load_script
    from mas_agents.eval.wellplay.run import PROGRESS, WellPlayEvalConfig, run_wellplay_eval
    sc = load_script(real_data_root, "Deadly Fountain")
    n = len(sc.all_questions())
    assert n == 36
    kw = dict(data_root=real_data_root, method="pp", script="Deadly Fountain", runs=2, concurrency=1)
    whole = run_wellplay_eval(WellPlayEvalConfig(out=tmp_path / "whole", **kw), make_agent=counting_factory(oracle_rule(sc), []))

    out = tmp_path / "cut"
    first: list = []
    with pytest.raises(PowerCut):
        run_wellplay_eval(WellPlayEvalConfig(out=out, **kw), make_agent=counting_factory(oracle_rule(sc), first, cut_after=50))
    assert len(first) == 50 and not (out / "result.json").exists()
    saved = (out / PROGRESS).read_text(encoding="utf-8").splitlines()
    assert len(saved) == 50
    # the process died while writing the 50th answer: that line is torn, so that question is asked again
    (out / PROGRESS).write_text("\n".join(saved[:49]) + "\n" + saved[49][:40], encoding="utf-8")

    again: list = []
    res = run_wellplay_eval(WellPlayEvalConfig(out=out, **kw), make_agent=counting_factory(oracle_rule(sc), again))
    assert len(again) == 2 * n - 49                      # only the unanswered questions were asked
    assert first[49] in again and first[48] not in again
    assert not (out / PROGRESS).exists()
    strip = (lambda recs: [{k: v for k, v in r.items() if k != "call_ids"} for r in recs])
    read = (lambda d: [json.loads(x) for x in (d / "answers.jsonl").read_text().splitlines()])
    assert strip(read(out)) == strip(read(tmp_path / "whole"))      # the same answers as a run never cut
    assert res["weighted_score"] == whole["weighted_score"] == pytest.approx(1.0)
    assert [r["n"] for r in res["runs"]] == [n, n]
    # the calls before the stop stay counted: every question once, the torn one twice, and the call
    # the stop cut off (recorded as failed)
    assert res["llm"]["calls"] == 2 * n + 2 and res["llm"]["failures"] == 1
    events = [json.loads(x) for x in (out / "events.jsonl").read_text().splitlines()]
    assert len([e for e in events if e["kind"] == "mcq"]) == 2 * n


def test_progress_does_not_count_the_free_chance_cells_as_calls_left():
    from mas_agents.eval.reproduce.common import Progress
    lines = []
    p = Progress(4, lines.append, paper="player-star", free=2)
    p.done("en / player_star", 77)
    p.done("en / pp", 36)
    p.done("en / always_a", 0, free=True)
    p.done("en / random", 0, free=True)
    assert [line.split("; ")[1].split(",")[0] for line in lines] == ["~77 model calls left", "~0 model calls left",
                                                                     "~0 model calls left", "~0 model calls left"]
