"""MAgIC game rules as pure functions on plain data.

Source: MAgIC (Xu, Hu et al., arXiv 2311.08562) §3 (the five scenarios), §4 (metrics) and
Appendix A (game flows), with the choices this repository made (docs/guides/magic.md). Every game has exactly three players,
``"Player 1"``..``"Player 3"`` (:data:`PLAYERS`). The event contract these rules feed is
:mod:`mas_agents.graphs.magic.events`; the settings they are played on come from :mod:`mas_agents.graphs.magic.dataset`.

* **Chameleon** (20 settings): everybody is told the topic, the two non-chameleons also the
  secret word. Each player gives one clue in seat order (:data:`CHAMELEON_CLUE_ROUNDS`), then
  casts one private vote. If another player ties the top count the vote is a tie; otherwise
  the top vote-getter is accused and, if it is the chameleon, it guesses the word.
  Outcome codes (:func:`chameleon_outcome`): 0 = chameleon accused and guessed wrong,
  1 = accused and guessed right, 2 = a wrong player accused, 3 = tie.
* **Undercover** (20): one player holds a different, related word; nobody is told their
  role. Two clue rounds (:data:`UNDERCOVER_CLUE_ROUNDS`), then one plurality vote.
  Outcome codes (:func:`undercover_outcome`): 0 = undercover accused, 1 = a wrong player
  accused, 2 = tie.
* **Cost Sharing** (airport fee, 21): up to :data:`COST_SHARING_MAX_ROUNDS` rounds; each
  round every player proposes a split of the fixed fee (percent for airlines A, B, C, summing
  to 100) and then votes publicly for one proposal. The game succeeds when all votes go to
  identical splits (:func:`splits_agree`) and fails after the last round.
* **Prisoner's Dilemma** (21): :data:`PD_ROUNDS` rounds of hidden cooperate/defect choices,
  revealed after each round and paid from the setting's table (:func:`pd_payoffs`); the highest
  total wins, and a tie counts as a win for every tied player (:func:`pd_winners`).
* **Public Good** (21): everyone starts with :data:`PG_ENDOWMENT` and makes :data:`PG_ROUNDS`
  hidden contributions, never more than what is left (:func:`pg_clamp`); a player with nothing
  left is not asked and puts in 0 (:func:`pg_forced`). Final holding
  = 100 − own total + multiplier × pool / 3, pool = all contributions of all players over the
  game (:func:`pg_finals`); the highest final wins, ties are wins for all tied (:func:`pg_winners`).

Win-rate credit tables (:data:`CHAMELEON_CREDIT`, :data:`UNDERCOVER_CREDIT`) give, per outcome
code, the points of each side; the win-rate metric (:mod:`mas_agents.graphs.magic.metrics`) reads them.

A little over 400 lines as one idea, the rules of MAgIC: five short sections of pure functions that
share the seats, the vote tally and the winners' rule; split per scenario, those would need a
module of their own for a few lines.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from numbers import Real

from mas_agents.graphs.voting import plurality
from mas_agents.text import norm_text
from mas_agents.planners.base import GameInfo

#: What planner blocks may know of each MAgIC scenario (arXiv 2311.08562 §3): in Chameleon the
#: chameleon is told its role, in Undercover nobody is; both are clue-and-vote games. The three
#: game-theory scenarios have a repeated move and no hidden role. No event is dialogue
#: (``dialogue`` empty): each prompt carries the history itself and its seats keep no memory of
#: it; a game opts in.
GAMES = {
    "chameleon": GameInfo(name="chameleon", hidden_role="chameleon", holder_knows_role=True, word_clues=True),
    "undercover": GameInfo(name="undercover", hidden_role="undercover", word_clues=True),
    "cost_sharing": GameInfo(name="cost_sharing", moves="shares"),
    "prisoners_dilemma": GameInfo(name="prisoners_dilemma", moves="binary"),
    "public_good": GameInfo(name="public_good", moves="amount"),
}

#: The seats of every MAgIC game, in seat (speaking) order.
PLAYERS = ("Player 1", "Player 2", "Player 3")
#: Clue rounds before the vote (MAgIC §3, Appendix A).
CHAMELEON_CLUE_ROUNDS = 1
UNDERCOVER_CLUE_ROUNDS = 2
#: Rounds of proposing and voting before the cost-sharing game fails.
COST_SHARING_MAX_ROUNDS = 5
#: Rounds of the iterated prisoner's dilemma and of the public-good game.
PD_ROUNDS = 5
PG_ROUNDS = 5
#: What every public-good player starts with.
PG_ENDOWMENT = 100
#: A split is valid when its three shares sum to 100 within this many percentage points.
#: With 0.5 the settings' quirky opener ``[65, 17, 17]`` (sum 99; airport ids 9 and 10) is
#: *not* valid; see :class:`mas_agents.graphs.magic.dataset.CostSharingSetting`.
SPLIT_TOLERANCE = 0.5
#: The fixed airport fee of every cost-sharing setting, in dollars.
COST_SHARING_FEE = 1_000_000
#: Choices of the prisoner's dilemma.
PD_CHOICES = ("cooperate", "defect")
#: Keys of a prisoner's-dilemma payoff table (``topic_values`` in the settings).
PD_TABLE_KEYS = ("cooperate", "defect", "one_defect", "two_defect")

#: Chameleon outcome code -> (credit of the chameleon side, credit of the non-chameleon side).
CHAMELEON_CREDIT = {0: (0, 2), 1: (1, 1), 2: (2, 0), 3: (1, 1)}
#: Undercover outcome code -> (credit of the undercover side, credit of the civilian side).
UNDERCOVER_CREDIT = {0: (0, 3), 1: (3, 0), 2: (2, 1)}
#: Sides of the two deduction games, in the order of the credit pairs above.
CREDIT_SIDES = {"chameleon": ("chameleon", "non_chameleon"), "undercover": ("undercover", "civilian")}


def credit(scenario: str, code: int, side: str) -> int:
    """The win-rate credit of ``side`` for outcome ``code`` of ``scenario``.

    Args:
        scenario: ``"chameleon"`` or ``"undercover"``.
        code: the outcome code (:func:`chameleon_outcome` / :func:`undercover_outcome`).
        side: ``"chameleon"``/``"non_chameleon"`` or ``"undercover"``/``"civilian"``.

    Raises:
        ValueError: unknown scenario, code or side.
    """
    tables = {"chameleon": CHAMELEON_CREDIT, "undercover": UNDERCOVER_CREDIT}
    if scenario not in tables:
        raise ValueError(f"no credit table for scenario {scenario!r}; expected chameleon or undercover")
    table = tables[scenario]
    if code not in table:
        raise ValueError(f"unknown {scenario} outcome code {code!r}; expected one of {sorted(table)}")
    sides = CREDIT_SIDES[scenario]
    if side not in sides:
        raise ValueError(f"unknown {scenario} side {side!r}; expected one of {', '.join(sides)}")
    return table[code][sides.index(side)]


# --------------------------------------------------------------------------- deduction games

def vote_outcome(votes: Mapping[str, str | None],
                 players: Sequence[str] = PLAYERS) -> tuple[dict[str, int], str | None, bool]:
    """Count one round of private votes (chameleon and undercover).

    A vote is valid when it names one of ``players`` other than the voter; anything else
    (None, an unknown name, a vote for oneself) is an abstention. Votes cast by someone who is
    not in ``players`` are ignored.

    Returns:
        ``(counts, accused, tie)``: ``counts`` has every player (0 included) in ``players``
        order; ``accused`` is the unique top vote-getter, or None on a tie. It is a tie when
        another player ties the top count, and also when there is no valid vote at all (our
        choice: nobody is accused, so the round ends as a tie).
    """
    players = list(players)
    counts = {p: 0 for p in players}
    for voter, target in votes.items():
        if voter in counts and target in counts and target != voter:
            counts[target] += 1
    accused = plurality(counts)
    return counts, accused, accused is None


def _check_accused(accused: str | None, tie: bool) -> None:
    if tie and accused is not None:
        raise ValueError(f"a tied vote accuses nobody, got accused={accused!r}")
    if not tie and accused is None:
        raise ValueError("a vote that is not a tie must accuse somebody, got accused=None")


def chameleon_outcome(accused: str | None, tie: bool, chameleon: str, guess_correct: bool | None) -> int:
    """Chameleon outcome code from the vote and the chameleon's guess.

    Args:
        accused: the accused player (None on a tie), as from :func:`vote_outcome`.
        tie: whether the vote was a tie.
        chameleon: the chameleon's name.
        guess_correct: whether the accused chameleon guessed the word; None (no guess made,
            e.g. not accused, or no answer) counts as wrong. Ignored unless the chameleon is accused.

    Returns:
        0 = chameleon accused and guessed wrong, 1 = accused and guessed right,
        2 = a wrong player accused, 3 = tie.

    Raises:
        ValueError: ``tie`` with an accused player, or no tie without one.
    """
    _check_accused(accused, tie)
    if tie:
        return 3
    if accused == chameleon:
        return 1 if guess_correct else 0
    return 2


def undercover_outcome(accused: str | None, tie: bool, undercover: str) -> int:
    """Undercover outcome code: 0 = undercover accused, 1 = a wrong player accused, 2 = tie.

    Raises:
        ValueError: ``tie`` with an accused player, or no tie without one.
    """
    _check_accused(accused, tie)
    if tie:
        return 2
    return 0 if accused == undercover else 1


_ARTICLES = {"a", "an", "the"}


def _plural_of(a: str, b: str) -> bool:
    """True when ``a`` is an English plural form of ``b`` (grapes/grape, peaches/peach, cherries/cherry)."""
    return a in (b + "s", b + "es") or (b.endswith("y") and len(b) > 1 and a == b[:-1] + "ies")


def _guess_key(text: str) -> str:
    tokens = norm_text(text).split()
    if len(tokens) > 1 and tokens[0] in _ARTICLES:
        tokens = tokens[1:]
    return "".join(tokens)


def guess_correct(guess: str | None, code: str) -> bool:
    """Whether the chameleon's guess names the secret word ``code``.

    ``guess`` is the guessed word itself (the game extracts it from the reply). The comparison
    ignores case, Unicode width, punctuation and spacing (``"united-kingdom"`` =
    ``"UnitedKingdom"`` = ``"United Kingdom"``), one leading article (``"the United Kingdom"``),
    and a regular English plural ending on either side (``"grapes"`` = ``"Grape"``,
    ``"Mangoes"`` = ``"mango"``, ``"cherries"`` = ``"Cherry"``, ``"peach"`` = ``"Peaches"``): one
    form must be the other plus ``s``/``es``, or ``y`` → ``ies``. Nothing else: no synonyms or abbreviations
    (``"UK"`` is wrong for ``"United Kingdom"``), and a sentence that merely contains the word
    is wrong. None or a blank guess is wrong.
    """
    if guess is None or not isinstance(guess, str):
        return False
    g, c = _guess_key(guess), _guess_key(code)
    if not g or not c:
        return False
    return g == c or _plural_of(g, c) or _plural_of(c, g)


# --------------------------------------------------------------------------- cost sharing

_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+"
_AIRLINE = re.compile(rf"airline\s*([abc])\b\s*(?:[:=\-]|pays|gets|should pay)?\s*\$?\s*({_NUM})\s*(%)?", re.I)
_PERCENT = re.compile(rf"({_NUM})\s*%")
_NUMBER = re.compile(rf"(?<![\w.])({_NUM})(?![\w])")


def _num(s: str) -> float:
    return float(s.replace(",", ""))


def _is_number(x: object) -> bool:
    return isinstance(x, Real) and not isinstance(x, bool) and math.isfinite(float(x))


def parse_split(value: object, fee: float = COST_SHARING_FEE) -> tuple[float, float, float] | None:
    """Read a proposed split (percent for airlines A, B, C) from a list or a reply text.

    Accepted forms:

    * a list/tuple of exactly three numbers, e.g. ``[40, 30, 30]``;
    * a text naming each airline with an amount, e.g. ``"Airline A: 40%\\nAirline B: 30% ..."``
      or ``"Airline A: $400,000, Airline B: ..."`` (the last amount named for each of A, B, C);
    * otherwise a text with exactly three percentages (``"40% / 30% / 30%"``), or failing
      that exactly three bare numbers (``"40, 30, 30"``, ``"[40,30,30]"``).

    Numbers may use thousands separators (``400,000``). When the three amounts sum to ``fee``
    within 0.5 % of it (dollar amounts), they are converted to percent of ``fee``.

    The result is *not* validated: check it with :func:`valid_split`.

    Returns:
        ``(a, b, c)`` as floats, or None when no three amounts can be read.
    """
    nums: list[float] | None = None
    if isinstance(value, (list, tuple)):
        if len(value) == 3 and all(_is_number(x) for x in value):
            nums = [float(x) for x in value]
        else:
            return None
    elif isinstance(value, str):
        by_airline: dict[str, float] = {}
        for m in _AIRLINE.finditer(value):
            by_airline[m.group(1).upper()] = _num(m.group(2))
        if len(by_airline) == 3:
            nums = [by_airline["A"], by_airline["B"], by_airline["C"]]
        else:
            pct = [_num(m.group(1)) for m in _PERCENT.finditer(value)]
            if len(pct) == 3:
                nums = pct
            else:
                bare = [_num(m.group(1)) for m in _NUMBER.finditer(value)]
                if len(bare) == 3:
                    nums = bare
    if nums is None:
        return None
    total = sum(nums)
    if fee and fee != 100 and abs(total - fee) <= 0.005 * fee:
        nums = [x * 100.0 / fee for x in nums]
    return (nums[0], nums[1], nums[2])


def valid_split(split: object, tol: float = SPLIT_TOLERANCE) -> bool:
    """True for three finite, non-negative numbers that sum to 100 within ``tol`` points.

    With the default tolerance 0.5, ``[33.3, 33.3, 33.4]`` and ``[33.33, 33.33, 33.33]`` are
    valid, ``[65, 17, 17]`` (sum 99) is not. None, bools and other shapes are invalid.
    """
    if not isinstance(split, (list, tuple)) or len(split) != 3:
        return False
    if not all(_is_number(x) for x in split):
        return False
    if any(float(x) < 0 for x in split):
        return False
    return abs(sum(float(x) for x in split) - 100.0) <= tol


def splits_agree(votes: Mapping[str, str | None],
                 proposals: Mapping[str, Sequence[float] | None]) -> tuple[bool, tuple[float, float, float] | None]:
    """Whether one round of public votes reaches agreement.

    Args:
        votes: voter -> the player whose proposal they vote for (None = no valid vote).
        proposals: proposer -> this round's split, or None when the proposal was missing or invalid.

    Agreement needs at least one vote, every voter to name a proposer whose split is not None,
    and all the named splits to be identical (compared as floats, so ``[50, 25, 25]`` proposed
    by Player 2 and ``[50.0, 25.0, 25.0]`` by Player 3 agree even if the votes are split between
    the two). Validity of the splits is the caller's job (record an invalid one as None).

    Returns:
        ``(True, split)`` with the agreed split as floats, or ``(False, None)``.
    """
    if not votes:
        return False, None
    chosen: list[tuple[float, ...]] = []
    for target in votes.values():
        split = proposals.get(target) if target is not None else None
        if split is None:
            return False, None
        chosen.append(tuple(float(x) for x in split))
    first = chosen[0]
    if len(first) != 3 or any(s != first for s in chosen[1:]):
        return False, None
    return True, (first[0], first[1], first[2])


# --------------------------------------------------------------------------- prisoner's dilemma

def pd_payoffs(choices: Mapping[str, str], table: Mapping[str, int]) -> dict[str, int]:
    """One round's payoffs of the 3-player prisoner's dilemma.

    All cooperate -> each gets ``table["cooperate"]``; all defect -> each ``table["defect"]``;
    exactly one defector -> it gets ``table["one_defect"]``, the cooperators 0; two defectors ->
    each gets ``table["two_defect"]``, the cooperator 0.

    Args:
        choices: name -> ``"cooperate"`` or ``"defect"`` for exactly 3 players (the game decides
            what a missing answer becomes before calling).
        table: the setting's payoff table (:data:`PD_TABLE_KEYS`).

    Raises:
        ValueError: not 3 players, an unknown choice, or a table key missing.
    """
    if len(choices) != len(PLAYERS):
        raise ValueError(f"the prisoner's dilemma needs {len(PLAYERS)} choices, got {len(choices)}")
    for name, c in choices.items():
        if c not in PD_CHOICES:
            raise ValueError(f"{name}: choice {c!r} is not one of {', '.join(PD_CHOICES)}")
    missing = [k for k in PD_TABLE_KEYS if k not in table]
    if missing:
        raise ValueError(f"payoff table lacks {', '.join(missing)}")
    defectors = [n for n, c in choices.items() if c == "defect"]
    k = len(defectors)
    if k == 0:
        return {n: table["cooperate"] for n in choices}
    if k == len(choices):
        return {n: table["defect"] for n in choices}
    pay = table["one_defect"] if k == 1 else table["two_defect"]
    return {n: (pay if c == "defect" else 0) for n, c in choices.items()}


def _winners(scores: Mapping[str, float], what: str) -> list[str]:
    if not scores:
        raise ValueError(f"no {what} to rank")
    top = max(scores.values())
    return [n for n, s in scores.items() if math.isclose(s, top, rel_tol=0.0, abs_tol=1e-9)]


def pd_winners(totals: Mapping[str, int]) -> list[str]:
    """Players with the highest total, in input order; a tie makes every tied player a winner.

    Raises:
        ValueError: empty ``totals``.
    """
    return _winners(totals, "totals")


# --------------------------------------------------------------------------- public good

def pg_forced(left: int) -> int | None:
    """The contribution a player makes without being asked: 0 when it has nothing ``left``, else
    None (the player decides).

    Source: MAgIC §3.1 (players are given fixed initial resources and decide how much of them to
    invest each round), App. A.1 and the Public Good global prompt of App. A.7 (each player begins
    with 100 points; a player's final points are its *remaining* points plus its share of the
    pool). A contribution comes out of the remaining points, so with none left the one possible
    contribution is 0: there is nothing to decide, and the player is not asked (no model call, no
    invalid action). The round is still one of its contributions, counted by Rationality as §3.3
    Eq. 8 counts every round of every Public Good competition.

    Raises:
        ValueError: ``left`` negative or not an integer.
    """
    if isinstance(left, bool) or not isinstance(left, int) or left < 0:
        raise ValueError(f"the amount left must be a non-negative integer, got {left!r}")
    return 0 if left == 0 else None


def pg_clamp(amount: object, left: int) -> int:
    """The contribution actually made when a player offers ``amount`` with ``left`` remaining.

    Our choices: None (no readable answer) and negative amounts become 0; a fractional amount
    is rounded down to a whole unit; an over-contribution is clamped to ``left``.

    Raises:
        ValueError: ``left`` negative, or ``amount`` neither None nor a finite number.
    """
    if isinstance(left, bool) or not isinstance(left, int) or left < 0:
        raise ValueError(f"the amount left must be a non-negative integer, got {left!r}")
    if amount is None:
        return 0
    if not _is_number(amount):
        raise ValueError(f"contribution must be a number or None, got {amount!r}")
    value = math.floor(float(amount))
    return max(0, min(value, left))


def pg_finals(contributions: Mapping[str, Iterable[float]], multiplier: float,
              endowment: float = PG_ENDOWMENT) -> dict[str, float]:
    """Final holdings of the public-good game.

    final = endowment − own total + multiplier × pool / n, where pool is the sum of all players'
    contributions over the whole game and n the number of players (3).

    Raises:
        ValueError: no players, a negative contribution, or a player contributing more than
            ``endowment`` in total (clamp with :func:`pg_clamp` first).
    """
    if not contributions:
        raise ValueError("no players in the public-good game")
    own: dict[str, float] = {}
    for name, amounts in contributions.items():
        amounts = list(amounts)
        if any((not _is_number(a)) or a < 0 for a in amounts):
            raise ValueError(f"{name}: contributions must be non-negative numbers, got {amounts!r}")
        own[name] = float(sum(amounts))
        if own[name] > endowment:
            raise ValueError(f"{name} contributed {own[name]:g} in total, more than the endowment {endowment:g}")
    share = multiplier * sum(own.values()) / len(own)
    return {name: endowment - total + share for name, total in own.items()}


def pg_winners(finals: Mapping[str, float]) -> list[str]:
    """Players with the highest final holding, in input order; ties are wins for all tied.

    Raises:
        ValueError: empty ``finals``.
    """
    return _winners(finals, "finals")
