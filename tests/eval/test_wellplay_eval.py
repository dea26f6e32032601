"""WellPlay evaluation runner: baselines on the real data (``realdata``), shuffling, and agents with
fake models on the real script "Sin" (id 131; ``realdata`` too). Expected numbers are derived from
Sin's CSV files read with the csv module (:func:`tests.eval.test_wellplay_loader.sin_rows`)."""

import json
import re
from collections import Counter

import pytest

from mas_agents.graphs.mmg.dataset import load_script
from mas_agents.eval.wellplay.run import WellPlayEvalConfig, run_wellplay_eval
from mas_agents.eval.wellplay.agents import build_eval_agent
from mas_agents.accounting import AccountedModel
from tests.data_roots import SIN, SIN_ID, SIN_QUESTIONS
from tests.eval.test_wellplay_loader import CATEGORY, WEIGHT, sin_rows
from tests.fakes import RuleChat


@pytest.mark.realdata
def test_always_a_unshuffled_on_sin(tmp_path, real_data_root):
    res = run_wellplay_eval(WellPlayEvalConfig(data_root=real_data_root, method="always_a", out=tmp_path,
                                               script="Sin", shuffle=False))
    # From Sin's CSV files: 3 objective, 20 reasoning, 21 relation rows; every truth is one letter and
    # `a` is the truth of 0 objective, 8 reasoning and all 21 relation rows (a multi-select row
    # counts only when its truth is `a`: answering {a} is right iff the culprit is option a), so
    # always-a scores (0*10 + 8*5 + 21*2) / (3*10 + 20*5 + 21*2) = 82 / 172.
    rows = sin_rows(real_data_root)
    assert all(len(r.truth) == 1 for r in rows)
    n = Counter(CATEGORY[r.value] for r in rows)
    right = Counter(CATEGORY[r.value] for r in rows if r.truth == "a")
    assert n == {"objective": 3, "reasoning": 20, "relation": 21} and right == {"reasoning": 8, "relation": 21}
    assert (sum(WEIGHT[r.value] for r in rows if r.truth == "a"), sum(WEIGHT[r.value] for r in rows)) == (82, 172)
    assert res["weighted_score"] == pytest.approx(82 / 172)
    assert {c: v["n"] for c, v in res["counts"].items()} == {"objective": 3, "reasoning": 20, "relation": 21}
    assert res["accuracy"] == {"objective": 0.0, "reasoning": pytest.approx(8 / 20), "relation": 1.0}
    assert res["scripts"] == [SIN[0]]
    files = {p.name for p in tmp_path.iterdir()}
    assert {"config.json", "events.jsonl", "answers.jsonl", "result.json", "report.md", "llm_calls.jsonl"} <= files
    assert len((tmp_path / "answers.jsonl").read_text().splitlines()) == SIN_QUESTIONS == len(rows)


@pytest.mark.realdata
def test_always_a_unshuffled_reproduces_the_position_bias(tmp_path, real_data_root):
    res = run_wellplay_eval(WellPlayEvalConfig(data_root=real_data_root, method="always_a", out=tmp_path,
                                               script="all", shuffle=False))
    # data README: 779 of 1,481 keys are `a`; always-a scores 48.9 % weighted (3083 / 6300)
    assert res["weighted_score"] == pytest.approx(3083 / 6300)
    assert {c: v["n"] for c, v in res["counts"].items()} == {"objective": 117, "reasoning": 800, "relation": 565}
    assert res["accuracy"]["relation"] == pytest.approx(369 / 565)
    files = {p.name for p in tmp_path.iterdir()}
    assert {"config.json", "events.jsonl", "answers.jsonl", "result.json", "report.md", "llm_calls.jsonl"} <= files
    assert len((tmp_path / "answers.jsonl").read_text().splitlines()) == 1482


