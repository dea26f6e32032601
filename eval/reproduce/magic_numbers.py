"""``mas reproduce magic``, our numbers read back from the games played: Table 4's per-setting
metrics and paired differences (:func:`setting_metrics`, :func:`table4_ours`), Table 2's
game-theory quantities (:func:`game_theory`), and the PGM agents at work (:func:`paper_analyses`,
:func:`pgm_engagement`).
"""

from __future__ import annotations

from pathlib import Path

from mas_agents.graphs.magic.metrics import scenario_metrics
from mas_agents.eval.reproduce.magic_protocol import OUR_METRICS, PAIRS
from mas_agents.stats import bootstrap_mean, paired_difference, wilson
from mas_agents.events import read_events
from mas_agents.graphs.magic.rules import PLAYERS
from mas_agents.rundir import RunDir


def _games_by_setting(run_dir: Path, names: list[str]) -> dict[str, list[list[dict]]]:
    """``"<scenario>/<id>"`` -> the event logs of that setting's games (both sides together)."""
    by: dict[str, list] = {}
    for name in names:
        d = Path(run_dir) / "games" / name
        r = RunDir(d).read_result()
        by.setdefault(f"{r['scenario']}/{int(r['setting_id']):02d}", []).append(read_events(RunDir(d).events))
    return by


def setting_metrics(run_dir: Path, names: list[str]) -> dict[str, dict[str, float | None]]:
    """Per setting (``"<scenario>/<id>"``), the eight numbers of
    :func:`mas_agents.graphs.magic.metrics.scenario_metrics` over that setting's games and Coordination
    ÷ all Cost Sharing games (:data:`~mas_agents.eval.reproduce.magic_protocol.OUR_METRICS`; None where the
    setting's scenario does not measure a metric, e.g. Judgement in Cost Sharing, and Coordination ÷
    agreed games in a Cost Sharing setting not agreed). A setting's win rate is the mean of its
    scenario's win-rate parts."""
    out = {}
    for key, logs in _games_by_setting(run_dir, names).items():
        m = scenario_metrics(logs)
        out[key] = {k: m[k] for k in OUR_METRICS}
    return out


def table4_ours(results: dict[str, dict], per_setting: dict[str, dict]) -> dict[str, dict]:
    """Per metric of :data:`~mas_agents.eval.reproduce.magic_protocol.OUR_METRICS` (Coordination with each
    denominator): each condition run's pooled value (0–1, keyed by condition; None where a run's
    ``result.json`` has no such number) and ``"paired"``:
    ``{"<a>-<b>": estimate}`` for every pair of :data:`PAIRS` whose two conditions ran, the mean
    of (a − b) over the settings where both measured the metric, with a percentile-bootstrap 95 %
    interval (:func:`mas_agents.stats.paired_difference`, n = settings)."""
    out = {}
    for k in OUR_METRICS:
        row: dict = {c: results[c]["metrics"].get(k) for c in results}
        row["paired"] = {}
        for a, b, _ in PAIRS:
            if a in per_setting and b in per_setting:
                va = {s: m[k] for s, m in per_setting[a].items()}
                vb = {s: m[k] for s, m in per_setting[b].items()}
                row["paired"][f"{a}-{b}"] = paired_difference(va, vb, seed=0).to_dict()
        out[k] = row
    return out


def _seat(result: dict) -> str | None:
    seats = result.get("challenger_seats") or []
    return seats[0] if seats else None


