"""The block contract: what a game asks (:class:`ActionRequest`), what an agent answers
(:class:`Action`), what a planner block adds (:class:`Contribution`, :class:`PlannerBlock`), and
what a block may know of the game (:class:`GameInfo`).

A leaf module: everybody imports it, it imports nothing of this project.

An agent is ``model + memory + [blocks]``. Before each action the agent asks every block, in
order, for a :class:`Contribution`: extra prompt context (a belief summary, a suspect list), extra
instructions (think step by step), a narrowed choice list, or the whole action (e.g. a PGM vote
that needs no model call). Blocks never import a game and never branch on a game's name: they see
the request, its :class:`GameInfo` capabilities and the agent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Iterable, Protocol, overload, runtime_checkable


@dataclass(frozen=True)
class GameInfo:
    """What a block may know about the game it plays: capabilities, never a name to branch on.

    Each game declares one (``graphs/<game>/rules.py``: ``GAME``) and its requests carry it
    (:attr:`ActionRequest.game`).

    Attributes:
        name: the game's label (``mmg``, ``wis``, ``chameleon``...), seen in its repr; no block reads it.
        hidden_role: the role the other players try to find (``murderer``, ``spy``, ``chameleon``,
            ``undercover``), or None for games without one (the MAgIC game-theory scenarios).
        holder_knows_role: the player holding ``hidden_role`` is told so (murder mystery,
            Chameleon), rather than having to infer it (Who is Spy, Undercover: MAgIC §3, WiS §3.1).
        investigation: players question each other about a written case and their statements
            are evidence (PLAYER* Appendix A.2); prompts ask for reasoning before the tagged line.
        word_clues: players describe a secret word in turn and the others read the clues
            (Who is Spy, Undercover, Chameleon).
        moves: the repeated move of a game-theory scenario (MAgIC §3): ``"binary"`` (a fixed
            pair of moves, Prisoner's Dilemma), ``"amount"`` (an amount to contribute, Public
            Good), ``"shares"`` (a split of a cost to propose, Cost Sharing), else None.
        strategies: the optional strategy blocks whose texts fit this game (WiS §4.2: the
            ``attack``/``defense``/``reasoning`` texts speak of a judge and a secret word).
        dialogue: the kinds of this game's events that are dialogue: what an agent with a
            memory keeps of what it heard (:meth:`mas_agents.agents.Agent.observe`, worded by
            :func:`mas_agents.agents.dialogue_text`: an event of the built-in kind ``introduce``
            as ``<actor> introduced themselves: «...»``, one of ``answer`` as its question and
            its answer, any other as ``<actor>: «<content>»``). Empty: none (a game whose prompts
            carry the whole history themselves); a game opts in.
    """

    name: str = ""
    hidden_role: str | None = None
    holder_knows_role: bool = False
    investigation: bool = False
    word_clues: bool = False
    moves: str | None = None
    strategies: frozenset[str] = frozenset()
    dialogue: frozenset[str] = frozenset()


#: A request that names no game: the murder-mystery defaults the agent had before games
#: carried a :class:`GameInfo` (think first, the chain-of-thought texts apply; an introduction
#: and a question's answer are dialogue, as ``mas.node``'s ``speak`` and ``answer`` decisions are).
UNSPECIFIED = GameInfo(investigation=True, dialogue=frozenset({"introduce", "answer"}))



#: The built-in action kinds, in this order. The murder-mystery game uses the first five;
#: ``choose`` is a generic pick-one-option request (planner blocks use it for sensor readings).
#: Their names are part of this contract (blocks read ``request.kind``); what each one is (its
#: tag, answer-format line, parser, grammar and token budgets) is one :class:`ActionKind` record
#: each, registered by :mod:`mas_agents.action_kinds`.
BUILTIN_KINDS = (
    "introduce", "ask", "answer", "vote", "mcq",
    "describe", "guess", "propose", "choose", "contribute", "form",
)


@dataclass(frozen=True)
class ActionKind:
    """What one kind of move is, in one place: how it is asked, read, constrained and budgeted.

    A game with a new kind of move registers one record (:func:`register_kind`); the prompt's
    answer-format line (:mod:`mas_agents.prompts`), the strict parser
    (:func:`mas_agents.actions.parse_reply`), the reply grammar and JSON schema
    (:mod:`mas_agents.grammar`) and the completion budget (:func:`mas_agents.agents.completion_budget`)
    all read it. The built-in kinds are registered by :mod:`mas_agents.action_kinds`, which also holds
    the helpers a new kind's functions may use (``tagged_field``, ``match_choice``, ``literal``...).

    Attributes:
        name: the kind (:attr:`ActionRequest.kind`), e.g. ``"vote"``.
        tag: the tag of the reply's line (``Vote`` in ``Vote: Chief Wang``); None for a kind whose
            lines carry tags of their own (``form``: one per field).
        parse: ``(request, reply text) -> (value, reasoning)``; raises ``ValueError`` (the
            agent core's ``ParseError``) when the reply does not follow the format, which earns
            the usual re-prompt.
        instruction: ``request -> str``: the answer-format line that ends the prompt (the format
            ``parse`` expects).
        grammar: ``request -> (body, rules)``: the reply after the optional thought line as a
            llama.cpp GBNF rule body, and the extra rules it names (the rule ``text``, one line of
            ``TEXT_MIN..TEXT_MAX`` characters, is always defined); None: no grammar (asking a
            constrained model for this kind raises ``ValueError``).
        schema: ``request -> {property: JSON schema}``: the reply's tagged lines as JSON
            properties, in line order (the thought is added before them); None: no schema.
        render: ``(request, JSON object) -> lines``: the tagged lines of a reply that matched
            ``schema``, or None when the object cannot be rendered (it then reaches the parser as
            it came); None: one ``<tag>: <value of key tag.lower()>`` line.
        max_tokens: completion budget with a thought line before the tag, in tokens.
        max_tokens_no_thought: completion budget of a bare tagged reply, in tokens.
        extra_tokens: ``request -> tokens`` added to the budget (a ``form``: room for its lines),
            or None.
        forced: a choice kind the agent answers without a model call when one legal choice is left.
        needs_choices: a request of this kind without choices has no grammar (``ValueError``).
        lettered: the prompt shows the choices as ``a) ...`` (``mcq``), not ``1. ...``.
        partial: ``(request, reply text) -> {field: value}``: what an invalid reply still gave
            in format (``form``: its readable fields, kept on the abstention), or None.
    """

    name: str
    tag: str | None
    parse: Callable[[ActionRequest, str], tuple[Any, str]]
    instruction: Callable[[ActionRequest], str]
    grammar: Callable[[ActionRequest], tuple[str, list[str]]] | None = None
    schema: Callable[[ActionRequest], dict[str, dict[str, Any]]] | None = None
    render: Callable[[ActionRequest, dict[str, Any]], list[str] | None] | None = None
    max_tokens: int = 256
    max_tokens_no_thought: int = 128
    extra_tokens: Callable[[ActionRequest], int] | None = None
    forced: bool = False
    needs_choices: bool = False
    lettered: bool = False
    partial: Callable[[ActionRequest, str], dict[str, Any]] | None = None


_ACTION_KINDS: dict[str, ActionKind] = {}


def register_kind(kind: ActionKind, *, replace: bool = False) -> ActionKind:
    """Register ``kind`` (one call per kind of move) and return it.

    Raises:
        ValueError: the name is empty or already registered (unless ``replace``), or the tag is
            empty or holds a colon or a line break.
    """
    if not kind.name or not isinstance(kind.name, str):
        raise ValueError(f"an action kind needs a name, got {kind.name!r}")
    if kind.tag is not None and (not kind.tag.strip() or any(c in kind.tag for c in ":\n")):
        raise ValueError(f"action kind {kind.name!r}: tag {kind.tag!r} must be a non-empty word without ':' or a line break")
    if kind.name in _ACTION_KINDS and not replace:
        raise ValueError(f"action kind {kind.name!r} is already registered")
    _ACTION_KINDS[kind.name] = kind
    return kind


def unregister_kind(name: str) -> None:
    """Forget the kind ``name`` (a test's own kind); a name never registered is ignored."""
    _ACTION_KINDS.pop(name, None)


def action_kind(name: str) -> ActionKind:
    """The registered record of the kind ``name``.

    Raises:
        ValueError: no such kind is registered (the built-in ones are registered when
            :mod:`mas_agents.action_kinds` is imported, which the agent core does).
    """
    try:
        return _ACTION_KINDS[name]
    except KeyError:
        raise ValueError(f"no registered action kind {name!r} (registered: {', '.join(_ACTION_KINDS)})") from None


class _KindNames(Sequence[str]):
    """The action kinds a request may name: :data:`BUILTIN_KINDS`, then every other registered
    kind in registration order (a live view, read like a tuple)."""

    def _names(self) -> tuple[str, ...]:
        return BUILTIN_KINDS + tuple(k for k in _ACTION_KINDS if k not in BUILTIN_KINDS)

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[str, ...]: ...

    def __getitem__(self, i: int | slice) -> str | tuple[str, ...]:
        return self._names()[i]

    def __len__(self) -> int:
        return len(self._names())

    def __contains__(self, name: object) -> bool:
        return name in BUILTIN_KINDS or name in _ACTION_KINDS

    def __repr__(self) -> str:
        return repr(self._names())


class KindTable(Mapping[str, Any]):
    """A read-only live table over the registered kinds: ``kind name -> get(record)``, for the
    kinds where that is not None (e.g. :data:`TAGS`; the agent's token tables)."""

    def __init__(self, get: Callable[[ActionKind], Any]):
        self._get = get

    def _table(self) -> dict[str, Any]:
        return {n: v for n, k in _ACTION_KINDS.items() if (v := self._get(k)) is not None}

    def __getitem__(self, name: str) -> Any:
        return self._table()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())

    def __repr__(self) -> str:
        return repr(self._table())


