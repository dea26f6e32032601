"""WellPlay multiple-choice evaluation (PLAYER* §3) of agents and baselines.

Methods (PLAYER* §3/§4: the game session, PP and OP; plus two model-free baselines):

* ``session``: after a game, each character answers its own question file from its script and
  the dialogue it heard (its visible ``events.jsonl`` entries), via retrieval.
* ``pp`` (personal perspective): each character answers from its own script only, no game.
* ``op`` (omniscient perspective): each character answers with every character's script in its
  retrieval memory.
* ``always_a`` / ``random``: model-free baselines. ``always_a`` picks the first shown option;
  ``random`` picks one shown option uniformly (two distinct ones for a multi-select question,
  the most the strict rule allows).

Options are shuffled with the run's seed by default, because the upstream keys are
position-biased (data README: 779/1,481 keys are ``a``; always-``a`` scores 48.9 %).
Scoring and weights are in :mod:`mas_agents.eval.wellplay.metrics`. A run directory gets ``config.json``,
``events.jsonl`` (one ``mcq`` event per answered question), ``answers.jsonl`` (re-scorable
records), ``llm_calls.jsonl``, ``result.json`` and ``report.md``.

So that a score never stands alone, every evaluation also reports (:func:`chance_and_interval`)
the 95 % interval of its weighted score (percentile bootstrap over questions,
:func:`mas_agents.stats.bootstrap_ratio`) and the scores of ``always_a`` and ``random`` on the same
questions under the same option shuffle, seeds and scoring (what ``--method always_a`` /
``--method random`` with the same options would score).
"""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from mas_agents.graphs.mmg.dataset import Question, Script
from mas_agents.game.cost import cost_line
from mas_agents.eval.wellplay.metrics import WEIGHTS, is_correct, score, shuffled_view
from mas_agents.stats import Estimate, bootstrap_ratio
from mas_agents.action_kinds import LETTERS
from mas_agents.planners.base import ActionRequest
from mas_agents.events import make_event, read_events
from mas_agents.rundir import RunDir, run_each

METHODS = ("session", "pp", "op", "always_a", "random")
MODEL_FREE = ("always_a", "random")
CATEGORIES = tuple(WEIGHTS)


@dataclass
class Answerer:
    """Who answers one character's question file: a callable ``(request) -> (letters|None,
    call_ids, raw)`` over shown options."""

    name: str
    answer: Callable[[ActionRequest], tuple[frozenset[str] | None, list[str], str]]
    #: called once with every request of the file before the first is answered (None: nothing)
    prepare: Callable[[list[ActionRequest]], None] | None = None


def mcq_request(character: str, q: Question, options: tuple[str, ...]) -> ActionRequest:
    """The ``mcq`` action request for one question with its (possibly shuffled) options."""
    how = ("Choose at most two options." if q.multi else "Choose one option.")
    return ActionRequest(
        kind="mcq", actor=character, choices=list(options), multi=q.multi,
        prompt=f"The game is over. Answer this question about the case. {how}\nQuestion: {q.text}",
        query=q.text + " " + " ".join(options),
        context={"qid": q.qid, "category": q.category})


def model_free_answerer(method: str, name: str, rng: random.Random) -> Answerer:
    """The ``always_a`` or ``random`` baseline for one character."""
    def answer(req: ActionRequest):
        n = len(req.choices or [])
        if method == "always_a":
            return frozenset("a"), [], "a"
        k = 2 if req.multi and n >= 2 else 1
        pick = frozenset(rng.sample(LETTERS[:n], k))
        return pick, [], ",".join(sorted(pick))
    return Answerer(name, answer)


def model_free_answerers(method: str, script: Script, rng: random.Random) -> dict[str, Answerer]:
    """``{character name: answerer}``: the ``always_a`` or ``random`` baseline for every character
    of ``script``, all drawing from the one stream ``rng`` (so they must answer in order)."""
    return {c.name: model_free_answerer(method, c.name, rng) for c in script.characters}


