"""How far a WellPlay evaluation (``mas wellplay eval``) is, read from what its runner has written
so far: the "k of N answered" of its runs-list line, run page and evaluation page."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Callable

from mas_agents.game import experiments
from mas_agents.web.run_kinds import detect_kind, run_state
from mas_agents.web.paths import read_json as _read
from mas_agents.rundir import RunDir


@functools.lru_cache(maxsize=16)
def _question_counts(load: Callable[[Path, str, str], Any], data_root: Path, scripts: tuple[str, ...],
                     lang: str) -> tuple[tuple[str, str, int], ...] | None:
    """``((script, character, questions), ...)`` in script, character order, from the dataset
    under ``data_root`` read by ``load`` (:attr:`mas_agents.game.experiments.ExperimentDef.script`;
    None when a script cannot be read there)."""
    out = []
    for name in scripts:
        try:
            sc = load(data_root, name, lang)
        except Exception:   # DataError, OSError: no such script here; the totals stay unknown
            return None
        out += [(sc.name, c.name, len(sc.questions.get(c.name, []))) for c in sc.characters
                if sc.questions.get(c.name)]
    return tuple(out)


def eval_progress(d: Path, data_root: Path | None = None) -> dict[str, Any]:
    """How far a WellPlay evaluation (``mas wellplay eval``) is, read from what its runner has
    written so far (``eval/wellplay/run.py``): ``answers.jsonl`` holds the records of every
    finished run (of ``--runs``), rewritten as each run ends, and ``llm_calls.jsonl`` one line per
    model call as it returns; a question's first call is ``purpose`` ``mcq#1`` by the character
    (``actor``) answering it (:meth:`mas_agents.agents.Agent.act`; ``mcq#2`` is its re-prompt). A
    character's answered questions are the larger of its records and its first calls (the calls
    of earlier runs are in both). Totals (``runs`` × the questions of each character) come from
    the dataset's question files when ``data_root`` holds the run's scripts (read by its
    experiment's :attr:`mas_agents.game.experiments.ExperimentDef.script`), else are None.
    Model-free methods (``always_a``, ``random``) make no calls: they show their answers when
    written.

    Returns:
        ``{"done", "total" (None: unknown), "text" ("k of N answered" / "k answered"),
        "characters": [{"script", "character", "done", "total"}], "running": [] (no sub-runs),
        "live": the run is running (the page polls), "finished": result.json is written}``.
    """
    d = Path(d)
    cfg = _read(RunDir(d).config)
    cfg = cfg if isinstance(cfg, dict) else {}
    runs = int(cfg.get("runs") or 1) if str(cfg.get("runs") or "1").isdigit() else 1
    scripts = tuple(str(x) for x in cfg.get("scripts") or [])
    kind = detect_kind(d) or ""
    rk = experiments.find(kind)
    load = rk.script if rk is not None else None
    counts = (_question_counts(load, Path(data_root).resolve(), scripts, str(cfg.get("lang") or "en"))
              if data_root is not None and scripts and load is not None else None)
    recs: dict[tuple[str, str], int] = {}
    for r in _jsonl(d / "answers.jsonl"):
        key = (str(r.get("script") or ""), str(r.get("character") or ""))
        recs[key] = recs.get(key, 0) + 1
    firsts: dict[str, int] = {}
    for c in _jsonl(RunDir(d).calls):
        if str(c.get("purpose") or "").startswith("mcq#1") and c.get("phase", "evaluation") == "evaluation":
            firsts[str(c.get("actor"))] = firsts.get(str(c.get("actor")), 0) + 1
    by_char = {ch: sum(n for (_, c), n in recs.items() if c == ch) for _, ch in recs}
    rows = []
    if counts is not None:
        for sc, ch, n in counts:
            done = max(recs.get((sc, ch), 0), firsts.get(ch, 0))
            rows.append({"script": sc, "character": ch, "done": min(done, runs * n), "total": runs * n})
        total: int | None = sum(r["total"] for r in rows)
    else:
        for ch in dict.fromkeys([c for _, c in recs] + list(firsts)):
            rows.append({"script": next((s for s, c in recs if c == ch), ""), "character": ch,
                         "done": max(by_char.get(ch, 0), firsts.get(ch, 0)), "total": None})
        total = None
    done = sum(r["done"] for r in rows)
    finished = isinstance(_read(RunDir(d).result), dict)
    state = "finished" if finished else run_state(d, kind)[0]
    text = f"{done} of {total} answered" if total else f"{done} answered"
    if runs > 1 and total:
        text += f" ({runs} runs of {total // runs} questions)"
    return {"done": done, "total": total, "text": text, "characters": rows, "running": [],
            "live": state == "running", "finished": finished}


def _jsonl(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines file ([] when missing; a line being written, not yet
    whole, or any other unreadable line is skipped)."""
    out = []
    try:
        with Path(path).open(encoding="utf-8") as fh:
            for line in fh:
                try:
                    x = json.loads(line)
                except ValueError:
                    continue
                if isinstance(x, dict):
                    out.append(x)
    except OSError:
        pass
    return out