#: Action kinds a game may request (:data:`BUILTIN_KINDS` and every registered one).
KINDS = _KindNames()

#: The tag each kind's reply must carry, e.g. ``Vote: Chief Wang`` (from the registry).
TAGS = KindTable(lambda k: k.tag)


@dataclass
class ActionRequest:
    """One action a game asks of one agent.

    Attributes:
        kind: one of :data:`KINDS`.
        actor: the character asked to act.
        prompt: the task text for this action (what to do now), written by the game.
        choices: legal choices for choice actions (``vote``: names; ``ask``: whom one may ask;
            ``mcq``: option texts shown as a), b), ...); ``None`` for free text.
        multi: for ``mcq``, whether more than one letter may be chosen (WellPlay ``type=b``).
        fields: for ``form``: ``[(tag, choices), ...]``, one line ``Tag: choice`` each, all in one
            reply (a questionnaire answered in one model call). For ``propose``: the names of
            the shares (e.g. ``["Airline A", "Airline B", "Airline C"]``), as ``[(name, [])]``.
        max_value: for ``contribute``: the largest legal amount (the smallest is 0).
        query: text used to retrieve memory for this action (defaults to ``prompt``).
        context: extra structured facts (victim, asker, question...) for blocks and logs.
        game: what the game is like (:class:`GameInfo`); :data:`UNSPECIFIED` when not given.
    """

    kind: str
    actor: str
    prompt: str
    choices: list[str] | None = None
    multi: bool = False
    query: str | None = None
    context: dict[str, Any] = field(default_factory=dict)
    fields: list[tuple[str, list[str]]] | None = None
    max_value: int | None = None
    game: GameInfo = UNSPECIFIED

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown action kind {self.kind!r}; expected one of {KINDS}")
        if self.kind in ("form", "propose") and not self.fields:
            raise ValueError(f"a {self.kind} request needs fields")


