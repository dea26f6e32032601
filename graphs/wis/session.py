"""Play one Who-is-Spy game into a directory.

Writes ``config.json``, ``events.jsonl``, ``llm_calls.jsonl`` (local seats), ``result.json`` (the
game record of :mod:`mas_agents.graphs.wis.rules`) and ``transcript.md``. Seats are given as agent specs
(``BLOCKS[@MODEL]``) or URLs of WiS-protocol agents (:mod:`mas_agents.graphs.wis.protocol`).

Word pairs come from ``<data>/whoisspy/pairs_<lang>.jsonl`` (``{"civilian", "spy", ...}`` a line).
A game's configuration is :class:`WisGameConfig` (:mod:`mas_agents.game.run_config`).

Function-level import kept: :mod:`mas_agents.graphs.wis.protocol` (FastAPI, +0.55 s of import in every
game process, needed only by a seat that is a WiS-protocol URL).
"""

from __future__ import annotations

import dataclasses
import math
import random
from pathlib import Path
from typing import Any, Mapping

from mas_agents.cells import has_local_model
from mas_agents.game.contract import GameDef, Table, register, single_graph
from mas_agents.graphs.wis import checks as wis_checks
from mas_agents.graphs.wis import view as wis_view
from mas_agents.game.human import HUMAN, HUMAN_SPEAK_TIMEOUT
from mas_agents.graphs.wis.human import HumanSeat
from mas_agents.game.run_config import NOT_RECORDED, RunConfig
from mas_agents.game.seats import Seats
from mas_agents.game.runner import run
from mas_agents.graphs.wis import rules as rules
from mas_agents.graphs.wis.graph import build_graph, builder as graph_of
from mas_agents.graphs.wis.runtime import WisRuntime
from mas_agents.graphs.wis.player import AgentWisPlayer
from mas_agents.specs import is_remote, parse_spec, split_model
from mas_agents.utterance import markdown, quote


def parse_pair(text: str) -> dict[str, str]:
    """``"tea/coffee"`` -> ``{"civilian": "tea", "spy": "coffee"}``.

    Raises:
        ValueError: not two non-empty words separated by ``/``, or the same word twice (compared as
            the judge compares words, :func:`mas_agents.graphs.wis.rules.check_pair`).
    """
    parts = [p.strip() for p in text.split("/")]
    if len(parts) != 2 or not all(parts):
        raise ValueError(f"--pair {text!r}: expected CIVILIAN/SPY, e.g. tea/coffee")
    pair = {"civilian": parts[0], "spy": parts[1]}
    try:
        rules.check_pair(pair)
    except ValueError:
        raise ValueError(f"--pair {text!r}: the civilians' and the spy's words must differ, e.g. tea/coffee") from None
    return pair


#: ``speak_timeout`` value asking for :func:`speak_limit`'s rule (the default of every WiS runner).
AUTO = "auto"


def speak_limit(agents: list[str], model: Any = "local", requested: float | None | str = AUTO) -> float | None:
    """The speaking limit of a WiS table in seconds (None: no limit): the one rule of every
    command that plays Who is Spy (``mas spy play/tournament/experiment``, ``mas game play wis``,
    ``mas ablate``, ``mas reproduce wis``, the web app).

    Args:
        agents: the seat specs (``BLOCKS[@MODEL]``, a WiS-protocol URL, or ``human``).
        model: the default model of specs without ``@MODEL`` (a spec, or a chat-model object).
        requested: :data:`AUTO`, or the limit asked for: a number of seconds, 0 or None for none.

    Returns:
        With :data:`AUTO`: :data:`mas_agents.game.human.HUMAN_SPEAK_TIMEOUT` when a person holds a seat;
        else None when any seat plays on the embedded model (``local``, ``local:PATH``, or a
        :class:`mas_agents.local_chat.LocalLlamaChat`): on a small machine its descriptions take longer
        than the limit and would foul on the clock, not on play; else
        :data:`mas_agents.graphs.wis.rules.SPEAK_TIMEOUT` (10 s, WiS paper Appendix A "Detailed rules").
        Otherwise ``requested`` (0 -> None).

    Raises:
        ValueError: a negative or non-finite ``requested``.
    """
    if requested != AUTO:
        if requested is None:
            return None
        if isinstance(requested, str) or not math.isfinite(float(requested)) or float(requested) < 0:
            raise ValueError(f"--speak-timeout {requested!r}: give seconds >= 0 (0: no limit)")
        return float(requested) or None
    if HUMAN in agents:
        return HUMAN_SPEAK_TIMEOUT
    models = [split_model(a)[1] or model for a in agents if not is_remote(a)]
    return None if has_local_model(models) else rules.SPEAK_TIMEOUT


