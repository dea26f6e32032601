"""``mas reproduce wis``, the report: Tables 2-4 beside the paper's, the checks, the protocol
differences (:data:`DIFFERENCES`) and the one-line headline.
"""

from __future__ import annotations

from mas_agents.graphs.wis.metrics import agent_metrics
from mas_agents.graphs.wis.leaderboard_text import leaderboard_markdown
from mas_agents.eval.reproduce.common import (
    PaperTable,
    differences,
    fmt_estimate,
    md_table,
    partial_note,
    source_line,
    versus_lines,
)


def _pct(est: dict | None) -> str:
    return fmt_estimate(est, scale=100, digits=1)


def _score(est: dict | None) -> str:
    return fmt_estimate(est, scale=1, digits=2)


def _verdict(p: bool | None) -> str:
    return {True: "pass", False: "**FAIL**", None: "n/a"}[p]


DIFFERENCES = [
    "Paper version: v1 of arXiv:2412.03359 (Dec 2024), the one transcribed; v2 (Jun 2025, retitled) was not "
    "checked and may differ.",
    "Models: the paper's ten models (GPT-4o, o1-mini, Qwen2.5-72B-Instruct, ... as served in late 2024, same "
    "unpublished generation parameters for all) against the pool given with --model, at this project's defaults.",
    "Word list: the platform's word list is unpublished (v1 prints only Tea/Coffee and Sand/Soil in its case "
    "studies); we draw English pairs from the dataset (`whoisspy/pairs_en.jsonl`, from leaf-playground-hub and "
    "LLMArena), without replacement, reshuffled when used up.",
    "Judge: the platform's judge code is unpublished; ours is `mas_agents.graphs.wis.rules.foul` (own word after "
    "normalisation, repeat of any earlier description, no answer, time).",
    "Agents: the platform's agents ran the authors' agent code; ours are this project's `plain` agent (chain of "
    "thought) with our prompts, told only their word, never their role.",
    "Time limit: 10 s per description (App. A) for remote models; none when a seat runs on the embedded model "
    "(its speed is the machine's, so a time foul would measure the CPU).",
    "Main experiment size: the paper says only 'repeated over 90 times' (§5.1); Table 2's rates fit 90 seats per "
    "model (150 games for ten models). We play 90 seats per pool model (15 games per model).",
    "Seating: the paper does not say how seats were assigned, and Table 2's rates fit unequal spy turns per model; "
    "we rotate the spy seat over the pool (`schedule`), so every model is the spy equally often when the game count "
    "allows.",
    "Rank score: the paper's Table 2 prints no rank score (Σ score − N + 100, §3.5) and no game counts; ours are "
    "computed, the paper's are not published.",
    "Experiments: the paper's tested model 'played spy and civilian equally often', each experiment repeated "
    "'more than 24 times' (§5.1), and Table 3 does not say whose votes and fouls it counts. Ours (`mas spy "
    "experiment`): the attacking/defending model is the spy in every game (our blocks act only as the spy), the "
    "reasoning model a civilian in every game, 24 games per arm, the other seats --others or the same model. So "
    "our Table 3 subject never votes as a civilian: beside the paper's vote accuracy we print the other seats' "
    "vote accuracy (how often the civilians' votes found the subject) and their foul rate.",
    "Prompts: the attack, defense and reasoning texts are the paper's (v1 Table 1, verbatim); the paper's case "
    "study (Table 6) shows o1-mini injecting a different text, not used. The reasoning prompt speaks of 'other "
    "people's analysis', so the paper's analyses may have been public; ours stay private (the thought before the vote).",
    "Language: English games only (the platform also plays Chinese).",
]