@dataclass
class Action:
    """An agent's answer to an :class:`ActionRequest`.

    Attributes:
        kind, actor: copied from the request.
        value: the parsed value: ``str`` for free text and ``vote`` (a name from the choices),
            ``dict(target=..., question=...)`` for ``ask``, ``frozenset[str]`` of letters for
            ``mcq``; ``None`` when the action is invalid (abstained).
        raw: the raw text of the last model reply.
        valid: False when both attempts failed to parse.
        attempts: model calls made (1, or 2 after a re-prompt).
        call_ids: ids of those calls in ``llm_calls.jsonl``.
        errors: the parse error of each failed attempt.
        reasoning: the text before the tagged line (the chain of thought), if any.
        partial: for an invalid ``form``: tag -> choice of the fields that the last reply did
            give in format (one strict ``Tag: choice`` line each); the others stayed unreadable
            after the re-prompt. Empty otherwise (a valid form's answers are ``value``).
    """

    kind: str
    actor: str
    value: Any
    raw: str
    valid: bool = True
    attempts: int = 1
    call_ids: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    reasoning: str = ""
    partial: dict[str, str] = field(default_factory=dict)


@dataclass
class Contribution:
    """What one block adds to one action.

    Attributes:
        context: text placed in the prompt's context section (after memory excerpts).
        instructions: text appended to the task instructions (e.g. chain-of-thought).
        choices: a narrowed list of legal choices (must be a subset of the request's).
        action: a complete action; when set, the agent uses it and makes no model call.
        append: text the agent appends to its parsed free-text reply (e.g. the WiS attack and
            defense strategies add a fixed sentence to a spy's description).
        notes: structured facts for the event log (readings, scores...).
    """

    context: str = ""
    instructions: str = ""
    choices: list[str] | None = None
    action: Action | None = None
    append: str = ""
    notes: dict[str, Any] = field(default_factory=dict)