def agent_answerer(agent) -> Answerer:
    """Wrap a :class:`mas_agents.agents.Agent` as an answerer (phase ``evaluation``). Its
    ``prepare`` embeds the retrieval queries of every question in one batch (the memory's
    embedder caches each vector in the process, so the question's own search finds it): one
    query at a time, MiniLM took most of the client's CPU of an evaluation
    (benchmarks/results/throughput.md, session 13)."""
    def answer(req: ActionRequest):
        act = agent.act(req, phase="evaluation")
        return (act.value if act.valid else None), act.call_ids, act.raw

    def prepare(reqs: list[ActionRequest]) -> None:
        memory = getattr(agent, "memory", None)
        embedder = getattr(memory, "embedder", None)
        queries = [r.query for r in reqs if r.query]
        if embedder is not None and queries:
            embedder.encode(queries)
    return Answerer(agent.name, answer, prepare)


#: An answered question already on record: ``(script name, character, qid) -> (record, event)``
#: (:func:`evaluate_character` reuses it instead of asking again: a resumed evaluation).
Answered = dict[tuple[str, str, str], tuple[dict, dict]]


def evaluate_character(script: Script, name: str, ans: Answerer, *, seed: int, shuffle: bool, scoring: str,
                       tick: Callable[[], None] | None = None, answered: Answered | None = None,
                       on_answer: Callable[[dict, dict], None] | None = None) -> tuple[list[dict], list[dict]]:
    """Answer every question of one character's file once (see :func:`evaluate_script`).

    ``answered``: questions answered before (a resumed run): their record and event are taken as
    they are, without a call, and the character's agent is asked (and prepared) only when a
    question is left. ``on_answer(record, event)`` is called after each question newly answered
    (the caller saves it, so a run cut off here resumes at the next question)."""
    records, events = [], []
    shown = []
    for q in script.questions.get(name, []):
        if shuffle:
            options, key, perm = shuffled_view(q, random.Random(f"{seed}/{q.qid}"))
        else:
            options, key, perm = q.options, q.key, tuple(range(len(q.options)))
        shown.append((q, key, perm, mcq_request(name, q, options)))
    answered = answered or {}
    todo = [req for q, *_, req in shown if (script.name, name, q.qid) not in answered]
    if ans.prepare is not None and todo:
        ans.prepare(todo)
    for q, key, perm, req in shown:
        done = answered.get((script.name, name, q.qid))
        if done is not None:
            records.append(done[0])
            events.append(done[1])
            if tick:
                tick()
            continue
        chosen, call_ids, raw = ans.answer(req)
        ok = is_correct(chosen, key, q.multi, scoring)
        back = None if chosen is None else sorted(LETTERS[perm[LETTERS.index(c)]] for c in chosen)
        rec = {"qid": q.qid, "script": script.name, "character": name, "category": q.category,
               "multi": q.multi, "question": q.text, "perm": list(perm),
               "chosen_shown": None if chosen is None else sorted(chosen),
               "chosen": back, "key": sorted(q.key), "correct": ok, "abstained": chosen is None,
               "call_ids": call_ids}
        records.append(rec)
        events.append(make_event(
            phase="evaluation", actor=name, kind="mcq", visible_to=[name],
            content=f"{q.text} -> {', '.join(back) if back else '(abstained)'}",
            llm_call_ids=call_ids, data={"qid": q.qid, "correct": ok, "raw": raw[:500]}))
        if on_answer:
            on_answer(rec, events[-1])
        if tick:
            tick()
    return records, events


def answer_order(jobs: list[tuple[Script, Any]]) -> list[tuple[int, int]]:
    """The ``(job index, character index)`` of every character with questions, most questions
    first (ties in script, character order): the order characters start answering when several
    answer at once. Each character's file is a chain of calls, so the longest chain started last
    would set the run's length; longest first is the classic LPT rule of list scheduling
    (Graham 1969), and the order agents are built in before they answer
    (:func:`mas_agents.eval.wellplay.run.run_wellplay_eval`)."""
    counted = [(len(sc.questions.get(ch.name, [])), (i, j)) for i, (sc, _) in enumerate(jobs)
               for j, ch in enumerate(sc.characters)]
    return [key for n, key in sorted(counted, key=lambda c: -c[0]) if n]


