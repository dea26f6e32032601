"""Who is Spy? started from ``mas serve``'s ``/play`` page with a person in one seat: its form
(:data:`FORM`, the :attr:`mas_agents.game.view.GameView.play` of the game ``wis``), how the form is read
(:func:`check_game`) and how the game is played (:func:`start`). The rules checked are the game's
(:mod:`mas_agents.graphs.wis.rules`: 3 to 9 seats, two different words, WiS §3.1)."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any, Callable, Mapping

from mas_agents.graphs.wis.dataset import load_pairs
from mas_agents.game.view import FormField, PlayForm
from mas_agents.game.human import HUMAN, HUMAN_SPEAK_TIMEOUT
from mas_agents.game.runner import run
from mas_agents.graphs.wis import rules as wis_rules
from mas_agents.specs import is_remote, parse_spec, split_model


#: The longest word of a word pair given in the form, in characters: the dataset's longest is far
#: shorter (WiS §3.1 pairs are single words or short phrases), and a word goes into every prompt.
MAX_WORD = 64


def _short(text: str, n: int = 120) -> str:
    return text if len(text) <= n else text[:n] + "…"


def _number(form: Mapping[str, str], name: str, what: str, kind=int, low: float = 0, high: float = 10**9):
    """``form[name]`` as a number in ``[low, high]`` (empty: 0), or ValueError in a plain sentence."""
    text = (form.get(name) or "").strip() or "0"
    try:
        x = kind(text)
    except ValueError:
        raise ValueError(f"The {what} must be {'a whole number' if kind is int else 'a number'}; "
                         f"{_short(text, 40)!r} is not one.") from None
    if not (math.isfinite(x) and low <= x <= high):
        raise ValueError(f"The {what} must be between {low:g} and {high:g}; {_short(text, 40)!r} is not.")
    return x


def check_game(form: Mapping[str, str], data_root: Path | None, check_model: Callable[[str], None]) -> dict[str, Any]:
    """The game a ``/play`` form asks for, as keyword arguments of :func:`start` (:attr:`PlayForm.check`).

    Raises:
        ValueError: in a plain sentence (seats, agents, language, seed, time limit, word pair).
    """
    agents = [a.strip() for a in form.get("agents", "").split(",") if a.strip()]
    if agents.count(HUMAN) != 1:
        raise ValueError("Seat exactly one human, e.g. human,plain,plain,plain.")
    try:
        wis_rules.check_players(len(agents))
    except ValueError:
        raise ValueError(f"A game has {wis_rules.MIN_PLAYERS} to {wis_rules.MAX_PLAYERS} seats; "
                         f"this one has {len(agents)}.") from None
    for a in agents:
        if is_remote(a):
            try:
                check_model(a)   # an agent served elsewhere: only where the server allows
            except ValueError as exc:
                raise ValueError(f"The seat {_short(a, 60)!r} is not an agent this server seats ({exc}).") from None
        elif a != HUMAN:
            try:
                blocks, seat_model = split_model(a)
                parse_spec(blocks)
                if seat_model is not None:
                    check_model(seat_model)
            except ValueError as exc:
                raise ValueError(f"The seat {_short(a, 60)!r} is not an agent this project knows ({exc}).") from None
    lang = form.get("lang", "en")
    if lang not in ("en", "zh"):
        raise ValueError("The language must be en or zh.")
    seed = _number(form, "seed", "seed")
    limit = _number(form, "speak_timeout", "time to answer (in seconds)", float, 0, 3600) or None
    text = form.get("pair", "").strip()
    if text:
        parts = [p.strip() for p in text.split("/")]
        if len(parts) != 2 or not all(parts):
            raise ValueError("The word pair must be two words separated by a slash, the civilians' word first: "
                             "tea/coffee.")
        for w in parts:
            if len(w) > MAX_WORD or any(not c.isprintable() for c in w):
                raise ValueError(f"Each word of the pair is at most {MAX_WORD} characters on one line; "
                                 f"{_short(w, 40)!r} is {'longer' if len(w) > MAX_WORD else 'not one line'}.")
        if parts[0].casefold() == parts[1].casefold():
            raise ValueError(f"The two words of the pair must differ; both are {_short(parts[0], 40)!r}.")
        pair = {"civilian": parts[0], "spy": parts[1]}
    else:
        if data_root is None:
            raise ValueError("Give a word pair (CIVILIAN/SPY): this server has no datasets to draw one from.")
        try:
            pair = random.Random(seed).choice(load_pairs(data_root, lang))
        except (FileNotFoundError, ValueError, IndexError) as exc:
            raise ValueError(f"Give a word pair (CIVILIAN/SPY): no pair could be drawn from the datasets ({exc}).") from None
    return {"agents": agents, "pair": pair, "lang": lang, "seed": seed, "speak_timeout": limit}


def start(out: Path, *, model: Any, agents: list[str], pair: dict[str, str], lang: str, seed: int,
          speak_timeout: float | None) -> dict:
    """Play the game of :func:`check_game`'s arguments into ``out`` through the one runner, as
    :func:`mas_agents.graphs.wis.session.play_game` does (which this module cannot import: the game's
    registration there imports it)."""
    return run("wis", out, model=model, seed=seed, agents=agents, pair=pair, lang=lang, speak_timeout=speak_timeout)


FORM = PlayForm(
    title="Play Who is Spy", heading="Play Who is Spy? in one seat",
    intro=("You hold the seat `human`; the other seats are agents on the model `{model}`.\n"
           "The rules are the paper's (WiS §3.1): describe your word without saying it or repeating a description, "
           "within the time limit; then vote."),
    fields=(FormField("agents", "seats, in order", default="human,plain,plain,plain", size=50, required=True),
            FormField("pair", "word pair (CIVILIAN/SPY, two different words; empty: drawn from the dataset)",
                      placeholder="tea/coffee"),
            FormField("lang", "language", options=("en", "zh")),
            FormField("seed", "seed", default="0", size=4, inputmode="numeric"),
            FormField("speak_timeout", "seconds to answer (0: no limit)", default=str(int(HUMAN_SPEAK_TIMEOUT)), size=5,
                      inputmode="decimal")),
    check=check_game, start=start, folder="spy-human",
    hint="From a terminal: `mas spy play --agents human,plain,plain,plain --out RUNS/my-game`, then open its seat here.")
