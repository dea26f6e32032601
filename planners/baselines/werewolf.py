"""The *Werewolf* baseline adapted to the murder-mystery game (PLAYER* Appendix C.2, after Xu et
al. 2023, "Exploring Large Language Models for Communication Games: An Empirical Study on
Werewolf").

The Werewolf agent of Xu et al. steers its talk with a list of prepared questions and reflects on
the conversation before it speaks. PLAYER* adapts it to MMGs (App. C.2, Table A2) with ten
predefined investigation questions. This block shapes two actions:

``ask`` (2 model calls)
    1. ``choose`` (purpose ``choose#1``): pick ONE of the ten :data:`TEMPLATES` as the line of
       inquiry that helps most now (strict pick-one call, re-prompted once by the agent).
    2. the agent's own ``ask`` call (``ask#1``), with the context
       ``Base your question on: <chosen template>``: the agent still picks whom to question and
       words a concrete question from its script and what it heard.

    An unreadable choice (malformed twice) leaves the ask without a template: the agent asks from
    script and dialogue alone (3 calls then: choose#1, choose#2, ask#1).

``answer`` (2 model calls)
    1. ``think`` (purpose ``werewolf.reflect``): a private reflection on what the asker wants to
       learn and what the character can truthfully say from its script and what it heard.
    2. the agent's own ``answer`` call (``answer#1``) with that reflection as context.

introduce / vote / mcq are left to the agent's default behaviour and
:class:`mas_agents.planners.cot.ChainOfThought` (see :func:`werewolf_blocks`).

Events (private, via ``agent.emit``): ``werewolf_template`` on every ask (``data``: ``label``,
``template`` or ``None``, ``valid``), ``werewolf_reflection`` on every answer (``data``:
``asker``, ``question``, ``reflection``). Each cites the call ids it used.

Deviations from the upstream code (github.com/alickzhu/PLAYER, ``main_Werewolf.py``):

* Upstream has the model select FIVE of the ten questions (``#``-separated free text) and then
  ask one further question of its own; here one strict ``choose`` picks ONE template and the
  question is based on it. A free-text list of five cannot be parsed strictly, and a small local
  model cannot produce one reliably.
* Upstream drafts an answer, then reflects (with the *asker's* agent, which looks like a slip),
  then rewrites the answer from draft + reflection (3 calls). Here the answerer reflects first and
  answers once with the reflection as context (2 calls), as the task for this baseline states.
* Upstream's asker questions every remaining suspect in turn; here the game's schedule decides
  when a character asks, and the ask call itself chooses whom to question.
* The ten questions are our own wording, in the spirit of PLAYER* Table A2 (timeline, relation
  to the victim, last sighting, enemies, scene details, recent worries, unusual people, secrets,
  items at the scene, own theory).

Errors: none of its own; model/transport errors from ``agent.choose`` / ``agent.think`` propagate
(after the accounted model's retries), as for any agent call.
"""

from __future__ import annotations

from dataclasses import dataclass

from mas_agents.planners.base import BlockAgent, Contribution
from mas_agents.planners.cot import ChainOfThought
from mas_agents.utterance import quote

#: The ten predefined investigation questions: ``(label, question)``. ``{victim}`` is replaced by
#: the case's victim(s). Written for this project after PLAYER* Table A2's topics.
TEMPLATES: tuple[tuple[str, str], ...] = (
    ("Timeline", "Where were you and what did you do, hour by hour, on the day {victim} died?"),
    ("Relationship", "How did you get on with {victim}? Was there ever a quarrel, or an unusually close moment?"),
    ("Last sighting", "When did you last see {victim}, and what state were they in at that moment?"),
    ("Enemies", "Did {victim} have enemies, or an open conflict with anyone here?"),
    ("Scene details", "What did you notice at the scene of the crime that seemed wrong or out of place?"),
    ("Recent worries", "Had {victim} lately told you or anyone else about something that worried or scared them?"),
    ("Unusual people", "Did you see anyone, or anyone doing anything, that struck you as odd that day?"),
    ("Secrets", "What do you know about {victim}'s private life or secrets?"),
    ("Items at the scene", "Was anything found or left at the scene that could be tied to the killing?"),
    ("Own theory", "What is your own theory of what happened to {victim}, and why?"),
)


