"""WellPlay evaluation runner: baselines on the real data (``realdata``), shuffling, and agents with
fake models on the synthetic script "Lantern" (``tests/data``)."""

import json
import re

import pytest

from eval.datasets.wellplay import load_script
from eval.runs.wellplay_run import build_eval_agent, run_wellplay_eval
from mas_agents.accounting import AccountedModel
from tests.data_roots import LANTERN_QUESTIONS
from tests.fakes import RuleChat


def test_always_a_unshuffled_on_the_synthetic_script(tmp_path, synthetic_root):
    res = run_wellplay_eval(data_root=synthetic_root, method="always_a", out=tmp_path, script="all", shuffle=False)
    # 1 of 3 objective, 2 of 11 reasoning and 6 of 8 relation keys are `a` (test_wellplay_scoring)
    assert res["weighted_score"] == pytest.approx(32 / 101)
    assert {c: v["n"] for c, v in res["counts"].items()} == {"objective": 3, "reasoning": 11, "relation": 8}
    assert res["accuracy"] == {"objective": pytest.approx(1 / 3), "reasoning": pytest.approx(2 / 11),
                               "relation": pytest.approx(6 / 8)}
    files = {p.name for p in tmp_path.iterdir()}
    assert {"config.json", "events.jsonl", "answers.jsonl", "result.json", "report.md", "llm_calls.jsonl"} <= files
    assert len((tmp_path / "answers.jsonl").read_text().splitlines()) == LANTERN_QUESTIONS


@pytest.mark.realdata
def test_always_a_unshuffled_reproduces_the_position_bias(tmp_path, real_data_root):
    res = run_wellplay_eval(data_root=real_data_root, method="always_a", out=tmp_path, script="all", shuffle=False)
    # data README: 779 of 1,481 keys are `a`; always-a scores 48.9 % weighted (3083 / 6300)
    assert res["weighted_score"] == pytest.approx(3083 / 6300)
    assert {c: v["n"] for c, v in res["counts"].items()} == {"objective": 117, "reasoning": 800, "relation": 565}
    assert res["accuracy"]["relation"] == pytest.approx(369 / 565)
    files = {p.name for p in tmp_path.iterdir()}
    assert {"config.json", "events.jsonl", "answers.jsonl", "result.json", "report.md", "llm_calls.jsonl"} <= files
    assert len((tmp_path / "answers.jsonl").read_text().splitlines()) == 1482


@pytest.mark.realdata
def test_shuffling_removes_the_bias(tmp_path, real_data_root):
    a = run_wellplay_eval(data_root=real_data_root, method="always_a", out=tmp_path / "a", runs=3)
    r = run_wellplay_eval(data_root=real_data_root, method="random", out=tmp_path / "r", runs=3)
    assert a["shuffle"] and r["shuffle"]
    assert a["weighted_score"] < 0.35 and r["weighted_score"] < 0.35
    assert abs(a["weighted_score"] - r["weighted_score"]) < 0.05
    assert a["weighted_score_std"] > 0  # different seeds, different orders
    assert [x["seed"] for x in a["runs"]] == [0, 1, 2]


def test_same_seed_same_shuffle_and_upstream_scoring_option(tmp_path, synthetic_root):
    one = run_wellplay_eval(data_root=synthetic_root, method="always_a", out=tmp_path / "1", script="Lantern", seed=7)
    two = run_wellplay_eval(data_root=synthetic_root, method="always_a", out=tmp_path / "2", script="9001", seed=7)
    assert one["weighted_score"] == two["weighted_score"]
    up = run_wellplay_eval(data_root=synthetic_root, method="always_a", out=tmp_path / "3", script="Lantern", seed=7,
                           scoring="upstream")
    assert up["scoring"] == "upstream"


def oracle_rule(sc):
    """A fake model that finds the correct option *text* in the prompt and answers its shown letter."""
    truth = {}
    for qs in sc.questions.values():
        for q in qs:
            truth[q.text] = [q.options["abcde".index(k)] for k in sorted(q.key)]

    def rule(messages):
        prompt = str(messages[1].content)
        qtext = re.search(r"Question: (.*)\n", prompt).group(1)
        shown = dict((m.group(2), m.group(1)) for m in re.finditer(r"^([a-e])\) (.*)$", prompt, re.M))
        letters = sorted({shown[t] for t in truth[qtext]})
        return "Let me think.\nAnswer: " + ", ".join(letters[:2])
    return rule