class PlayerFactory:
    """Builds the player for one seat from a spec; its agents' models come from ``seats``.

    Args:
        seats: the :class:`mas_agents.game.seats.Seats` of the run: the default model (for specs
            without ``@MODEL``), the seed, the call recorder, one accounted model per spec, and
            where ``human`` seats keep their files (``seats.human_dir``; None: a ``human`` seat is
            refused).
        lang: prompt language.
        speak_timeout: used as the HTTP read timeout of remote seats (None: no timeout).
        safe_reply: local players answer a generic description rather than one that still says
            their word after the re-prompt (:class:`mas_agents.graphs.wis.player.AgentWisPlayer`); set by
            ``mas spy serve-agent``, off at our own table.

    Raises:
        TypeError: ``seats`` is not a :class:`mas_agents.game.seats.Seats`.
    """

    def __init__(self, seats: Seats, lang: str = "en", speak_timeout: float | None = 10.0,
                 safe_reply: bool = False):
        if not isinstance(seats, Seats):
            raise TypeError(f"PlayerFactory takes the run's Seats (mas_agents.game.seats.Seats), got {type(seats).__name__}")
        self.seats = seats
        self.lang = lang
        self.speak_timeout = speak_timeout
        self.safe_reply = safe_reply

    def models(self) -> list:
        """The accounted models the seats built so far."""
        return self.seats.models()

    def model(self, spec: Any = None):
        """The accounted chat model for a model spec (None: the default; one per distinct spec)."""
        return self.seats.model(spec)

    def __call__(self, spec: str, role: str):
        """A :class:`~mas_agents.graphs.wis.protocol_types.WisPlayer` for ``spec`` playing ``role``.

        Raises:
            ValueError: an unknown block in ``spec``; a WiS-protocol agent (URL) that fails its
                ``checkHealth`` or ``init`` (:meth:`mas_agents.graphs.wis.protocol.RemoteWisPlayer.check_ready`):
                the game is refused before it starts; ``human`` without a ``human_dir``.
        """
        if spec == HUMAN:   # a person, through files in the run directory (mas_agents.game.human)
            if self.seats.human_dir is None:
                raise ValueError("a human seat needs a game directory to talk through")
            return HumanSeat(self.seats.human_dir, lang=self.lang)
        if is_remote(spec):
            from mas_agents.graphs.wis.protocol import RemoteWisPlayer
            # no speaking limit: still bound the HTTP wait, so a dead service cannot hang the game
            player = RemoteWisPlayer(spec, timeout=self.speak_timeout if self.speak_timeout is not None else 600.0)
            player.check_ready()
            return player
        blocks, model_spec = split_model(spec)
        parse_spec(blocks)
        self.model(model_spec)   # built (and loaded) before the game starts

        def make_agent(persona):
            return self.seats.agent(persona, spec, rules.GAME)

        return AgentWisPlayer(make_agent, label=spec, lang=self.lang, role=role, safe_reply=self.safe_reply)


@dataclasses.dataclass(frozen=True, kw_only=True)
class WisGameConfig(RunConfig):
    """One Who-is-Spy game: what :func:`play_game` takes and the game's part of its ``config.json``.

    Recorded (in this order; :func:`setup` writes the values it resolved: the drawn ``spy_seat``
    and ``first_speaker``, the speaking and voting limits in seconds, ``game_id`` the run
    directory's name when None):

    Attributes:
        game_id: the game's id (None: the run directory's name).
        agents: seat specs in seat order (``plain``, ``plain+reasoning@openai:gpt-4o-mini``,
            ``http://127.0.0.1:7860``, ``human``: a person through ``out/human/``, see
            :mod:`mas_agents.game.human`); seats are named ``Player 1..N``; a list is kept as a tuple.
        pair: ``{"civilian": word, "spy": word}``.
        lang: prompt language (``en`` or ``zh``).
        seed: draws the spy seat and the first speaker when not given (``random.Random(seed)``),
            and seeds the models built from spec strings.
        spy_seat, first_speaker: 0-based seats, to fix them (tournaments fix the spy seat).
        speak_timeout: seconds to describe (foul after); :data:`AUTO` (default): :func:`speak_limit`'s
            rule (10 s, none with a seat on the embedded model); 0 or None: no limit.
        vote_timeout: seconds to vote (a later vote is an abstention); ``"speak"`` (default) =
            the same as ``speak_timeout`` (see :class:`mas_agents.graphs.wis.runtime.WisRuntime` for why).

    Not recorded:
        model: default model for specs without ``@MODEL`` (a spec, or a chat model object in tests);
            ``config.json`` records the models the seats used instead (:mod:`mas_agents.game.record`).
        players: seat name -> ready-made WisPlayer (tests); overrides ``agents`` for those seats.
    """

    KIND = "wis"
    game_id: str | None = None
    agents: tuple[str, ...]
    pair: Mapping[str, str]
    lang: str = "en"
    seed: int = 0
    spy_seat: int | None = None
    first_speaker: int | None = None
    speak_timeout: float | None | str = AUTO
    vote_timeout: float | None | str = "speak"
    model: Any = dataclasses.field(default="local", metadata=NOT_RECORDED)
    players: Mapping[str, Any] | None = dataclasses.field(default=None, metadata=NOT_RECORDED)

    def __post_init__(self) -> None:
        object.__setattr__(self, "agents", tuple(self.agents))

    def game_params(self) -> dict[str, Any]:
        """The game's parameters as the one runner passes them to :func:`setup` (all but ``model`` and ``seed``)."""
        # a pair drawn from the dataset is passed as it is: it names its pairs file (config.json's data_files)
        pair = self.pair if isinstance(self.pair, dict) else dict(self.pair)
        return {"agents": list(self.agents), "pair": pair, "lang": self.lang, "spy_seat": self.spy_seat,
                "first_speaker": self.first_speaker, "speak_timeout": self.speak_timeout,
                "vote_timeout": self.vote_timeout, "game_id": self.game_id, "players": self.players}


