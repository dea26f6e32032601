"""The ``pgm`` planner block: MAgIC's PGM-aware agent (arXiv 2311.08562 §3/§4).

The block keeps exact Bayesian-network beliefs and puts them in the prompt:

* games with a hidden role found by clues and votes (MAgIC's Chameleon and Undercover, Who is
  Spy; also any game with ``clue``/``describe`` and ``vote`` events): a :class:`~planners.pgm.belief.TwoHopBelief` about who holds the hidden
  role, updated from public clues (read lazily, see below), votes and vote counts;
* investigation games (the murder mystery): the same belief about who the murderer is, updated from every other
  character's ``introduce`` and ``answer`` statements, each read like a clue
  (:func:`statement_prompt`: fits = open and consistent, odd = evasive, contradictory, motive or
  chance). Before any observation the block shows nothing (a uniform prior's "most likely" would
  only be the first seat);
* repeated-move games (``GameInfo.moves``: prisoner's dilemma, public good): a :class:`~planners.pgm.moves.MovePredictor`
  learned from each revealed round (``pd_reveal`` / ``pg_reveal``).

Clue readings are model calls, made only when needed: :meth:`PGMBlock.on_event` queues each new
clue of another player, and the next :meth:`PGMBlock.contribute` reads the queue with one strict
``agent.choose(prompt, ["fits", "neutral", "odd"], purpose="pgm_fit")`` per clue, showing the
agent's own word / topic from ``request.context`` (keys ``word`` / ``topic``) when known.

On every action the block emits a private ``belief_table`` planning event (the summary as
content, the JSON table as data) and returns the summary as prompt context. On a ``vote`` it also
names the most likely holder among the legal choices; with ``request.context["pgm_vote"] is
True`` it casts that vote itself (no model call). In the repeated games it adds the predicted
moves, what the others expect of the agent, and, when the request carries the public payoffs
(``context["payoffs"]``: the prisoner's-dilemma table ``{cooperate, defect, one_defect,
two_defect}`` or a callable ``payoff(my_move, others) -> number``; ``context["multiplier"]`` in
the public-good game), the best response to the predictions.

What the block knows about roles: in the chameleon game every player knows whether it is the
chameleon, and in the murder mystery whether it is the murderer (the block reads
``persona.role``, which the rules told the player); in undercover and Who is Spy nobody knows,
so the agent itself may be the hidden one. What the game is like comes from its
:class:`~planners.base.GameInfo` (``request.game``, and ``agent.game`` for events seen before a
request): ``hidden_role`` / ``holder_knows_role`` for the belief, ``moves`` for the repeated games,
``investigation`` for reading statements; the public ``setup`` event gives only ``players``.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any, Callable, Mapping

from planners.base import UNSPECIFIED, Action, Contribution, GameInfo
from planners.pgm.belief import DEFAULT_ALPHA, SCALES, TwoHopBelief
from planners.pgm.moves import PD_MOVES, PG_MOVES, MovePredictor, pd_payoff_fn, pg_level, pg_payoff_fn

FIT_CHOICES = list(SCALES["fit"])

FIT_PROMPT = {
    "en": {
        "clue": '{subject} gave this clue: "{clue}"',
        "word": 'Your own secret word is "{word}".',
        "topic": 'The topic is "{topic}".',
        "ask_word": ("How well does this clue fit YOUR word? fits = clearly about your word; neutral = vague, "
                     "could be about it; odd = seems to be about a different word."),
        "ask_topic": ("You do not know the secret word. How well does this clue fit the topic and the other clues? "
                      "fits = plausible for the shared word; neutral = vague; odd = looks off."),
    },
    "zh": {
        "clue": "{subject} 的描述：“{clue}”",
        "word": "你自己的秘密词语是“{word}”。",
        "topic": "主题是“{topic}”。",
        "ask_word": "这条描述与你的词语有多吻合？fits = 明显在说你的词；neutral = 含糊，可能是；odd = 像在说另一个词。",
        "ask_topic": "你不知道秘密词语。这条描述与主题和其他描述有多吻合？fits = 合理；neutral = 含糊；odd = 不对劲。",
    },
}


#: Murder mystery: how one statement (an introduction or an answer) bears on the hidden role.
STATEMENT_PROMPT = {
    "en": ('{subject} said: "{text}"\nYou are finding out who killed {victims}. Judged by this statement alone, '
           "how does {subject} look? fits = consistent and open, nothing to hide; neutral = tells nothing either way; "
           "odd = evasive, contradicts known facts, or has a motive or chance to kill."),
    "zh": "{subject} 说：“{text}”\n你在查明谁杀了{victims}。仅凭这句话，{subject} 看起来如何？fits = 一致坦诚，没有隐瞒；"
          "neutral = 看不出什么；odd = 回避、与已知事实矛盾，或有杀人动机或机会。",
}


def statement_prompt(subject: str, text: str, victims: list[str], lang: str = "en") -> str:
    """The prompt of one murder-mystery statement reading (same three readings as a clue)."""
    sep = "、" if lang == "zh" else " and "
    return STATEMENT_PROMPT.get(lang, STATEMENT_PROMPT["en"]).format(
        subject=subject, text=text[:600], victims=sep.join(victims) or ("死者" if lang == "zh" else "the victim"))


def fit_prompt(subject: str, clue: str, word: str = "", topic: str = "", lang: str = "en") -> str:
    """The prompt of one clue-fit reading."""
    t = FIT_PROMPT.get(lang, FIT_PROMPT["en"])
    lines = [t["clue"].format(subject=subject, clue=clue)]
    if word:
        lines.append(t["word"].format(word=word))
    if topic:
        lines.append(t["topic"].format(topic=topic))
    lines.append(t["ask_word"] if word else t["ask_topic"])
    return "\n".join(lines)


def _seen_by(event: Mapping[str, Any]) -> list[str] | None:
    vis = list(event.get("visible_to") or ["*"])
    return None if "*" in vis else vis


def _match(choice: str, players: list[str]) -> str | None:
    """The player a choice names: exact, or ``Name (title)``."""
    if choice in players:
        return choice
    hits = [p for p in players if choice.startswith(p + " (")]
    return hits[0] if len(hits) == 1 else None


class PGMBlock:
    """MAgIC's PGM-aware planning as a planner block (``name = "pgm"``).

    Args:
        alpha: reading noise of the belief model (:mod:`planners.pgm.belief`).
    """

    name = "pgm"

    def __init__(self, alpha: float = DEFAULT_ALPHA):
        self.alpha = alpha
        self.game: GameInfo | None = None   # None until a request or an event tells
        self.players: list[str] = []
        self.belief: TwoHopBelief | None = None
        self.predictor: MovePredictor | None = None
        self.queue: list[dict[str, Any]] = []  # clues waiting for a reading
        self.readings: list[dict[str, Any]] = []  # readings made (for the table)
        self.pending_out: list[str] = []  # voted out; dropped once the game goes on
        self.named_votes: dict[int, Counter] = {}  # round -> targets of votes seen by name
        self.word = ""
        self.topic = ""
        self._lock = threading.RLock()

    # -- state -------------------------------------------------------------------------------
    def _players(self, agent: Any) -> list[str]:
        return list(getattr(agent.persona, "players", None) or self.players)

    def _role_flags(self, agent: Any) -> tuple[bool | None, bool]:
        """``(me_hidden, others_know_theirs)``: in a game whose holder is told its role the block
        drops itself or fixes itself as the holder, and predicts each other player's belief as a
        non-holder's; otherwise ``(None, False)``."""
        g = self.game
        if g is None or not g.holder_knows_role or not g.hidden_role:
            return None, False
        return getattr(agent.persona, "role", "") == g.hidden_role, True

    def _belief(self, agent: Any) -> TwoHopBelief | None:
        if self.belief is None:
            players = self._players(agent)
            if agent.name not in players or len(players) < 2:
                return None
            self.belief = TwoHopBelief(agent.name, players, alpha=self.alpha)
        self.belief.set_role_knowledge(*self._role_flags(agent))
        return self.belief

    def _predictor(self, agent: Any, moves: tuple[str, ...]) -> MovePredictor | None:
        if self.predictor is None or tuple(self.predictor.moves) != moves:
            players = self._players(agent)
            if agent.name not in players or len(players) < 2:
                return None
            self.predictor = MovePredictor(agent.name, players, moves=moves)
        return self.predictor

    def _set_game(self, game: GameInfo | None) -> None:
        """A game the request or agent names wins over none; an unnamed one fills only a gap."""
        if game is not None and (game is not UNSPECIFIED or self.game is None):
            self.game = game

    # -- events ------------------------------------------------------------------------------
    def on_event(self, agent: Any, event: Mapping[str, Any]) -> None:
        """Update the beliefs from one visible event (clue readings are only queued)."""
        with self._lock:
            self._on_event(agent, event)

    def _on_event(self, agent: Any, event: Mapping[str, Any]) -> None:
        kind, data, actor = event.get("kind"), event.get("data") or {}, event.get("actor", "")
        rnd = int(event.get("round", 0) or 0)
        agent_game = getattr(agent, "game", None)
        if agent_game is not None and agent_game is not UNSPECIFIED:
            self._set_game(agent_game)
        if kind == "setup":
            if data.get("players") and not self.players:
                self.players = [str(p) for p in data["players"]]
            return
        if kind in ("pd_reveal", "pg_reveal"):
            if kind == "pd_reveal":
                moves, row = PD_MOVES, dict(data.get("choices") or {})
            else:
                moves, row = PG_MOVES, {p: pg_level(a) for p, a in (data.get("amounts") or {}).items()}
            pred = self._predictor(agent, moves)
            if pred is not None:
                pred.update(row)
            return
        if kind not in ("clue", "describe", "vote", "vote_result", "introduce", "answer"):
            return
        belief = self._belief(agent)
        if belief is None:
            return
        players = belief.players
        if kind in ("introduce", "answer"):   # investigation game: a statement is read like a clue
            self._set_game(agent_game if agent_game is not None else UNSPECIFIED)
            belief.set_role_knowledge(*self._role_flags(agent))
            text = str(event.get("content") or "").strip()
            if actor in players and actor != agent.name and text:
                self.queue.append({"subject": actor, "clue": text, "round": rnd, "seen_by": _seen_by(event),
                                   "statement": True})
            return
        if kind in ("clue", "describe"):
            for out in self.pending_out:  # the game went on: the player voted out was not the holder
                belief.eliminate(out)
            self.pending_out = []
            clue = str(data.get("text") or event.get("content") or "").strip()
            if actor in players and actor != agent.name and clue:
                self.queue.append({"subject": actor, "clue": clue, "round": rnd, "seen_by": _seen_by(event)})
        elif kind == "vote":
            target = data.get("target")
            if actor in players and target in players and target != actor:
                belief.observe_vote(actor, target, observer_can_see=_seen_by(event))
                self.named_votes.setdefault(rnd, Counter())[target] += 1
        else:  # vote_result
            counts = data.get("counts")
            if isinstance(counts, Mapping) and counts:
                belief.observe_vote_counts({p: n for p, n in counts.items() if p in players},
                                           minus=self.named_votes.get(rnd, Counter()))
            out = data.get("out")
            if out in players and out not in self.pending_out:
                self.pending_out.append(out)

    # -- readings ----------------------------------------------------------------------------
    def read_queue(self, agent: Any, request: Any) -> int:
        """Read every queued clue with one ``choose`` call each; returns the readings made."""
        belief = self._belief(agent)
        if belief is None or not self.queue:
            return 0
        ctx = request.context
        lang = ctx.get("lang", "en")
        made = 0
        while self.queue:
            item = self.queue.pop(0)
            prompt = (statement_prompt(item["subject"], item["clue"],
                                       list(getattr(agent.persona, "victims", None) or []), lang)
                      if item.get("statement") else fit_prompt(item["subject"], item["clue"], self.word, self.topic, lang))
            action = agent.choose(prompt, FIT_CHOICES, purpose="pgm_fit", context={"lang": lang})
            value = action.value if action.value in FIT_CHOICES else None
            self.readings.append({"subject": item["subject"], "round": item["round"], "clue": item["clue"],
                                  "reading": value, "call_ids": list(getattr(action, "call_ids", []) or [])})
            if value is None:
                continue
            belief.observe_reading(item["subject"], value, observer_can_see=item["seen_by"])
            made += 1
        return made

    # -- contributing ------------------------------------------------------------------------
    def contribute(self, agent: Any, request: Any) -> Contribution | None:
        """Belief context (and, on request, the PGM vote) for ``request``.

        Thread-safe: the murder mystery votes for each victim in parallel (LangGraph runs the
        fan-out in a thread pool) with the same agent, so a second request waits for the first
        one's readings instead of seeing a half-read queue (or none)."""
        with self._lock:
            return self._contribute(agent, request)

    def _contribute(self, agent: Any, request: Any) -> Contribution | None:
        ctx = request.context
        self._set_game(getattr(request, "game", None))
        self.word = str(ctx.get("word") or self.word or "")
        self.topic = str(ctx.get("topic") or self.topic or "")
        g = self.game or UNSPECIFIED
        if g.moves is not None or (self.predictor is not None and not g.hidden_role):
            return self._contribute_moves(agent, request)
        return self._contribute_belief(agent, request)

    def _contribute_belief(self, agent: Any, request: Any) -> Contribution | None:
        belief = self._belief(agent)
        if belief is None:
            return None
        ctx = request.context
        lang = ctx.get("lang", "en")
        n_read = self.read_queue(agent, request)
        table = {"model": "hidden_role", **belief.table(), "readings": list(self.readings),
                 "new_readings": n_read, "request": request.kind}
        if not belief.observations:
            # No evidence yet (e.g. murder-mystery dialogue, which gives this block no observations
            # before the vote): the prior is uniform, so the model is shown nothing rather than a
            # "most likely" player that is only the first seat.
            table["shown"] = False
            agent.emit("belief_table", "no observations yet: uniform belief, nothing shown",
                       data=table, round=int(ctx.get("round", 0) or 0))
            return None
        table["shown"] = True
        text = belief.summary(lang)
        action = None
        notes: dict[str, Any] = {"most_likely": table["most_likely"]}
        if request.kind == "vote" and request.choices:
            by_player = {p: c for c in request.choices if (p := _match(c, belief.players))}
            among = [p for p in belief.players if p in by_player]
            dist = belief.posterior()
            if belief.me_hidden:  # I hold the role: go with whom the others suspect most (second hop)
                others = belief.others_beliefs()
                dist = {p: sum(d[p] for d in others.values()) / max(1, len(others)) for p in belief.players}
                table["vote_basis"] = "others_mean"
            leaders = belief.leaders(dist, among)
            best = leaders[0] if len(leaders) == 1 else None
            if len(leaders) > 1:
                table["vote_suggestion"] = None   # a tie at the top: no suggestion, no pgm vote
            if best is not None:
                p = dist[best]
                if belief.me_hidden:
                    text += (f"\n其他玩家最怀疑：{best}（p={p:.2f}）" if lang == "zh"
                             else f"\nMost suspected by the others: {best} (p={p:.2f}).")
                else:
                    text += (f"\n最可能：{best}（p={p:.2f}）" if lang == "zh" else f"\nMost likely: {best} (p={p:.2f}).")
                table["vote_suggestion"] = by_player[best]
                notes["vote_suggestion"] = by_player[best]
                if ctx.get("pgm_vote") is True:
                    action = Action("vote", agent.name, by_player[best], raw="(pgm)", valid=True, attempts=0)
                    table["pgm_vote"] = True
        agent.emit("belief_table", text, data=table, round=int(ctx.get("round", 0) or 0))
        return Contribution(context=text, action=action, notes=notes)

    def _payoff_fn(self, request: Any, pred: MovePredictor) -> Callable | None:
        ctx = request.context
        moves = tuple(pred.moves)
        pay = ctx.get("payoffs")
        if callable(pay):
            return pay
        if moves == PD_MOVES and isinstance(pay, Mapping):
            try:
                return pd_payoff_fn(pay)
            except ValueError:
                return None
        if moves == PG_MOVES and ctx.get("multiplier") is not None:
            return pg_payoff_fn(float(ctx["multiplier"]), len(pred.players))
        return None

    def _contribute_moves(self, agent: Any, request: Any) -> Contribution | None:
        ctx = request.context
        choices = set(request.choices or [])
        kind = (self.game or UNSPECIFIED).moves
        if kind == "shares":
            return None  # no move model for cost sharing (proposals are continuous splits)
        if kind == "amount" or (kind != "binary" and request.kind == "contribute"):
            moves = PG_MOVES
        elif kind == "binary" or (choices and choices <= set(PD_MOVES)):
            moves = PD_MOVES
        elif self.predictor is not None:
            moves = tuple(self.predictor.moves)
        else:
            return None
        pred = self._predictor(agent, moves)
        if pred is None:
            return None
        lang = ctx.get("lang", "en")
        text = pred.summary(lang)
        table = {"model": "moves", **pred.table(), "request": request.kind}
        notes: dict[str, Any] = {}
        fn = self._payoff_fn(request, pred)
        if fn is not None:
            ev = pred.expected_payoffs(fn)
            best = pred.best_response(fn)
            table["expected_payoffs"] = {m: round(v, 4) for m, v in ev.items()}
            table["best_response"] = best
            notes["best_response"] = best
            evs = ", ".join(f"{m} {ev[m]:.2f}" for m in pred.moves)
            text += (f"\n按这些预测的最优应对：{best}（期望收益：{evs}）。" if lang == "zh"
                     else f"\nBest response to these predictions: {best} (expected payoff: {evs}).")
        agent.emit("belief_table", text, data=table, round=int(ctx.get("round", 0) or 0))
        return Contribution(context=text, notes=notes)
