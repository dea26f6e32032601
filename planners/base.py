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
from typing import Any, Iterable, Protocol, runtime_checkable


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
    """

    name: str = ""
    hidden_role: str | None = None
    holder_knows_role: bool = False
    investigation: bool = False
    word_clues: bool = False
    moves: str | None = None
    strategies: frozenset[str] = frozenset()


#: A request that names no game: the murder-mystery defaults the agent had before games
#: carried a :class:`GameInfo` (think first, the chain-of-thought texts apply).
UNSPECIFIED = GameInfo(investigation=True)



#: Action kinds a game may request The murder-mystery game uses the first five; ``choose`` is
#: a generic pick-one-option request (planner blocks use it for sensor readings).
KINDS = (
    "introduce", "ask", "answer", "vote", "mcq",
    "describe", "guess", "propose", "choose", "contribute", "form",
)

#: The tag each kind's reply must carry, e.g. ``Vote: Chief Wang``.
TAGS = {
    "introduce": "Introduction",
    "ask": "Question",
    "answer": "Answer",
    "vote": "Vote",
    "mcq": "Answer",
    "choose": "Choice",
    "describe": "Description",
    "guess": "Guess",
    "propose": "Proposal",
    "contribute": "Contribution",
}

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
    """What a block may read of the character an agent plays (:class:`mas_agents.agent.Persona`
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

    :class:`mas_agents.agent.Agent` implements it; a block never imports that class (this module
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
               context: dict | None = None, purpose: str | None = None) -> Action:
        """One private pick-one-option call (kind ``choose``) that no block contributes to."""
        ...

    def think(self, prompt: str, *, purpose: str, query: str | None = None, max_tokens: int = 200,
              phase: str | None = "gameplay", with_memory: bool = True) -> tuple[str, str]:
        """One private free-text call; returns ``(text, call_id)`` (``""`` when the call failed)."""
        ...

    def emit(self, kind: str, content: str, *, data: dict | None = None, round: int = 0,
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
