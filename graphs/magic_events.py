"""The event log of a MAgIC game: what the games write and what the metrics read.

Every MAgIC game (MAgIC §3, Appendix A; the MAgIC issue) writes ``events.jsonl`` with the common
event fields of :mod:`mas_agents.events` (``step, phase, round, actor, kind, content, visible_to,
llm_call_ids, data``). Metrics (:mod:`eval.magic_metrics`) are computed from these events only,
so a run can be re-scored. The kinds and their ``data`` payloads:

``setup`` (actor ``game``, public; ground truth is in ``data`` but only the game reads it)::

    {"scenario": "chameleon"|"undercover"|"cost_sharing"|"prisoners_dilemma"|"public_good",
     "setting_id": int, "players": ["Player 1", "Player 2", "Player 3"],
     "challenger_seats": ["Player k", ...],      # seats played by the challenger spec
     "roles": {name: role},                      # chameleon|non_chameleon|undercover|civilian|player
     "side": "chameleon"|"non_chameleon"|"undercover"|"civilian"|"test_seat",  # the challenger's side
     ... scenario facts: "topic", "code" (chameleon word); "words" {name: word} (undercover);
     "payoffs" {cooperate, defect, one_defect, two_defect} (PD); "multiplier" (public good);
     "fee" (cost sharing)}

``self_awareness`` (private to the actor; chameleon and undercover, before each clue)::

    {"clue_index": int, "said_name": str|None, "said_role": str|None,
     "true_name": str, "true_role": str, "correct": bool}

``belief`` (private; chameleon and undercover, after each clue; the reasoning questionnaire)::

    {"clue_index": int, "suspect": str|None,          # whom I think is the chameleon/undercover
     "predicted": {other_name: str|None}}             # whom I think each other player suspects

``clue`` (public)::  {"clue_index": int, "text": str, "replayed": bool}
``vote`` (private; the deduction games)::  {"target": str|None}
``vote_result`` (public)::  {"counts": {name: int}, "accused": str|None, "tie": bool}
``guess`` (public; chameleon accused)::  {"word": str|None, "correct": bool}
``proposal`` (public; cost sharing)::  {"round": int, "split": [a, b, c] | None}
``proposal_vote`` (public; cost sharing)::  {"round": int, "for": name|None}
``pd_choice`` (private until revealed; a public ``pd_reveal`` follows each round)::
    {"round": int, "choice": "cooperate"|"defect"|None}
``pd_reveal`` (public)::  {"round": int, "choices": {name: choice}, "payoffs": {name: int}}
``contribution`` (private until revealed; a public ``pg_reveal`` follows each round)::
    {"round": int, "amount": int|None}
``pg_reveal`` (public)::  {"round": int, "amounts": {name: int}, "pool": int}
``outcome`` (actor ``game``, public)::

    chameleon:   {"code": 0|1|2|3, "accused": str|None}
    undercover:  {"code": 0|1|2, "accused": str|None}
    cost_sharing: {"agreed": bool, "rounds": int, "split": [a, b, c]|None,
                   "latest_proposals": {name: [a, b, c]|None}}
    prisoners_dilemma: {"totals": {name: int}, "winners": [names]}
    public_good: {"finals": {name: float}, "winners": [names]}

``belief_table`` (private; the PGM block's posteriors each turn)::  free-form, see planners.pgm

Outcome codes (MAgIC issue): chameleon 0 = chameleon accused and guessed the word wrong,
1 = accused and guessed right, 2 = a wrong player accused, 3 = tie; undercover 0 = undercover
accused, 1 = a wrong player accused, 2 = tie.
"""

from __future__ import annotations

SCENARIOS = ("chameleon", "undercover", "cost_sharing", "prisoners_dilemma", "public_good")
#: Settings sub-folder of each scenario under ``<data>/magic/settings/``.
SETTINGS_DIR = {"chameleon": "chameleon", "undercover": "undercover", "cost_sharing": "airportfee",
                "prisoners_dilemma": "prisoner", "public_good": "public_good"}
KINDS = ("setup", "self_awareness", "belief", "clue", "vote", "vote_result", "guess", "proposal",
         "proposal_vote", "pd_choice", "pd_reveal", "contribution", "pg_reveal", "outcome", "belief_table")
