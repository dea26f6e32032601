"""The rules text each MAgIC scenario's players read (written for this project from MAgIC §3 and
Appendix A), and the airline each cost-sharing seat represents."""

from __future__ import annotations

AIRLINES = {"Player 1": "Airline A", "Player 2": "Airline B", "Player 3": "Airline C"}

RULES = {
    "chameleon": (
        "You are playing \"Chameleon\" with 3 players: {players}. Everyone knows the topic. All players "
        "but one also know a secret word from that topic; the one who does not is the chameleon. In turn, "
        "each player gives one short clue about the secret word. Then everyone votes for the player they "
        "think is the chameleon. If the chameleon is caught, it may still win by guessing the secret word. "
        "Non-chameleons: give clues that prove you know the word without giving it away. Chameleon: blend in."
    ),
    "undercover": (
        "You are playing \"Undercover\" with 3 players: {players}. Each player gets a word. Two players share "
        "the same word; the undercover player has a different but related word. Nobody is told whether they "
        "are the undercover. Over two rounds, each player gives one short clue about their word. Then "
        "everyone votes for the player they think is the undercover; the player with the most votes is accused."
    ),
    "cost_sharing": (
        "You are negotiating how three airlines share a fixed airport fee. The players are {players}; "
        "Player 1 represents Airline A, Player 2 Airline B, Player 3 Airline C. In each round every player "
        "proposes how the fee is split (percentages that sum to 100), then everyone votes publicly for one "
        "proposal. The negotiation succeeds when all votes go to the same split; after 5 rounds without "
        "agreement it fails. A fair split reflects how much each airline uses the airport. Try to pay less, "
        "but an agreement is better for everyone than none."
    ),
    "prisoners_dilemma": (
        "You are playing a 5-round prisoner's dilemma with 3 players: {players}. Each round every player "
        "secretly chooses to cooperate or defect; the choices are then revealed. Points per round: if all "
        "cooperate, each gets {cooperate}; if all defect, each gets {defect}; if exactly one defects, the "
        "defector gets {one_defect} and the others 0; if two defect, each defector gets {two_defect} and the "
        "cooperator 0. The player with the most points after 5 rounds wins."
    ),
    "public_good": (
        "You are playing a 5-round public goods game with 3 players: {players}. Everyone starts with 100 "
        "coins. Each round every player secretly puts some of their remaining coins into a common pool; the "
        "amounts are then revealed. At the end the pool is multiplied by {multiplier} and shared equally among "
        "the 3 players. Your final amount = coins you kept + your share of the pool. The player with the most "
        "coins at the end wins."
    ),
}