def play_game(out: Path, config: WisGameConfig) -> dict:
    """Play one game of ``config`` with one seat per entry of ``config.agents`` and write its files
    into ``out`` (through the one runner, :func:`mas_agents.game.runner.run`, as the registered game ``wis``).

    Returns:
        The game record (``result.json``), see :mod:`mas_agents.graphs.wis.rules`.

    Raises:
        ValueError: a player count outside 3..9, an unknown block, a bad seat index.
    """
    return run("wis", out, model=config.model, seed=config.seed, **config.game_params())


def setup(seats: Seats, *, out: Path, agents: list[str], pair: dict[str, str], lang: str = "en",
          spy_seat: int | None = None, first_speaker: int | None = None, speak_timeout: float | None | str = AUTO,
          vote_timeout: float | None | str = "speak", game_id: str | None = None,
          players: dict[str, Any] | None = None) -> Table:
    """The WiS table of a :class:`WisGameConfig` (:attr:`mas_agents.game.contract.GameDef.setup`).

    The registry passes the game's parameters by name (``mas game play wis --set NAME=VALUE``,
    :func:`mas_agents.api.play`), so they stay keyword arguments here; the configuration is built
    from them and ``seats`` (its model and seed) once.

    Raises:
        ValueError: as :func:`play_game`, before any seat is built.
    """
    cfg = WisGameConfig(game_id=game_id, agents=agents, pair=pair, lang=lang, seed=seats.seed, spy_seat=spy_seat,
                        first_speaker=first_speaker, speak_timeout=speak_timeout, vote_timeout=vote_timeout,
                        model=seats.default_model, players=players)
    return _table(seats, Path(out), cfg)


def _table(seats: Seats, out: Path, cfg: WisGameConfig) -> Table:
    """The table of :func:`setup`; its ``config.json`` part is ``cfg`` with every value resolved."""
    agents, pair, lang = list(cfg.agents), cfg.pair, cfg.lang
    rules.check_players(len(agents))
    rules.check_lang(lang)
    rules.check_pair(pair)
    speak_timeout = speak_limit(agents, seats.default_model, cfg.speak_timeout)
    vote_timeout = speak_timeout if cfg.vote_timeout == "speak" else cfg.vote_timeout
    urls = [a for a in agents if a.startswith(("http://", "https://"))]
    dup = sorted({u for u in urls if urls.count(u) > 1})
    if dup:
        raise ValueError(f"a WiS-protocol agent holds one seat per game, but {', '.join(dup)} is seated "
                         f"{urls.count(dup[0])} times; start one server per seat")
    seed = seats.seed
    rng = random.Random(seed)
    n = len(agents)
    spy_seat = rng.randrange(n) if cfg.spy_seat is None else cfg.spy_seat
    first_speaker = rng.randrange(n) if cfg.first_speaker is None else cfg.first_speaker
    for label, v in (("spy_seat", spy_seat), ("first_speaker", first_speaker)):
        if not 0 <= v < n:
            raise ValueError(f"{label} {v} is not a seat 0..{n - 1}")
    names = [f"Player {i + 1}" for i in range(n)]
    roles = {p: ("spy" if i == spy_seat else "civilian") for i, p in enumerate(names)}
    words = {p: pair["spy" if roles[p] == "spy" else "civilian"] for p in names}
    factory = PlayerFactory(seats, lang=lang, speak_timeout=speak_timeout)
    table = dict(cfg.players or {})

    def close() -> None:
        for p in table.values():
            closer = getattr(p, "close", None)
            if closer:
                closer()

    for p, spec in zip(names, agents):
        seats.seat(p, spec)   # the model each seat runs (config.json's seat_models)
    try:
        for p, spec in zip(names, agents):
            if p not in table:
                table[p] = factory(spec, roles[p])
    except BaseException:
        close()
        raise
    game_id = cfg.game_id or out.name
    config = cfg.replace(game_id=game_id, seed=seed, spy_seat=spy_seat, first_speaker=first_speaker,
                         speak_timeout=speak_timeout, vote_timeout=vote_timeout).record()
    rt = WisRuntime(seats=names, roles=roles, words=words, players=table, first=names[first_speaker], lang=lang,
                    speak_timeout=speak_timeout, vote_timeout=vote_timeout)

    def result(state: dict, *, llm: dict, wall_time_s: float) -> dict:
        events = state["events"]
        outcome = next(e["data"] for e in events if e["kind"] == "outcome")
        return {
            "game_id": game_id, "lang": lang, "seed": seed, "pair": dict(pair),
            "players": [{"name": p, "seat": i, "agent": agents[i], "role": roles[p], "word": words[p]}
                        for i, p in enumerate(names)],
            "first_speaker": names[first_speaker], "rounds": state["rounds"],
            "outcome": {k: outcome[k] for k in ("winner", "spy", "spy_eliminated_round", "end_reason",
                                                "rounds_played")},
            "eliminated": state["eliminated"], "scores": outcome["scores"],
            "llm": llm, "wall_time_s": round(wall_time_s, 3),
            "invalid_actions": rt.stats["invalid_actions"], "timeouts": rt.stats["timeouts"],
            "vote_timeouts": rt.stats["vote_timeouts"],
        }

    return Table(graph=build_graph(rt), start={"events": []}, step_bound=rt.step_bound(), config=config,
                 result=result, transcript=transcript, close=close,
                 watch=lambda publish: setattr(rt, "publish", publish))


