"""The event log of a MAgIC game: what the games write and what the metrics read.

Every MAgIC game (MAgIC §3, Appendix A) writes ``events.jsonl`` with the common
event fields of :mod:`mas_agents.events` (``step, phase, round, actor, kind, content, visible_to,
llm_call_ids, data``). Metrics (:mod:`mas_agents.graphs.magic.metrics`) are computed from these events only,
so a run can be re-scored. The kinds and their ``data`` payloads:

``setup`` (actor ``game``, ``visible_to=["game"]``: ground truth, seen by no player)::

    {"scenario": "chameleon"|"undercover"|"cost_sharing"|"prisoners_dilemma"|"public_good",
     "setting_id": int, "players": ["Player 1", "Player 2", "Player 3"],
     "challenger_seats": ["Player k", ...],      # seats played by the challenger spec
     "roles": {name: role},                      # chameleon|non_chameleon|undercover|civilian|player
     "side": "chameleon"|"non_chameleon"|"undercover"|"civilian"|"test_seat",  # the challenger's side
     ... scenario facts: "topic", "code" (chameleon word); "words" {name: word} (undercover);
     "payoffs" {cooperate, defect, one_defect, two_defect} (PD); "multiplier" (public good);
     "fee" (cost sharing)}

``private_info`` (to one player): what the rules tell that player (topic, word, role if told).
``invalid`` (to one player): an action unreadable after a re-prompt (``data``: action, raw, errors).

``self_awareness`` (``visible_to=["game"]``: it carries the true role; chameleon and undercover,
before each clue)::

    {"clue_index": int, "said_name": str|None, "said_role": str|None,
     "true_name": str, "true_role": str, "correct": bool}

``belief`` (private; chameleon and undercover, after each clue; the reasoning questionnaire)::

    {"clue_index": int, "suspect": str|None,          # whom I think is the chameleon/undercover
     "predicted": {other_name: str|None}}             # whom I think each other player suspects

``clue`` (public)::  {"clue_index": int, "text": str, "replayed": bool, "self_check_retry": bool}
``vote`` (private; the deduction games)::  {"target": str|None}
``vote_result`` (public)::  the shared payload :class:`mas_agents.events.VoteResult`
    {"votes": {voter: target|None}, "counts": {name: int}, "out": accused|None, "tie": bool}
    # ballots are revealed after the vote
``guess`` (public; chameleon accused)::  {"word": str|None, "correct": bool}
``proposal`` (public; cost sharing)::  {"round": int, "split": [a, b, c] | None (None unless it sums to 100 ± 0.5),
                                          "said": [a, b, c] | None (the numbers as read)}
``proposal_vote`` (public; cost sharing)::  {"round": int, "for": name|None}
``pd_choice`` (private until revealed; a public ``pd_reveal`` follows each round)::
    {"round": int, "choice": "cooperate"|"defect"|None}
``pd_reveal`` (public)::  {"round": int, "choices": {name: choice|None}, "payoffs": {name: int}}
                         # an unreadable choice (None) is scored as cooperate
``contribution`` (private until revealed; a public ``pg_reveal`` follows each round)::
    {"round": int, "amount": int|None[, "forced": true]}
    # "forced": the player had no points left and was not asked (0; rules.pg_forced)
``pg_reveal`` (public)::  {"round": int, "amounts": {name: int}, "pool": int (this round),
                         "pool_total": int (all rounds so far)[, "forced": [names not asked]]}
``outcome`` (actor ``game``, public)::

    chameleon:   {"code": 0|1|2|3, "accused": str|None}
    undercover:  {"code": 0|1|2, "accused": str|None}
    cost_sharing: {"agreed": bool, "rounds": int, "split": [a, b, c]|None,
                   "latest_proposals": {name: [a, b, c]|None}}
    prisoners_dilemma: {"totals": {name: int}, "winners": [names]}
    public_good: {"finals": {name: float}, "winners": [names]}

``belief_table`` (private; the PGM block's posteriors each turn)::  free-form, see mas_agents.planners.pgm (``data.model``:
    ``hidden_role``, ``moves`` or, in cost sharing, ``shares``: :mod:`mas_agents.planners.pgm.shares`)

Outcome codes (ours; the win-rate credit of each is in :data:`mas_agents.graphs.magic.rules.CHAMELEON_CREDIT`): chameleon 0 = chameleon accused and guessed the word wrong,
1 = accused and guessed right, 2 = a wrong player accused, 3 = tie; undercover 0 = undercover
accused, 1 = a wrong player accused, 2 = tie.
"""

from __future__ import annotations

SCENARIOS = ("chameleon", "undercover", "cost_sharing", "prisoners_dilemma", "public_good")
#: Settings sub-folder of each scenario under ``<data>/magic/settings/``.
SETTINGS_DIR = {"chameleon": "chameleon", "undercover": "undercover", "cost_sharing": "airportfee",
                "prisoners_dilemma": "prisoner", "public_good": "public_good"}