@pytest.mark.realdata
def test_shuffling_removes_the_bias(tmp_path, real_data_root):
    a = run_wellplay_eval(WellPlayEvalConfig(data_root=real_data_root, method="always_a", out=tmp_path / "a", runs=3))
    r = run_wellplay_eval(WellPlayEvalConfig(data_root=real_data_root, method="random", out=tmp_path / "r", runs=3))
    assert a["shuffle"] and r["shuffle"]
    assert a["weighted_score"] < 0.35 and r["weighted_score"] < 0.35
    assert abs(a["weighted_score"] - r["weighted_score"]) < 0.05
    assert a["weighted_score_std"] > 0  # different seeds, different orders
    assert [x["seed"] for x in a["runs"]] == [0, 1, 2]


@pytest.mark.realdata
def test_same_seed_same_shuffle_and_upstream_scoring_option(tmp_path, real_data_root):
    one = run_wellplay_eval(WellPlayEvalConfig(data_root=real_data_root, method="always_a", out=tmp_path / "1",
                                               script="Sin", seed=7))
    two = run_wellplay_eval(WellPlayEvalConfig(data_root=real_data_root, method="always_a", out=tmp_path / "2",
                                               script=SIN_ID, seed=7))
    assert one["weighted_score"] == two["weighted_score"]
    orders = [[(r["qid"], r["perm"]) for r in map(json.loads, (tmp_path / d / "answers.jsonl").read_text().splitlines())]
              for d in ("1", "2")]
    assert orders[0] == orders[1] and len(orders[0]) == SIN_QUESTIONS  # the same option order, question by question
    up = run_wellplay_eval(WellPlayEvalConfig(data_root=real_data_root, method="always_a", out=tmp_path / "3",
                                              script="Sin", seed=7,
                           scoring="upstream"))
    assert up["scoring"] == "upstream"


def oracle_rule(sc):
    """A fake model that finds the correct option *text* in the prompt and answers its shown letter.

    A question is known by its text and its set of options: in Sin the same text ("Who killed
    Zhao Cishan?", "What is the relationship between ...") comes with different options in
    different characters' files."""
    truth = {}
    for qs in sc.questions.values():
        for q in qs:
            truth[(q.text, frozenset(q.options))] = [q.options["abcde".index(k)] for k in sorted(q.key)]

    def rule(messages):
        prompt = str(messages[1].content)
        qtext = re.search(r"Question: (.*)\n", prompt).group(1)
        shown = {m.group(2): m.group(1) for m in re.finditer(r"^([a-e])\) (.*)$", prompt, re.MULTILINE)}
        letters = sorted({shown[t] for t in truth[(qtext, frozenset(shown))]})
        return "Let me think.\nAnswer: " + ", ".join(letters[:2])
    return rule


def fake_agent_factory(rule):
    def make(sc, name, method, events, model, seed, *, recorder, settings=None, accounted=None, spec="plain"):
        accounted = accounted or AccountedModel(RuleChat(rule=rule), recorder, label="fake", phase="evaluation")
        from mas_agents.graphs.mmg.players import persona_for
        from mas_agents.specs import build_agent
        from mas_agents.memory import HashEmbedder
        agent = build_agent(persona_for(sc, name), "plain", accounted, HashEmbedder())
        return agent, accounted
    return make


@pytest.mark.realdata
def test_agent_answers_are_mapped_back_through_the_shuffle(tmp_path, real_data_root):
    sc = load_script(real_data_root, "Sin")
    # Duplicate option texts (loader warnings) are the only way the oracle can miss; Sin has none.
    assert sc.warnings == []
    res = run_wellplay_eval(WellPlayEvalConfig(data_root=real_data_root, method="pp", out=tmp_path, script="Sin"),
                            make_agent=fake_agent_factory(oracle_rule(sc)))
    assert res["weighted_score"] == pytest.approx(1.0)
    assert res["llm"]["calls"] == SIN_QUESTIONS == len(sin_rows(real_data_root))  # one call per question
    recs = [json.loads(l) for l in (tmp_path / "answers.jsonl").read_text().splitlines()]
    assert len(recs) == SIN_QUESTIONS
    assert all(r["chosen"] == r["key"] or (r["multi"] and set(r["key"]) <= set(r["chosen"])) for r in recs)
    assert any(r["perm"] != sorted(r["perm"]) for r in recs)  # options really were shuffled


