"""The ``pgm`` planner block: MAgIC's PGM-aware agent (arXiv 2311.08562 §3/§4).

The block keeps exact Bayesian-network beliefs and puts them in the prompt:

* games with a hidden role found by clues and votes (MAgIC's Chameleon and Undercover, Who is
  Spy; also any game with ``clue``/``describe`` and ``vote`` events): a :class:`~mas_agents.planners.pgm.belief.TwoHopBelief` about who holds the hidden
  role, updated from public clues (read lazily, see below), votes and vote counts;
* investigation games (the murder mystery): the same belief about who the murderer is, updated from every other
  character's ``introduce`` and ``answer`` statements, each read like a clue
  (:func:`reading_request`: fits = open and consistent, odd = evasive, contradictory, motive or
  chance). Before any observation the block shows nothing (a uniform prior's "most likely" would
  only be the first seat);
* repeated-move games (``GameInfo.moves``: prisoner's dilemma, public good): a :class:`~mas_agents.planners.pgm.moves.MovePredictor`
  learned from each revealed round (``pd_reveal`` / ``pg_reveal``);
* cost sharing (``GameInfo.moves == "shares"``: MAgIC's airport fee): a
  :class:`~mas_agents.planners.pgm.shares.ShareBelief` of the highest share each other party accepts (first
  hop) and of what each believes this agent accepts (second hop), updated by Bayes from every
  public ``proposal`` (``data.split``, shares in seat order) and ``proposal_vote``
  (``data.for``: the proposer voted for; the ballot is that round's valid proposals). No model
  call: the evidence is what the parties did in public.

Clue readings are model calls, made only when needed: :meth:`PGMBlock.on_event` queues each new
clue (or statement) of another player, and the next :meth:`PGMBlock.contribute` on a request of
:data:`READ_ON` (vote, ask, a WellPlay question) reads the whole queue in ONE strict ``form`` call (:func:`reading_request`: a line ``<speaker>: fits|neutral|odd``
per item), showing the agent's own word / topic from ``request.context`` (keys ``word`` /
``topic``) when known. Each reading is a private ``pgm_reading`` event; seeing its own event again
(a resumed game, the WellPlay session evaluation rebuilt from the game's events) the block takes
the reading and never reads that statement twice.

On every action the block emits a private ``belief_table`` planning event (the summary as
content, the JSON table as data) and returns the summary as prompt context. On a ``vote`` it also
names the most likely holder among the legal choices; with ``request.context["pgm_vote"] is
True`` it casts that vote itself (no model call). In the repeated games it adds the predicted
moves, what the others expect of the agent, and, when the request carries the public payoffs
(``context["payoffs"]``: the prisoner's-dilemma table ``{cooperate, defect, one_defect,
two_defect}`` or a callable ``payoff(my_move, others) -> number``; ``context["multiplier"]`` in
the public-good game), the best response to the predictions. In cost sharing it adds the split
the beliefs imply (the one maximising P(every other party accepts) × (100 − my share), see
:mod:`mas_agents.planners.pgm.shares`) on every action, and on a vote the ballot proposal most likely to
gather every vote; before any proposal it shows nothing (a uniform belief would only suggest
paying nothing) and emits a ``belief_table`` with ``shown`` false.

What the block knows about roles: in the chameleon game every player knows whether it is the
chameleon, and in the murder mystery whether it is the murderer (the block reads
``persona.role``, which the rules told the player); in undercover and Who is Spy nobody knows,
so the agent itself may be the hidden one. What the game is like comes from its
:class:`~mas_agents.planners.base.GameInfo` (``request.game``, and ``agent.game`` for events seen before a
request): ``hidden_role`` / ``holder_knows_role`` for the belief, ``moves`` for the repeated games,
``investigation`` for reading statements; the public ``setup`` event gives only ``players``.

The reading pass's request and texts are :mod:`mas_agents.planners.pgm.reading`.
Over 400 lines because the block is one idea, four beliefs behind one ``contribute``: each game
family's update and contribution are a method pair on the same state, and the dispatch between
them is the block.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any, Callable, Mapping

from mas_agents.planners.base import UNSPECIFIED, Action, BlockAgent, Contribution, GameInfo
from mas_agents.planners.pgm.belief import DEFAULT_ALPHA, TwoHopBelief
from mas_agents.planners.pgm.moves import PD_MOVES, PG_MOVES, MovePredictor, pd_payoff_fn, pg_level, pg_payoff_fn
from mas_agents.planners.pgm.reading import FIT_CHOICES, READ_ON, reading_request
from mas_agents.planners.pgm.shares import ShareBelief


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
        alpha: reading noise of the belief model (:mod:`mas_agents.planners.pgm.belief`).
    """

    name = "pgm"

    def __init__(self, alpha: float = DEFAULT_ALPHA):
        self.alpha = alpha
        self.game: GameInfo = UNSPECIFIED   # until a request or the agent names the game
        self.players: list[str] = []
        self.belief: TwoHopBelief | None = None
        self.predictor: MovePredictor | None = None
        self.shares: ShareBelief | None = None
        self.ballots: dict[int, dict[str, Any]] = {}  # round -> {proposer: split} (cost sharing)
        self.share_labels: list[str] = []  # what a split's shares are called (the propose request's fields)
        self.queue: list[dict[str, Any]] = []  # clues waiting for a reading
        self.readings: list[dict[str, Any]] = []  # readings made (for the table)
        self.read_keys: set[tuple] = set()  # (subject, clue, round) of every item read
        self.pending_out: list[str] = []  # voted out; dropped once the game goes on
        self.named_votes: dict[int, Counter] = {}  # round -> targets of votes seen by name
        self.word = ""
        self.topic = ""
        self._lock = threading.RLock()

    # -- state -------------------------------------------------------------------------------
    def _players(self, agent: BlockAgent) -> list[str]:
        return list(getattr(agent.persona, "players", None) or self.players)

    def _role_flags(self, agent: BlockAgent) -> tuple[bool | None, bool]:
        """``(me_hidden, others_know_theirs)``: in a game whose holder is told its role the block
        drops itself or fixes itself as the holder, and predicts each other player's belief as a
        non-holder's; otherwise ``(None, False)``."""
        g = self.game
        if not g.holder_knows_role or not g.hidden_role:
            return None, False
        return getattr(agent.persona, "role", "") == g.hidden_role, True

    def _belief(self, agent: BlockAgent) -> TwoHopBelief | None:
        if self.belief is None:
            players = self._players(agent)
            if agent.name not in players or len(players) < 2:
                return None
            self.belief = TwoHopBelief(agent.name, players, alpha=self.alpha)
        self.belief.set_role_knowledge(*self._role_flags(agent))
        return self.belief

    def _predictor(self, agent: BlockAgent, moves: tuple[str, ...]) -> MovePredictor | None:
        if self.predictor is None or tuple(self.predictor.moves) != moves:
            players = self._players(agent)
            if agent.name not in players or len(players) < 2:
                return None
            self.predictor = MovePredictor(agent.name, players, moves=moves)
        return self.predictor

    def _shares(self, agent: BlockAgent) -> ShareBelief | None:
        if self.shares is None:
            players = self._players(agent)
            if agent.name not in players or len(players) < 2:
                return None
            self.shares = ShareBelief(agent.name, players, alpha=self.alpha)
        return self.shares

    def _set_game(self, game: GameInfo | None) -> None:
        """A game the request or agent names replaces the unnamed one (None and UNSPECIFIED name none)."""
        if game is not None and game is not UNSPECIFIED:
            self.game = game

    # -- events ------------------------------------------------------------------------------
    def on_event(self, agent: BlockAgent, event: Mapping[str, Any]) -> None:
        """Update the beliefs from one visible event (clue readings are only queued)."""
        with self._lock:
            self._on_event(agent, event)

    def _on_event(self, agent: BlockAgent, event: Mapping[str, Any]) -> None:
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
        if kind in ("proposal", "proposal_vote"):
            self._on_share_event(agent, kind, actor, data, rnd)
            return
        if kind not in ("clue", "describe", "vote", "vote_result", "introduce", "answer", "pgm_reading"):
            return
        belief = self._belief(agent)
        if belief is None:
            return
        if kind == "pgm_reading":
            if actor == agent.name:
                self._replay_reading(belief, data, list(event.get("llm_call_ids") or []))
            return
        players = belief.players
        if kind in ("introduce", "answer"):   # investigation game: a statement is read like a clue
            self._set_game(agent_game)
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

    def _on_share_event(self, agent: BlockAgent, kind: str, actor: str, data: Mapping[str, Any], rnd: int) -> None:
        """A public cost-sharing proposal (``data.split``, None when invalid) or vote
        (``data.for``: the proposer voted for): evidence for :class:`ShareBelief`. The ballot of a
        vote is the round's valid proposals, seen before its votes."""
        shares = self._shares(agent)
        if shares is None or actor not in shares.players:
            return
        rnd = int(data.get("round", rnd) or 0)
        if kind == "proposal":
            split = data.get("split")
            if split is not None and shares.observe_proposal(actor, split, rnd):
                self.ballots.setdefault(rnd, {})[actor] = list(split)
        else:
            shares.observe_vote(actor, data.get("for"), self.ballots.get(rnd, {}), rnd)

    # -- readings ----------------------------------------------------------------------------
    def read_queue(self, agent: BlockAgent, request: Any) -> int:
        """Read every queued clue or statement in ONE ``form`` call (:func:`reading_request`; a
        re-prompt after a malformed reply, a line still unreadable after it counts as no
        reading); emits one private ``pgm_reading`` event per item; returns the readings made."""
        belief = self._belief(agent)
        if belief is None or not self.queue:
            return 0
        lang = request.context.get("lang", "en")
        items, self.queue = self.queue, []
        req = reading_request(items, word=self.word, topic=self.topic, lang=lang, actor=agent.name,
                              victims=list(getattr(agent.persona, "victims", None) or []),
                              game=getattr(request, "game", None))
        action = agent.act(req, phase="gameplay")
        values = action.value if action.valid else action.partial
        made = 0
        for (tag, _), item in zip(req.fields, items):
            value = values.get(tag)
            made += self._apply(belief, item, value if value in FIT_CHOICES else None, list(action.call_ids))
            agent.emit("pgm_reading", f"{item['subject']}: {value or 'unreadable'}",
                       data={"subject": item["subject"], "clue": item["clue"], "round": item["round"],
                             "reading": self.readings[-1]["reading"]},
                       round=item["round"], llm_call_ids=list(action.call_ids))
        return made

    def _apply(self, belief: TwoHopBelief, item: Mapping[str, Any], value: str | None, call_ids: list[str]) -> int:
        """Record one reading (None: unreadable) and update the belief; 1 if it counted, else 0."""
        self.readings.append({"subject": item["subject"], "round": item["round"], "clue": item["clue"],
                              "reading": value, "call_ids": call_ids})
        self.read_keys.add((item["subject"], item["clue"], item["round"]))
        if value is None:
            return 0
        belief.observe_reading(item["subject"], value, observer_can_see=item["seen_by"])
        return 1

    def _replay_reading(self, belief: TwoHopBelief, data: Mapping[str, Any], call_ids: list[str]) -> None:
        """An own ``pgm_reading`` event seen again (a resumed game, or the WellPlay session
        evaluation rebuilding the agent from the game's events): take the reading instead of
        reading the statement again."""
        key = (data.get("subject"), data.get("clue"), data.get("round"))
        if key in self.read_keys:
            return
        item = next((it for it in self.queue if (it["subject"], it["clue"], it["round"]) == key), None)
        if item is None:
            return
        self.queue.remove(item)
        value = data.get("reading")
        self._apply(belief, item, value if value in FIT_CHOICES else None, call_ids)

    # -- contributing ------------------------------------------------------------------------
    def contribute(self, agent: BlockAgent, request: Any) -> Contribution | None:
        """Belief context (and, on request, the PGM vote) for ``request``.

        Thread-safe: the murder mystery votes for each victim in parallel (LangGraph runs the
        fan-out in a thread pool) with the same agent, so a second request waits for the first
        one's readings instead of seeing a half-read queue (or none)."""
        with self._lock:
            return self._contribute(agent, request)

    def _contribute(self, agent: BlockAgent, request: Any) -> Contribution | None:
        ctx = request.context
        self._set_game(getattr(request, "game", None))
        self.word = str(ctx.get("word") or self.word or "")
        self.topic = str(ctx.get("topic") or self.topic or "")
        g = self.game
        if g.moves is not None or (self.predictor is not None and not g.hidden_role):
            return self._contribute_moves(agent, request)
        return self._contribute_belief(agent, request)

    def _contribute_belief(self, agent: BlockAgent, request: Any) -> Contribution | None:
        belief = self._belief(agent)
        if belief is None:
            return None
        ctx = request.context
        lang = ctx.get("lang", "en")
        n_read = self.read_queue(agent, request) if request.kind in READ_ON else 0
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

    def _contribute_moves(self, agent: BlockAgent, request: Any) -> Contribution | None:
        ctx = request.context
        choices = set(request.choices or [])
        kind = self.game.moves
        if kind == "shares":
            return self._contribute_shares(agent, request)
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

    def _contribute_shares(self, agent: BlockAgent, request: Any) -> Contribution | None:
        """Cost sharing: the :class:`ShareBelief` summary and the split it implies; on a vote,
        also the ballot proposal most likely to gather every vote. No model call."""
        shares = self._shares(agent)
        if shares is None:
            return None
        ctx = request.context
        lang = ctx.get("lang", "en")
        rnd = int(ctx.get("round", 0) or 0)
        if request.kind == "propose" and len(request.fields or []) == len(shares.players):
            self.share_labels = [tag for tag, _ in request.fields]
        if not shares.observations:
            # nothing proposed yet (round 1): a uniform belief would only suggest paying nothing
            agent.emit("belief_table", "no proposals or votes yet: uniform belief, nothing shown",
                       data={"model": "shares", "n_evidence": 0, "request": request.kind, "shown": False}, round=rnd)
            return None
        text = shares.summary(lang, self.share_labels)
        table = {"model": "shares", **shares.table(), "request": request.kind, "shown": True,
                 "labels": list(self.share_labels)}
        notes: dict[str, Any] = {"implied_split": table["implied_split"]}
        if request.kind == "vote" and request.choices:
            last = max(self.ballots) if self.ballots else None
            ballot = {p: s for p, s in (self.ballots.get(last, {}) if last is not None else {}).items()
                      if p in request.choices}
            best = shares.vote_suggestion(ballot)
            if best is not None:
                p_all = shares.vote_scores(ballot)[best][0]
                text += (f"\n建议投给 {best} 的提议（其他各方都投给同一分摊的概率：{p_all:.2f}）。" if lang == "zh"
                         else f"\nVote suggestion: the proposal of {best} (P(every other party votes for that split): "
                              f"{p_all:.2f}).")
                table["vote_suggestion"] = best
                notes["vote_suggestion"] = best
        agent.emit("belief_table", text, data=table, round=rnd)
        return Contribution(context=text, notes=notes)