def fake_agent_factory(rule):
    def make(sc, name, method, events, model, seed, *, recorder, settings=None, accounted=None, spec="plain"):
        accounted = accounted or AccountedModel(RuleChat(rule=rule), recorder, label="fake", phase="evaluation")
        from memory import HashEmbedder
        from graphs.mmg.players import persona_for
        from mas_agents.specs import build_agent
        agent = build_agent(persona_for(sc, name), "plain", accounted, HashEmbedder())
        return agent, accounted
    return make


def test_agent_answers_are_mapped_back_through_the_shuffle(tmp_path, synthetic_root):
    sc = load_script(synthetic_root, "Lantern")
    res = run_wellplay_eval(data_root=synthetic_root, method="pp", out=tmp_path, script="Lantern",
                            make_agent=fake_agent_factory(oracle_rule(sc)))
    # Duplicate option texts (loader warnings; Lantern has none) are the only way the oracle can miss.
    assert res["weighted_score"] == pytest.approx(1.0)
    assert res["llm"]["calls"] == LANTERN_QUESTIONS
    recs = [json.loads(l) for l in (tmp_path / "answers.jsonl").read_text().splitlines()]
    assert all(r["chosen"] == r["key"] or (r["multi"] and set(r["key"]) <= set(r["chosen"])) for r in recs)
    assert any(r["perm"] != sorted(r["perm"]) for r in recs)  # options really were shuffled


def test_unparseable_answers_abstain_and_count(tmp_path, synthetic_root):
    res = run_wellplay_eval(data_root=synthetic_root, method="pp", out=tmp_path, script="Lantern",
                            make_agent=fake_agent_factory(lambda m: "I refuse to pick."))   # garbage on purpose
    assert res["weighted_score"] == 0.0
    assert res["runs"][0]["abstained"] == LANTERN_QUESTIONS
    assert res["llm"]["calls"] == 2 * LANTERN_QUESTIONS  # one re-prompt per question


def test_session_needs_a_game_dir(tmp_path, synthetic_root):
    with pytest.raises(ValueError, match="--run"):
        run_wellplay_eval(data_root=synthetic_root, method="session", out=tmp_path)
    with pytest.raises(FileNotFoundError):
        run_wellplay_eval(data_root=synthetic_root, method="session", out=tmp_path, run=tmp_path / "nope")


def test_session_agent_remembers_only_what_it_heard(synthetic_root):
    sc = load_script(synthetic_root, "Lantern")
    events = [
        {"kind": "answer", "actor": "Tobias Fenn", "visible_to": ["*"], "round": 1, "content": "I was home.",
         "data": {"asker": "Selka Dorn", "question": "Where were you?"}},
        {"kind": "answer", "actor": "Selka Dorn", "visible_to": ["Selka Dorn"], "round": 1, "content": "secret",
         "data": {"asker": "Tobias Fenn", "question": "private?"}},
    ]
    from mas_agents.accounting import CallRecorder

    def no_call(messages):
        raise AssertionError("building an evaluation agent calls no model")
    agent, _ = build_eval_agent(sc, "Harlow Reed", "session", events, RuleChat(rule=no_call), 0,
                                recorder=CallRecorder(None))
    texts = [c.text for c in agent.memory.all_chunks("dialogue")]
    assert texts == ["Selka Dorn asked Tobias Fenn: Where were you?\nTobias Fenn answered: I was home."]
    assert agent.persona.role == "respondent"  # after the game everyone answers truthfully
    pp, _ = build_eval_agent(sc, "Harlow Reed", "pp", events, RuleChat(rule=no_call), 0,
                             recorder=CallRecorder(None))
    assert pp.memory.all_chunks("dialogue") == []
    op, _ = build_eval_agent(sc, "Harlow Reed", "op", events, RuleChat(rule=no_call), 0,
                             recorder=CallRecorder(None))
    # pp reads its own script (3 chunks of at most 50 MiniLM tokens), op every character's (3 + 11)
    assert (len(pp.memory.all_chunks("script")), len(op.memory.all_chunks("script"))) == (3, 14)
