"""``mas reproduce player-star``, the protocol: its numbers (PLAYER* §3-§4), the subsets a run may
take (:func:`check_subsets`, :func:`left_out`), the scripts in the order ``--limit`` takes them
(:func:`script_order`), their statistics (PLAYER* Table 1's unit, :func:`dataset_stats`) and the
plan line printed before a run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mas_agents.graphs.mmg.dataset import load_all

PAPER = "player-star"
#: The methods of PLAYER* §4 in the order of its tables: PLAYER*, the game-playing baselines
#: (Appendix C.2) and the evaluation-only perspectives PP / OP.
METHODS = ("player_star", "werewolf", "ocot", "thinkthrice", "pp", "op")
GAME_METHODS = ("player_star", "werewolf", "ocot", "thinkthrice")
#: The model-free chance lines on the same questions and shuffles (eval/wellplay/evaluate.py).
CHANCE = ("always_a", "random")
LABELS = {"player_star": "PLAYER*", "werewolf": "Werewolf", "ocot": "O-CoT", "thinkthrice": "ThinkThrice",
          "pp": "PP", "op": "OP", "always_a": "always a", "random": "random"}
LANGS = ("en", "zh")
ROUNDS, QUESTIONS, EVAL_RUNS = 3, 1, 3
CATEGORIES = ("objective", "reasoning", "relation")
#: PLAYER* §3: question weights (objective 10, reasoning 5, relation 2).
WEIGHTS = {"objective": 10, "reasoning": 5, "relation": 2}
RESUME_KEYS = ("model", "limit", "rounds", "questions", "eval_runs", "methods")
#: The smoke subset of the README (issue 47 item 3): the cheapest script, English, PLAYER* alone, one
#: evaluation run: ``mas reproduce player-star --limit 1 --langs en --methods player_star --eval-runs 1``
#: (1 game and 36 questions: 77 calls, about 137,000 prompt tokens by ``--estimate``; on the embedded
#: model at the 2-core machine's idle 233 prompt tokens/s, benchmarks/results/llm.md, about 11 minutes
#: of model time). Adding O-CoT (95 calls, 160,000 prompt tokens) doubles it, past 20 minutes.
SMOKE = {"limit": 1, "langs": ("en",), "methods": ("player_star",), "eval_runs": 1}


def check_subsets(langs: Any, methods: Any, eval_runs: Any) -> tuple[tuple[str, ...], tuple[str, ...], int]:
    """Validate ``--langs`` / ``--methods`` / ``--eval-runs`` (strings are comma-separated lists);
    returns ``(langs, methods, eval_runs)`` in the protocol's order (:data:`LANGS`, :data:`METHODS`).

    Raises:
        ValueError: an unknown or repeated language or method, an empty list, or ``eval_runs``
            outside 1..:data:`EVAL_RUNS` (the message names the option and the accepted values)."""
    def items(v: Any, opt: str, known: tuple[str, ...]) -> tuple[str, ...]:
        got = [x.strip() for x in (v.split(",") if isinstance(v, str) else v)]
        if not got or any(not x for x in got):
            raise ValueError(f"{opt}: give a comma-separated list from {', '.join(known)}")
        bad = [x for x in got if x not in known]
        if bad:
            raise ValueError(f"{opt}: unknown {', '.join(map(repr, bad))}; choose from {', '.join(known)}")
        if len(set(got)) != len(got):
            raise ValueError(f"{opt}: {', '.join(sorted({x for x in got if got.count(x) > 1}))} given twice")
        return tuple(x for x in known if x in got)
    langs_t = items(LANGS if langs is None else langs, "--langs", LANGS)
    methods_t = items(METHODS if methods is None else methods, "--methods",
                      METHODS)
    runs = EVAL_RUNS if eval_runs is None else eval_runs
    if not isinstance(runs, int) or not 1 <= runs <= EVAL_RUNS:
        raise ValueError(f"--eval-runs: 1 to {EVAL_RUNS} (the paper's {EVAL_RUNS} passes), got {runs!r}")
    return langs_t, methods_t, runs


def left_out(langs: tuple[str, ...], methods: tuple[str, ...], eval_runs: int) -> list[str]:
    """What a subset run leaves out of the protocol, one phrase each (``[]`` for the whole
    protocol), e.g. ``["language zh", "methods Werewolf, ThinkThrice, PP, OP", "evaluation runs
    2 of 3 (ran 1)"]``."""
    out = []
    if missing := [x for x in LANGS if x not in langs]:
        out.append(f"language{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    if missing := [LABELS[m] for m in METHODS if m not in methods]:
        out.append(f"method{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    if eval_runs < EVAL_RUNS:
        out.append(f"evaluation runs {EVAL_RUNS - eval_runs} of {EVAL_RUNS} (ran {eval_runs})")
    return out


# ----------------------------------------------------------------------------- scripts

def script_order(data_root: Path, lang: str) -> list:
    """Every WellPlay script of ``lang`` (loaded :class:`mas_agents.graphs.mmg.dataset.Script`), cheapest
    first: by number of characters (a game's calls grow with the seats), then number of
    per-character questions (an evaluation's calls), then script id. The order is the same in en
    and zh (the counts are identical, data README "Counts"); ``--limit N`` takes the first N.

    Raises:
        mas_agents.game.data.DataError: a missing or malformed script (names the file)."""
    return sorted(load_all(data_root, lang), key=lambda s: (len(s.characters), len(s.all_questions()), s.id))


def dataset_stats(scripts: list) -> list[dict]:
    """Per script: ``{"id", "name", "characters", "objective", "reasoning", "relation",
    "questions", "murderers"}`` counted from the loaded scripts (per-character question files,
    PLAYER* Table 1's unit)."""
    rows = []
    for s in scripts:
        qs = s.all_questions()
        rows.append({"id": s.id, "name": s.name, "characters": len(s.characters),
                     **{c: sum(1 for q in qs if q.category == c) for c in CATEGORIES},
                     "questions": len(qs), "murderers": sum(1 for c in s.characters if c.is_murderer)})
    return rows



def plan_line(chosen: dict[str, list], methods: tuple[str, ...] = METHODS, eval_runs: int = EVAL_RUNS) -> str:
    """One line saying what the run will play before it starts: games, evaluation calls (one per
    question, run and model method, re-prompts not counted) and the game calls of a plain game
    (per character an introduction and a vote, per round a question and an answer; the methods'
    own planning calls come on top)."""
    n_game = sum(1 for m in methods if m in GAME_METHODS)
    games = sum(len(v) for v in chosen.values()) * n_game
    evals = sum(len(s.all_questions()) for v in chosen.values() for s in v) * eval_runs * len(methods)
    plain = sum((2 + 2 * ROUNDS * QUESTIONS) * len(s.characters) for v in chosen.values() for s in v) * n_game
    return (f"{PAPER}: plan: {', '.join(f'{lang} {[s.name for s in v]}' for lang, v in chosen.items())}; "
            f"{games} games (at least {plain} model calls, more with each method's planning calls) and "
            f"{evals} evaluation calls ({eval_runs} runs x {len(methods)} methods x the questions)")