class PersonaView(Protocol):
    """What a block may read of the character an agent plays (:class:`mas_agents.agents.Persona`
    has these fields). ``role`` is the harness's truth (``murderer``, ``spy``...): a block may use
    it for its own side (PLAYER*'s sensors skip reading a suspect as itself), and must not put it
    in a prompt the game does not already show the seat."""

    name: str
    title: str
    role: str
    goals: str
    victims: list[str]
    players: list[str]


@runtime_checkable
class BlockAgent(Protocol):
    """The agent a planner block is handed (``contribute(agent, request)``, ``on_event``,
    ``on_round_end``): everything a block may call, and nothing else.

    :class:`mas_agents.agents.Agent` implements it; a block never imports that class (this module
    is the leaf every layer imports). Every model call a block makes goes through :meth:`act`,
    :meth:`choose` or :meth:`think`, so it is accounted and recorded in the run's
    ``llm_calls.jsonl`` like the agent's own actions; what a block decided goes to the event log
    through :meth:`emit`.

    Attributes:
        name: the character or seat name (as the events name it).
        persona: the character (:class:`PersonaView`).
        game: the game's capabilities (:class:`GameInfo`), for events seen before any request.
        blocks: the agent's planner blocks in consultation order (a block may find a sibling's
            shared state there, e.g. PLAYER*'s suspect list).
    """

    @property
    def name(self) -> str: ...

    persona: PersonaView
    game: GameInfo
    blocks: list[Any]

    def act(self, request: ActionRequest, *, phase: str | None = None) -> Action:
        """Answer ``request`` (at most two model calls: one re-prompt on a malformed reply;
        ``valid=False`` and ``value=None`` when still unreadable)."""
        ...

    def choose(self, prompt: str, choices: list[str], *, query: str | None = None, phase: str | None = "gameplay",
               context: dict[str, Any] | None = None, purpose: str | None = None) -> Action:
        """One private pick-one-option call (kind ``choose``) that no block contributes to."""
        ...

    def think(self, prompt: str, *, purpose: str, query: str | None = None, max_tokens: int = 200,
              phase: str | None = "gameplay", with_memory: bool = True) -> tuple[str, str]:
        """One private free-text call; returns ``(text, call_id)`` (``""`` when the call failed)."""
        ...

    def emit(self, kind: str, content: str, *, data: dict[str, Any] | None = None, round: int = 0,
             llm_call_ids: Iterable[str] = ()) -> None:
        """Queue a planning event visible only to this agent (the game appends it to its events)."""
        ...

    def recall(self, query: str) -> Any:
        """What the agent's memory returns for ``query`` (``mas_agents.prompts.Recall``: per
        source, the excerpts under the token budgets)."""
        ...


@runtime_checkable
class PlannerBlock(Protocol):
    """A composable piece of an agent's planning.

    Attributes:
        name: the block's spec name (``cot``, ``player_star``, ``pgm``...).
    """

    name: str

    def contribute(self, agent: BlockAgent, request: ActionRequest) -> Contribution | None:
        """Return this block's contribution to ``request`` (or None to pass)."""
        ...


# Optional hooks a block may define (looked up with getattr, so they are not part of the
# Protocol's required surface):
#   on_event(agent, event)        every event the agent can see, once, in order (Agent.observe)
#   on_round_end(agent, round)    after each questioning round (Agent.end_round)
# A block records what it decided with ``agent.emit(kind, content, data=...)``: private
# planning events that the game appends to events.jsonl.
