"""Agents: ``model + memory + [planner blocks]``.

An :class:`Agent` answers every :class:`~mas_agents.planners.base.ActionRequest` the murder-mystery
game asks (introduce, ask, answer, vote, mcq): it retrieves script and dialogue excerpts from
its FAISS memory under token budgets (PLAYER* §2.2, C.1), asks its blocks for context and
instructions, calls the model once, parses the reply strictly, re-prompts once on a malformed
reply and otherwise records an invalid (abstained) action. Every malformed reply is logged and
counted in :attr:`Agent.stats`; what it read from each reply (the parsed action or the parse
error, and which call a re-prompt follows) goes to the run's prompt log
(:meth:`mas_agents.accounting.AccountedModel.annotate`).

:func:`counting` collects the :attr:`Agent.stats` increments one thread makes, per agent, so a
game can keep them in its checkpointed state (the murder mystery does) and a resumed game still
counts what happened before the interruption.

Over 400 lines because it is one idea, the agent's turn: its budgets, its counters and the one
call of :meth:`Agent.act` with its re-prompt are what an agent is; the prompt text itself is
:mod:`mas_agents.prompts`', the parsing :mod:`mas_agents.actions`'.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from mas_agents import prompts
from mas_agents.accounting import AccountedModel
from mas_agents.actions import parse_reply
from mas_agents.planners.base import (
    UNSPECIFIED,
    Action,
    ActionRequest,
    Contribution,
    GameInfo,
    KindTable,
    PlannerBlock,
    action_kind,
)
from mas_agents.action_kinds import ParseError
from mas_agents.errors import CallFailed
from mas_agents.events import is_visible, make_event
from mas_agents.grammar import ReplyFormat
from mas_agents.memory import MemorySettings, VectorMemory
from mas_agents.text import says_word
from mas_agents.utterance import utterance

log = logging.getLogger(__name__)

#: Completion budget per action kind (tokens), with a thought line before the tag: a live view of
#: the registered kinds' :attr:`mas_agents.planners.base.ActionKind.max_tokens` (built-in: mas_agents.action_kinds).
MAX_TOKENS = KindTable(lambda k: k.max_tokens)
#: Completion budget when the reply has no thought line (a bare tagged line): the kinds'
#: :attr:`mas_agents.planners.base.ActionKind.max_tokens_no_thought`.
MAX_TOKENS_NO_THOUGHT = KindTable(lambda k: k.max_tokens_no_thought)
#: Characters of an unreadable reply echoed back in the re-prompt. Any reply a grammar allows (a
#: thought of mas_agents.grammar.THOUGHT_CHARS, tags, a TEXT_MAX utterance: under 800) is echoed
#: whole, so the local path is unchanged; a server that ignores the cap cannot blow up the re-prompt.
REPROMPT_ECHO_CHARS = 1200


def completion_budget(request: ActionRequest, think: bool) -> int:
    """The ``max_tokens`` of a reply to ``request``: its kind's budget with a thought line or
    without (:data:`MAX_TOKENS`, :data:`MAX_TOKENS_NO_THOUGHT`), plus the kind's
    ``extra_tokens``: for a ``form``, room for its lines: each field's
    ``<tag>: <longest choice>`` line at one token per 3 characters. A batched reading pass has a
    line per (character, sensor): with the fixed budget alone, 15 clue lines were cut at 96 tokens
    (finish_reason "length"), re-prompted, cut again, and read as ``unknown``."""
    kind = action_kind(request.kind)
    base = kind.max_tokens if think else kind.max_tokens_no_thought
    return base + (kind.extra_tokens(request) if kind.extra_tokens is not None else 0)


_SCOPE = threading.local()


class StatCounter(Counter):
    """A :class:`collections.Counter` of one agent's (or seat's) events (malformed replies,
    abstentions...) whose every change is also added to the thread's :func:`counting` scope, if
    any, under :attr:`owner`."""

    owner: str = ""

    def __setitem__(self, key: Any, value: Any) -> None:
        scope = getattr(_SCOPE, "counts", None)
        if scope is not None:
            mine = scope.setdefault(self.owner, {})
            # a change of 0 is kept as well: ``c[k] += 0`` creates the key, so must its count
            mine[key] = mine.get(key, 0) + value - self.get(key, 0)
        super().__setitem__(key, value)


@contextmanager
def counting() -> Iterator[dict[str, dict[str, int]]]:
    """Collect the :class:`StatCounter` changes this thread makes inside the block.

    Yields a dict ``owner -> {key: change}`` filled as the block runs (keys in first-change
    order). Scopes nest: an inner scope's changes are added to the outer one when it ends. Other
    threads' changes (a parallel vote of the same agent) are not seen, so a game node that wraps
    its own work gets exactly that work's counts.
    """
    outer = getattr(_SCOPE, "counts", None)
    counts: dict[str, dict[str, int]] = {}
    _SCOPE.counts = counts
    try:
        yield counts
    finally:
        _SCOPE.counts = outer
        if outer is not None:
            for owner, mine in counts.items():
                dest = outer.setdefault(owner, {})
                for k, v in mine.items():
                    dest[k] = dest.get(k, 0) + v


def add_counts(a: dict[str, dict[str, int]] | None, b: dict[str, dict[str, int]] | None) -> dict[str, dict[str, int]]:
    """``a`` plus ``b`` (``owner -> {key: count}``), as a new dict; a LangGraph reducer."""
    out = {o: dict(m) for o, m in (a or {}).items()}
    for owner, mine in (b or {}).items():
        dest = out.setdefault(owner, {})
        for k, v in mine.items():
            dest[k] = dest.get(k, 0) + v
    return out


@dataclass
class Persona:
    """Who an agent plays.

    Attributes:
        name: character name (WellPlay ``character_name``), or seat name in other games.
        title: script display name.
        role: the true role as the harness knows it, set by the game (the murder mystery:
            ``murderer`` / ``civilian`` from WellPlay ``is_murderer``; empty: none), which blocks
            may read (compared with :attr:`mas_agents.planners.base.GameInfo.hidden_role`) but the
            prompts never show unless the game's rules tell it.
        script: the private script text.
        goals: the character's objectives (``acts_goal``).
        victims: the case's victims.
        players: every character in the game, this one included.
        system: the full system prompt, written by the game (``mas_agents.graphs.mmg.players.persona_for``,
            the Who-is-Spy player, the MAgIC session); when empty, :func:`mas_agents.prompts.default_system`.
    """

    name: str
    title: str = ""
    role: str = ""
    script: str = ""
    goals: str = ""
    victims: list[str] = field(default_factory=list)
    players: list[str] = field(default_factory=list)
    system: str = ""


@dataclass
class Agent:
    """One LLM agent.

    Args:
        persona: the character.
        model: an accounted chat model (shared between agents is fine).
        memory: this agent's own vector memory (script already added by :meth:`build`), or None
            for games whose prompts carry the whole (short) history themselves (Who is Spy).
        blocks: planner blocks consulted in order before each action.
        settings: retrieval budgets (tokens).
        spec: the agent spec string it was built from (for logs).
        constrained: make the reply follow the request's format (:class:`mas_agents.grammar.ReplyFormat`)
            in whatever way the model takes it: a GBNF grammar for a local GGUF model, the server's
            structured-output fields for a remote one (see :meth:`AccountedModel.constrain`);
            ``None`` = whenever the model takes one, ``False`` = never (prompt only).
        game: the game this agent plays (:class:`mas_agents.planners.base.GameInfo`, set by the game's
            composition root); given to every request that names no game of its own.
        dialogue_closed: the dialogue it remembers no longer grows (the game is over: the WellPlay
            evaluation sets it), so its prompts lay the dialogue out as fixed memory
            (:class:`mas_agents.prompts.Recall`).
    """

    persona: Persona
    model: AccountedModel
    memory: VectorMemory | None
    blocks: list[PlannerBlock] = field(default_factory=list)
    settings: MemorySettings = field(default_factory=MemorySettings)
    spec: str = "plain"
    constrained: bool | None = None
    game: GameInfo = UNSPECIFIED
    dialogue_closed: bool = False
    stats: Counter = field(default_factory=StatCounter, init=False)
    _seen: int = field(default=0, init=False, repr=False)
    _pending: list = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        self.stats.owner = self.persona.name

    @property
    def name(self) -> str:
        return self.persona.name

    # -- memory -----------------------------------------------------------------------------
    def observe(self, events: list[dict[str, Any]]) -> int:
        """Ingest the events this agent can see that it has not seen yet.

        Each event of a kind the agent's game declares dialogue
        (:attr:`mas_agents.planners.base.GameInfo.dialogue`) becomes one dialogue chunk
        (:func:`dialogue_text`; the murder mystery's introductions and question+answer exchanges,
        PLAYER* §2.2: one Q&A exchange = one chunk). Returns the number of chunks added.
        ``events`` must be the whole event list of the game so far (the agent remembers how
        far it has read).
        """
        added = 0
        for ev in events[self._seen:]:
            if not is_visible(ev, self.name):
                continue
            for b in self.blocks:
                hook = getattr(b, "on_event", None)
                if hook is not None:
                    hook(self, ev)
            text = dialogue_text(ev) if ev.get("kind") in self.game.dialogue else ""
            if text and self.memory is not None:
                self.memory.add_dialogue(text, meta={"round": ev.get("round", 0), "kind": ev["kind"]})
                added += 1
        self._seen = len(events)
        return added

    # -- planning events and round hooks -----------------------------------------------------
    def emit(self, kind: str, content: str, *, data: dict | None = None, round: int = 0,
             llm_call_ids: Iterable[str] = ()) -> None:
        """Queue a private planning event (sensor reading, suspect-list change...) visible only
        to this agent; the game appends it to the event log via :meth:`drain_events`."""
        self._pending.append(make_event(phase="planning", actor=self.name, kind=kind, content=content,
                                        visible_to=[self.name], round=round, llm_call_ids=llm_call_ids,
                                        data=data))

    def drain_events(self) -> list[dict[str, Any]]:
        """Return and clear the planning events queued since the last call."""
        out, self._pending = self._pending, []
        return out

    def end_round(self, round: int, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Called by a game after questioning round ``round``: read the new events, let every
        block with an ``on_round_end(agent, round)`` hook run (e.g. the PLAYER* pruner), and
        return the planning events they queued."""
        self.observe(events)
        for b in self.blocks:
            hook = getattr(b, "on_round_end", None)
            if hook is not None:
                hook(self, round)
        return self.drain_events()

    def choose(self, prompt: str, choices: list[str], *, query: str | None = None,
               phase: str | None = "gameplay", context: dict | None = None, purpose: str | None = None) -> Action:
        """One strict pick-one-option model call (kind ``choose``): a block's private reading, e.g.
        a sensor. Re-prompts once, then returns an invalid action with ``value=None``. ``purpose``
        names the call in ``llm_calls.jsonl`` (``<purpose>#<attempt>``; default ``choose``).

        The request is marked ``context["private"] = True``, so no block contributes to it (see
        :meth:`act`): one block's reading is the same prompt whichever other blocks are switched on,
        and it never sets off another block's own readings."""
        ctx = dict(context or {})
        ctx["private"] = True
        if purpose:
            ctx["purpose"] = purpose
        return self.act(ActionRequest(kind="choose", actor=self.name, prompt=prompt, choices=list(choices),
                                      query=query, context=ctx), phase=phase)

    def think(self, prompt: str, *, purpose: str, query: str | None = None, max_tokens: int = 200,
              phase: str | None = "gameplay", with_memory: bool = True) -> tuple[str, str]:
        """One free-text private model call (a reflection, a summary, a timeline...).

        The prompt gets this agent's system message and, when ``with_memory``, the script and
        dialogue excerpts retrieved for ``query`` (default: ``prompt``). Nothing is parsed: the
        caller uses the text as context for a later action. Returns ``(text, call_id)``.
        """
        recall = self.recall(query or prompt) if with_memory else prompts.Recall()
        user = prompts.memory_block(recall) + [prompt]
        try:
            return self.model.chat([SystemMessage(content=self.system_message()), HumanMessage(content="\n\n".join(user))],
                                   actor=self.name, purpose=purpose, max_tokens=max_tokens, phase=phase)
        except CallFailed as exc:   # a lost reflection is an empty one; the action itself still follows
            self.stats["failed_calls"] += 1
            log.warning("%s: %s call failed: %s", self.name, purpose, exc)
            return "", exc.call_id

    # -- acting -----------------------------------------------------------------------------
    def act(self, request: ActionRequest, *, phase: str | None = None) -> Action:
        """Answer ``request`` with one :class:`Action` (at most two model calls, none for a
        forced move: a ``vote``/``choose`` left with one legal choice after the blocks narrowed
        it, counted as ``stats["forced_<kind>"]``).

        Every block may contribute (context, instructions, narrowed choices, or the action
        itself), except to a request marked ``context["private"]``: a block's own reading (a
        sensor, a clue-fit judgement), which goes to the model as the block wrote it. Without
        that rule a reading by one block picked up another block's context and set off that
        block's readings inside it, so an ablation's "both blocks" variant changed the prompts
        of each block alone.

        Raises nothing for malformed model output: the action comes back with
        ``valid=False`` and ``value=None`` (abstain) after one re-prompt. A call that failed for
        good (:class:`mas_agents.errors.CallFailed`, after the accounted model's retries) is an
        abstention too, without a re-prompt, counted in :attr:`stats` (``failed_calls``).
        ``ModelUnavailable`` and ``ContextOverflowError`` propagate: they stop the run.
        """
        if request.game is UNSPECIFIED and self.game is not UNSPECIFIED:
            request = dataclasses.replace(request, game=self.game)
        contribs = [] if request.context.get("private") else [
            c for c in (b.contribute(self, request) for b in self.blocks) if c is not None]
        for c in contribs:
            if c.action is not None:
                return c.action
        for c in contribs:
            if c.choices is not None:  # a block narrowed the legal choices (never widened)
                narrowed = [x for x in request.choices or [] if x in c.choices]
                request = dataclasses.replace(request, choices=narrowed or request.choices)
        if action_kind(request.kind).forced and len(request.choices or []) == 1:
            # one legal choice (e.g. PLAYER*'s pruner left one suspect) of a choice kind (vote,
            # choose: ActionKind.forced): a forced move, no call; the model could only name that
            # choice or be malformed.
            # The refinement of the action space is how PLAYER* saves calls (§4, Table A5).
            self.stats[f"forced_{request.kind}"] += 1
            return Action(kind=request.kind, actor=self.name, value=request.choices[0], raw="", valid=True,
                          attempts=0, call_ids=[], errors=[], reasoning="")
        messages = self.messages(request, contribs)
        # A thought line before the tagged line when a block asks for reasoning, and always in an
        # investigation game (the murder mystery, whose agents all reason first).
        think = request.game.investigation or any(c.instructions for c in contribs)
        max_tokens = completion_budget(request, think)
        extra = self.model.constrain(ReplyFormat(request, think)) if self.constrained is not False else {}
        call_ids: list[str] = []
        errors: list[str] = []
        text = ""
        for attempt in (1, 2):
            reprompt_of = call_ids[-1] if call_ids else None
            try:
                text, cid = self.model.chat(messages, actor=self.name,
                                            purpose=f"{request.context.get('purpose', request.kind)}#{attempt}",
                                            max_tokens=max_tokens, phase=phase, **extra)
            except CallFailed as exc:
                # the call failed for good (after its retries): the action is what the rules say
                # for no answer, as for an unreadable reply; not re-prompted (it was retried)
                self.model.annotate(exc.call_id, parsed=None, parse_error=None, reprompt_of=reprompt_of)
                call_ids.append(exc.call_id)
                errors.append(str(exc))
                self.stats["failed_calls"] += 1
                log.warning("%s: %s abstained: %s", self.name, request.kind, exc)
                self.stats[f"invalid_{request.kind}"] += 1
                return Action(kind=request.kind, actor=self.name, value=None, raw=text, valid=False,
                              attempts=attempt, call_ids=call_ids, errors=errors)
            call_ids.append(cid)
            try:
                value, reasoning = parse_reply(request, text)
            except ParseError as exc:
                self.model.annotate(cid, parsed=None, parse_error=str(exc), reprompt_of=reprompt_of)
                errors.append(str(exc))
                self.stats[f"malformed_{request.kind}"] += 1
                log.info("%s: malformed %s reply (attempt %d): %s | %r", self.name, request.kind,
                         attempt, exc, text[:200])
                # the bad reply is echoed at most REPROMPT_ECHO_CHARS long, so the re-prompt fits
                # wherever the first prompt did (a remote reply once ran to 2,869 tokens)
                messages = messages + [AIMessage(content=text[:REPROMPT_ECHO_CHARS]),
                                       HumanMessage(content=prompts.reprompt(str(exc), request))]
                continue
            self.model.annotate(cid, parsed={"kind": request.kind, "value": value}, parse_error=None,
                                reprompt_of=reprompt_of)
            if attempt == 2:
                self.stats["recovered_after_reprompt"] += 1
            tail = " ".join(c.append for c in contribs if c.append)
            if tail and isinstance(value, str):
                value = f"{value} {tail}"
            return Action(kind=request.kind, actor=self.name, value=value, raw=text, valid=True,
                          attempts=attempt, call_ids=call_ids, errors=errors, reasoning=reasoning)
        self.stats[f"invalid_{request.kind}"] += 1
        log.warning("%s: %s abstained after a re-prompt: %s", self.name, request.kind, errors[-1])
        reads = action_kind(request.kind).partial
        partial = reads(request, text) if reads is not None else {}
        if request.kind == "form":   # the fields still unreadable are the caller's "unknown"
            self.stats["unknown_form_fields"] += len(request.fields or []) - len(partial)
        return Action(kind=request.kind, actor=self.name, value=None, raw=text, valid=False,
                      attempts=2, call_ids=call_ids, errors=errors, partial=partial)

    def act_avoiding(self, request: ActionRequest, words: Iterable[str], *, phase: str | None = None) -> tuple[Action, bool]:
        """Answer a free-text ``request``; if the reply says one of ``words`` (whole words,
        :func:`mas_agents.text.says_word`), ask once more with a note, and keep the second reply
        when it is readable.

        The agent's own check of its move (a Who-is-Spy player must not say its word; a clue
        should not name the secret word). The final text goes to the game either way, which
        judges it (so a word said twice is still an own-word foul, seen by everyone).

        Returns:
            ``(action, retried)``; the retry is counted in :attr:`stats` (``self_check_retry``).
        """
        words = [w for w in words if w]
        action = self.act(request, phase=phase)
        if not (action.valid and isinstance(action.value, str) and any(says_word(action.value, w) for w in words)):
            return action, False
        self.stats["self_check_retry"] += 1
        note = ("Your answer contained the word itself, which is not allowed. Answer again without it.")
        again = self.act(dataclasses.replace(request, prompt=f"{request.prompt}\n\n{note}"), phase=phase)
        if again.valid:
            again.call_ids = action.call_ids + again.call_ids
            again.attempts += action.attempts
            return again, True
        action.call_ids = action.call_ids + again.call_ids
        return action, True

    def messages(self, request: ActionRequest, contribs: Iterable[Contribution] = ()) -> list:
        """Build the chat messages for ``request``: the system message, then the user message laid
        out for prefix caching (:mod:`mas_agents.prompts`: whole script and dialogue when their
        budgets cover them, the task, this query's excerpts, the format)."""
        recall = self.recall(request.query or request.prompt)
        contribs = list(contribs)
        user = prompts.user_prompt(
            request, recall,
            "\n\n".join(c.context for c in contribs if c.context),
            " ".join(c.instructions for c in contribs if c.instructions),
        )
        return [SystemMessage(content=self.system_message()), HumanMessage(content=user)]

    def system_message(self) -> str:
        """The stable system prompt of this agent (rules, role, goals)."""
        p = self.persona
        if p.system:
            return p.system
        return prompts.default_system(p.name, p.goals)

    def recall(self, query: str) -> prompts.Recall:
        """What the memory gives a call for ``query`` (:class:`mas_agents.prompts.Recall`): per
        source (script, dialogue), the chunks retrieved under the settings' token budgets in
        document order, one per line, and whether the budget covers the whole source (then the
        text is all of it, the same for every query). Empty and "whole" without a memory."""
        if self.memory is None:
            return prompts.Recall()
        mem, settings = self.memory, self.settings
        script = mem.retrieve(query, settings.script_budget, "script")
        # the dialogue gets what the script leaves under the settings' total cap (MemorySettings.total_budget)
        dialogue_budget = settings.dialogue_budget_after(sum(c.tokens for c in script))
        dialogue = mem.retrieve(query, dialogue_budget, "dialogue")
        return prompts.Recall(script="\n".join(c.text for c in script),
                              script_whole=settings.script_budget >= mem.total_tokens("script"),
                              dialogue="\n".join(c.text for c in dialogue),
                              dialogue_whole=dialogue_budget >= mem.total_tokens("dialogue"),
                              dialogue_closed=self.dialogue_closed)