@pytest.mark.realdata
def test_unparseable_answers_abstain_and_count(tmp_path, real_data_root):
    res = run_wellplay_eval(WellPlayEvalConfig(data_root=real_data_root, method="pp", out=tmp_path, script="Sin"),
                            make_agent=fake_agent_factory(lambda m: "I refuse to pick."))   # garbage on purpose
    assert res["weighted_score"] == 0.0
    assert res["runs"][0]["abstained"] == SIN_QUESTIONS
    assert res["llm"]["calls"] == 2 * SIN_QUESTIONS  # one re-prompt per question


def test_session_needs_a_game_dir(tmp_path):
    # both errors come before any data is read: the datasets root need not even exist
    no_data = tmp_path / "no-datasets"
    with pytest.raises(ValueError, match="--run"):
        run_wellplay_eval(WellPlayEvalConfig(data_root=no_data, method="session", out=tmp_path / "out"))
    with pytest.raises(ValueError, match=r"--run .*nope: no such directory"):
        run_wellplay_eval(WellPlayEvalConfig(data_root=no_data, method="session", out=tmp_path / "out",
                                             run=tmp_path / "nope"))


@pytest.mark.realdata
def test_session_agent_remembers_only_what_it_heard(real_data_root):
    sc = load_script(real_data_root, "Sin")
    events = [
        {"kind": "answer", "actor": "Chief Wang", "visible_to": ["*"], "round": 1, "content": "I was home.",
         "data": {"asker": "Officer Li", "question": "Where were you?"}},
        {"kind": "answer", "actor": "Officer Li", "visible_to": ["Officer Li"], "round": 1, "content": "secret",
         "data": {"asker": "Chief Wang", "question": "private?"}},
    ]
    from mas_agents.call_log import CallRecorder
    from mas_agents.memory import default_embedder
    from mas_agents.memory.chunking import pack_chunks

    def no_call(messages):
        raise AssertionError("building an evaluation agent calls no model")
    me = "Hu Investigate"
    agent, _ = build_eval_agent(sc, me, "session", events, RuleChat(rule=no_call), 0,
                                recorder=CallRecorder(None))
    texts = [c.text for c in agent.memory.all_chunks("dialogue")]
    assert texts == ["Officer Li asked Chief Wang: «Where were you?»\nChief Wang answered: «I was home.»"]
    assert agent.persona.role == "respondent"  # after the game everyone answers truthfully
    pp, _ = build_eval_agent(sc, me, "pp", events, RuleChat(rule=no_call), 0,
                             recorder=CallRecorder(None))
    assert pp.memory.all_chunks("dialogue") == []
    op, _ = build_eval_agent(sc, me, "op", events, RuleChat(rule=no_call), 0,
                             recorder=CallRecorder(None))
    # pp reads its own script only: Hu Investigate's (1,046 MiniLM tokens) packed by whole sentences
    # into 27 chunks of at most 50 tokens; op also every other character's, prefixed "[From X's
    # script] ": Zhang Villager 32, Chief Wang 47, Officer Li 33 chunks, so 27 + 112 = 139. The
    # chunk texts are exactly mas_agents.memory.chunking.pack_chunks's (tested in tests/memory) on those texts.
    count = default_embedder().count_tokens
    own = pack_chunks(sc.character(me).script, 50, count)
    others = [pack_chunks(f"[From {c.name}'s script] {c.script}", 50, count) for c in sc.characters if c.name != me]
    assert (len(own), [len(o) for o in others]) == (27, [32, 47, 33])
    assert [c.text for c in pp.memory.all_chunks("script")] == own
    assert [c.text for c in op.memory.all_chunks("script")] == own + [t for o in others for t in o]
    assert (len(pp.memory.all_chunks("script")), len(op.memory.all_chunks("script"))) == (27, 139)
