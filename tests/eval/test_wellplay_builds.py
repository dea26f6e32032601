"""How a WellPlay evaluation schedules its characters and builds their agents
(:func:`mas_agents.eval.wellplay.evaluate.answer_order`, :class:`mas_agents.eval.wellplay.agents.AgentBuilds`): most
questions first, agents built on one thread ahead of the cells, the first characters answering
while later ones are still being built, and files that do not depend on the concurrency. Real
script "Sin" (``realdata``), fake models."""

from __future__ import annotations

import json
import threading

import pytest

from mas_agents.graphs.mmg.dataset import load_script
from mas_agents.eval.wellplay.evaluate import answer_order
from mas_agents.eval.wellplay.run import WellPlayEvalConfig, run_wellplay_eval
from tests.eval.test_wellplay_eval import fake_agent_factory, oracle_rule

pytestmark = pytest.mark.realdata


def _counts(sc):
    return {c.name: len(sc.questions.get(c.name, [])) for c in sc.characters}


def test_answer_order_is_most_questions_first_ties_in_script_order(real_data_root):
    sin = load_script(real_data_root, "Sin")
    other = load_script(real_data_root, "Riverside Inn")
    jobs = [(sin, None), (other, None)]
    order = answer_order(jobs)
    n = [len(jobs[i][0].questions[jobs[i][0].characters[j].name]) for i, j in order]
    assert n == sorted(n, reverse=True) and all(x > 0 for x in n)
    asked = {(i, j) for i, (sc, _) in enumerate(jobs) for j, c in enumerate(sc.characters)
             if sc.questions.get(c.name)}
    assert set(order) == asked and len(order) == len(asked)
    ranked = list(zip(n, order))
    for (na, a), (nb, b) in zip(ranked, ranked[1:]):   # equal counts keep script, character order
        if na == nb:
            assert a < b
    assert len(set(_counts(sin).values()) | set(_counts(other).values())) > 1   # the order is not trivial


def _files(d):
    """A run's answers, events and result without what differs between any two runs (call ids
    are uuid4s, the wall time and the calls' latencies)."""
    def lines(name, drop):
        rows = [json.loads(x) for x in (d / name).read_text().splitlines()]
        for r in rows:
            assert r.pop(drop)                      # every question went to the model
        return rows
    res = json.loads((d / "result.json").read_text())
    res.pop("wall_time_s")
    llm = res.pop("llm")
    return {"answers": lines("answers.jsonl", "call_ids"), "events": lines("events.jsonl", "llm_call_ids"),
            "result": res, "calls": llm["calls"]}


def test_files_do_not_depend_on_concurrency_and_builds_follow_the_answer_order(tmp_path, real_data_root):
    sc = load_script(real_data_root, "Sin")
    made: list[str] = []
    base = fake_agent_factory(oracle_rule(sc))

    def make(sc_, name, *a, **kw):
        made.append(name)
        return base(sc_, name, *a, **kw)

    one = run_wellplay_eval(WellPlayEvalConfig(data_root=real_data_root, method="pp", out=tmp_path / "c1",
                                               script="Sin", concurrency=1), make_agent=make)
    order_c1 = list(made)
    made.clear()
    four = run_wellplay_eval(WellPlayEvalConfig(data_root=real_data_root, method="pp", out=tmp_path / "c4",
                                                script="Sin", concurrency=4), make_agent=make)
    assert one["weighted_score"] == four["weighted_score"] == pytest.approx(1.0)
    assert _files(tmp_path / "c1") == _files(tmp_path / "c4")
    counts = _counts(sc)
    with_questions = [c.name for c in sc.characters if counts[c.name]]
    assert order_c1 == with_questions                       # one at a time: script order, built in its cell
    assert made == sorted(with_questions, key=lambda n: -counts[n])   # in the background: most questions first


