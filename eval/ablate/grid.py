"""``mas ablate``: one agent design with planner blocks switched on and off, on three benchmarks.

The grid is every subset of ``blocks`` added to ``base`` (for ``--blocks player_star,pgm``:
``base``, ``base+player_star``, ``base+pgm``, ``base+player_star+pgm``), all run on the same
seeds, scripts, word pairs and settings (a paired design):

* **wellplay**: each variant plays the script and is evaluated with ``session``, beside ``pp``,
  ``op``, ``always_a`` and ``random`` under the same per-seed option shuffle
  (:mod:`mas_agents.eval.compare.run`). Unit = seed.
* **spy**: each variant is the subject of a tournament against the base agent: one seat is the
  subject, the others play ``base``; the subject is the spy in the even-numbered games and a
  civilian in the odd ones; seats, word pairs and first speakers are the same for every variant.
  Unit = game.
* **magic**: each variant is the challenger against ``base`` as defender (:mod:`mas_agents.graphs.magic.bench`).
  Unit = setting (a bootstrap resample draws setting ids and recomputes every metric from the
  events of those settings' games).

Every number carries n and a 95 % percentile-bootstrap interval (:mod:`mas_agents.stats`); each
variant's paired difference from the base, for every metric, has its own interval, and the
report says when an interval includes zero. Costs (LLM calls, tokens, seconds of model time) are
summed per variant and bench over the variant's own seats: in WellPlay the characters it plays
(all but the murderer, who always plays ``plain``) and the whole evaluation, the subject's seat
in Who is Spy, the challenger's seats in MAgIC (the base agents around them are not counted). Who is Spy runs without a speaking limit by default (``speak_timeout=None``), so that a
block's extra model calls on a slow machine are not scored as timeout fouls. A rerun with other
settings in the same ``out`` is refused (``config.json``).
Sub-runs are resumable (compare cells, the tournament database, MAgIC game directories), so
rerunning the same command reuses finished cells.

A Python user can pass a custom block: register it with :func:`mas_agents.specs.register_block`
and name it in ``blocks``.

An ablation is configured by one :class:`AblateConfig` (issue 51 item 5), which ``config.json``
records. This module holds the configuration and the runner; the benches are
:mod:`mas_agents.eval.ablate.benches`, the report :mod:`mas_agents.eval.ablate.report`. Imports kept inside functions: ``mas_agents.specs`` (faiss) in
:func:`variants` and the MAgIC bench's plan (langgraph) in :func:`_check_inputs`, so that reading or
reporting an ablation loads neither.
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path
from typing import Any, Callable, Optional

from mas_agents.game.data import data_files, merge_data_files
from mas_agents.graphs.mmg.dataset import load_script
from mas_agents.graphs.wis.dataset import load_pairs
from mas_agents.eval.ablate.benches import run_magic_bench, run_spy, run_wellplay
from mas_agents.eval.ablate.report import figures, report_md, summary
from mas_agents.game.record import check_same_run, model_fields
from mas_agents.game.run_config import NOT_RECORDED, RunConfig
from mas_agents.prompt_log import record_prompts
from mas_agents.graphs.magic.events import SCENARIOS
from mas_agents.model_specs import spec_text
from mas_agents.rundir import RunDir, marks_run, versions

#: the names this module gave before its benches and report moved out (their importers keep working)
__all__ = [
    "AblateConfig",
    "BENCHES",
    "KIND",
    "run_ablate",
    "variants",
]

BENCHES = ("wellplay", "spy", "magic")
#: ``config.json``'s ``kind`` of a ``mas ablate`` run directory.
KIND = "ablation"


@dataclasses.dataclass(frozen=True, kw_only=True)
class AblateConfig(RunConfig):
    """The configuration of one ablation (``mas ablate``, :func:`run_ablate`).

    Recorded in ``config.json`` under these names: ``base``, ``blocks``, ``seeds``, ``script``,
    ``games``, ``players``, ``settings``, ``rounds``, ``lang``, ``speak_timeout``, ``benches``
    (there: every bench the run directory holds, those run before included) and ``command``; the
    runner adds ``kind``, the model fields (:mod:`mas_agents.game.record`), ``data_files``
    (the files of every bench's inputs, an earlier run's benches' too: :func:`_check_inputs`),
    ``record_prompts`` and ``versions``.

    Attributes:
        benches: of :data:`BENCHES`, the ones to run now.
        base: the base agent spec; blocks: the blocks switched on and off (every subset is a variant).
        seeds: WellPlay seeds; script: the WellPlay script; rounds: its games' questioning rounds.
        games, players: Who-is-Spy games per variant and seats per game.
        settings: MAgIC setting ids (``"0-1"``).
        lang: ``en`` or ``zh`` (WellPlay and Who is Spy).
        speak_timeout: the Who-is-Spy speaking limit in seconds (None: no limit; see :func:`run_spy`).
        command: the command line that started the run (``""`` from Python), for the report.
        out: the run directory; data_root: datasets root (neither recorded).
        model: model spec or chat model object of every seat (not recorded as given).
        concurrency: cells or games at once (:func:`mas_agents.cells.run_cells`); not recorded.
    """

    KIND = KIND

    benches: tuple[str, ...] = BENCHES
    base: str = "plain"
    blocks: tuple[str, ...] = ()
    seeds: int = 2
    script: str = "Sin"
    games: int = 4
    players: int = 6
    settings: str = "0-1"
    rounds: int = 3
    lang: str = "en"
    speak_timeout: Optional[float] = None
    command: str = ""
    out: Path = dataclasses.field(metadata=NOT_RECORDED)
    data_root: Path = dataclasses.field(metadata=NOT_RECORDED)
    model: Any = dataclasses.field(default="local", metadata=NOT_RECORDED)
    concurrency: Optional[int] = dataclasses.field(default=None, metadata=NOT_RECORDED)

    def __post_init__(self) -> None:
        object.__setattr__(self, "benches", tuple(self.benches))
        object.__setattr__(self, "blocks", tuple(self.blocks))


def variants(base: str, blocks: list[str]) -> list[str]:
    """``base`` plus every subset of ``blocks`` in order of size: ``[base, base+a, base+b, base+a+b]``.

    Raises:
        ValueError: an unknown block, or a block already in ``base``.
    """
    from mas_agents.specs import parse_spec   # faiss (the planner blocks' memory): only when a grid is built
    parse_spec(base)
    have = set(base.split("+"))
    for b in blocks:
        parse_spec(b)
        if b in have:
            raise ValueError(f"--blocks: {b!r} is already part of the base {base!r}")
    out = [base]
    for k in range(1, len(blocks) + 1):
        for combo in itertools.combinations(blocks, k):
            out.append("+".join([base, *combo]))
    return out


@marks_run
def run_ablate(cfg: AblateConfig, *, tick: Callable | None = None) -> dict:
    """Run the grid of ``cfg`` on its benches and write ``result.json``, ``report.md`` and figures
    into ``cfg.out``; ``tick`` is called with a label as each cell or game finishes.

    Raises:
        ValueError: unknown bench, block, script or settings range.
        RunConflict: ``out`` holds a run of another configuration (:func:`mas_agents.game.record.check_same_run`;
            ``<out>/config.json`` names the field). Benches may differ: a run can be extended
            bench by bench, and the report keeps the benches run before.
        FileNotFoundError / DataError: a data file is missing or malformed.
    """
    out, benches, blocks = Path(cfg.out), list(cfg.benches), list(cfg.blocks)
    bad = [b for b in benches if b not in BENCHES]
    if bad or not benches:
        raise ValueError(f"--bench: unknown {', '.join(bad) or '(empty)'}; expected all or {', '.join(BENCHES)}")
    grid = variants(cfg.base, blocks)
    files = _check_inputs(cfg.data_root, benches, script=cfg.script, lang=cfg.lang, settings=cfg.settings)
    out.mkdir(parents=True, exist_ok=True)
    used = model_fields([spec_text(cfg.model)], cfg.model)   # the agent specs name no model: every seat runs it
    recorded = cfg.record()
    command = recorded.pop("command")
    config = {"kind": KIND, **recorded, "model": used.pop("model"), **used}
    # a resumed grid must not mix settings; more benches extend it
    stored = check_same_run(out, config, may_differ=("benches",))
    # config.json names every bench the run holds: those run before and those asked now
    held = set(benches) | set((stored or {}).get("benches") or [])
    files = merge_data_files((stored or {}).get("data_files"), files)   # the benches' data files, earlier ones too
    RunDir(out).write_config({**{k: v for k, v in config.items() if k != "benches"},   # benches where
                                     "benches": [b for b in BENCHES if b in held], "command": command,   # it was
                                     **({"data_files": files} if files else {}),
                                     "record_prompts": record_prompts(), "versions": versions()})
    result: dict[str, Any] = {"command": command, "base": cfg.base, "blocks": blocks, "variants": grid,
                              "model": config["model"], "models": config["models"],
                              "seeds": cfg.seeds, "script": cfg.script, "games": cfg.games, "settings": cfg.settings,
                              "rounds": cfg.rounds, "lang": cfg.lang, "players": cfg.players,
                              "speak_timeout": cfg.speak_timeout, "versions": versions(), "benches": {}}
    if "wellplay" in benches:
        result["benches"]["wellplay"] = run_wellplay(cfg, grid, tick=tick)
    if "spy" in benches:
        result["benches"]["spy"] = run_spy(cfg, grid, seed=0, tick=tick)
    if "magic" in benches:
        result["benches"]["magic"] = run_magic_bench(cfg, grid, seed=0, tick=tick)
    if RunDir(out).has_result():   # a run extended bench by bench keeps the benches it ran before
        earlier = RunDir(out).read_result().get("benches") or {}
        result["benches"] = {b: result["benches"].get(b) or earlier[b] for b in BENCHES
                             if b in result["benches"] or b in earlier}
    result["summary"] = summary(result)
    RunDir(out).write_result(result)
    figures(result, out)
    RunDir(out).write_report(report_md(result))
    return result


def _check_inputs(data_root: Path, benches: list[str], *, script: str, lang: str, settings: str) -> dict[str, str]:
    """Load what each bench needs before anything is written, so that a typo (a script or a
    settings range) fails at once and does not leave a ``config.json`` that refuses the fix.

    Returns:
        The data files those inputs were read from (``config.json``'s ``data_files``,
        :func:`mas_agents.game.data.data_files`): the script's, the pairs file, the MAgIC settings'.
    """
    loaded: list[Any] = []
    if "wellplay" in benches:
        loaded.append(load_script(data_root, script, lang))
    if "spy" in benches:
        loaded.append(load_pairs(data_root, lang))
    if "magic" in benches:
        from mas_agents.graphs.magic.bench import plan   # langgraph: only when the MAgIC bench runs
        loaded.append([st for _, st, _ in plan(data_root, list(SCENARIOS), settings)])
    return data_files(*loaded)
