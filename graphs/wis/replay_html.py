"""Self-contained HTML replay of one Who is Spy? game (the WiS platform's "Watch List").

Reads only the game record ``result.json`` (shape in :mod:`mas_agents.graphs.wis.rules`) and, if present,
``events.jsonl`` beside it (only ``reasoning`` events are used, to show private reasoning).
The page has inline CSS, no external assets and no JavaScript: the words, the roles and the
private reasoning (which usually names the player's word) sit after the last round, folded in
``<details>`` elements, so a viewer can follow the game before the reveal.

A game that stopped before its end (no ``result.json``) is replayed from ``events.jsonl`` and
``config.json`` (:func:`record_from_events`, in :mod:`mas_agents.graphs.wis.record` with the
record's required fields): the rounds played so far, marked as stopped.
:func:`game_summary` is the one-line account of a game the CLI prints after it (fouls named).

A little over 400 lines as one idea, the page: one function per section of it, and the CSS.

Usage::

    python -m mas_agents.graphs.wis.replay_html runs/wis/<game_dir>   # writes <game_dir>/replay.html
"""

from __future__ import annotations

import json
import sys
from html import escape
from pathlib import Path
from typing import Any, Iterable, Mapping

from mas_agents.graphs.wis.record import record_from_events, validate
from mas_agents.events import read_events
from mas_agents.graphs.wis.rules import FOUL_TEXT, FOULS
from mas_agents.utterance import quote
from mas_agents.rundir import RunDir

END_TEXT = {
    "spy_eliminated": "the spy was eliminated",
    "max_rounds": "the maximum number of rounds was played",
    "few_players": "fewer than 3 players were left",
}


def _fouls_by_kind(record: Mapping[str, Any]) -> dict[str, list[str]]:
    """``{foul code: [players, in the order they fouled]}`` over every round of ``record``, in
    the order of :data:`mas_agents.graphs.wis.rules.FOULS` (a code the rules do not know comes last)."""
    found: dict[str, list[str]] = {}
    for rnd in record.get("rounds") or []:
        for d in rnd.get("descriptions") or []:
            f = d.get("foul")
            if f:
                found.setdefault(f, []).append(str(d.get("player", "?")))
    order = list(FOULS) + [f for f in found if f not in FOULS]
    return {f: found[f] for f in order if f in found}


