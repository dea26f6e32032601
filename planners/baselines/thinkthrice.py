"""The *ThinkThrice* baseline adapted to the murder-mystery game (PLAYER* Appendix C.2, after
Wu et al. 2023, "Deciphering Digital Detectives"; procedure as in the PLAYER* repository's
``main_think_thrice.py``).

ThinkThrice makes an answer complete with respect to the character's own timeline of the day of
the murder: answer, check the answer against the timeline, revise it when facts are missing.
Questions come from script and dialogue (the agent's default + chain-of-thought); introduce /
vote / mcq are left to the agent's default as well.

``answer`` (this block produces the whole action)
    1. timeline (``think``, purpose ``thinkthrice.timeline``): the character's timeline of the day
       of the murder, one short "when - what I did" line per event, extracted from the script
       excerpts retrieved for a timeline query (script only, not dialogue). Extracted ONCE per
       agent and cached on the block, as upstream extracts it once per game: the script does not
       change during a game (``refresh_timeline=True`` re-extracts before every answer).
    2. relevance (``think``, ``thinkthrice.relevance``): which timeline lines bear on the
       question, copied out, or ``NONE``.
    3. answer: the agent's own answer call (``answer#1``, ``answer#2`` on a re-prompt), with the
       relevant lines as context.
    4. check (``choose`` Yes/No, ``choose#1``): "does the answer already state every relevant
       timeline fact?". **Yes** = complete: the draft is final. **No** = facts are missing:
    5. one revision answer call (``answer#1``) given the draft and the relevant lines; its parsed
       text becomes the answer.

    Calls per answer: first answer 4 (+1 on revision), later answers 3 (+1), each + re-prompts.
    When step 2 finds nothing relevant (``NONE`` or empty) there is nothing to check: steps 4-5
    are skipped (first answer 3 calls, later 2), as upstream skips its check when no timeline
    sentence is useful.

    The check is read strictly: an unreadable check (malformed twice) is recorded as
    ``"unknown"`` and the draft is kept (no revision: only a readable "No" says facts are
    missing). An unreadable revision (malformed twice) keeps the draft too. An unreadable draft
    (the agent abstained) ends the procedure: the invalid action is returned, no check.

    The returned :class:`~mas_agents.planners.base.Action` carries every call id of the procedure
    (timeline, relevance, draft, check, revision), ``valid=True`` and the parsed text of the final
    answer as ``value``; ``raw``/``reasoning`` are those of the final answer call, ``errors`` and
    ``attempts`` add up over the draft and revision calls.

The inner answer calls go through :meth:`Agent.act` again (strict parsing, one re-prompt, other
blocks' contributions such as chain-of-thought); while they run, this block contributes only its
context (re-entrancy flag on the instance), so nothing recurses.

**Inverted check upstream.** In ``main_think_thrice.py`` the check prompt returns True for
timeline sentences the previous answer already CONTAINS, and the code then revises with exactly
those sentences as "missed" information: it revises when the check passes and passes the wrong
facts. Here the intended direction is implemented: revise only when the check says facts are
missing, and never when it says the answer is complete.

Other deviations from upstream:

* Upstream judges relevance and inclusion per timeline sentence with JSON true/false maps; here
  relevance is one free-text list and inclusion one strict Yes/No ``choose`` (parseable by a
  small model), so the revision is given all relevant lines rather than a per-sentence subset.
* Upstream drafts the answer without the timeline and brings timeline facts in only at the
  revision; here the relevant lines are already context for the draft (this baseline's brief),
  so revisions are rarer.
* Upstream extracts the timeline from the full script (and summarises scripts over 4,000
  characters); here from retrieved script excerpts within the agent's script budget.

Events (private): ``thinkthrice_timeline`` when the timeline is extracted (``data``:
``timeline``), ``thinkthrice_check`` on every answer (``data``: ``relevant``, ``check`` in
``"complete" | "missing" | "unknown" | "skipped" | "no_draft"``, ``revised``, ``draft``).

Errors: none of its own; model/transport errors of any call propagate (the game fails as it would
on a plain agent's call).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

from mas_agents.planners.base import Action, BlockAgent
from mas_agents.planners.base import Contribution
from mas_agents.planners.cot import ChainOfThought
from mas_agents.utterance import quote

CHECK_CHOICES = ["Yes", "No"]
_NONE = re.compile(r"^\W*(none|nothing|no relevant|n/?a)\b", re.IGNORECASE)


def _victims(agent: BlockAgent) -> str:
    return " and ".join(agent.persona.victims) or "the victim"


def _is_none(text: str) -> bool:
    """True when a relevance reply says nothing is relevant (or is empty)."""
    return not text.strip() or bool(_NONE.match(text.strip()))


@dataclass
class ThinkThrice:
    """ThinkThrice baseline block: timeline-checked answers.

    Args:
        refresh_timeline: re-extract the timeline before every answer instead of once per agent.
        timeline_tokens, relevance_tokens: completion budgets of the two ``think`` calls.
        phase: the accounting phase of the inner answer calls (the game's is ``gameplay``).
        name: spec name.

    Attributes:
        timeline: the cached timeline text (``None`` until the first answer).
    """

    refresh_timeline: bool = False
    timeline_tokens: int = 200
    relevance_tokens: int = 150
    phase: str = "gameplay"
    name: str = "thinkthrice"
    timeline: str | None = field(default=None, init=False)
    _inner: str | None = field(default=None, init=False, repr=False)

    def contribute(self, agent: BlockAgent, request) -> Contribution | None:
        """``answer`` -> the whole action (see the module docstring); else None.

        While this block's own inner answer call runs, returns only the context it set.
        """
        if self._inner is not None:
            return Contribution(context=self._inner) if request.kind == "answer" else None
        if request.kind != "answer":
            return None
        return Contribution(action=self._answer(agent, request))

    # -- steps --------------------------------------------------------------------------------
    def _timeline(self, agent: BlockAgent, rnd: int) -> tuple[str, list[str]]:
        if self.timeline is not None and not self.refresh_timeline:
            return self.timeline, []
        victim = _victims(agent)
        query = f"my timeline on the day {victim} died: time, place, what I did, whom I saw"
        # the script's own section as every other call of this agent shows it (so this call shares
        # their prefix: issue 48)
        recall = dataclasses.replace(agent.recall(query), dialogue="")
        script = "\n\n".join(recall.before_task()) or "Excerpts from your script:\n(nothing found)"
        prompt = (f"{script}\n\n"
                  f"From these excerpts only, write your own timeline of the day {victim} died, in "
                  f"the order things happened: one short line per event, \"<when> - <what you did or "
                  f"saw>\", in the first person. Leave out anything the excerpts do not say.")
        text, cid = agent.think(prompt, purpose="thinkthrice.timeline", max_tokens=self.timeline_tokens,
                                with_memory=False)
        self.timeline = text.strip()
        agent.emit("thinkthrice_timeline", self.timeline or "(empty timeline)",
                   data={"timeline": self.timeline}, round=rnd, llm_call_ids=[cid])
        return self.timeline, [cid]

    def _relevant(self, agent: BlockAgent, timeline: str, asker: str, question: str) -> tuple[str, str]:
        prompt = (f"Your timeline of the day:\n{timeline or '(empty)'}\n\n"
                  f"{asker} asks you: {quote(question)}\n"
                  f"Copy out the timeline lines that help answer this question, one per line, "
                  f"unchanged. If no line helps, write only NONE.")
        text, cid = agent.think(prompt, purpose="thinkthrice.relevance", max_tokens=self.relevance_tokens,
                                with_memory=False)
        return text.strip(), cid

    def _inner_act(self, agent: BlockAgent, request, context: str) -> Action:
        self._inner = context
        try:
            return agent.act(request, phase=self.phase)
        finally:
            self._inner = None

    def _answer(self, agent: BlockAgent, request) -> Action:
        ctx = request.context
        asker = ctx.get("asker", "the other player")
        question = ctx.get("question", request.prompt)
        rnd = int(ctx.get("round", 0) or 0)
        ids: list[str] = []

        timeline, tids = self._timeline(agent, rnd)
        ids += tids
        relevant, rid = self._relevant(agent, timeline, asker, question)
        ids.append(rid)
        none = _is_none(relevant)

        draft_ctx = ("Your timeline has nothing that bears on this question." if none else
                     f"Lines of your timeline that bear on this question:\n{relevant}\n"
                     f"Include these facts, with their times, where they answer the question.")
        draft = self._inner_act(agent, request, draft_ctx)
        ids += draft.call_ids
        record = {"asker": asker, "question": question, "relevant": "" if none else relevant,
                  "revised": False, "draft": draft.value if draft.valid else None}

        answers = [draft]   # every inner answer action, for errors and attempts

        def done(final: Action, check: str, content: str) -> Action:
            record["check"] = check
            agent.emit("thinkthrice_check", content, data=record, round=rnd, llm_call_ids=list(ids))
            return Action(kind=request.kind, actor=agent.name, value=final.value, raw=final.raw,
                          valid=final.valid, attempts=sum(a.attempts for a in answers),
                          call_ids=list(ids), errors=[e for a in answers for e in a.errors],
                          reasoning=final.reasoning)

        if not draft.valid:
            return done(draft, "no_draft", "no readable answer; nothing to check")
        if none:
            return done(draft, "skipped", "no timeline fact bears on the question; no check")

        check = agent.choose(
            f"{asker} asked you: {quote(question)}\nYour answer: {quote(draft.value)}\n"
            f"Timeline facts that bear on the question:\n{relevant}\n"
            f"Does your answer already state every one of these facts, with its time?",
            CHECK_CHOICES, query=question, phase=self.phase)
        ids += check.call_ids
        if not check.valid:
            return done(draft, "unknown", "check unreadable; answer kept as drafted")
        if check.value == "Yes":
            return done(draft, "complete", "answer already holds the relevant timeline facts")

        revision = self._inner_act(agent, request, (
            f"You answered: {quote(draft.value)}\n"
            f"That answer leaves out facts from your timeline that bear on the question:\n{relevant}\n"
            f"Give a revised answer that keeps what was right and adds these facts with their times, "
            f"in the first person."))
        ids += revision.call_ids
        answers.append(revision)
        if not revision.valid:
            return done(draft, "missing", "facts missing, but the revision was unreadable; draft kept")
        record["revised"] = True
        return done(revision, "missing", "facts were missing; answer revised")


def thinkthrice_blocks() -> list:
    """Fresh blocks of the ThinkThrice baseline agent: ``[ThinkThrice(), ChainOfThought()]``."""
    return [ThinkThrice(), ChainOfThought()]