def test_first_characters_answer_while_later_agents_are_still_being_built(tmp_path, real_data_root):
    sc = load_script(real_data_root, "Sin")
    answered = threading.Event()
    rule = oracle_rule(sc)

    def answering(messages):
        answered.set()
        return rule(messages)

    base = fake_agent_factory(answering)
    counts = _counts(sc)
    last = sorted((c.name for c in sc.characters if counts[c.name]), key=lambda n: -counts[n])[-1]
    seen: dict[str, bool] = {}

    def make(sc_, name, *a, **kw):
        if name == last:       # built last: a question must have been answered by then
            seen[name] = answered.wait(timeout=20)
        return base(sc_, name, *a, **kw)

    res = run_wellplay_eval(WellPlayEvalConfig(data_root=real_data_root, method="pp", out=tmp_path, script="Sin",
                                               concurrency=4), make_agent=make)
    assert seen == {last: True}
    assert res["weighted_score"] == pytest.approx(1.0)


def test_a_build_that_fails_stops_the_run_and_cancels_the_builds_not_started(tmp_path, real_data_root):
    sc = load_script(real_data_root, "Sin")
    base = fake_agent_factory(oracle_rule(sc))
    counts = _counts(sc)
    order = sorted((c.name for c in sc.characters if counts[c.name]), key=lambda n: -counts[n])
    assert len(order) >= 3
    release = threading.Event()
    made: list[str] = []

    def make(sc_, name, *a, **kw):
        made.append(name)
        if name == order[1]:
            release.wait(timeout=20)        # the first character is answering by now
            raise RuntimeError(f"cannot build {name}")
        return base(sc_, name, *a, **kw)

    def answering_then_release(messages, rule=oracle_rule(sc)):
        release.set()
        return rule(messages)

    first = fake_agent_factory(answering_then_release)

    def make_all(sc_, name, *a, **kw):
        if name == order[0]:
            made.append(name)
            return first(sc_, name, *a, **kw)
        return make(sc_, name, *a, **kw)

    with pytest.raises(RuntimeError, match=f"cannot build {order[1]}"):
        run_wellplay_eval(WellPlayEvalConfig(data_root=real_data_root, method="pp", out=tmp_path, script="Sin",
                                             concurrency=2), make_agent=make_all)
    # the failed build was the second: no build after it
    assert made == order[:2]


@pytest.fixture
def stop_flag():
    from mas_agents import stop
    stop.STOP.clear()
    yield stop.STOP
    stop.STOP.clear()


def test_ctrl_c_while_agents_are_being_built_stops_within_one_build(tmp_path, real_data_root, stop_flag):
    from mas_agents.stop import StopRequested

    sc = load_script(real_data_root, "Sin")
    base = fake_agent_factory(oracle_rule(sc))
    counts = _counts(sc)
    order = sorted((c.name for c in sc.characters if counts[c.name]), key=lambda n: -counts[n])
    made: list[str] = []

    def make(sc_, name, *a, **kw):
        made.append(name)
        if len(made) == 2:
            stop_flag.set()          # what the CLI's Ctrl-C handler does, during the second build
        return base(sc_, name, *a, **kw)

    with pytest.raises(StopRequested):
        run_wellplay_eval(WellPlayEvalConfig(data_root=real_data_root, method="pp", out=tmp_path, script="Sin",
                                             concurrency=len(order)), make_agent=make)
    assert made == order[:2]         # the build under way finished; none after it started


def test_a_cell_that_fails_stops_the_builds_the_others_wait_for(tmp_path, real_data_root):
    sc = load_script(real_data_root, "Sin")
    counts = _counts(sc)
    order = sorted((c.name for c in sc.characters if counts[c.name]), key=lambda n: -counts[n])
    failed = threading.Event()
    made: list[str] = []

    def server_gone(messages):
        failed.set()
        raise RuntimeError("the model server went away")

    base = fake_agent_factory(server_gone)

    def make(sc_, name, *a, **kw):
        made.append(name)
        if len(made) == 2:
            assert failed.wait(timeout=20)   # the first character's call has failed by now
        return base(sc_, name, *a, **kw)

    with pytest.raises(RuntimeError, match="the model server went away"):
        run_wellplay_eval(WellPlayEvalConfig(data_root=real_data_root, method="pp", out=tmp_path, script="Sin",
                                             concurrency=len(order)), make_agent=make)
    # the builder was at most one build past the failure (it may not have started the second
    # when the first character's call failed); without the abort it would build all of them
    assert len(order) > 2 and made in (order[:1], order[:2])