def report_markdown(result: dict, tables: dict[str, PaperTable], main_games: list[dict]) -> str:
    """The report: partial note, checks, Tables 2–4 beside the paper's, protocol differences."""
    t2, t3, t4 = tables["wis_table2"], tables["wis_table3"], tables["wis_table4"]
    main = result["main"]
    L: list[str] = ["# WiS (Hu et al., arXiv:2412.03359 v1): the paper's protocol on this pool", ""]
    limit_text = "none (embedded model)" if result["speak_timeout"] is None else f"{result['speak_timeout']:g} s"
    L += partial_note(result["limit"], result["games_played"], result["games_planned_full"], "games (main experiment "
                      "plus every experiment arm)")
    if result.get("estimate_vs_actual"):
        L += versus_lines(result["estimate_vs_actual"])
    L += [f"Pool: {', '.join(f'`{lb}`' for lb in result['labels'])} (each seat: our `plain` agent on that model); "
          f"experiments' other seats: `{result['others'] or 'the subject model'}`; seed {result['seed']}; "
          f"time limit {limit_text}. "
          f"Main experiment: {main['games']} of {main['planned_full']} games (6 seats, 1 spy, at most 3 rounds). "
          f"{result['games_played']} distinct games in all (arms with the same seating share games), "
          f"{result['llm_calls']} model calls.", "",
          f"Seating: {main['balance']} Seats played: "
          + ", ".join(f"{lb} {main['seats'].get(lb, 0)} ({main['spy_seats'].get(lb, 0)} as spy)" for lb in result["labels"])
          + ".", ""]

    L += ["## Checks any reimplementation must pass", "",
          "On every game this run played (main experiment and experiment arms), except those marked main experiment.", ""]
    L += md_table(["check", "rule", "result", "evidence"],
                  [[c["check"], c["source"], _verdict(c["passed"]), c["evidence"]] for c in result["checks"]])
    L += ["", "On the paper's own Table 2:", ""]
    L += md_table(["check", "rule", "result", "evidence"],
                  [[c["check"], c["source"], _verdict(c["passed"]), c["evidence"]] for c in result["paper_checks"]])
    L += [""]

    L += ["## Table 2: the main experiment", ""]
    head = ["agent", "source", "spy win rate %", "civilian win rate %", "overall win rate %", "average score",
            "rank score (Σ−N+100)", "seats (spy)"]
    rows = [[r["agent"], "paper", r["spy_win_rate_pct"], r["civilian_win_rate_pct"], r["overall_win_rate_pct"],
             r["average_score"], "not published", "90 (§5.1); spy seats not published"] for r in t2.rows]
    for m in main["models"]:
        rows.append([m["agent"], "this run", _pct(m["win_rate_spy"]), _pct(m["win_rate_civilian"]), _pct(m["win_rate"]),
                     _score(m["avg_score"]), "-" if m["rank_score"] is None else f"{m['rank_score']:.1f}",
                     f"{m['seats']} ({m['spy_seats']})"])
    L += md_table(head, rows)
    L += ["", source_line(t2), "",
          "Ours: win rates with a Wilson 95 % interval over seats (n = seats; a model holding several seats of one "
          "game is not independent across them, so read these as indicative); average score per seat with a "
          "percentile-bootstrap 95 % interval over games (n = games). The paper prints no n or interval.", ""]
    L += ["Our leaderboard (`mas spy leaderboard` columns; vote accuracy and foul rate as §4.1 defines them):", "",
          leaderboard_markdown(agent_metrics(main_games)).rstrip(), ""]
    L += ["Own-word fouls at our table (the description said the speaker's word): "
          + ", ".join(f"{m['agent']} {m['own_word_fouls']}" for m in main["models"]) + ". The agent we serve to the "
          "platform (`mas spy serve-agent`) is re-prompted once when its description holds its word and then "
          "answers the safest legal description, counted as `own_word_safe_reply` (tests: "
          "`tests/graphs/test_wis_platform.py`, `tests/eval/test_reproduce_wis.py`).", ""]

    exps = result["experiments"]
    L += ["## Table 3: attack (PIA) and defense (PID)", ""]
    head = ["model", "source", "metric", "Baseline", "PIA (attack)", "PID (defense)"]
    rows = [[r["model"], "paper", r["metric"], r["baseline"], r["PIA"], r["PID"]] for r in t3.rows]
    for mdl in dict.fromkeys(e["model"] for e in exps):
        arms = {}
        for e in exps:
            if e["model"] == mdl and e["kind"] in ("attack", "defense"):
                for a in e["arms"]:
                    arms.setdefault("baseline" if a["arm"] == "baseline" else e["kind"], a)
        b, at, de = arms.get("baseline"), arms.get("attack"), arms.get("defense")

        def cells(key: str, fmt=_pct) -> list[str]:
            return [fmt(x[key]) if x else "-" for x in (b, at, de)]
        rows += [[mdl, "this run", "Vote Accuracy (%) (the subject's, as a civilian: it is always the spy here)",
                  "-", "-", "-"],
                 [mdl, "this run", "Others' vote accuracy (%) (civilians' votes finding the subject)", *cells("others_vote_accuracy")],
                 [mdl, "this run", "Foul Rate (%) (the subject's)", *cells("foul_rate")],
                 [mdl, "this run", "Others' foul rate (%)", *cells("others_foul_rate")],
                 [mdl, "this run", "Average score (the subject's)", *cells("avg_score", _score)],
                 [mdl, "this run", "Win Rate (%) (the subject's, as the spy)", *cells("win_rate")]]
    L += md_table(head, rows)
    L += ["", source_line(t3), "",
          f"Ours: {exps[0]['games'] if exps else 0} games per arm; rates with a Wilson 95 % interval (n = votes, "
          "descriptions or games), average score with a percentile-bootstrap 95 % interval over games. The baseline "
          "arm is shared by attack and defense (same seating, words and seeds; with a one-model pool it is also "
          "the main experiment's seating, so those games are reused). Prompts (the paper's Table 1, verbatim): "
          f"attack `{tables['wis_table1_prompts'].row(method='Attacking')['prompt']}`; defense "
          f"`{tables['wis_table1_prompts'].row(method='Defense')['prompt']}`.", "",
          source_line(tables["wis_table1_prompts"]), ""]

    L += ["## Table 4: reasoning", ""]
    head = ["setting", "agent", "source", "vote accuracy %", "civilian win rate %", "civilian average score"]
    rows = [[r["setting"], r["agent"], "paper", r["vote_acc"], r["civ_win_rate"], r["civ_avg_score"]] for r in t4.rows]
    for e in exps:
        if e["kind"] != "reasoning":
            continue
        for a in e["arms"]:
            rows.append(["Baseline" if a["arm"] == "baseline" else "Reasoning", e["model"], "this run",
                         _pct(a["vote_accuracy"]), _pct(a["win_rate"]), _score(a["avg_score"])])
    L += md_table(head, rows)
    L += ["", source_line(t4), "",
          "Ours: the tested model is a civilian in every game; same intervals as above. Prompt: "
          f"`{tables['wis_table1_prompts'].row(method='Reasoning')['prompt']}`.", ""]
    L += differences(DIFFERENCES)
    return "\n".join(L) + "\n"


def headline(result: dict) -> str:
    """One line for the runs list and ``mas reproduce all``: games played of the protocol's, the
    checks passed, and the leaderboard's top rank score, e.g. ``10 of 150 games; checks 11/11
    passed; top local #1 rank score 110.0 (partial)``."""
    checks_ = result.get("checks") or []
    board = (result.get("main") or {}).get("leaderboard") or []
    top = max(board, key=lambda m: m.get("rank_score") or 0, default=None)
    return (f"{result.get('games_played')} of {result.get('games_planned_full')} games; "
            f"checks {sum(1 for c in checks_ if c.get('passed'))}/{len(checks_)} passed"
            + (f"; top {top['agent']} rank score {top['rank_score']:.1f}" if top and top.get("rank_score") is not None else "")
            + (" (partial)" if result.get("partial") else ""))