def evaluate_scripts(jobs: list[tuple[Script, dict[str, Answerer]]], *, seed: int, shuffle: bool, scoring: str,
                     tick: Callable[[], None] | None = None, concurrency: int = 1, answered: Answered | None = None,
                     on_answer: Callable[[dict, dict], None] | None = None) -> tuple[list[dict], list[dict]]:
    """Answer every per-character question of each ``(script, answerers)`` job once.

    Characters answer their own files; with ``concurrency`` > 1 that many characters (over all
    the scripts) answer at once, each its own questions in order (an agent is never asked two
    things at once), the characters with the most questions first (:func:`answer_order`); with
    ``concurrency`` 1 in script, character order. Records and events come back in script,
    character, question order whatever the concurrency, so a run's files do not depend on it.

    The option shuffle uses ``random.Random(f"{seed}/{qid}")`` per question, so the same seed
    shows the same order to every method (a paired comparison).

    ``answered`` / ``on_answer``: a resumed run's questions already answered, and the callback
    told of each new answer (:func:`evaluate_character`).

    Returns:
        ``(records, events)``: one record per question (qid, character, category, multi,
        perm, chosen/key in upstream letters, correct, abstained, call_ids) and one ``mcq``
        event per question.
    """
    items = [(i, j, sc, ch.name, answerers[ch.name]) for i, (sc, answerers) in enumerate(jobs)
             for j, ch in enumerate(sc.characters) if ch.name in answerers]
    if concurrency > 1:
        rank = {k: n for n, k in enumerate(answer_order(jobs))}
        items.sort(key=lambda it: rank.get((it[0], it[1]), len(rank)))
    done: dict[tuple[int, int], tuple[list[dict], list[dict]]] = {}

    def one(item):
        i, j, sc, name, ans = item
        done[(i, j)] = evaluate_character(sc, name, ans, seed=seed, shuffle=shuffle, scoring=scoring, tick=tick,
                                          answered=answered, on_answer=on_answer)

    run_each(items, one, concurrency=concurrency)
    records, events = [], []
    for key in sorted(done):
        records += done[key][0]
        events += done[key][1]
    return records, events


def evaluate_script(script: Script, answerers: dict[str, Answerer], *, seed: int, shuffle: bool,
                    scoring: str, tick: Callable[[], None] | None = None, concurrency: int = 1) -> tuple[list[dict], list[dict]]:
    """Answer every per-character question of ``script`` once (:func:`evaluate_scripts` with one job)."""
    return evaluate_scripts([(script, answerers)], seed=seed, shuffle=shuffle, scoring=scoring, tick=tick,
                            concurrency=concurrency)


def summarise(records: Iterable[dict]) -> dict[str, Any]:
    """Weighted score, per-category accuracy and counts (see :func:`mas_agents.eval.wellplay.metrics.score`),
    plus abstentions."""
    records = list(records)
    s = score([(r["category"], r["correct"]) for r in records])
    s["abstained"] = sum(1 for r in records if r["abstained"])
    s["n"] = len(records)
    return s


def aggregate_runs(per_run: list[dict]) -> dict[str, Any]:
    """Mean and sample standard deviation of the weighted score and per-category accuracy over
    runs (std is 0.0 for a single run)."""
    ws = [r["weighted_score"] for r in per_run]
    out = {"weighted_score": statistics.fmean(ws),
           "weighted_score_std": statistics.stdev(ws) if len(ws) > 1 else 0.0,
           "accuracy": {}, "accuracy_std": {}}
    for c in CATEGORIES:
        vals = [r["accuracy"].get(c) for r in per_run if r["accuracy"].get(c) is not None]
        if vals:
            out["accuracy"][c] = statistics.fmean(vals)
            out["accuracy_std"][c] = statistics.stdev(vals) if len(vals) > 1 else 0.0
    out["counts"] = per_run[0]["counts"] if per_run else {}
    return out


