"""How ``mas serve`` shows a MAgIC game (:class:`mas_agents.game.view.GameView` of the game ``magic``):
its runs-list headline, its sentences (English only: MAgIC's prompts are English), the seats with
the challenger's part, and the roles, secret and outcome at the end.

Rules worded here: the outcome codes of Chameleon and Undercover and the payoffs of the
game-theory scenarios (MAgIC §3.2, Appendix A.1; :mod:`mas_agents.graphs.magic.rules`). Pure Python: no I/O.
"""

from __future__ import annotations

from typing import Any, Mapping

from mas_agents.game.view import GameView, SeatInfo, Table, players_of, vote_result_sentence, vote_sentence
from mas_agents.utterance import quote

#: MAgIC's scenario keys and the challenger's sides in words (MAgIC §3.2, A.1), for headlines.
SCENARIOS = {"chameleon": "Chameleon", "undercover": "Undercover", "cost_sharing": "Cost sharing",
             "prisoners_dilemma": "Prisoner's Dilemma", "public_good": "Public good"}
SIDES = {"chameleon": "the chameleon", "non_chameleon": "a non-chameleon", "undercover": "the undercover",
         "civilian": "a civilian", "test_seat": "the seat under test"}
#: Scenarios whose roles are hidden from the players until the end.
HIDDEN_SCENARIOS = {"chameleon", "undercover"}
#: The game-theory scenarios: every seat's role is "player"; the panel shows its part instead.
OPEN_SCENARIOS = {"cost_sharing", "prisoners_dilemma", "public_good"}
ROLE_TEXT = {"en": {"chameleon": "the chameleon", "non_chameleon": "not the chameleon", "undercover": "the undercover",
                    "civilian": "civilian", "player": "player", "test_seat": "player"},
             "zh": {"civilian": "平民", "player": "玩家"}}
TITLES = {"en": {"ph_clues": "Clues", "ph_negotiation": "Proposals and votes", "ph_moves": "Moves",
                 "ph_guess": "The chameleon's guess", **{f"v_{k}": v for k, v in SCENARIOS.items()}},
          "zh": {"ph_clues": "线索", "ph_negotiation": "提议与投票", "ph_moves": "行动", "ph_guess": "猜词"}}


def words(key: Any, table: dict[str, str]) -> str:
    """A MAgIC key (scenario or side) in words (an unknown one with its underscores as spaces)."""
    k = str(key or "")
    return table.get(k, k.replace("_", " "))


def outcome(d: Mapping[str, Any], scenario: str) -> str:
    """A MAgIC game's outcome (``result.json`` ``outcome`` or the ``outcome`` event's data) as one
    English sentence, by scenario: who was accused and who wins, the agreed split, the payoffs."""
    acc = d.get("accused")
    if "code" in d and scenario in ("chameleon", ""):
        return {0: f"The chameleon, {acc}, was caught and guessed the secret word wrong: the other players win.",
                1: f"The chameleon, {acc}, was caught but guessed the secret word: the chameleon wins.",
                2: f"The vote accused {acc}, who is not the chameleon: the chameleon wins.",
                3: "The vote was a tie: no one was accused, and the chameleon escapes."}.get(int(d["code"]),
                                                                                            f"Outcome code {d['code']}.")
    if "code" in d and scenario == "undercover":
        return {0: f"The undercover, {acc}, was voted out: the civilians win.",
                1: f"The vote accused {acc}, a civilian: the undercover wins.",
                2: "The vote was a tie: no one was voted out, and the undercover escapes."}.get(int(d["code"]),
                                                                                                f"Outcome code {d['code']}.")
    if "agreed" in d:
        split = d.get("split")
        return (f"Agreement in round {d.get('rounds')}: the fee is split "
                + " / ".join(f"{x:g} %" for x in split) + "." if d.get("agreed") and split else
                f"No agreement after {d.get('rounds')} rounds.")
    if "totals" in d:
        return ("Total payoffs: " + ", ".join(f"{p} {v}" for p, v in d["totals"].items())
                + f". Winner(s): {', '.join(d.get('winners') or []) or 'none'}.")
    if "finals" in d:
        return ("Final coins: " + ", ".join(f"{p} {v:g}" for p, v in d["finals"].items())
                + f". Winner(s): {', '.join(d.get('winners') or []) or 'none'}.")
    return "The game is over."


def headline(config: dict, result: dict) -> str:
    """The runs list's line: ``Undercover, setting 0, the challenger plays a civilian. <outcome>``
    (``; playing`` before the outcome)."""
    oc = result.get("outcome")
    return (f"{words(config.get('scenario'), SCENARIOS)}, setting {config.get('setting_id')}, "
            f"the challenger plays {words(config.get('side'), SIDES)}"
            + (". " + outcome(oc, str(config.get("scenario") or "")) if isinstance(oc, dict)
               else "; playing" if oc is None else f"; {oc}"))


def seat_specs(config: dict) -> list[str]:
    """The challenger's and the defender's agent specs."""
    return list(dict.fromkeys(str(x) for x in (config.get("challenger"), config.get("defender")) if x))


def variant(events: list[dict[str, Any]], config: Mapping[str, Any]) -> str:
    """The scenario (``setup`` event, else ``config["scenario"]``), or ""."""
    setup = next((e.get("data") or {} for e in events if e.get("kind") == "setup"), {})
    return str(setup.get("scenario") or (config or {}).get("scenario") or "")