def dialogue_text(event: dict[str, Any]) -> str:
    """The dialogue-memory text of an event a game declares dialogue
    (:attr:`mas_agents.planners.base.GameInfo.dialogue`; :meth:`Agent.observe` asks no other):
    what each player said as one quoted utterance after its attribution
    (:func:`mas_agents.utterance.utterance`, issue 57 E1). The built-in kinds of the block
    contract read as the murder mystery has them: ``introduce`` as ``Zhao introduced themselves:
    «...»`` ('' for an invalid one), ``answer`` (its ``data`` holds ``asker`` and ``question``)
    as ``Li asked Zhao: «Where were you?»`` then, on the next line, ``Zhao answered: «In the
    bar.»``; any other kind as ``<actor>: «<content>»``. No utterance can put a line of its own
    into another player's memory."""
    kind = event.get("kind")
    if kind == "introduce":
        if not event.get("data", {}).get("valid", True):
            return ""
        return utterance(f"{event['actor']} introduced themselves", event["content"])
    if kind == "answer":
        d = event.get("data", {})
        return (utterance(f"{d.get('asker', '?')} asked {event['actor']}", d.get("question", "")) + "\n"
                + utterance(f"{event['actor']} answered", event["content"]))
    return utterance(str(event.get("actor", "?")), str(event.get("content", "")))