def _victims(agent: BlockAgent) -> str:
    return " and ".join(agent.persona.victims) or "the victim"


def template_choices(victim: str) -> list[str]:
    """The ten templates as ``choose`` options: ``"Label (question)"``.

    The agent's strict parser accepts the option's number, its full text, or the label alone
    (the part before the parenthesis).
    """
    return [f"{label} ({question.format(victim=victim)})" for label, question in TEMPLATES]


@dataclass
class Werewolf:
    """Werewolf baseline block: predefined-question choice on ``ask``, reflection on ``answer``.

    Args:
        reflect_tokens: completion budget of the reflection call.
        name: spec name.

    The block keeps no state between actions (one instance per agent all the same, as every
    block: see :func:`werewolf_blocks`).
    """

    reflect_tokens: int = 160
    name: str = "werewolf"

    def contribute(self, agent: BlockAgent, request) -> Contribution | None:
        """``ask`` -> template context; ``answer`` -> reflection context; else None."""
        if request.kind == "ask":
            return self._ask(agent, request)
        if request.kind == "answer":
            return self._answer(agent, request)
        return None

    def _ask(self, agent: BlockAgent, request) -> Contribution | None:
        victim = _victims(agent)
        choices = template_choices(victim)
        rnd = int(request.context.get("round", 0) or 0)
        prompt = (f"You are about to question another player to find out who killed {victim}. "
                  f"Which of these prepared lines of inquiry would help you most right now, given "
                  f"what you know and what you have heard? Pick one:")
        act = agent.choose(prompt, choices, query=request.query or request.prompt)
        if not act.valid:
            agent.emit("werewolf_template", "no readable template choice; asking from script and dialogue",
                       data={"label": None, "template": None, "valid": False}, round=rnd,
                       llm_call_ids=act.call_ids)
            return None
        i = choices.index(act.value)
        label, question = TEMPLATES[i][0], TEMPLATES[i][1].format(victim=victim)
        agent.emit("werewolf_template", f"{label}: {question}",
                   data={"label": label, "template": question, "valid": True}, round=rnd,
                   llm_call_ids=act.call_ids)
        return Contribution(
            context=(f"Base your question on: {question}\n"
                     f"Make it concrete: fit it to the player you choose and to what you already know."),
            notes={"werewolf_template": label})

    def _answer(self, agent: BlockAgent, request) -> Contribution:
        ctx = request.context
        asker = ctx.get("asker", "the other player")
        question = ctx.get("question", request.prompt)
        rnd = int(ctx.get("round", 0) or 0)
        prompt = (f"{asker} asks you: {quote(question)}\n"
                  f"Before you reply, reflect privately in two or three sentences: what does {asker} "
                  f"really want to find out, which facts from your script and from what you heard "
                  f"answer it truthfully, and what has nothing to do with the case and can stay private?")
        text, cid = agent.think(prompt, purpose="werewolf.reflect", query=question,
                                max_tokens=self.reflect_tokens)
        reflection = text.strip()
        agent.emit("werewolf_reflection", reflection or "(empty reflection)",
                   data={"asker": asker, "question": question, "reflection": reflection}, round=rnd,
                   llm_call_ids=[cid])
        if not reflection:
            return Contribution()
        return Contribution(context=f"Your private reflection before answering:\n{reflection}",
                            notes={"werewolf_reflection": reflection})


def werewolf_blocks() -> list:
    """Fresh blocks of the Werewolf baseline agent: ``[Werewolf(), ChainOfThought()]``."""
    return [Werewolf(), ChainOfThought()]
