"""The ``mas`` command line.

Commands::

    mas data check [--lang en|zh|all]
    mas mmg run --script NAME [--agent plain] [--model local] [--rounds 3] [--questions 1]
                [--seed 0] [--out DIR] [--resume] [--human CHARACTER]
    mas wellplay eval --method session|pp|op|always_a|random [--run DIR] [--script NAME|all]
                [--lang en|zh] [--model local] [--seed 0] [--runs 1] [--no-shuffle]
                [--scoring strict|upstream] [--out DIR]
    mas wellplay compare [--methods ...] [--script NAME|all] [--seeds N] ...
    mas spy play|tournament|leaderboard|experiment|replay|serve-agent   (see mas_agents.cli.spy)
    mas magic run --scenario all --challenger SPEC --defender SPEC [--settings 0-1] ...  (mas_agents.cli.magic)
    mas serve [--runs DIR] [--db FILE] [--host 127.0.0.1] [--port 8000]   (the web app, mas_agents.web)
    mas doctor [--model openai:NAME] [--json]   (the installation, for a bug report: mas_agents.cli.doctor)
    mas reproduce magic|player-star|wis|all --model SPEC [--others SPEC] [--limit N]   (mas_agents.cli.reproduce)
    mas rerun RUN_DIR [--out DIR] [--rescore]   (re-execute a run on its recorded prompts: mas_agents.cli.rerun)
    mas diff RUN_A RUN_B [--json]   (where two runs of one game part: mas_agents.cli.diff)
    mas fork RUN_DIR --at STEP --seat NAME --agent SPEC [--model M] [--out DIR]   (mas_agents.cli.fork)

Every command takes ``--data-dir`` (else ``$MAS_DATA_DIR``, else ``../shared/datasets`` beside
the repository). Heavy modules are imported inside the commands so ``mas --help`` is fast: the runners
(``mas_agents.game.runner``, the games' sessions: langchain, langgraph), ``mas_agents.specs`` and ``mas_agents.memory`` (faiss)
and ``wellplay_eval`` (numpy). Each command's typer function takes one parameter per option (how
typer reads options) and builds its run's typed configuration once (issue 51 item 5).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from mas_agents.memory import MemorySettings

# rich_markup_mode=None: click's plain help, which wraps long option names instead of cutting
# them at 80 columns ("--max-connecti…") and prints "[ray]" as typed (rich took it for markup);
# typer hands the root's mode to every sub-command. No locals in a bug's traceback: they can hold
# API keys and whole prompts.
app = typer.Typer(help="mas-agents: LLM multi-agent games and their evaluation.", no_args_is_help=True,
                  add_completion=False, rich_markup_mode=None, pretty_exceptions_show_locals=False)
data_app = typer.Typer(help="Datasets.", no_args_is_help=True)
mmg_app = typer.Typer(help="Murder-mystery games on WellPlay scripts.", no_args_is_help=True)
wellplay_app = typer.Typer(help="WellPlay multiple-choice evaluation.", no_args_is_help=True)
app.add_typer(data_app, name="data")
app.add_typer(mmg_app, name="mmg")
app.add_typer(wellplay_app, name="wellplay")


def _add_spy() -> None:
    app.add_typer(spy_app, name="spy")
    app.add_typer(magic_app, name="magic")
    app.command("ablate")(ablate)
    app.command("serve")(serve)
    app.command("doctor")(remote_options(doctor))
    app.command("reproduce")(remote_options(executor_options(reproduce)))
    app.add_typer(game_app, name="game")
    app.command("rerun")(rerun)
    app.command("diff")(diff)
    app.command("fork")(fork)
    guard.guard_commands(app)   # every command: one line for a Ctrl-C or a path the system refuses

# below the sub-apps: the command modules import mas_agents.cli.* from this package
from mas_agents.cli.options import (
    Concurrency,
    DataDir,
    Lang,
    Model,
    Seed,
    Verbose,
    executor_options,
    remote_options,
)
from mas_agents.cli.failure import console, set_resume_hint  # noqa: E402
from mas_agents.cli import guard
from mas_agents.cli import stops
from mas_agents.cli import paths
from mas_agents.cli import options
from mas_agents.cli import progress
from mas_agents.cli import failure  # noqa: E402
from mas_agents.cli.ablate import ablate  # noqa: E402
from mas_agents.cli.diff import diff  # noqa: E402
from mas_agents.cli.doctor import doctor  # noqa: E402
from mas_agents.cli.game import game_app  # noqa: E402
from mas_agents.cli.magic import magic_app  # noqa: E402
from mas_agents.cli.reproduce import reproduce  # noqa: E402
from mas_agents.cli.rerun import rerun  # noqa: E402
from mas_agents.cli.fork import fork  # noqa: E402
from mas_agents.cli.serve import serve  # noqa: E402
from mas_agents.cli.spy import spy_app  # noqa: E402
from mas_agents.game.data import DataError  # noqa: E402
from mas_agents.graphs.mmg.dataset import LANGS, load_all, load_script  # noqa: E402
from mas_agents.rundir import RunDir, default_run_dir, stable_run_dir  # noqa: E402


@app.callback()
def _root() -> None:
    """mas-agents: LLM multi-agent games and their evaluation."""
    stops.install_stop_handler()


@data_app.command("check")
def data_check(lang: str = typer.Option("all", help="en, zh or all"), data_dir: Optional[Path] = DataDir) -> None:
    """Validate the WellPlay files and print counts per script."""

    root = options.data_root(data_dir)
    langs = LANGS if lang == "all" else (lang,)
    for lg in langs:
        if lg not in LANGS:
            failure.fail(f"--lang must be one of en, zh, all (got {lg!r})")
        try:
            scripts = load_all(root, lg)
        except DataError as exc:
            failure.fail(str(exc))
        t = Table(title=f"WellPlay ({lg}) at {root / 'wellplay' / lg}")
        for col in ("id", "script", "chars", "obj", "reas", "rel", "questions", "murderers", "repairs", "warnings"):
            t.add_column(col, no_wrap=col in ("id", "script"))
        tot = {"chars": 0, "objective": 0, "reasoning": 0, "relation": 0, "q": 0}
        for s in scripts:
            qs = s.all_questions()
            cats = {c: sum(1 for q in qs if q.category == c) for c in ("objective", "reasoning", "relation")}
            t.add_row(s.id, s.name, str(len(s.characters)), *(str(cats[c]) for c in cats), str(len(qs)),
                      ", ".join(c.name for c in s.characters if c.is_murderer), str(len(s.repairs)),
                      str(len(s.warnings)))
            tot["chars"] += len(s.characters)
            tot["q"] += len(qs)
            for c in cats:
                tot[c] += cats[c]
        t.add_row("", "total", str(tot["chars"]), str(tot["objective"]), str(tot["reasoning"]),
                  str(tot["relation"]), str(tot["q"]), "", "", "")
        Console(width=max(Console().width, 150)).print(t)
        print("repairs: documented upstream oddities fixed on load; warnings: undocumented ones kept as they are "
              "(blank question texts, duplicated options). Each is listed with file and line by mas_agents.graphs.mmg.dataset.load_script.")
        print(f"{lg}: {len(scripts)} scripts, {tot['chars']} characters, {tot['q']} questions "
              f"({tot['objective']} / {tot['reasoning']} / {tot['relation']})")


#: The retrieval budgets' defaults as the help states them: :class:`mas_agents.memory.MemorySettings`'s
#: (read there would import faiss for ``mas --help``; tests/mas_agents/test_cli_fuzz.py checks they agree).
BUDGET_DEFAULTS = {"script_budget": 4000, "dialogue_budget": 4000, "total_budget": 6000}
ScriptBudget = typer.Option(None, help=f"Tokens of script excerpts per prompt (default {BUDGET_DEFAULTS['script_budget']}, "
                                       "the paper's).")
DialogueBudget = typer.Option(None, help=f"Tokens of dialogue excerpts per prompt (default "
                                         f"{BUDGET_DEFAULTS['dialogue_budget']}, the paper's).")
TotalBudget = typer.Option(None, min=0, help="Tokens of script and dialogue excerpts together per prompt: the dialogue "
                                             f"gets what the script leaves (default {BUDGET_DEFAULTS['total_budget']}; "
                                             "0 = no cap, the paper's separate budgets).")


def _memory_settings(script_budget: int | None, dialogue_budget: int | None, total_budget: int | None) -> "MemorySettings":
    """The retrieval budgets of ``mas mmg run`` and ``mas wellplay eval``: :class:`mas_agents.memory.MemorySettings`
    defaults, each option given replacing its field (``--total-budget 0``: no cap)."""
    from mas_agents.memory import MemorySettings    # faiss: only for the commands that retrieve

    settings = MemorySettings()
    if script_budget is not None:
        settings.script_budget = script_budget
    if dialogue_budget is not None:
        settings.dialogue_budget = dialogue_budget
    if total_budget is not None:
        settings.total_budget = total_budget or None
    return settings


@mmg_app.command("run")
@remote_options
def mmg_run(
    script: str = typer.Option(..., help="Script display name (\"Sin\", \"Death Wears White\") or id (\"131\")."),
    agent: str = typer.Option("plain", help="Agent spec for the non-murderer characters."),
    model: str = Model,
    rounds: int = typer.Option(3, min=0, help="Rounds of open questioning."),
    questions: int = typer.Option(1, min=0, help="Questions each player asks per round."),
    seed: int = Seed,
    lang: str = Lang,
    out: Optional[Path] = typer.Option(None, help="Run directory (default runs/mmg-<script>-<time>)."),
    resume: bool = typer.Option(False, "--resume", help="Continue the interrupted game in --out."),
    human: Optional[str] = typer.Option(None, "--human", help="A character played by a person in the browser "
                                                              "(mas serve), e.g. \"Officer Li\"."),
    script_budget: int = ScriptBudget,
    dialogue_budget: int = DialogueBudget,
    total_budget: int = TotalBudget,
    data_dir: Optional[Path] = DataDir,
    verbose: bool = Verbose,
) -> None:
    """Play one murder-mystery game on a WellPlay script."""
    # one parameter per option (typer); the game's configuration (MmgConfig) is built once below,
    # or read back from the interrupted game's config.json with --resume
    progress.setup_logging(verbose)
    from mas_agents.graphs.mmg.session import MmgConfig, check_human, play_script
    from mas_agents.specs import parse_spec

    root = options.data_root(data_dir)
    settings = _memory_settings(script_budget, dialogue_budget, total_budget)
    try:
        if resume:
            if out is None:
                failure.fail("--resume needs --out DIR, the directory of the interrupted game")
            old = RunDir(out).read_config()
            # "model" lists the seats' models (a human's too): the game ran the --model given
            cfg = MmgConfig.from_record(old, out=out, data_dir=root, model=old.get("default_model", old["model"]))
        else:
            cfg = MmgConfig(script=script, agent=agent, model=model, rounds=rounds, questions=questions, seed=seed,
                            lang=lang, settings=settings, data_dir=root, human=human,
                            out=out or Path())   # the default run directory is named once the script is loaded
        parse_spec(cfg.agent)
        sc = cfg.loaded_script()
        check_human(sc, cfg.human)
    except (FileNotFoundError, KeyError, ValueError, DataError) as exc:
        failure.fail(str(exc))
    if paths.out_is_file("--out", out):
        failure.fail(*paths.out_is_file("--out", out))
    out = out or default_run_dir("mmg", sc.name)   # named after the script's display name, once loaded
    cfg = cfg.replace(script=sc, out=out)
    set_resume_hint(f"rerun with --resume --out {out}")
    if cfg.human:
        console.print(f"{cfg.human} is played in the browser: run [bold]mas serve --runs {out.parent}[/bold] and open "
                      f"the game {out.name}.")
    console.print(f"Loading model [bold]{cfg.model}[/bold] and embeddings ...")
    bound = 2 + len(sc.characters) * (1 + 2 * cfg.rounds * cfg.questions) + cfg.rounds + 2
    with progress.progress() as prog:
        task = prog.add_task(f"{sc.name}", total=bound)
        try:
            result = play_script(cfg, resume=resume, progress=_mmg_progress(prog, task, sc.name, cfg.rounds))
        except (FileExistsError, FileNotFoundError) as exc:
            failure.fail(str(exc))
    oc = result["outcome"] or {}
    for v in oc.get("victims", []):
        tie = ("" if v["accused"] or not v.get("counts") else
               " (votes tied: " + ", ".join(f"{k} {n}" for k, n in v["counts"].items()) + ")")
        console.print(f"victim {v['victim']}: accused {v['accused'] or 'no one'}{tie}; murderer "
                      f"{', '.join(v['murderers'])}; {'correct' if v['correct'] else 'wrong'}")
    llm = result["llm"]
    console.print(f"LLM calls {llm['calls']}, tokens {llm['input_tokens']} in / {llm['output_tokens']} out, "
                  f"invalid actions {result['invalid_actions']}, wall {result['wall_time_s']:.1f} s")
    print(out)


#: Questions answered per progress line of ``mas wellplay eval`` when stderr is not a terminal.
EVAL_LINE_EVERY = 10

#: The murder mystery's graph nodes that end a part of the game (graphs/mmg/graph.py), and what a
#: progress line says of each.
_MMG_MILESTONES = {"introduce": "introductions done", "round_end": "round {k} of {n} done",
                   "tally": "accusations counted"}


def _mmg_progress(prog, task, name: str, rounds: int):
    """``play_script``'s ``progress``: the bar, and when it is off (stderr not a terminal) one
    line per part of the game (introductions, each round, the accusation) with the steps and
    minutes so far: ``12:41:07 Sin: round 1 of 3 done (step 23), 2.5 min``.
    Rounds are numbered from this process's start (a resumed game says "a round done")."""
    import time
    start, seen = time.monotonic(), {"round_end": 0, "first": None, "prev": set()}

    def step(done: int, _bound: int, node: str) -> None:
        prog.update(task, completed=done, description=f"{name}: {node}")
        if not prog.disable:
            return
        if seen["first"] is None:
            seen["first"] = done
        nodes, prev = set(node.split(",")), seen["prev"]
        seen["prev"] = nodes
        # a part that takes one step per character (the introductions) is done when the next begins
        ended = [n for n in ("introduce",) if n in prev and n not in nodes] + [n for n in ("round_end", "tally") if n in nodes]
        for n in ended:
            if n == "round_end":
                seen["round_end"] += 1
            what = (_MMG_MILESTONES[n].format(k=seen["round_end"], n=rounds)
                    if n != "round_end" or seen["first"] == 1 else "a round done")
            progress.say(f"{name}: {what} (step {done}), {(time.monotonic() - start) / 60:.1f} min")
    return step


