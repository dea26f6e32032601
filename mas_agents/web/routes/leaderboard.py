"""The Who-is-Spy leaderboard (``/leaderboard``: the paper's columns with intervals, openskill
ratings; every leaderboard database under ``--runs`` and ``--db``) and its rank table as CSV
(``/leaderboard.csv``).

Both show one **season** at a time (``?season=`` a number or a protocol fingerprint; default the
season of the latest tournament): the tournaments played under one protocol
(the board's ``seasons``, :class:`mas_agents.game.experiments.LeaderboardDef`), so neither the table nor
the rating ever pools games of two protocols. The page lists every season with what changed
from the one before, and ``?compare=`` another season lists the fields that differ."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from fastapi.responses import HTMLResponse

from mas_agents.game.fingerprint import protocol_diff
from mas_agents.web import runs as rs
from mas_agents.web import paths
from mas_agents.game import experiments
from mas_agents.game.experiments import LeaderboardDef
from mas_agents.web import run_kinds
from mas_agents.web.downloads import table_csv
from mas_agents.web.site import Site, as_dict, csv_response, get_site
from mas_agents.rundir import RunDir

router = APIRouter()


def _board() -> LeaderboardDef:
    """The registered leaderboard (:func:`mas_agents.game.experiments.board`): there is one when
    :meth:`Site.databases` lists a database."""
    board = experiments.board()
    if board is None:
        raise FileNotFoundError("a leaderboard (no registered experiment has one)")
    return board


def _pick(site: Site, db_key: str, tournament: str, season: str = ""):
    """``(databases, key, board, tournament id or None, season or None, notice)`` of a
    leaderboard request; the season is the tournament's when one is given, else ``season``'s,
    else the latest tournament's (None: no tournament yet). A ``season`` this database does not
    hold (a season picked in another database, then the database changed) shows the latest
    season, and a tournament of another season than ``season`` the whole season; ``notice``
    says so (else it is "")."""
    dbs = site.databases()
    if not dbs:
        return dbs, "", None, None, None, ""
    if db_key:
        if db_key != "--db":
            paths.confine(site.root, db_key)   # 400/403 for a bad or outside path
        match = [p for k, p in dbs if k == db_key]
        if not match:
            raise FileNotFoundError(f"{db_key} (no leaderboard database there)")
        path = match[0]
    else:
        db_key, path = dbs[0]
    board = _board().open(path)
    if tournament and board.config(tournament) is None:
        raise FileNotFoundError(f"{db_key}: tournament {tournament}")
    if not board.tournaments():
        return dbs, db_key, board, None, None, ""
    own = next((t["fingerprint"] for t in board.tournaments() if t["id"] == tournament), None)
    try:
        chosen, notice = board.season(season or own), ""
    except ValueError as exc:
        chosen, notice = board.season(own), f"{exc}; showing the {'tournament’s' if own else 'latest'} season"
    if own and own != chosen["fingerprint"]:
        # the season picked in the form wins over a tournament of another season kept selected
        return dbs, db_key, board, None, chosen, f"tournament {tournament} is not in {chosen['label']}: showing the whole season"
    return dbs, db_key, board, tournament or None, chosen, notice


def _game_runs(site: Site) -> tuple[dict[str, str], dict[str, str]]:
    """``({game_id: run rel}, {tournament id: run rel})`` of the runs under ``--runs`` (a game's
    ``config.json`` ``game_id``; a run kind whose games are in a leaderboard)."""
    games, tours = {}, {}
    for r in rs.scan(site.root):
        d = site.root / r.rel
        rk = experiments.find(r.kind)
        if r.is_game:
            game_id = as_dict(paths.read_json(RunDir(d).config)).get("game_id")
            if game_id:
                games.setdefault(str(game_id), r.rel)
        elif rk is not None and rk.leaderboard:
            tid = run_kinds.leaderboard_id(d, r.kind)
            if tid:
                tours.setdefault(tid, r.rel)
    return games, tours


@router.get("/leaderboard", response_class=HTMLResponse)
def leaderboard(db: str = "", tournament: str = "", agent: str = "", season: str = "", compare: str = "",
                site: Site = Depends(get_site)):
    dbs, key, board, tid, chosen, notice = _pick(site, db, tournament, season)
    if board is None:
        given, kind = site.db, experiments.board()
        default = [] if given or kind is None else [str(kind.default_db()) + " (the default)"]
        return site.page("leaderboard.html", missing=True,
                         looked=([str(given) + " (--db)"] if given else default) + [
                                 f"every *.sqlite, *.sqlite3 and *.db file under {site.root}"])
    seasons = board.seasons()
    fp = chosen["fingerprint"] if chosen else None
    games = board.games(tid, season=fp) if chosen else []
    against = None
    if compare and chosen:
        try:
            against = board.season(compare)
        except ValueError as exc:
            notice = "; ".join(filter(None, [notice, f"compare: {exc}"]))
    if against is None and chosen and chosen["number"] > 1:
        against = seasons[chosen["number"] - 2]
    changes = protocol_diff(against["inputs"], chosen["inputs"]) if against and chosen else []
    game_runs, tour_runs = _game_runs(site)
    listed = [g for g in games if not agent or any(p.get("agent") == agent for p in g.get("players") or [])]
    return site.page("leaderboard.html", missing=False, dbs=dbs, key=key, db_path=str(board.path),
                     seasons=seasons, season=chosen, against=against, changes=changes, notice=notice,
                     tournaments=[t for t in board.tournaments() if t["fingerprint"] == fp], current=tid or "",
                     rows=_board().rank_table(games), rating=_board().ratings(games),
                     n_games=len(games), agent=agent, games=listed[:500], n_listed=len(listed), game_runs=game_runs,
                     tour_runs=tour_runs)


@router.get("/leaderboard.csv")
def leaderboard_csv(db: str = "", tournament: str = "", season: str = "", site: Site = Depends(get_site)):
    _, key, board, tid, chosen, notice = _pick(site, db, tournament, season)
    if notice:   # a table to download names what it holds: no stand-in season
        raise FileNotFoundError(f"{key}: {notice.split('; showing')[0].split(': showing')[0]}")
    if board is None:
        raise FileNotFoundError("a leaderboard database")
    head = ["rank", "agent", "seats", "rank_score", "avg_score", "avg_score_low95_bootstrap", "avg_score_high95_bootstrap"]
    for m in ("win_spy", "win_civilian", "vote_accuracy", "foul_rate"):
        head += [m, f"{m}_k", f"{m}_n", f"{m}_low95_wilson", f"{m}_high95_wilson"]
    rows = [head]
    for r in _board().rank_table(board.games(tid, season=chosen["fingerprint"]) if chosen else []):
        a = r["avg_score"]
        row = [r["rank"], r["agent"], r["seats"], r["rank_score"], a["mean"], a["low"], a["high"]]
        for m in ("win_spy", "win_civilian", "vote_accuracy", "foul_rate"):
            row += [r[m]["rate"], r[m]["k"], r[m]["n"], r[m]["low"], r[m]["high"]]
        rows.append(["" if v is None else (f"{v:.6g}" if isinstance(v, float) else str(v)) for v in row])
    name = tid or (f"season{chosen['number']}-{chosen['fingerprint']}" if chosen else "empty")
    return csv_response(table_csv(rows), f"leaderboard-{name}.csv")
