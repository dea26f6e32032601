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
Scoring and weights are in :mod:`eval.metrics.wellplay`. A run directory gets ``config.json``,
``events.jsonl`` (one ``mcq`` event per answered question), ``answers.jsonl`` (re-scorable
records), ``llm_calls.jsonl``, ``result.json`` and ``report.md``.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from eval.datasets.wellplay import Question, Script
from eval.metrics.wellplay import WEIGHTS, is_correct, score, shuffled_view
from mas_agents.actions import LETTERS, ActionRequest
from mas_agents.events import make_event, read_events, visible_events

METHODS = ("session", "pp", "op", "always_a", "random")
MODEL_FREE = ("always_a", "random")
CATEGORIES = tuple(WEIGHTS)


@dataclass
class Answerer:
    """Who answers one character's question file: a callable ``(request) -> (letters|None,
    call_ids, raw)`` over shown options."""

    name: str
    answer: Callable[[ActionRequest], tuple[frozenset[str] | None, list[str], str]]


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


def agent_answerer(agent) -> Answerer:
    """Wrap a :class:`mas_agents.agent.Agent` as an answerer (phase ``evaluation``)."""
    def answer(req: ActionRequest):
        act = agent.act(req, phase="evaluation")
        return (act.value if act.valid else None), act.call_ids, act.raw
    return Answerer(agent.name, answer)


def evaluate_character(script: Script, name: str, ans: Answerer, *, seed: int, shuffle: bool, scoring: str,
                       tick: Callable[[], None] | None = None) -> tuple[list[dict], list[dict]]:
    """Answer every question of one character's file once (see :func:`evaluate_script`)."""
    records, events = [], []
    for q in script.questions.get(name, []):
        if shuffle:
            options, key, perm = shuffled_view(q, random.Random(f"{seed}/{q.qid}"))
        else:
            options, key, perm = q.options, q.key, tuple(range(len(q.options)))
        req = mcq_request(name, q, options)
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
        if tick:
            tick()
    return records, events


def evaluate_scripts(jobs: list[tuple[Script, dict[str, Answerer]]], *, seed: int, shuffle: bool, scoring: str,
                     tick: Callable[[], None] | None = None, concurrency: int = 1) -> tuple[list[dict], list[dict]]:
    """Answer every per-character question of each ``(script, answerers)`` job once.

    Characters answer their own files; with ``concurrency`` > 1 that many characters (over all
    the scripts) answer at once, each its own questions in order (an agent is never asked two
    things at once). Records and events come back in script, character, question order whatever
    the concurrency, so a run's files do not depend on it.

    The option shuffle uses ``random.Random(f"{seed}/{qid}")`` per question, so the same seed
    shows the same order to every method (a paired comparison).

    Returns:
        ``(records, events)``: one record per question (qid, character, category, multi,
        perm, chosen/key in upstream letters, correct, abstained, call_ids) and one ``mcq``
        event per question.
    """
    from mas_agents.rundir import run_each

    items = [(i, j, sc, ch.name, answerers[ch.name]) for i, (sc, answerers) in enumerate(jobs)
             for j, ch in enumerate(sc.characters) if ch.name in answerers]
    done: dict[tuple[int, int], tuple[list[dict], list[dict]]] = {}

    def one(item):
        i, j, sc, name, ans = item
        done[(i, j)] = evaluate_character(sc, name, ans, seed=seed, shuffle=shuffle, scoring=scoring, tick=tick)

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
    """Weighted score, per-category accuracy and counts (see :func:`eval.metrics.wellplay.score`),
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


def session_events(run_dir: Path) -> list[dict]:
    """The game events of a finished ``mas mmg run`` directory.

    Raises:
        FileNotFoundError: the directory has no ``events.jsonl`` (message says what to run).
    """
    path = Path(run_dir) / "events.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: --run must be a directory written by `mas mmg run`")
    return read_events(path)


def heard_by(events: list[dict], name: str) -> list[dict]:
    """The game events character ``name`` could see (what it heard in the session)."""
    return visible_events(events, name)


def report_md(result: dict[str, Any]) -> str:
    """A readable Markdown report of an evaluation ``result.json``."""
    acc = result["accuracy"]
    lines = [f"# WellPlay evaluation: {result['method']}", "",
             f"Scripts: {', '.join(result['scripts'])} ({result['lang']}); model: {result.get('model')}; "
             f"scoring: {result['scoring']}; options shuffled: {result['shuffle']}; runs: {len(result['runs'])}", "",
             f"**Weighted score: {100 * result['weighted_score']:.1f} %** "
             f"(std {100 * result['weighted_score_std']:.1f} over runs; weights objective 10 / reasoning 5 / relation 2)", "",
             "| category | n | accuracy |", "|---|---|---|"]
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
    return "\n".join(lines) + "\n"