@wellplay_app.command("eval")
@remote_options
def wellplay_eval(
    method: str = typer.Option(..., help="session | pp | op | always_a | random"),
    run: Optional[Path] = typer.Option(None, help="Game directory (for --method session)."),
    script: str = typer.Option("all", help="Script name or id, or all."),
    lang: str = Lang,
    model: str = Model,
    seed: int = Seed,
    runs: int = typer.Option(1, min=1, help="Evaluation passes (mean and std reported)."),
    no_shuffle: bool = typer.Option(False, "--no-shuffle", help="Keep upstream option order (position-biased keys)."),
    scoring: str = typer.Option("strict", help="strict | upstream"),
    out: Optional[Path] = typer.Option(None, help="Run directory for result.json and report.md "
                                                  "(default runs/eval-<method>-<script or game>-<time>)."),
    script_budget: int = ScriptBudget,
    dialogue_budget: int = DialogueBudget,
    total_budget: int = TotalBudget,
    data_dir: Optional[Path] = DataDir,
    verbose: bool = Verbose,
) -> None:
    """Score a method on WellPlay questions."""
    # one parameter per option (typer); the evaluation's configuration is built once below
    progress.setup_logging(verbose)
    from mas_agents.eval.wellplay.evaluate import score_with_interval
    from mas_agents.eval.wellplay.run import WellPlayEvalConfig, run_wellplay_eval

    root = options.data_root(data_dir)
    settings = _memory_settings(script_budget, dialogue_budget, total_budget)
    label = run.name if (method == "session" and run) else script
    out = out or default_run_dir(f"eval-{method}", label)
    set_resume_hint("rerun the command to evaluate again (an evaluation starts afresh; a game it scores is untouched)")
    with progress.progress() as prog:
        task = prog.add_task(f"{method} questions", total=None)
        try:
            cfg = WellPlayEvalConfig(data_root=root, method=method, out=out, script=script, lang=lang, model=model,
                                     seed=seed, runs=runs, shuffle=not no_shuffle, scoring=scoring, run=run,
                                     settings=settings)
            # without a terminal: one line per EVAL_LINE_EVERY questions answered (and the last)
            res = run_wellplay_eval(cfg, tick=progress.ticker(prog, task, every=EVAL_LINE_EVERY),
                                    total=lambda n: prog.update(task, total=n))
        except (ValueError, FileNotFoundError, DataError) as exc:
            failure.fail(str(exc))
    acc = res["accuracy"]
    iv = res["interval"]
    console.print(f"{method} ({res['scoring']}, shuffle={res['shuffle']}): weighted {score_with_interval(res['weighted_score'], iv)} "
                  f"(95 % interval over questions; "
                  + (f"std {100 * res['weighted_score_std']:.1f} over {len(res['runs'])} runs); "
                     if len(res.get("runs") or []) > 1 else "one run, so no std over runs); ")
                  + ", ".join(f"{c} {100 * a:.1f} %" for c, a in acc.items()))
    console.print(f"same {iv['n']} questions and option shuffle: "
                  + ", ".join(f"{m} {score_with_interval(c['weighted_score'], c['interval'])}" for m, c in res["chance"].items()))
    print(out)


