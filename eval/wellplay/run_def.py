"""The WellPlay evaluation as an experiment (:mod:`mas_agents.game.experiments`): ``wellplay-eval``,
the run directory of :func:`mas_agents.eval.wellplay.run.run_wellplay_eval` (its ``config.json``
records ``kind``). Its runs-list line, its replay's players panel (the characters that answered) and
the WellPlay scripts its questions come from (:func:`mas_agents.graphs.mmg.dataset.load_script`).
"""

from __future__ import annotations

from typing import Any

from mas_agents.game.experiments import ExperimentDef, RunFiles, RunLine, register
from mas_agents.game.line_text import interval_text, pct, rate_text, read_json_or_none, uniq
from mas_agents.game.view import SeatInfo
from mas_agents.graphs.mmg.dataset import load_script

#: The run kind (:attr:`mas_agents.eval.wellplay.run.WellPlayEvalConfig.KIND`).
KIND = "wellplay-eval"


def line(files: RunFiles) -> RunLine:
    """The evaluated method or agent (for ``--method session``: the agent of the game evaluated,
    read from that game's ``config.json``), the weighted score with its interval, each category's
    accuracy with its Wilson interval, and the always-a chance score."""
    cfg, res = files.config, files.result
    agents = uniq([cfg.get("method"), cfg.get("agent")])
    if cfg.get("method") == "session":   # the game's characters answered: its agent, not "session"
        game = files.find_run(cfg.get("run"))     # the game it evaluated, found as its page links it
        g = read_json_or_none(game / "config.json") if game is not None else None
        agents = uniq([g.get("agent")]) if isinstance(g, dict) else []
    headline = ""
    if res:
        counts = res.get("counts") or {}
        chance = ((res.get("chance") or {}).get("always_a") or {}).get("weighted_score")
        headline = (f"{cfg.get('method')}: weighted {pct(res.get('weighted_score'))}{interval_text(res.get('interval'))}; "
                    + ", ".join(f"{c} {rate_text(counts.get(c) or {}, 'correct', 'n', a)}"
                                for c, a in (res.get("accuracy") or {}).items())
                    + (f"; always-a {pct(chance)}" if isinstance(chance, (int, float)) else ""))
    return RunLine(agents=agents, headline=headline)


def seats(events: list[dict[str, Any]], cfg: dict[str, Any], res: dict[str, Any]) -> SeatInfo:
    """A WellPlay evaluation's panel: the characters that answered (the ``mcq`` events' actors),
    each with the evaluated method or agent; nothing is hidden."""
    names = list(dict.fromkeys(str(e.get("actor")) for e in events if e.get("kind") == "mcq" and e.get("actor")))
    who = str(cfg.get("agent") or cfg.get("method") or "")
    return SeatInfo(names=names, agents={n: who for n in names}, roles={n: "evaluated" for n in names})


DEF = register(ExperimentDef(KIND, line, title="WellPlay evaluation", evaluation=True, replay=True, seats=seats,
                             script=load_script))