def game_summary(record: Mapping[str, Any]) -> str:
    """One line on how a game ended, in words: who won after how many rounds and why, whether a
    vote was held, and every foul by its kind with the players who committed it.

    E.g. ``"the spy wins after round 1: fewer than 3 players were left, no vote was held; 4 of 6
    seats fouled (did not answer in time: Player 2, Player 4, Player 5; said their own word:
    Player 1); spy Player 3"``. A late vote (an abstention, :class:`mas_agents.graphs.wis.runtime.WisRuntime`) is
    counted. A record without an outcome (a stopped game) says so.

    Args:
        record: a game record (``result.json``, shape in :mod:`mas_agents.graphs.wis.rules`).
    """
    players = record.get("players") or []
    rounds = record.get("rounds") or []
    oc = record.get("outcome") or {}
    if oc:
        who = {"spy": "the spy wins", "civilians": "the civilians win"}.get(oc.get("winner"), f"{oc.get('winner')} win")
        n = oc.get("rounds_played", len(rounds))
        reason = oc.get("end_reason")
        head = f"{who} after round {n}: {END_TEXT.get(reason, reason)}"
    else:
        head = f"the game stopped in round {len(rounds)} before it ended" if rounds else "the game stopped before round 1"
    voted = [r for r in rounds if r.get("votes")]
    if not voted:
        head += ", no vote was held"
    else:
        outs = [f"{r['voted_out']} (round {r.get('round', '?')})" for r in voted if r.get("voted_out")]
        head += ", voted out: " + (", ".join(outs) if outs else "no one")
    fouls = _fouls_by_kind(record)
    fouled = {p for names in fouls.values() for p in names}
    if fouls:
        parts = "; ".join(f"{FOUL_TEXT.get(f, f)}: {', '.join(names)}" for f, names in fouls.items())
        head += f"; {len(fouled)} of {len(players)} seats fouled ({parts})"
    else:
        head += "; no fouls"
    late = int(record.get("vote_timeouts") or 0)
    if late:
        head += f"; {late} late vote{'s' if late != 1 else ''} counted as abstention{'s' if late != 1 else ''}"
    if oc.get("spy"):
        head += f"; spy {oc['spy']}"
    return head

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK SC",sans-serif;
 max-width:960px;margin:1.5em auto;padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.5em;margin-bottom:.2em}h2{margin-top:1.6em;border-bottom:2px solid #ddd}
h3{margin-bottom:.3em}
table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f3f3f3}
.meta{color:#555}.muted{color:#888;font-style:italic}
.round{border:1px solid #ddd;border-radius:6px;padding:.2em 1em 1em;margin:1em 0;background:#fcfcfc}
.desc{margin:.4em 0;padding:.4em .6em;background:#fff;border-left:4px solid #6a9fd8}
.desc.fouled{border-left-color:#d9534f;background:#fff5f5}
.who{font-weight:600}.secs{color:#888;font-size:.85em}
.text{white-space:pre-wrap;word-break:break-word;margin-top:.2em}
.badge{display:inline-block;font-size:.8em;padding:0 .5em;border-radius:3px;color:#fff;background:#d9534f}
.badge.first{background:#5b8def}.badge.spy{background:#8e44ad}.badge.out{background:#777}
.verdict{font-weight:600}
details{margin:.8em 0;padding:.5em 1em;border:1px solid #ccc;border-radius:6px;background:#fafafa}
summary{cursor:pointer;font-weight:600}
.reason{white-space:pre-wrap;font-size:.9em;margin:.3em 0 .6em}
"""


def _e(value: Any) -> str:
    """HTML-escape any value (None -> empty string)."""
    return escape("" if value is None else str(value), quote=True)


def _num(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:g}" if x == int(x) else f"{x:.2f}".rstrip("0").rstrip(".")
    return str(x)



def _table(headers: Iterable[str], rows: Iterable[Iterable[str]], cls: str = "") -> str:
    """A table; header texts are escaped here, cells must already be HTML."""
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>\n" for row in rows)
    c = f' class="{_e(cls)}"' if cls else ""
    return f"<table{c}><thead><tr>{head}</tr></thead><tbody>\n{body}</tbody></table>\n"


def _header(record: Mapping[str, Any]) -> str:
    lang = record.get("lang", "?")
    first = record.get("first_speaker")
    parts = [f"<header><h1>Who is Spy? — game {_e(record['game_id'])}</h1>",
             '<p class="meta">',
             f"Language: <b>{_e(lang)}</b>",
             f" · Players: <b>{len(record['players'])}</b>"]
    if "seed" in record:
        parts.append(f" · Seed: {_e(record['seed'])}")
    if first is not None:
        parts.append(f" · First speaker: <b>{_e(first)}</b>")
    if record.get("wall_time_s") is not None:
        parts.append(f" · Wall time: {_e(_num(record['wall_time_s']))} s")
    parts.append("</p>\n")
    rows = []
    for p in record["players"]:
        badge = ' <span class="badge first">first speaker</span>' if p["name"] == first else ""
        rows.append([_e(p.get("seat", "")), f"{_e(p['name'])}{badge}", f"<code>{_e(p.get('agent', ''))}</code>"])
    parts.append('<section class="seats"><h2>Players</h2>\n')
    parts.append(_table(["Seat", "Player", "Agent"], rows))
    parts.append("</section></header>\n")
    return "".join(parts)


def _round(rnd: Mapping[str, Any], lang: str) -> str:
    n = rnd.get("round", "?")
    out = [f'<section class="round" id="round-{_e(n)}"><h2>Round {_e(n)}</h2>\n']
    order = rnd.get("order") or []
    out.append('<p><b>Speaking order:</b> '
               + (" → ".join(_e(p) for p in order) if order else '<span class="muted">none</span>')
               + "</p>\n")

    out.append("<h3>Descriptions</h3>\n")
    descs = rnd.get("descriptions") or []
    if not descs:
        out.append('<p class="muted">No descriptions.</p>\n')
    for d in descs:
        f = d.get("foul")
        cls = "desc fouled" if f else "desc"
        badge = ""
        if f:
            badge = (f' <span class="badge">foul: {_e(FOUL_TEXT.get(f, f))}</span>'
                     f' <span class="secs">({_e(f)})</span>')
        secs = d.get("seconds")
        secs_html = f' <span class="secs">{_e(_num(round(float(secs), 1)))} s</span>' if isinstance(
            secs, (int, float)) else ""
        text = d.get("text")
        # one quoted utterance (issue 57, E1): a description cannot show a line of the judge's
        text_html = (f'<div class="text" lang="{_e(lang)}">{_e(quote(text))}</div>' if text
                     else '<div class="text muted">(no description)</div>')
        out.append(f'<div class="{cls}"><span class="who">{_e(d.get("player", "?"))}</span>'
                   f"{secs_html}{badge}{text_html}</div>\n")

    if rnd.get("stopped") == "speaking":   # a stopped game's last round (record_from_events)
        out.append('<p class="verdict">The game stopped here, before every player had described.</p>\n</section>\n')
        return "".join(out)
    fouled = rnd.get("fouled") or []
    out.append("<p><b>Eliminated by the judge:</b> "
               + (", ".join(_e(p) for p in fouled) if fouled else '<span class="muted">no one</span>')
               + "</p>\n")

    votes = rnd.get("votes") or {}
    out.append("<h3>Vote</h3>\n")
    if rnd.get("stopped") == "voting":
        out.append('<p class="verdict">The game stopped before this round\'s vote was counted.</p>\n</section>\n')
        return "".join(out)
    if not votes:
        out.append('<p class="muted">No vote was held this round.</p>\n')
    else:
        rows = [[_e(v), _e(t) if t is not None else '<span class="muted">abstained</span>']
                for v, t in votes.items()]
        out.append(_table(["Voter", "Votes for"], rows, "votes"))
        counts = rnd.get("vote_counts") or {}
        if counts:
            ranked = sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))
            out.append(_table(["Player", "Votes"], [[_e(p), _e(c)] for p, c in ranked], "counts"))
        voted_out = rnd.get("voted_out")
        if voted_out is not None:
            verdict = f"Voted out: <b>{_e(voted_out)}</b>"
        elif counts:
            verdict = "Voted out: no one (tie)"
        else:
            verdict = "Voted out: no one (no valid votes)"
        out.append(f'<p class="verdict">{verdict}</p>\n')

    alive = rnd.get("alive_after")
    if alive is not None:
        out.append("<p><b>Alive after this round:</b> "
                   + (", ".join(_e(p) for p in alive) if alive else '<span class="muted">no one</span>')
                   + "</p>\n")
    out.append("</section>\n")
    return "".join(out)


def _outcome(record: Mapping[str, Any]) -> str:
    out = ['<section class="outcome" id="outcome"><h2>Outcome</h2>\n']
    oc = record.get("outcome")
    if record.get("stopped"):
        out.append('<p class="verdict">The game stopped before it ended: the rounds above are those played '
                   'so far (from events.jsonl).</p>\n')
    elif not oc:
        out.append('<p class="muted">Outcome not recorded.</p>\n')
    else:
        winner = oc.get("winner")
        out.append(f'<p class="verdict">Winner: <b>{_e(winner if winner is not None else "?")}</b></p>\n')
        reason = oc.get("end_reason")
        out.append(f"<p>End reason: {_e(END_TEXT.get(reason, reason))} "
                   f'<span class="secs">({_e(reason)})</span>'
                   f" · Rounds played: {_e(oc.get('rounds_played', len(record['rounds'])))}</p>\n")
    elim = record.get("eliminated") or {}
    if elim:
        rows = [[_e(p), _e(info.get("round", "")), _e(info.get("by", ""))]
                for p, info in elim.items() if isinstance(info, dict)]
        out.append("<h3>Eliminated players</h3>\n" + _table(["Player", "Round", "By"], rows, "eliminated"))
    out.append("</section>\n")
    return "".join(out)


def _reveal(record: Mapping[str, Any]) -> str:
    oc = record.get("outcome") or {}
    pair = record.get("pair") or {}
    elim = record.get("eliminated") or {}
    out = ['<details class="reveal" id="reveal"><summary>Reveal words and roles</summary>\n']
    if pair:
        out.append(f"<p>Civilian word: <b>{_e(pair.get('civilian'))}</b> · "
                   f"Spy word: <b>{_e(pair.get('spy'))}</b></p>\n")
    if oc.get("spy") is not None:
        r = oc.get("spy_eliminated_round")
        fate = f"eliminated in round {_e(r)}" if r is not None else "survived"
        out.append(f"<p>The spy was <b>{_e(oc['spy'])}</b> ({fate}).</p>\n")
    rows = []
    for p in record["players"]:
        role = p.get("role", "?")
        role_html = '<span class="badge spy">spy</span>' if role == "spy" else _e(role)
        e = elim.get(p["name"])
        status = (f'<span class="badge out">out</span> round {_e(e.get("round"))} by {_e(e.get("by"))}'
                  if isinstance(e, dict) else "alive at the end")
        rows.append([_e(p["name"]), role_html, f"<b>{_e(p.get('word', ''))}</b>", status])
    out.append(_table(["Player", "Role", "Word", "Status"], rows, "roles"))
    out.append("</details>\n")
    return "".join(out)


def _scores(record: Mapping[str, Any]) -> str:
    out = ['<section class="scores" id="scores"><h2>Scores</h2>\n']
    scores = record.get("scores")
    if not scores:
        out.append('<p class="muted">Scores not recorded.</p>\n')
    else:
        names = [p["name"] for p in record["players"]]
        order = [n for n in names if n in scores] + [n for n in scores if n not in names]
        rows = [[_e(n), _e(_num(scores[n]))] for n in order]
        total = sum(float(v) for v in scores.values() if isinstance(v, (int, float)))
        rows.append(["<b>Total</b>", f"<b>{_e(_num(total))}</b>"])
        out.append(_table(["Player", "Score"], rows, "scores"))
    out.append("</section>\n")
    return "".join(out)


def _reasoning(events: Iterable[Mapping[str, Any]], lang: str) -> str:
    rs = [ev for ev in events if isinstance(ev, dict) and ev.get("kind") == "reasoning" and ev.get("content")]
    if not rs:
        return ""
    out = ['<details class="reasoning" id="reasoning"><summary>Private reasoning '
           f"({len(rs)} entries; may reveal words)</summary>\n"]
    for ev in rs:
        where = f"Round {_e(ev.get('round', '?'))}"
        if ev.get("phase"):
            where += f" · {_e(ev['phase'])}"
        out.append(f'<div><span class="who">{_e(ev.get("actor", "?"))}</span> '
                   f'<span class="secs">{where}</span>'
                   f'<div class="reason" lang="{_e(lang)}">{_e(quote(ev["content"]))}</div></div>\n')
    out.append("</details>\n")
    return "".join(out)


def replay_html(record: dict, events: list[dict] | None = None) -> str:
    """The replay page of one game as a self-contained HTML string.

    Args:
        record: the game's ``result.json`` content.
        events: the game's events (optional); ``reasoning`` events are shown after the reveal.

    Raises:
        ValueError: the record lacks a required field or has the wrong shape.
    """
    validate(record)
    lang = str(record.get("lang") or "en")
    body = [_header(record), '<main class="rounds">\n']
    if not record["rounds"]:
        body.append('<p class="muted">No round was played.</p>\n')
    body.extend(_round(r, lang) for r in record["rounds"])
    body.append("</main>\n")
    body.append(_outcome(record))
    body.append(_reveal(record))
    body.append(_scores(record))
    body.append(_reasoning(events or [], lang))
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>Who is Spy? replay — {_e(record['game_id'])}</title>\n"
            f"<style>{CSS}</style>\n</head>\n<body>\n{''.join(body)}</body>\n</html>\n")



def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from exc


def game_kind(game_dir: Path) -> str | None:
    """The ``kind`` its ``config.json`` gives the run in ``game_dir`` (``"wis"``, ``"mmg"``,
    ``"magic"``...), or None without one (a record from before ``config.json`` said it).

    Raises:
        ValueError: ``config.json`` is not valid JSON.
    """
    path = RunDir(game_dir).config
    if not path.is_file():
        return None
    cfg = _read_json(path)
    return cfg.get("kind") if isinstance(cfg, dict) and isinstance(cfg.get("kind"), str) else None


def write_replay(game_dir: Path, out: Path | None = None) -> Path:
    """Write the replay of the Who-is-Spy game in ``game_dir`` (default ``game_dir/replay.html``):
    from ``result.json``, or, for a game that stopped before its end, from ``events.jsonl`` and
    ``config.json`` (:func:`record_from_events`).

    Raises:
        FileNotFoundError: ``game_dir`` holds neither ``result.json`` nor ``events.jsonl``.
        ValueError: the run is not a Who-is-Spy game (``config.json``'s ``kind``; the message names
            the kind), ``result.json`` or ``config.json`` is not valid JSON or the record lacks
            required fields, or a line of ``events.jsonl`` is not JSON (messages name the file).
    """
    game_dir = Path(game_dir)
    kind = game_kind(game_dir)
    if kind is not None and kind != "wis":
        raise ValueError(f"{game_dir}: a {kind!r} run, not a Who-is-Spy game")
    path = RunDir(game_dir).result
    ev_path = RunDir(game_dir).events
    events = read_events(ev_path) if ev_path.is_file() else None
    if path.is_file():
        record = _read_json(path)
        validate(record, str(path))
    elif events is not None:
        cfg = _read_json(RunDir(game_dir).config) if RunDir(game_dir).config.is_file() else {}
        try:
            record = record_from_events(events, cfg if isinstance(cfg, dict) else {}, game_id=game_dir.name)
        except ValueError as exc:
            raise ValueError(f"{ev_path}: {exc}") from None
    else:
        raise FileNotFoundError(f"{path}: no game record (result.json) found, nor the events.jsonl of a "
                                "game that stopped")
    out = Path(out) if out is not None else game_dir / "replay.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(replay_html(record, events), encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m mas_agents.graphs.wis.replay_html GAME_DIR [GAME_DIR ...]", file=sys.stderr)
        return 2
    for d in args:
        print(write_replay(Path(d)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
