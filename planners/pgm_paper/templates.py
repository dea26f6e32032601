"""The texts of MAgIC's own PGM-aware agent, per kind of game: protocol data with its source.

Source: MAgIC (Xu, Hu et al., arXiv 2311.08562, EMNLP 2024 version), §4.1 (the two-hop PGM: the
agent's view of every other player, and each other player's view as the agent imagines it), §4.2
(the decision made with the PGM and the game context) and Appendix A.7, the table "Game rules and
Prompt Design", columns *PGM Prompt* and *PGM Decision Prompt*, one row per scenario (Chameleon,
Undercover, Airport Fee = our Cost Sharing, Prisoner's Dilemma, Public Good). The paper's text:
``/work/shared/papers/magic-2311.08562.txt``.

What is the paper's and what is ours:

* **Protocol (the paper's):** which analysis each seat writes, its two-hop *structure* ("As
  {player}, I think {other} is ..., because ...; I think {other} thinks: {player} is ..."), the
  rating words of the deduction games ("more suspicious", "less suspicious", "no change": the
  words of the paper's case study, §5 RQ1 / Figure 5), the Undercover self-verdict ("do you think
  you are the undercover?") and the three decisions that follow it (not sure / undercover /
  civilian), and what each decision prompt asks for (raise the target's suspicion with a more
  specific clue; blend in and win the target's trust; adjust the proposal so that everyone agrees;
  be strategic about defecting; contribute the least).
* **Ours:** every sentence below (the paper's prompts are not copied), the closing *target line*
  of the deduction analyses (``Most suspicious: ...``; the paper fills ``{target_player}`` without
  saying how it is found), the ``guess`` decision of a caught chameleon, and the one-call form of
  the Undercover analysis (the paper's table lists its verdict question and its numbered
  sub-prompts separately; here they are one form, so the analysis is one model call).

A template is chosen by what :class:`mas_agents.planners.base.GameInfo` says of the game, never by its name
(:func:`mas_agents.planners.pgm_paper.block.templates_for`):

=======================================  ==================  ==========================
GameInfo                                 key                 A.7 row
=======================================  ==================  ==========================
hidden_role, word_clues, holder told     ``told_role``       Chameleon
hidden_role, word_clues, holder not told ``untold_role``     Undercover
moves == "shares"                        ``shares``          Airport Fee (Cost Sharing)
moves == "binary"                        ``binary``          Prisoner's Dilemma
moves == "amount"                        ``amount``          Public Good
=======================================  ==================  ==========================

Placeholders: ``{me}`` (the seat), ``{role}`` (``GameInfo.hidden_role``), ``{word}`` (the seat's
own word, ``request.context["word"]``; a sentence holding it is left out when the seat has none),
``{others_or}`` / ``{players_or}`` ("Player 2 or Player 3" / with the seat too), ``{target}``.
A form line holding ``{other}`` is written once per other player; ``{view}`` in it is the
``item`` written for the seat and every remaining player (the second hop).
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: The paper's table, for every ``source`` below.
A7 = "MAgIC (arXiv 2311.08562) App. A.7, table 'Game rules and Prompt Design'"


@dataclass(frozen=True)
class Line:
    """One line of an analysis form.

    Attributes:
        text: the line; with ``{other}`` it is repeated for each other player in seat order.
        item: for a second-hop line: the clause ``{view}`` repeats for each player that
            ``{other}`` judges (the seat first, then the remaining others), joined by ``"; "``.
    """

    text: str
    item: str = ""


@dataclass(frozen=True)
class Analysis:
    """One PGM Prompt (A.7, column *PGM Prompt*), as we word it: one free-text model call.

    Attributes:
        source: where in the paper it comes from.
        intro: the task, sentence by sentence (a sentence with ``{word}`` is left out when the
            seat has no word of its own).
        lines: the form the reply must follow.
        target_label: the line naming the decision's target (``{target_player}`` of the decision
            prompts), parsed back from the reply; "" = none.
        verdict_label: the line holding the seat's verdict on itself (``yes`` / ``no`` /
            ``not sure``; Undercover); "" = none.
    """

    source: str
    intro: tuple[str, ...]
    lines: tuple[Line, ...]
    target_label: str = ""
    verdict_label: str = ""


@dataclass(frozen=True)
class Decision:
    """One PGM Decision Prompt (A.7, column *PGM Decision Prompt*), as we word it.

    Attributes:
        source: where in the paper it comes from (or "ours").
        kinds: the request kinds (:data:`mas_agents.planners.base.KINDS`) it is written for; any other
            request of the game gets :data:`USE_ANALYSIS` after the analysis.
        text: the prompt (``{me}``, ``{role}``, ``{target}``).
        target_fallback: what ``{target}`` reads when the analysis named no target.
    """

    source: str
    kinds: tuple[str, ...]
    text: str
    target_fallback: str = ""


@dataclass(frozen=True)
class GameTemplates:
    """The analyses and decisions of one kind of game.

    Attributes:
        key: its key in :data:`TEMPLATES`.
        row: the A.7 row it restates.
        analyses: stance -> analysis. Stances: ``holder`` (the seat holds the hidden role and
            knows it), ``other`` (it does not hold it), ``any`` (one analysis for every seat).
        decisions: stance -> decisions. For an untold hidden role the stance is read from the
            analysis (``holder`` / ``other`` / ``unsure``).
    """

    key: str
    row: str
    analyses: dict[str, Analysis]
    decisions: dict[str, tuple[Decision, ...]] = field(default_factory=dict)


#: The header above the analysis in the decision prompt (ours).
HEADER = "Your private analysis of the players (nobody else sees it):"
#: What follows the analysis on a request no decision prompt is written for (ours).
USE_ANALYSIS = "Use this analysis in your answer."
#: The head of every analysis call, above what the seat has seen (ours).
ANALYSIS_HEAD = "Private analysis (nobody else sees it). What you have seen so far:"
#: What the seat has seen before anything happened (ours).
NOTHING_YET = "(nothing yet)"

_RATE = "<more suspicious, less suspicious or no change>"

TOLD_ROLE = GameTemplates(
    key="told_role",
    row="Chameleon",
    analyses={
        "other": Analysis(
            source=f"{A7}, row Chameleon, PGM Prompt (Non-Chameleon)",
            intro=("{me}, judge from the clues given so far how suspicious each other player is of being the {role}: "
                   "first in your own eyes, then in the eyes of each other player as you imagine them.",
                   "A player who has not given a clue yet has told you nothing: do not make one up for them.",
                   "Fill in this form, one short reason per line:"),
            lines=(Line("As {me}, I think:"),
                   Line("{other} is " + _RATE + ", because ..."),
                   Line("As for the others' thoughts:"),
                   Line("I think now {other} thinks: {view}", item="{who} is " + _RATE + ", because ..."),
                   Line("Most suspicious: <{others_or}>")),
            target_label="Most suspicious:"),
        "holder": Analysis(
            source=f"{A7}, row Chameleon, PGM Prompt (Chameleon)",
            intro=("{me}, you are the {role} and do not know the secret word.",
                   "Work out what it may be from the other players' clues only, then judge how each other player "
                   "now sees everyone, as you imagine them.",
                   "Fill in this form, one short reason per line:"),
            lines=(Line("The secret word may be: ..., because ..."),
                   Line("I think now {other} thinks: {view}", item="{who} is " + _RATE + ", because ..."),
                   Line("Most likely to suspect me: <{others_or}>")),
            target_label="Most likely to suspect me:"),
    },
    decisions={
        "other": (Decision(
            source=f"{A7}, row Chameleon, PGM Decision Prompt (Non-chameleon)", kinds=("describe",),
            text=("{me}, you are not the {role}: make {target} look more suspicious, for example by giving a clue "
                  "more specific than the clues of {target}. Do not give the secret word away."),
            target_fallback="the player your analysis finds most suspicious"),),
        "holder": (Decision(
            source=f"{A7}, row Chameleon, PGM Decision Prompt (Chameleon)", kinds=("describe",),
            text=("{me}, you are the {role}: blend in and win the trust of {target} by describing the same word as "
                  "the others. If nobody has given a clue yet, stay general so that you do not give yourself away. "
                  "If you have worked out the secret word, give a specific clue about it. If the clues of the "
                  "others are general, give one close to the clue of {target}."),
            target_fallback="the player most likely to suspect you"),
            Decision(source="ours (the guess stage of A.7's Chameleon rules has no PGM Decision Prompt)",
                     kinds=("guess",),
                     text="If the secret word your analysis worked out still fits the clues, guess that word.")),
    },
)

UNTOLD_ROLE = GameTemplates(
    key="untold_role",
    row="Undercover",
    analyses={
        "any": Analysis(
            source=f"{A7}, row Undercover, PGM Prompt (Is undercover; Undercover; Civilian)",
            intro=('{me}, your word is "{word}".',
                   "Compare your word with what the clues of the others describe: if they seem to describe a "
                   "different word, even a related one, you may be the {role}.",
                   "Then say who you think is the {role}, first in your own eyes, then in the eyes of each other "
                   "player as you imagine them.",
                   "Fill in this form, one short reason per line:"),
            lines=(Line("Am I the {role}: <yes, no or not sure>, because ..."),
                   Line("As {me}, I think <{players_or}> is the {role}, because ..."),
                   Line("I think {other} thinks <{players_or}> is the {role}, because ..."),
                   Line("The word of the others may be ...; my next clue could be ...")),
            target_label="As {me}, I think",
            verdict_label="Am I the {role}:"),
    },
    decisions={
        "unsure": (Decision(
            source=f"{A7}, row Undercover, PGM Decision Prompt (Not Sure)", kinds=("describe",),
            text=("{me}, your analysis does not tell you who the {role} is: give a clue that is not too specific, "
                  "and do not give your word away.")),),
        "holder": (Decision(
            source=f"{A7}, row Undercover, PGM Decision Prompt (Undercover)", kinds=("describe",),
            text=("{me}, your analysis says that you are the {role}: blend in and win the trust of {target}. If you "
                  "have worked out the word of the others, describe that word; if not, give a clue close to the "
                  "clues of {target}."),
            target_fallback="the other players"),),
        "other": (Decision(
            source=f"{A7}, row Undercover, PGM Decision Prompt (Civilian)", kinds=("describe",),
            text=("{me}, your analysis says that {target} is the {role}: make {target} look more suspicious, for "
                  "example with a clue more specific than the clues of {target} and different from them.")),),
    },
)

_SECOND_HOP_INTRO = ", in your own eyes and in the eyes of each other player as you imagine them."

SHARES = GameTemplates(
    key="shares",
    row="Airport Fee",
    analyses={
        "any": Analysis(
            source=f"{A7}, row Airport Fee, PGM Prompt",
            intro=("Think about how each player will change their proposal in the next round" + _SECOND_HOP_INTRO,
                   "Fill in this form, keeping each line short:"),
            lines=(Line("As {me}, I think:"),
                   Line("{other} will ..."),
                   Line("As for the others' thoughts:"),
                   Line("I think {other} thinks: {view}", item="{who} will ..."))),
    },
    decisions={
        "any": (Decision(
            source=f"{A7}, row Airport Fee, PGM Decision Prompt", kinds=("propose",),
            text=("From your analysis of what the others will do, adjust your proposal so that every other player "
                  "will vote for it. If a player keeps to a proposal that you find fair, you may take it up so "
                  "that you agree.")),),
    },
)

BINARY = GameTemplates(
    key="binary",
    row="Prisoner's Dilemma",
    analyses={
        "any": Analysis(
            source=f"{A7}, row Prisoner's Dilemma, PGM Prompt",
            intro=("Think about whether each other player will cooperate or defect in the next round"
                   + _SECOND_HOP_INTRO,
                   "Fill in this form, one short reason per line:"),
            lines=(Line("As {me}, I think:"),
                   Line("{other} will <cooperate or defect>, because ..."),
                   Line("As for the others' thoughts:"),
                   Line("I think {other} thinks: {view}", item="{who} will <cooperate or defect>"))),
    },
    decisions={
        "any": (Decision(
            source=f"{A7}, row Prisoner's Dilemma, PGM Decision Prompt", kinds=("choose",),
            text=("Decide from your analysis of the others and of what they expect of you. Be strategic: the "
                  "points go to whoever defects before the others mean to. Choose the move that brings you the "
                  "most points.")),),
    },
)

AMOUNT = GameTemplates(
    key="amount",
    row="Public Good",
    analyses={
        "any": Analysis(
            source=f"{A7}, row Public Good, PGM Prompt",
            intro=("Think about whether each other player will put more or less into the pool in the next round"
                   + _SECOND_HOP_INTRO,
                   "Keep in mind that the pool is shared equally at the end, so the winner gets the most back while "
                   "putting in the least.",
                   "Fill in this form, one short reason per line:"),
            lines=(Line("As {me}, I think:"),
                   Line("{other} will <increase or reduce> their contribution, because ..."),
                   Line("As for the others' thoughts:"),
                   Line("I think {other} thinks: {view}", item="{who} will <increase or reduce>"))),
    },
    decisions={
        "any": (Decision(
            source=f"{A7}, row Public Good, PGM Decision Prompt", kinds=("contribute",),
            text=("Decide your own contribution from your analysis of the others and of their thoughts. To win, "
                  "your total contribution should be the smallest, while a fuller pool still pays everyone more "
                  "at the end.")),),
    },
)

#: key -> the templates of that kind of game.
TEMPLATES: dict[str, GameTemplates] = {t.key: t for t in (TOLD_ROLE, UNTOLD_ROLE, SHARES, BINARY, AMOUNT)}