@wellplay_app.command("compare")
@remote_options
@executor_options
def wellplay_compare(
    methods: str = typer.Option(",".join(("pp", "op", "plain", "player_star", "werewolf", "ocot", "thinkthrice", "always_a", "random")),
                                help="Comma-separated: pp, op, always_a, random and agent specs (plain, player_star, ...)."),
    script: str = typer.Option("Sin", help="Script name or id, or all."),
    seeds: int = typer.Option(1, min=1, help="Seeds 0..N-1; each seed = one game per method and one option shuffle."),
    model: str = Model,
    rounds: int = typer.Option(3, min=0), questions: int = typer.Option(1, min=0),
    concurrency: Optional[int] = Concurrency,
    lang: str = Lang,
    out: Optional[Path] = typer.Option(None, help="Run directory; rerun the same command with it to resume."),
    data_dir: Optional[Path] = DataDir,
    verbose: bool = Verbose,
) -> None:
    """Play and evaluate several methods on the same scripts and seeds; resumable."""
    # one parameter per option (typer); the comparison's configuration is built once below
    progress.setup_logging(verbose)
    from mas_agents.eval.compare.run import CompareConfig, run_compare
    from mas_agents.eval.compare.report import count_text, score_text, spread_text
    from mas_agents.eval.compare.table import is_game_method

    root = options.data_root(data_dir)
    names = [m.strip() for m in methods.split(",") if m.strip()]
    try:
        scripts = load_all(root, lang) if script.lower() == "all" else [load_script(root, script, lang)]
    except DataError as exc:
        failure.fail(str(exc))
    out = out or stable_run_dir("compare", script, lang, model, f"r{rounds}q{questions}")
    with progress.progress() as prog:
        task = prog.add_task("compare", total=len(names) * len(scripts) * seeds)
        try:
            cfg = CompareConfig(data_root=root, out=out, methods=names, scripts=scripts, seeds=seeds, model=model,
                                lang=lang, rounds=rounds, questions=questions, concurrency=concurrency)
            res = run_compare(cfg, tick=progress.ticker(prog, task))
        except (ValueError, DataError) as exc:
            failure.fail(str(exc))
    for t in res["table"]:
        seat = ("" if t.get("game_seat_calls") is None or not is_game_method(t["method"]) else
                f" (per-seat calls {count_text(t['game_seat_calls'])}"
                + "".join(f", ×{r:.2f} vs {name}" for name, r in (("cheapest baseline", t.get("seat_calls_vs_cheapest_baseline")),
                                                              ("plain", t.get("seat_calls_vs_plain"))) if r is not None) + ")")
        console.print(f"{t['method']:>12}: {score_text(t, '%')}, {spread_text(t)}, "
                      f"game calls {t['game_calls']:.0f}{seat}, eval calls {t['eval_calls']:.0f}")
    console.print(res["fewer_calls"])
    console.print(f"cells reused from an earlier run: {res['reused_cells']} of {len(res['cells'])}")
    print(out)


_add_spy()


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