def score_interval(records: Iterable[dict], *, level: float = 0.95, n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    """The ``level`` percentile-bootstrap interval of the weighted score, over questions.

    Unit = one question (script, character, qid): its numerator is Σ over runs of w·correct and
    its denominator Σ over runs of w (w = 10 / 5 / 2, :data:`mas_agents.eval.wellplay.metrics.WEIGHTS`), so
    the pooled ratio is the mean over runs of the weighted score (every run asks the same
    questions). Questions are resampled whole (:func:`mas_agents.stats.bootstrap_ratio`, seeded, so the
    same records give the same interval). It measures how much the score depends on which
    questions were asked, not run-to-run variation (that is the std over runs).

    Returns:
        :meth:`mas_agents.stats.Estimate.to_dict` (``mean``/``low``/``high`` as fractions 0..1, ``n`` =
        questions) plus ``"unit": "question"``.
    """
    pooled: dict[tuple[str, str, str], list[int]] = {}
    for r in records:
        w = WEIGHTS[r["category"]]
        acc = pooled.setdefault((r["script"], r["character"], r["qid"]), [0, 0])
        acc[0] += w * bool(r["correct"])
        acc[1] += w
    keys = sorted(pooled)
    est = bootstrap_ratio([pooled[k][0] for k in keys], [pooled[k][1] for k in keys],
                          level=level, n_boot=n_boot, seed=seed)
    return {**est.to_dict(), "unit": "question"}


def chance_and_interval(scripts: list[Script], records: list[dict], *, seed: int, runs: int, shuffle: bool,
                        scoring: str) -> dict[str, Any]:
    """The context of an evaluation's score: its interval and the model-free baselines' scores.

    Args:
        scripts: the scripts the evaluation asked about (every character's question file).
        records: the evaluation's answer records (:func:`evaluate_scripts`, all runs).
        seed, runs, shuffle, scoring: the evaluation's; run ``i`` used seed ``seed + i``.

    Returns:
        ``{"interval": score_interval(records), "chance": {"always_a": ..., "random": ...}}``;
        each chance entry holds ``weighted_score``, ``weighted_score_std`` (over runs),
        ``accuracy`` (per category, fractions 0..1) and its own ``interval``. They are computed
        exactly as ``--method always_a`` / ``--method random`` with the same scripts, seed, runs,
        shuffle and scoring compute theirs (:func:`model_free_answerers`, one
        ``random.Random(seed + i)`` stream per run), so the numbers are the ones such a run reports.
    """
    chance = {}
    for method in MODEL_FREE:
        per_run, recs = [], []
        for i in range(runs):
            rng = random.Random(seed + i)
            r, _ = evaluate_scripts([(sc, model_free_answerers(method, sc, rng)) for sc in scripts],
                                    seed=seed + i, shuffle=shuffle, scoring=scoring)
            per_run.append(summarise(r))
            recs += r
        agg = aggregate_runs(per_run)
        chance[method] = {"weighted_score": agg["weighted_score"], "weighted_score_std": agg["weighted_score_std"],
                          "accuracy": agg["accuracy"], "interval": score_interval(recs)}
    return {"interval": score_interval(records), "chance": chance}


def score_with_interval(score: float | None, interval: dict | None) -> str:
    """A weighted score (fraction 0..1) with its interval (a :func:`score_interval` dict) in percent,
    e.g. ``"32.6 % [24.1, 41.3] (n=44)"`` (:meth:`mas_agents.stats.Estimate.fmt`; n = questions); the
    bare score when there is no interval."""
    if not interval:
        return "-" if score is None else f"{100 * score:.1f} %"
    keys = ("mean", "low", "high", "n", "level", "method")
    return Estimate(**{**{k: interval[k] for k in keys}, "mean": score}).fmt()


def chance_lines(result: dict[str, Any]) -> list[str]:
    """Report lines: a table of the score, ``always_a`` and ``random`` with their 95 % intervals and
    per-category accuracy, and what the interval and the baselines are ([] for a ``result.json``
    written before they were reported)."""
    if "chance" not in result:
        return []
    rows = [(f"{result['method']} (this run)", result["weighted_score"], result.get("interval"), result["accuracy"])]
    rows += [(m, c["weighted_score"], c.get("interval"), c["accuracy"]) for m, c in result["chance"].items()]
    n = (result.get("interval") or {}).get("n")
    lines = ["| answerer | weighted score [95 % interval] (n questions) | "
             + " | ".join(CATEGORIES) + " |", "|---|---|" + "---|" * len(CATEGORIES)]
    for name, ws, iv, acc in rows:
        lines.append(f"| {name} | {score_with_interval(ws, iv)} | "
                     + " | ".join("-" if acc.get(c) is None else f"{100 * acc[c]:.1f} %" for c in CATEGORIES) + " |")
    shuffle = "shuffled with each run's seed" if result["shuffle"] else "in upstream order (position-biased keys)"
    return lines + ["", f"always_a and random answered the same {n} questions with the options {shuffle} and "
                        f"{result['scoring']} scoring, as `--method always_a` / `--method random` with the same seed "
                        "would. Intervals: 95 % percentile bootstrap over questions (each question pooled over "
                        "runs; mas_agents/stats.py bootstrap_ratio)."]


def session_events(run_dir: Path) -> list[dict]:
    """The game events of a finished ``mas mmg run`` directory.

    Raises:
        FileNotFoundError: the directory has no ``events.jsonl`` (message says what to run).
    """
    path = RunDir(run_dir).events
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: --run must be a directory written by `mas mmg run`")
    return read_events(path)


def report_md(result: dict[str, Any]) -> str:
    """A readable Markdown report of an evaluation ``result.json``."""
    acc = result["accuracy"]
    lines = [f"# WellPlay evaluation: {result['method']}", "",
             f"Scripts: {', '.join(result['scripts'])} ({result['lang']}); model: {result.get('model')}; "
             f"scoring: {result['scoring']}; options shuffled: {result['shuffle']}; runs: {len(result['runs'])}", "",
             f"**Weighted score: {score_with_interval(result['weighted_score'], result.get('interval'))}** "
             f"({'95 % interval over questions; ' if result.get('interval') else ''}"
             # a std over one run is no spread, not a 0.0 (issue 46)
             + (f"std {100 * result['weighted_score_std']:.1f} over runs" if len(result["runs"]) > 1 else "one run, so no std over runs")
             + "; weights objective 10 / reasoning 5 / relation 2)"
             + (". Same questions and option shuffle: " + ", ".join(
                 f"{m} {score_with_interval(c['weighted_score'], c.get('interval'))}" for m, c in result["chance"].items())
                + "." if result.get("chance") else ""), ""]
    if result.get("chance"):
        lines += chance_lines(result) + [""]
    lines += ["| category | n | accuracy |", "|---|---|---|"]
    for c in CATEGORIES:
        n = result["counts"].get(c, {}).get("n", 0)
        a = acc.get(c)
        lines.append(f"| {c} | {n} | {'-' if a is None else f'{100 * a:.1f} %'} |")
    lines += ["", "| run | seed | weighted | abstained |", "|---|---|---|---|"]
    for i, r in enumerate(result["runs"]):
        lines.append(f"| {i} | {r['seed']} | {100 * r['weighted_score']:.1f} % | {r['abstained']} / {r['n']} |")
    if result.get("per_character"):
        lines += ["", "| character | n | weighted | abstained |", "|---|---|---|---|"]
        for name, s in result["per_character"].items():
            lines.append(f"| {name} | {s['n']} | {100 * s['weighted_score']:.1f} % | {s['abstained']} |")
    llm = result.get("llm") or {}
    if llm.get("calls"):
        lines += ["", f"LLM calls: {llm['calls']}, prompt tokens: {llm.get('input_tokens')}, "
                      f"completion tokens: {llm.get('output_tokens')}, wall time {result['wall_time_s']:.1f} s"]
    if (llm.get("prompt_cost") or {}).get("calls"):
        lines += ["", f"Prompt cost: {cost_line(llm['prompt_cost'])}."]
    return "\n".join(lines) + "\n"