def transcript(record: dict, events: list[dict]) -> str:
    """A Markdown transcript of a game: public events, then each player's private reasoning; what a
    player said as one quoted line, raw HTML escaped (:func:`mas_agents.utterance.markdown`, issue 57
    E1 and E18)."""
    lines = [f"# Who is Spy? game {record['game_id']}", "",
             "Seats: " + ", ".join(f"{p['name']} ({p['agent']})" for p in record["players"]), ""]
    for e in events:
        if e["visible_to"] != ["*"]:
            continue
        if e["kind"] == "describe":
            foul = e["data"].get("foul")
            said = markdown(quote(e["content"])) if e["content"] else "(no answer)"
            lines.append(f"- **{e['actor']}**: {said}" + (f"  — FOUL: {foul}" if foul else ""))
        else:
            lines.append(f"- _{markdown(e['content'])}_")
    private = [e for e in events if e["kind"] == "reasoning"]
    if private:
        lines += ["", "## Private reasoning", ""]
        lines += [f"- round {e['round']}, {e['actor']} ({e['data'].get('for')}): {markdown(quote(e['content']))}"
                  for e in private]
    return "\n".join(lines) + "\n"


def draw_pair(data_root: Path, lang: str, seed: int) -> dict[str, str]:
    """The word pair of a game given none (``mas spy play`` without ``--pair``, :func:`load`):
    one pair of the dataset's ``whoisspy/pairs_<lang>.jsonl`` drawn with ``random.Random(seed)``
    (the same seed, the same pair; :func:`mas_agents.graphs.wis.dataset.load_pairs`).

    Raises:
        FileNotFoundError: the pairs file is missing (named). ValueError: an unknown ``lang``.
    """
    from mas_agents.graphs.wis.dataset import load_pairs
    return random.Random(seed).choice(load_pairs(data_root, lang))


def load(params: dict[str, Any], *, data_root: Path | None = None, seed: int = 0) -> dict[str, Any]:
    """The game's parameters with its word ``pair`` filled in (:attr:`mas_agents.game.contract.GameDef.load`):
    none given, one is drawn from the dataset as ``mas spy play`` draws it (:func:`draw_pair`
    with the run's ``seed``); ``"tea/coffee"`` is read as :func:`parse_pair` reads ``--pair``.

    Raises:
        ValueError: a malformed pair, an unknown ``lang``; FileNotFoundError: no pairs file;
        DataError: no datasets root (only when a pair must be drawn).
    """
    from mas_agents.game.data import resolve_data_dir
    params = dict(params)
    pair = params.get("pair")
    if pair is None:
        params["pair"] = draw_pair(resolve_data_dir(data_root), str(params.get("lang", "en")), seed)
    elif isinstance(pair, str):
        params["pair"] = parse_pair(pair)
    return params



GAME_DEF = register(GameDef(kind="wis", title="Who is Spy?", info=rules.GAME, setup=setup,
                            headline=wis_view.headline, seat_specs=wis_view.seat_specs, view=wis_view.VIEW,
                            conformance=wis_checks.CONFORMANCE, load=load, builder=single_graph("wis", graph_of)))
