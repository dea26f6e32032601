"""Issue 48, item 3: every run says what its prompts cost and what a prefix cache reused or could
have reused (:func:`mas_agents.game.cost.prompt_cost`), in ``result.json`` (``llm.prompt_cost``) and
the report; ``config.json`` records the embedded engine's prefix-cache budget."""

import json

import pytest
from typer.testing import CliRunner

from mas_agents.game.cost import cost_line, prompt_cost, prompt_text, reusable_prefixes
from mas_agents import llm
from mas_agents import embedded


def test_reusable_prefix_is_the_longest_with_any_earlier_text():
    assert reusable_prefixes(["abcdef", "abcxyz", "abd", "zz", "abcdef", "abcdxx", ""]) == [0, 3, 2, 0, 6, 4, 0]
    # not only the previous one: "abcdef" is found after "zz" came between
    assert reusable_prefixes(["b", "a", "c", "bb"]) == [0, 0, 0, 1]


def _write_run(d, calls):
    lines, prompts = [], []
    for i, (actor, phase, msgs, n_in, cached) in enumerate(calls):
        lines.append({"call_id": f"c{i}", "actor": actor, "purpose": "x#1", "model": "m", "input_tokens": n_in,
                      "output_tokens": 5, "latency_s": 0.1, "retries": 0, "ok": True, "error": None,
                      "started_at": "t", "prompt_chars": 1, "output_chars": 1, "phase": phase,
                      "cached_tokens": cached})
        if msgs is not None:
            prompts.append({"call_id": f"c{i}", "messages": msgs, "structured": None, "completion": "ok"})
    (d / "llm_calls.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (d / "llm_prompts.jsonl").write_text("".join(json.dumps(x) + "\n" for x in prompts))


def test_prompt_cost_per_phase_and_actor(tmp_path):
    sys_a = {"role": "system", "content": "Rules. You are Ann."}
    sys_b = {"role": "system", "content": "Rules. You are Bob."}
    a1 = [sys_a, {"role": "user", "content": "Your script: x. Task one."}]
    a2 = [sys_a, {"role": "user", "content": "Your script: x. Task two."}]
    b1 = [sys_b, {"role": "user", "content": "Your script: y. Task one."}]
    _write_run(tmp_path, [("Ann", "gameplay", a1, 100, None), ("Bob", "gameplay", b1, 80, 10),
                          ("Ann", "evaluation", a2, 100, 90), ("Ann", "evaluation", None, 50, None)])
    t = [prompt_text(m) for m in (a1, b1, a2)]
    assert t[0].startswith("\x1esystem\x1fRules. You are Ann.\x1euser\x1fYour script")
    r_b = round(80 * t[1].index("Bob") / len(t[1]))            # shares "...Rules. You are " with Ann's
    r_a2 = round(100 * t[2].index("two") / len(t[2]))          # shares all but "two." with Ann's first
    cost = prompt_cost(tmp_path)
    assert (cost["calls"], cost["prompt_tokens"], cost["cached_tokens"]) == (4, 330, 100)
    assert cost["cached_share"] == round(100 / 180, 4)          # only the calls that reported a count
    assert cost["reusable_tokens"] == r_b + r_a2 and cost["reusable_share"] == round((r_b + r_a2) / 280, 4)
    assert cost["by_phase"]["gameplay"] == {"calls": 2, "prompt_tokens": 180, "cached_tokens": 10,
                                            "cached_share": 0.125, "reusable_tokens": r_b,
                                            "reusable_share": round(r_b / 180, 4)}
    assert cost["by_phase"]["evaluation"]["reusable_share"] == round(r_a2 / 100, 4)   # the unrecorded call is left out
    assert list(cost["by_actor"]) == ["Ann", "Bob"] and cost["by_actor"]["Bob"]["reusable_tokens"] == r_b
    line = cost_line(cost)
    assert "prompt tokens 330" in line and "55.6 %" in line and f"{100 * (r_b + r_a2) / 280:.1f} %" in line


def test_a_run_without_prompts_or_calls(tmp_path):
    assert prompt_cost(tmp_path)["calls"] == 0 and prompt_cost(tmp_path)["reusable_share"] is None
    _write_run(tmp_path, [("Ann", "gameplay", None, 10, None)])
    cost = prompt_cost(tmp_path)
    assert cost["prompt_tokens"] == 10 and cost["reusable_share"] is None and cost["cached_share"] is None
    assert "n/a" in cost_line(cost)


def _factory(settings):
    from mas_agents.accounting import AccountedModel
    from tests.fakes import RuleChat

    def make(sc, name, method, events, model, seed, *, recorder, settings_=None, accounted=None, spec="plain", **kw):
        from mas_agents.graphs.mmg.players import persona_for
        from mas_agents.specs import build_agent
        from mas_agents.memory import HashEmbedder
        accounted = accounted or AccountedModel(RuleChat(rule=lambda m: "Thinking.\nAnswer: a"), recorder,
                                                label="fake", phase="evaluation")
        return build_agent(persona_for(sc, name, role="respondent"), "plain", accounted, HashEmbedder(),
                           settings), accounted
    return make


@pytest.mark.realdata
@pytest.mark.parametrize("budgets", ["default", "paper", "800/500"])
def test_wellplay_evaluation_reports_its_prompt_cost(tmp_path, real_data_root, budgets):
    from mas_agents.eval.wellplay.run import WellPlayEvalConfig, run_wellplay_eval
    from mas_agents.memory import MemorySettings
    settings = {"default": MemorySettings(), "paper": MemorySettings.paper(),
                "800/500": MemorySettings(script_budget=800, dialogue_budget=500)}[budgets]
    res = run_wellplay_eval(WellPlayEvalConfig(data_root=real_data_root, method="pp", out=tmp_path, script="Sin"),
                            make_agent=_factory(settings))
    cost = res["llm"]["prompt_cost"]
    assert cost == json.loads((tmp_path / "result.json").read_text())["llm"]["prompt_cost"]
    assert cost["calls"] == res["llm"]["calls"] and cost["prompt_tokens"] == res["llm"]["input_tokens"]
    assert list(cost["by_phase"]) == ["evaluation"]
    assert set(cost["by_actor"]) == {"Zhang Villager", "Chief Wang", "Officer Li", "Hu Investigate"}
    if budgets != "800/500":
        # the default and the paper's script budget (4,000) cover every Sin script: each character's
        # questions after its first share its system message, whole script and the task's wording
        # (issue 48's target: >= 80 %)
        assert cost["reusable_share"] >= 0.8
        assert all(a["reusable_share"] >= 0.8 for a in cost["by_actor"].values())
    else:
        # the defaults before issue 48: 800 tokens of a 1,000-1,900-token script, so the excerpts
        # vary with the question
        assert 0.1 < cost["reusable_share"] < 0.8
    assert "reusable by an ideal prefix cache" in (tmp_path / "report.md").read_text()
    assert json.loads((tmp_path / "config.json").read_text())["prefix_cache_mb"] == embedded.prefix_cache_mb()


def test_prefix_cache_option_bad_value_is_one_error_line(tmp_path):
    from mas_agents.cli import app
    before = embedded.prefix_cache_mb()
    res = CliRunner().invoke(app, ["mmg", "run", "--script", "Sin", "--prefix-cache-mb", "-1",
                                   "--out", str(tmp_path / "run")])
    assert res.exit_code == 2, res.output
    assert "error:" in res.output and "--prefix-cache-mb" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "run").exists() and embedded.prefix_cache_mb() == before