def sentence(e: Mapping[str, Any], lang: str, variant: str = "") -> str | None:
    """The English sentence of a MAgIC event; None for the kinds the web words generically."""
    k, a = str(e.get("kind") or ""), str(e.get("actor") or "")
    c, d = str(e.get("content") or ""), dict(e.get("data") or {})
    if k == "vote":
        return vote_sentence(e, lang)
    if k == "vote_result":
        return vote_result_sentence(d, lang, verb="is accused")
    if k == "outcome":
        return outcome(d, variant)
    if k == "setup":
        return f"The game is set up ({c}); the roles and the secret are revealed at the end."
    if k == "private_info":
        return f"{a if a != 'game' else 'The game'} tells it privately: {c}"
    if k == "self_awareness":
        ok = d.get("correct")
        return f"{a} says who it is: “{c}”" + ("" if ok is None else (" (right)" if ok else " (wrong)"))
    if k == "clue":
        return f"{a} gives the clue: {quote(c)}" if d.get("text", c) else f"{a} gives no clue."
    if k == "belief":
        return f"{a}'s answers to the belief questionnaire (whom each player suspects):"
    if k == "guess":
        return f"{a} guesses the secret word {quote(d.get('word') or '')}: {'right' if d.get('correct') else 'wrong'}."
    if k == "proposal":
        return f"{a} proposes: {c}"
    if k == "proposal_vote":
        return f"{a} votes for the proposal of {d.get('for')}." if d.get("for") else f"{a} votes for no proposal."
    if k == "pd_choice":
        ch = d.get("choice")
        return f"{a} chooses to {ch}." if ch else f"{a} gives no readable choice (counted as cooperate)."
    if k == "contribution":
        amt = d.get("amount")
        if d.get("forced"):
            return f"{a} has no points left and puts {amt} into the pool (not asked)."
        return f"{a} puts {amt} coins into the pool." if amt is not None else f"{a} gives no readable amount."
    if k == "pd_reveal":
        ch, pay = d.get("choices") or {}, d.get("payoffs") or {}
        return (f"Round {d.get('round')}, the choices are revealed: "
                + ", ".join(f"{p} {ch.get(p) or 'no answer (cooperate)'} (+{pay.get(p)})" for p in pay) + ".")
    if k == "pg_reveal":
        am = d.get("amounts") or {}
        return (f"Round {d.get('round')}, the contributions are revealed: " + ", ".join(f"{p} {v}" for p, v in am.items())
                + f"; the pool holds {d.get('pool_total')} coins.")
    if k == "pgm_reading":
        return f"{a} reads the clue of {d.get('subject')}: {d.get('reading') or 'unreadable'}."
    return None


def table(e: Mapping[str, Any]) -> Table | None:
    """The belief questionnaire (``belief``): whom the player suspects and whom it predicts each
    other player suspects."""
    if e.get("kind") != "belief":
        return None
    a, d = str(e.get("actor")), dict(e.get("data") or {})
    rows = [[f"{a} (its own answer)", str(d.get("suspect") or "(no answer)")]]
    rows += [[q, str(s or "(no answer)")] for q, s in (d.get("predicted") or {}).items()]
    return Table("", ["Player", "Suspects"], rows)


def seats(events: list[dict[str, Any]], config: dict, result: dict) -> SeatInfo:
    """Seats from the ``setup`` event, agents from ``config.seats``, roles from the setup; in the
    game-theory scenarios (every role "player") the seat's part: the challenger or a defender
    (MAgIC §3: challenger LLMs play against the same defender agents)."""
    setup = next((e.get("data") or {} for e in events if e.get("kind") == "setup"), {})
    seat_names = [str(x) for x in setup.get("players") or []] or players_of(events)
    agents = {str(k): str(v) for k, v in (config.get("seats") or {}).items()}
    roles = {str(k): str(v) for k, v in (setup.get("roles") or {}).items()}
    challengers = {str(x) for x in setup.get("challenger_seats") or []}
    labels = {}
    if challengers and variant(events, config) in OPEN_SCENARIOS:
        labels = {n: f"player ({'challenger' if n in challengers else 'defender'})" for n in seat_names}
    return SeatInfo(names=seat_names, agents=agents, roles=roles, role_labels=labels)


def truth(events: list[dict[str, Any]], lang: str, scenario: str = "") -> list[str]:
    """The roles (or each seat's part), the secret (topic, code, the two words) and the outcome."""
    lines: list[str] = []
    setup = next((e.get("data") or {} for e in events if e.get("kind") == "setup"), {})
    if setup.get("roles"):
        challengers = set(setup.get("challenger_seats") or [])
        open_game = challengers and str(setup.get("scenario")) in OPEN_SCENARIOS
        lines.append("Roles: " + "; ".join(
            f"{p}: player ({'challenger' if p in challengers else 'defender'})" if open_game
            else f"{p}: {ROLE_TEXT['en'].get(r, r)}" for p, r in setup["roles"].items()))
    secret = [f"{label} {setup[k]}" for k, label in (("topic", "topic"), ("code", "secret word"),
                                                      ("civilian_word", "the civilians' word"),
                                                      ("undercover_word", "the undercover's word")) if k in setup]
    if secret:
        lines.append("The secret: " + ", ".join(secret) + ".")
    oc = next((e for e in events if e.get("kind") == "outcome"), None)
    if oc:
        lines.append(outcome(oc.get("data") or {}, scenario or str(setup.get("scenario") or "")))
    return lines


VIEW = GameView(sentence=sentence, seats=seats, truth=truth, titles=TITLES, role_text=ROLE_TEXT,
                lang=lambda events, config: "en",
                hidden_roles=lambda events, config: variant(events, config) in HIDDEN_SCENARIOS,
                variant=variant, table=table, names={"en": "MAgIC", "zh": "MAgIC"},
                recognizes=frozenset({"clue", "proposal", "pd_choice", "contribution", "self_awareness"}))
