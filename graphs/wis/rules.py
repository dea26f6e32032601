"""Who is Spy? (WiS) rules as pure functions on plain data.

Source: WiS platform paper (Hu et al. 2024, arXiv 2412.03359) §3.1 (game flow), §3.4–3.5 and
Appendix A (scoring, ranking), with the choices this repository made (docs/guides/who-is-spy.md):

* 6 players by default (3–9 allowed); one spy holds a different word from the civilians'.
  Players are told only their word, not their role.
* A random first speaker, then seat order. Each round every alive player describes their word,
  starting from the original first speaker, or the next alive player after them in seat order.
* A description is truncated to 400 characters in English and 120 in Chinese
  (:data:`MAX_CHARS`) before anyone sees it.
* After the speaking phase the judge eliminates every player who fouled: said their own word,
  repeated any earlier description of the game, or did not answer in time (:data:`SPEAK_TIMEOUT`,
  10 s, Appendix A; none when a seat plays on the embedded model, :func:`mas_agents.graphs.wis.session.speak_limit`). A
  reply that still does not follow the format after one re-prompt, or an empty description,
  is "no answer": a foul too.
* If the game has not ended, a vote follows: each alive player names one alive player other
  than themselves, or abstains (a name not on the list is an abstention). The top vote-getter
  is eliminated; a tie, or no vote at all, eliminates no one.
* The game ends when the spy is eliminated, after 3 rounds of speaking and voting, or when
  fewer than 3 players survive; the spy wins if still alive.

Scoring (Appendix A, zero-sum, 12 points a game): spy eliminated in round 1 → spy 0 and the
surviving civilians share 12; round 2 → 4 and 8; round 3 → 8 and 4; spy wins → spy 12,
civilians 0. In every vote, each civilian vote for the spy gives that civilian +1 and the spy −1.
Rank score of an agent = 100 + Σ game scores − number of games played (§3.5).

The game record
---------------
:mod:`mas_agents.graphs.wis.session` writes ``result.json`` per game with this shape (metrics, the
leaderboard and replays read only this and ``events.jsonl``)::

    {"game_id": str, "lang": "en"|"zh", "seed": int,
     "pair": {"civilian": str, "spy": str},
     "players": [{"name": "Player 1", "seat": 0, "agent": "<spec or URL>", "role": "spy"|"civilian",
                  "word": str}, ...],                       # seat order
     "first_speaker": "Player 3",
     "rounds": [{"round": 1,
                 "order": [names in speaking order],
                 "descriptions": [{"player": name, "text": shown text, "foul": None|"own_word"|
                                   "repeat"|"timeout"|"no_answer", "seconds": float}, ...],
                 "fouled": [names eliminated by the judge this round],
                 "votes": {voter: target or None (abstained)},   # {} when no vote was held
                 "vote_counts": {name: n},
                 "voted_out": name or None,
                 "alive_after": [names]}, ...],
     "outcome": {"winner": "spy"|"civilians", "spy": name,
                 "spy_eliminated_round": int|None, "end_reason": "spy_eliminated"|"max_rounds"|
                 "few_players", "rounds_played": int},
     "eliminated": {name: {"round": int, "by": "foul"|"vote"}},
     "scores": {name: float},                               # sums to 12
     "llm": {...}, "wall_time_s": float, "invalid_actions": int}
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Mapping

from mas_agents.graphs.voting import plurality
from mas_agents.text import norm_text as _norm
from mas_agents.text import says_word
from mas_agents.planners.base import GameInfo

#: What planner blocks may know of Who is Spy (WiS §3.1): nobody is told whether they are the spy,
#: players describe their secret word and vote; the §4.2 strategy experiments run here.
#: No event is dialogue (``dialogue`` empty): each prompt carries the whole history of
#: descriptions and votes itself, and its seats keep no memory of it; a game opts in.
GAME = GameInfo(name="wis", hidden_role="spy", word_clues=True,
                strategies=frozenset({"attack", "defense", "reasoning"}))

#: What the judge says of each foul (WiS §3.1; the keys are the ``foul`` codes of the game record above).
FOUL_TEXT = {"own_word": "said their own word", "repeat": "repeated an earlier description",
             "timeout": "did not answer in time", "no_answer": "gave no valid description"}

#: Description length limit in characters, per language (WiS §3.1); its keys are the languages.
MAX_CHARS = {"en": 400, "zh": 120}
#: Seconds a player has to describe before it counts as not speaking, a foul (WiS paper Appendix A,
#: "Detailed rules": "If the speaking time exceeds 10 seconds without a response, the system will
#: automatically consider it as not speaking, which is also a violation").
SPEAK_TIMEOUT = 10.0
#: Players allowed (WiS §3.1: 3–9); 6 by default.
MIN_PLAYERS, MAX_PLAYERS, DEFAULT_PLAYERS = 3, 9, 6
#: Rounds of speaking + voting before the spy wins (§3.1).
MAX_ROUNDS = 3
#: A game ends when fewer than this many players survive (§3.1).
MIN_ALIVE = 3
#: Total points of one game (Appendix A).
TOTAL_POINTS = 12
#: Spy's base points when eliminated in round r (Appendix A); the civilians share 12 minus it.
SPY_POINTS_BY_ROUND = {1: 0, 2: 4, 3: 8}
#: Foul reasons, in the order they are checked.
FOULS = ("timeout", "no_answer", "own_word", "repeat")
#: Version of the judge's rules as coded here: bump it when a change to this module or to the
#: judge (``graph.py``) changes how a game is played or scored without changing a constant above,
#: so that leaderboards start a new season (:func:`mas_agents.graphs.wis.fingerprint.wis_protocol`).
RULES_VERSION = 1


def check_players(n: int) -> None:
    """Raise ValueError unless ``MIN_PLAYERS <= n <= MAX_PLAYERS``."""
    if not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise ValueError(f"Who is Spy needs {MIN_PLAYERS}-{MAX_PLAYERS} players, got {n}")


def check_pair(pair: Mapping[str, str]) -> None:
    """Raise ValueError unless ``pair`` has a non-empty ``civilian`` and ``spy`` word that differ
    as the judge compares words (:func:`mas_agents.text.norm_text`): one word for every seat
    leaves no spy to find (WiS §3.1: the spy holds a different word)."""
    civ, spy = (str(pair.get(k) or "").strip() if isinstance(pair, Mapping) else "" for k in ("civilian", "spy"))
    if not civ or not spy:
        raise ValueError(f"word pair {pair!r}: needs a non-empty 'civilian' and 'spy' word")
    if _norm(civ) == _norm(spy):
        raise ValueError(f"word pair {civ}/{spy}: the civilians' and the spy's words must differ")


def check_lang(lang: str) -> None:
    """Raise ValueError unless ``lang`` is a language of the game (:data:`MAX_CHARS`: en or zh),
    e.g. ``--lang 'fr': Who is Spy is played in en or zh``."""
    if lang not in MAX_CHARS:
        raise ValueError(f"--lang {lang!r}: Who is Spy is played in {' or '.join(MAX_CHARS)}")


def truncate(text: str, lang: str) -> str:
    """Cut a description to :data:`MAX_CHARS` ``[lang]`` characters (Unicode code points).

    Raises:
        ValueError: unknown language.
    """
    if lang not in MAX_CHARS:
        raise ValueError(f"unknown language {lang!r}; expected one of {', '.join(MAX_CHARS)}")
    return text[: MAX_CHARS[lang]]


def foul(text: str | None, own_word: str, earlier: Iterable[str], *, timed_out: bool = False) -> str | None:
    """The foul committed by one description, or None.

    Args:
        text: the (truncated) description; None, blank or punctuation only = no answer.
        own_word: the speaker's word.
        earlier: every description shown earlier in the game, by anyone.
        timed_out: the player did not answer within the time limit.

    Returns:
        ``"timeout"``, ``"no_answer"``, ``"own_word"``, ``"repeat"`` (checked in that order) or None.
    """
    if timed_out:
        return "timeout"
    if text is None or not _norm(text):
        return "no_answer"  # blank, or nothing but punctuation
    if says_word(text, own_word):
        return "own_word"
    n = _norm(text)
    if any(_norm(e) == n for e in earlier if e):
        return "repeat"
    return None


def speaking_order(seats: list[str], first: str, alive: Iterable[str]) -> list[str]:
    """Alive players in seat order, starting from ``first`` or the next alive player after them.

    Raises:
        ValueError: ``first`` is not seated.
    """
    if first not in seats:
        raise ValueError(f"first speaker {first!r} is not seated ({', '.join(seats)})")
    alive = set(alive)
    i = seats.index(first)
    rotated = seats[i:] + seats[:i]
    return [p for p in rotated if p in alive]


def vote_candidates(voter: str, alive: Iterable[str]) -> list[str]:
    """The names ``voter`` may vote for: every other alive player, in the given order."""
    return [p for p in alive if p != voter]


def tally(votes: Mapping[str, str | None], alive: Iterable[str]) -> tuple[dict[str, int], str | None]:
    """Count votes and find who is voted out.

    A vote for a name that is not an alive player other than the voter counts as an abstention.

    Returns:
        ``(counts, voted_out)``: counts per named player (only players with votes), and the
        unique top vote-getter, or None on a tie or when nobody voted.
    """
    alive = list(alive)
    counts = Counter(t for v, t in votes.items() if t is not None and t in alive and t != v)
    return dict(counts), plurality(counts)


def end_reason(spy: str, alive: Iterable[str], round: int, *, after_vote: bool,
               max_rounds: int = MAX_ROUNDS) -> str | None:
    """Why the game ends now, or None if it goes on.

    Checked after the judge's foul eliminations (``after_vote=False``) and after each vote
    (``after_vote=True``): ``"spy_eliminated"``, then ``"few_players"`` (fewer than 3 alive),
    then ``"max_rounds"`` (only after the vote of round ``max_rounds``).
    """
    alive = set(alive)
    if spy not in alive:
        return "spy_eliminated"
    if len(alive) < MIN_ALIVE:
        return "few_players"
    if after_vote and round >= max_rounds:
        return "max_rounds"
    return None


def game_scores(roles: Mapping[str, str], spy_eliminated_round: int | None, alive_at_end: Iterable[str],
                votes_by_round: Iterable[Mapping[str, str | None]]) -> dict[str, float]:
    """Zero-sum scores of one game (Appendix A); they always sum to :data:`TOTAL_POINTS`.

    Args:
        roles: name -> ``"spy"`` or ``"civilian"`` (exactly one spy).
        spy_eliminated_round: the round the spy was eliminated in (by foul or vote), or None
            when the spy won.
        alive_at_end: players alive when the game ended.
        votes_by_round: each round's ``{voter: target or None}``.

    The civilians' share is split equally among the civilians alive at the end. If none is
    alive (all fouled out with the spy), it is split among all civilians so the game stays
    zero-sum (our choice: the paper does not cover the case).

    Raises:
        ValueError: not exactly one spy, or a round outside 1..3.
    """
    spies = [p for p, r in roles.items() if r == "spy"]
    if len(spies) != 1:
        raise ValueError(f"a game needs exactly one spy, got {len(spies)}")
    spy = spies[0]
    civilians = [p for p, r in roles.items() if r != "spy"]
    scores = {p: 0.0 for p in roles}
    if spy_eliminated_round is None:
        scores[spy] = float(TOTAL_POINTS)
    else:
        if spy_eliminated_round not in SPY_POINTS_BY_ROUND:
            raise ValueError(f"spy eliminated in round {spy_eliminated_round}; expected 1..{MAX_ROUNDS}")
        scores[spy] = float(SPY_POINTS_BY_ROUND[spy_eliminated_round])
        alive = set(alive_at_end)
        sharers = [c for c in civilians if c in alive] or civilians
        share = (TOTAL_POINTS - scores[spy]) / len(sharers)
        for c in sharers:
            scores[c] += share
    for votes in votes_by_round:
        for voter, target in votes.items():
            if voter != spy and target == spy:
                scores[voter] += 1
                scores[spy] -= 1
    return scores


def rank_score(game_scores_of_agent: Iterable[float]) -> float:
    """Rank score = 100 + Σ game scores − number of games (§3.5)."""
    s = list(game_scores_of_agent)
    return 100.0 + sum(s) - len(s)