def test_cli_default_is_the_engine_default():
    from mas_agents.cli.options import _REMOTE_PARAMS
    opt = next(o for name, _, o in _REMOTE_PARAMS if name == "prefix_cache_mb")
    assert opt.default == embedded.DEFAULT_PREFIX_CACHE_MB


def test_calls_made_at_once_are_taken_in_the_order_of_their_events(tmp_path):
    """Two votes made in parallel land in the call log in either order; the events cite them in
    the game's order, so the reusable share is the same whichever finished first."""
    sys_m = {"role": "system", "content": "Rules."}
    long_ = [sys_m, {"role": "user", "content": "Vote now, " + "x" * 50}]
    short = [sys_m, {"role": "user", "content": "Vote now"}]
    _write_run(tmp_path, [("Ann", "gameplay", long_, 100, None), ("Bob", "gameplay", short, 100, None)])
    assert prompt_cost(tmp_path)["by_actor"]["Ann"]["reusable_tokens"] == 0       # log order: Ann first
    events = [{"kind": "vote", "actor": "Bob", "llm_call_ids": ["c1"]},
              {"kind": "vote", "actor": "Ann", "llm_call_ids": ["c0"]}]
    (tmp_path / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    cost = prompt_cost(tmp_path)
    assert cost["by_actor"]["Bob"]["reusable_tokens"] == 0                        # the game's order: Bob first
    assert cost["by_actor"]["Ann"]["reusable_tokens"] == round(100 * len(prompt_text(short)) / len(prompt_text(long_)))
    assert prompt_cost(tmp_path, events[::-1])["by_actor"]["Ann"]["reusable_tokens"] == 0


def test_compare_rows_carry_the_ideal_cache_share(tmp_path):
    """``mas wellplay compare``'s cost columns: the reusable share of the cell's game and evaluation."""
    from types import SimpleNamespace

    from mas_agents.eval.compare.run import summary_row
    ev = {"weighted_score": 0.5, "accuracy": {}, "runs": [{"abstained": 0}], "wall_time_s": 1.0,
          "llm": {"calls": 2, "input_tokens": 10, "output_tokens": 2, "latency_s": 0.5,
                  "prompt_cost": {"reusable_share": 0.625}}}
    game = {"wall_time_s": 1.0, "roles": {}, "llm": {"calls": 1, "input_tokens": 5, "output_tokens": 1,
                                                      "latency_s": 0.1, "prompt_cost": {"reusable_share": 0.25}}}
    for sub, data in (("eval", ev), ("game", game)):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "result.json").write_text(json.dumps(data))
    row = summary_row("plain", SimpleNamespace(name="Sin"), 0, tmp_path)
    assert (row["game_reusable"], row["eval_reusable"]) == (0.25, 0.625)


def test_murder_mystery_transcript_names_the_prompt_cost():
    from types import SimpleNamespace

    from mas_agents.graphs.mmg.session import transcript
    rt = SimpleNamespace(title="Toy", players=[], agents={}, victims=["Vic"])
    cost = {"calls": 3, "prompt_tokens": 1200, "cached_tokens": 0, "cached_share": None,
            "reusable_tokens": 600, "reusable_share": 0.5}
    text = transcript(rt, [], {"llm": {"calls": 3, "input_tokens": 1200, "output_tokens": 30, "prompt_cost": cost},
                               "wall_time_s": 2.0, "invalid_actions": 0})
    assert ("Prompt cost: prompt tokens 1,200; served from the server's prefix cache n/a; "
            "reusable by an ideal prefix cache 50.0 %.") in text
