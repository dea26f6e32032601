"""How ``mas serve`` shows a game: the view part of the game contract (:attr:`mas_agents.game.contract.GameDef.view`).

A game's replay, players panel and "the truth" come from its :class:`GameView`; the web app
(:mod:`mas_agents.web.replay_rows`) does the rest the same way for every game: it groups the events by
round and phase, applies the "seen by" rule, joins consecutive readings into tables, and falls back
to a plain ``"<actor>: <content>"`` sentence for a kind the game does not word. Every hook has a
default, so a game that sets none still gets round headings and a players panel:

==================  ==========================================================================
hook                default (a game that sets none)
==================  ==========================================================================
``sentence``        None for every event: the web's generic sentences
``seats``           :func:`default_seats`: the players the events name, in order, with the
                    specs of :attr:`mas_agents.game.contract.GameDef.seat_specs`
``truth``           nothing
``titles``          the web's titles ("Round 1", "The vote", "Outcome"...)
``role_text``       roles as written
``lang``            :func:`config_lang`: ``config.json``'s ``lang`` (``zh`` or ``en``)
``hidden_roles``    False: roles are shown from the start
``variant``         ``""`` (MAgIC names its scenario: it is shown beside the game's title)
``table``           None: no event is shown as a table
``names``           :attr:`mas_agents.game.contract.GameDef.title` in every language
``recognizes``      no event kind (a run with no ``kind`` in its ``config.json`` is never taken
                    for this game)
``evaluations``     False (True: other runs may evaluate a run of this game; its run page lists them)
``play``            None: ``/play`` does not start it (:class:`PlayForm`: the form that does)
``seat_page``       nothing (values the page of a person's seat needs)
==================  ==========================================================================

The sentences helpers here (:func:`names`, :func:`vote_sentence`, :func:`vote_result_sentence`)
are shared by the games that vote and by the web's generic sentences. Pure Python: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

#: Words the vote sentences use, per language.
_WORDS = {"en": {"abstained": "abstains"}, "zh": {"abstained": "弃权"}}


@dataclass
class Table:
    """A small table a replay shows under an event: ``caption``, ``headers`` and ``rows`` (strings)."""

    caption: str
    headers: list[str]
    rows: list[list[str]]


@dataclass
class SeatInfo:
    """What a game says about its seats, for the players panel (:attr:`GameView.seats`).

    Attributes:
        names: the seats' names as the events write them (``Player 1``, a character), in seat order.
        agents: seat name -> agent spec ("" or missing: unknown).
        roles: seat name -> role key (``spy``, ``murderer``...; translated with
            :attr:`GameView.role_text`); hidden while :attr:`GameView.hidden_roles` holds.
        role_labels: seat name -> text shown instead of the translated role (MAgIC's
            game-theory seats: ``player (challenger)``).
        uniform_while_hidden: while the roles are hidden, seats whose agents (or models) differ
            all show the same text, so the odd one out does not name the hidden role (a murder
            mystery's murderer plays its own agent).
        hidden_agent_text: that text for the agents ("" : the distinct agents joined with " / ").
    """

    names: list[str]
    agents: dict[str, str] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)
    role_labels: dict[str, str] = field(default_factory=dict)
    uniform_while_hidden: bool = False
    hidden_agent_text: str = ""


def players_of(events: list[dict[str, Any]]) -> list[str]:
    """The players of a game, in the order the events first name them as an actor or in their
    ``visible_to`` (``game`` and ``*`` are not players)."""
    out: dict[str, None] = {}
    for e in events:
        for n in [e.get("actor")] + list(e.get("visible_to") or []):
            if n and n not in ("game", "*"):
                out.setdefault(str(n), None)
    return list(out)


def default_seats(events: list[dict[str, Any]], specs: list[str]) -> SeatInfo:
    """The seats of a game without a :attr:`GameView.seats` hook: :func:`players_of` the events,
    the ``i``-th given with the ``i``-th of ``specs`` (its ``GameDef.seat_specs(config)``)."""
    names = players_of(events)
    return SeatInfo(names=names, agents={n: str(a) for n, a in zip(names, specs)})


def config_lang(events: list[dict[str, Any]], config: Mapping[str, Any]) -> str:
    """``"zh"`` when ``config.json``'s ``lang`` is ``zh``, else ``"en"``."""
    return "zh" if str((config or {}).get("lang") or "en") == "zh" else "en"


def names(xs: Iterable[Any], lang: str) -> str:
    """Names joined as the language writes a list (``、`` in Chinese, ``, `` in English)."""
    return ("、" if lang == "zh" else ", ").join(str(x) for x in xs)


def votes_text(votes: Mapping[str, Any], lang: str) -> str:
    """``voter → target`` pairs of a vote (``abstains`` for a missing target)."""
    return ("，" if lang == "zh" else ", ").join(f"{v} → {w or _WORDS[lang]['abstained']}" for v, w in votes.items())


def vote_sentence(e: Mapping[str, Any], lang: str) -> str:
    """A ``vote`` event with ``data.target`` (None: an abstention; ``data.late``: cast after the
    time to vote) as a sentence."""
    a, d = str(e.get("actor") or ""), dict(e.get("data") or {})
    target = d.get("target")
    if lang == "zh":
        return f"{a} 投票给 {target}。" if target else f"{a} 弃权（没有有效投票）。"
    late = " (too late)" if d.get("late") else ""
    return f"{a} votes for {target}." if target else f"{a} abstains (no valid vote{late})."


def vote_result_sentence(d: Mapping[str, Any], lang: str, verb: str = "is voted out") -> str:
    """A ``vote_result`` event's ``data`` (``out``, ``votes``, ``counts``, ``tie``) as a sentence;
    ``verb`` says what happens to the one voted (English)."""
    out, votes, counts = d.get("out"), d.get("votes") or {}, d.get("counts") or {}
    ranked = [(p, c) for p, c in sorted(counts.items(), key=lambda kv: -kv[1]) if c]
    tally = ("，".join(f"{p} {c}票" for p, c in ranked) if lang == "zh"
             else "votes received: " + ", ".join(f"{p} {c}" for p, c in ranked))
    if lang == "zh":
        head = (f"{out} 被投票出局（得票：{tally}）。" if out else
                ("平票，无人出局。" if d.get("tie") else "没有有效投票，无人出局。"))
        return head + (f"投票：{votes_text(votes, lang)}。" if votes else "")
    head = (f"{out} {verb} ({tally})." if out else
            ("A tie: no one is voted out." if d.get("tie") else "No valid vote: no one is voted out."))
    return head + (f" Votes: {votes_text(votes, lang)}." if votes else "")


def role_word(role_text: Mapping[str, Mapping[str, str]], lang: str, role: str) -> str:
    """``role`` in ``lang`` from a :attr:`GameView.role_text` table (English, then the key itself,
    when the language has no word for it)."""
    return (role_text.get(lang) or {}).get(role) or (role_text.get("en") or {}).get(role) or role


@dataclass(frozen=True)
class FormField:
    """One field of a :class:`PlayForm`: an ``<input>`` (a ``<select>`` when ``options`` is given).

    Attributes:
        name: the form field's name (a key of the form given to :attr:`PlayForm.check`).
        label: what the page says before it. default: its value when the page opens.
        placeholder, size, inputmode: as the HTML attributes (empty/0: none).
        required: the browser asks for a value. options: the values a select offers.
    """

    name: str
    label: str
    default: str = ""
    placeholder: str = ""
    size: int = 0
    inputmode: str = ""
    required: bool = False
    options: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlayForm:
    """How a person starts a game of this kind from ``mas serve``'s ``/play`` page, holding a seat.

    Attributes:
        title: the page's title (``<title>``). heading: its heading. intro: the paragraph under it
            (``{model}`` is the server's default model; text between backticks is shown as code).
        fields: the form's fields, in order. hint: a last paragraph (the same from a terminal).
        folder: the name of the run directories it starts (``<folder>-<date>-<hex>`` under ``--runs``).
        check: ``check(form, data_root, check_model) -> dict``: the game's arguments from the form
            (``{name: value}``; ``data_root``: the datasets root or None; ``check_model(spec)``
            raises ValueError for a model spec, or an agent URL, the server does not play: ``mas
            serve`` plays only its own ``--model``). Raises ValueError with a
            plain sentence the page shows.
        start: ``start(out, *, model, **arguments)``: plays the game into ``out`` (the server
            runs it in a thread of its own; ``model``: the server's default model).
    """

    title: str
    heading: str
    intro: str
    fields: tuple[FormField, ...]
    check: Callable[[Mapping[str, str], Path | None, Callable[[str], None]], dict[str, Any]]
    start: Callable[..., Any]
    folder: str = "game-human"
    hint: str = ""


@dataclass(frozen=True)
class GameView:
    """How ``mas serve`` shows a game's runs (see the module table for each hook's default).

    Attributes:
        sentence: ``sentence(event, lang, variant) -> str | None``: the plain sentence of one
            event in ``lang`` (``"en"``/``"zh"``), None for a kind the web words generically
            (``invalid``, ``reasoning``, ``mcq``...).
        seats: ``seats(events, config, result) -> SeatInfo`` (config/result: ``config.json`` and
            ``result.json``, ``{}`` when missing).
        truth: ``truth(events, lang, variant) -> list[str]``: what the game hid, as lines shown
            at the end of its replay once it has ended.
        titles: ``{lang: {key: title}}``: titles of groups (``vote``, ``end``...) and of phases
            (``ph_<phase>``) replacing the web's, and of variants (``v_<variant>``, shown beside
            the game's title; default: the key with spaces, capitalised).
        role_text: ``{lang: {role key: words}}``.
        lang: ``lang(events, config) -> "en" | "zh"``: the replay's language.
        hidden_roles: ``hidden_roles(events, config) -> bool``: the game hides its roles from
            the players (shown once it has ended).
        variant: ``variant(events, config) -> str``: which game of a family this run is
            (MAgIC's scenario), shown beside the title and given to ``sentence``/``truth``.
        table: ``table(event) -> Table | None``: a table shown under the event.
        names: ``{lang: title}`` of the game (default: ``GameDef.title``).
        recognizes: event kinds that only this game writes: a run whose ``config.json`` names no
            kind is taken for this game when its events hold one of them.
        evaluations: other runs may evaluate a run of this game (WellPlay's evaluation of a
            murder mystery): its run page lists them.
        play: how a person starts a game of it from ``/play`` (:class:`PlayForm`); None: it is
            not started from the web app.
        seat_page: values the page of a person's seat (``/play/{rel}``) needs beside the seat's
            view (Who is Spy: the longest description per language).
        seat_template: the Jinja2 template (a file in the game's own folder, e.g.
            ``graphs/wis/templates/seat.html``) that shows a person's seat on ``/play/{rel}``:
            what the seat sees and its answer form; None: the page's generic "no seat form".
    """

    sentence: Callable[[Mapping[str, Any], str, str], str | None] | None = None
    seats: Callable[[list[dict[str, Any]], dict[str, Any], dict[str, Any]], SeatInfo] | None = None
    truth: Callable[[list[dict[str, Any]], str, str], list[str]] | None = None
    titles: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    role_text: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    lang: Callable[[list[dict[str, Any]], Mapping[str, Any]], str] = config_lang
    hidden_roles: Callable[[list[dict[str, Any]], Mapping[str, Any]], bool] | None = None
    variant: Callable[[list[dict[str, Any]], Mapping[str, Any]], str] | None = None
    table: Callable[[Mapping[str, Any]], Table | None] | None = None
    names: Mapping[str, str] = field(default_factory=dict)
    recognizes: frozenset[str] = frozenset()
    evaluations: bool = False
    play: PlayForm | None = None
    seat_page: Mapping[str, Any] = field(default_factory=dict)
    seat_template: Path | None = None


#: The view of a game that sets none.
DEFAULT = GameView()