def game_theory(run_dir: Path, names: list[str]) -> dict[str, dict]:
    """Table 2's six numbers of the challenger from the game-theory games' ``outcome`` events.

    * ``cs_wr``: Cost Sharing games that reached an agreement ÷ games (the win-rate part of Cost
      Sharing, = Cooperation); Wilson interval, n = games.
    * ``cs_cost``: the challenger's share of the fee in the agreed split, in percent, mean over the
      agreed games (a failed negotiation has no split and is left out); bootstrap, n = agreed games.
    * ``pd_wr`` / ``pg_wr``: games in which the challenger is among the winners ÷ games; Wilson.
    * ``pd_score``: the challenger's total payoff over the game's rounds (points of the setting's
      payoff table), mean over games; bootstrap, n = games.
    * ``pg_payback``: the challenger's final holding ÷ its endowment of 100, mean over games;
      bootstrap, n = games.

    Every value is an :meth:`mas_agents.stats.Estimate.to_dict` (rates in 0–1).
    """
    cs_n = cs_agreed = pd_n = pd_won = pg_n = pg_won = 0
    costs: list[float] = []
    scores: list[float] = []
    paybacks: list[float] = []
    for name in names:
        d = Path(run_dir) / "games" / name
        r = RunDir(d).read_result()
        seat, oc = _seat(r), r.get("outcome") or {}
        if r["scenario"] == "cost_sharing":
            cs_n += 1
            if oc.get("agreed") and oc.get("split") and seat in PLAYERS:
                cs_agreed += 1
                costs.append(float(oc["split"][PLAYERS.index(seat)]))
        elif r["scenario"] == "prisoners_dilemma":
            pd_n += 1
            pd_won += seat in (oc.get("winners") or [])
            if seat in (oc.get("totals") or {}):
                scores.append(float(oc["totals"][seat]))
        elif r["scenario"] == "public_good":
            pg_n += 1
            pg_won += seat in (oc.get("winners") or [])
            if seat in (oc.get("finals") or {}):
                paybacks.append(float(oc["finals"][seat]) / 100.0)
    return {"cs_wr": wilson(cs_agreed, cs_n).to_dict(), "cs_cost": bootstrap_mean(costs, seed=0).to_dict(),
            "pd_wr": wilson(pd_won, pd_n).to_dict(), "pd_score": bootstrap_mean(scores, seed=0).to_dict(),
            "pg_wr": wilson(pg_won, pg_n).to_dict(), "pg_payback": bootstrap_mean(paybacks, seed=0).to_dict()}


def _challenger_events(run_dir: Path, names: list[str], kind: str):
    """Each game's scenario and its ``kind`` events made by a challenger seat, in ``names`` order:
    ``(scenario, [event, ...])`` per game of ``run_dir/games``."""
    for name in names:
        d = Path(run_dir) / "games" / name
        r = RunDir(d).read_result()
        seats = set(r.get("challenger_seats") or [])
        yield r["scenario"], [e for e in read_events(RunDir(d).events) if e.get("kind") == kind and e.get("actor") in seats]


def paper_analyses(run_dir: Path, names: list[str]) -> dict[str, dict[str, int]]:
    """Per scenario, the paper's agent at work (+PGM condition): ``{"games", "analyses"
    (``pgm_analysis`` events of a challenger seat: one per analysis written, each readable in the
    call viewer through its ``llm_call_ids``), "empty" (analyses whose text is empty: the call
    failed or the reply was empty)}``."""
    out: dict[str, dict[str, int]] = {}
    for scenario, evs in _challenger_events(run_dir, names, "pgm_analysis"):
        row = out.setdefault(scenario, {"games": 0, "analyses": 0, "empty": 0})
        row["games"] += 1
        row["analyses"] += len(evs)
        row["empty"] += sum(1 for e in evs if str(e.get("content") or "").startswith("(no analysis"))
    return out


def pgm_engagement(run_dir: Path, names: list[str]) -> dict[str, dict[str, int]]:
    """Per scenario, whether the PGM blocks of the challenger took part: ``{"games", "with_tables"
    (games with at least one ``belief_table`` event of a challenger seat), "tables" (those events),
    "shown" (those put into a prompt: ``data.shown`` not false)}``."""
    out: dict[str, dict[str, int]] = {}
    for scenario, tables in _challenger_events(run_dir, names, "belief_table"):
        row = out.setdefault(scenario, {"games": 0, "with_tables": 0, "tables": 0, "shown": 0})
        row["games"] += 1
        row["with_tables"] += bool(tables)
        row["tables"] += len(tables)
        row["shown"] += sum(1 for e in tables if (e.get("data") or {}).get("shown") is not False)
    return out
