"""PLAYER* sensors and pruner for word-clue games (:attr:`mas_agents.planners.base.GameInfo.word_clues`: Who is
Spy, Undercover, Chameleon).

PLAYER* says a game needs only its own list of sensors (§2.3); the murder-mystery four
(emotion, motivation, opportunity, information value) live in :mod:`.sensors`. In the word games
the evidence is each player's clues, so the sensors read clues:

==============  =======================================  ===================================
sensor          question about one clue                  readings
==============  =======================================  ===================================
specificity     how specific is the clue?                Specific / Somewhat / Vague
fit             does it fit my word (or topic)?          Fits / Partly / Does not fit
copying         does it copy or echo earlier clues?      Yes / No
==============  =======================================  ===================================

All sensors of every clue heard since the agent last voted are read in ONE ``form`` model call
before its vote (one line per clue and sensor, e.g. ``Player 3 Fits my word: Partly``), through
:meth:`mas_agents.agents.Agent.act` (strict parsing, one re-prompt, ``unknown`` for a line still
unreadable after it; the lines in format are kept).
The **suspicion** of a player is the mean over their clues of
``fit_score + 0.5 * vague_score + 0.5 * copying`` (fit: Fits 0, Partly 0.5, Does not fit 1;
specificity: Specific 0, Somewhat 0.5, Vague 1; copying: Yes 1, No 0; unknown readings count
0.5) — our weights: a clue that does not fit my word is the strongest sign of the odd one out; a
vague or copied clue is what someone without the word says. The **pruner** keeps as suspects
every other player whose suspicion is within ``margin`` of the highest (at most
``max_suspects``); the list may shrink, grow or shift as clues come in, and every change is a
private ``suspect_list`` event. At a vote the list is made over the living candidates only, the
agent sees the readings and the suspect list, and its legal choices are narrowed to the suspects
(never widened) — unless the cap cut the list inside a tie (:func:`cut_is_a_tie`, e.g. every
reading ``unknown``): then the votes are not narrowed, since the list carries no evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mas_agents.planners.base import ActionRequest, BlockAgent, Contribution
from mas_agents.utterance import quote

#: The sensors of a word-clue game (:attr:`mas_agents.planners.base.GameInfo.word_clues`); PLAYER* §2.3: a
#: game needs only its list of sensors (the murder-mystery four are in :mod:`.sensors`).
WORD_SENSORS = ("specificity", "fit", "copying")

CLUE_SENSORS = {
    "specificity": ("Specific", ("Specific", "Somewhat", "Vague")),
    "fit": ("Fits", ("Fits", "Partly", "Does not fit")),
    "copying": ("Copies others", ("Yes", "No")),
}
SCORES = {
    "fit": {"Fits": 0.0, "Partly": 0.5, "Does not fit": 1.0},
    "specificity": {"Specific": 0.0, "Somewhat": 0.5, "Vague": 1.0},
    "copying": {"Yes": 1.0, "No": 0.0},
}
WEIGHTS = {"fit": 1.0, "specificity": 0.5, "copying": 0.5}
UNKNOWN_SCORE = 0.5


def suspicion(readings: list[dict[str, str]], sensors: tuple[str, ...]) -> float:
    """Mean weighted suspicion over one player's clue readings (see the module docstring); 0 for none."""
    if not readings:
        return 0.0
    total = 0.0
    for r in readings:
        total += sum(WEIGHTS[s] * SCORES[s].get(r.get(s, ""), UNKNOWN_SCORE) for s in sensors)
    return total / len(readings)


def prune(scores: dict[str, float], margin: float, max_suspects: int | None) -> list[str]:
    """The suspects: players within ``margin`` of the top score, best first (ties in the given order)."""
    if not scores:
        return []
    top = max(scores.values())
    keep = sorted((p for p, s in scores.items() if s >= top - margin), key=lambda p: -scores[p])
    return keep[:max_suspects] if max_suspects else keep


def cut_is_a_tie(scores: dict[str, float], suspects: list[str]) -> bool:
    """True when the cap cut the list inside a tie: a player left out scores exactly as the last
    suspect kept (e.g. every reading ``unknown``), so the list is an arbitrary pick, not evidence."""
    if not suspects:
        return False
    last = scores[suspects[-1]]
    return any(s == last for p, s in scores.items() if p not in suspects)


@dataclass
class DeductionSensors:
    """Clue sensors + suspect-list pruner for the word-deduction games.

    Args:
        sensors: the sensors in use (default: :data:`WORD_SENSORS`).
        pruner: keep a suspect list and narrow votes to it.
        margin: suspicion distance from the top that still counts as a suspect.
        max_suspects: cap on the suspect list (None = no cap).
    """

    sensors: tuple[str, ...] | None = None
    pruner: bool = True
    margin: float = 0.25
    max_suspects: int | None = 2
    name: str = "player_star"
    readings: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    suspects: list[str] = field(default_factory=list)
    out: set[str] = field(default_factory=set)   # voted out (``vote_result`` events): never suspects again
    _queue: list[dict[str, Any]] = field(default_factory=list)

    def on_event(self, agent: BlockAgent, event: dict) -> None:
        """Queue every other player's clue (WiS ``describe``, MAgIC ``clue``) for reading, and
        note who was voted out."""
        if event.get("kind") == "vote_result" and (event.get("data") or {}).get("out"):
            self.out.add(str(event["data"]["out"]))
        if event.get("kind") in ("describe", "clue") and event.get("actor") not in (agent.name, "game"):
            text = event.get("content") or ""
            if text and text != "(no clue)":
                self._queue.append({"player": event["actor"], "text": text, "round": event.get("round", 0)})

    def contribute(self, agent: BlockAgent, request: Any) -> Contribution | None:
        """On a vote (the readings serve it, so they are read then: one call per round): read the
        queued clues (one ``form`` call for all of them), prune, show the readings and narrow the
        choices to the suspect list. Other requests: None, no call."""
        if not request.game.word_clues or request.kind != "vote":   # (own readings: Agent.act never asks the block)
            return None
        sensors = tuple(self.sensors or WORD_SENSORS)
        self._read_queue(agent, request, sensors)
        scores = {p: suspicion(rs, sensors) for p, rs in self.readings.items() if p != agent.name and p not in self.out}
        if request.choices:   # only the living candidates (voted out / fouled drop)
            scores = {p: s for p, s in scores.items() if p in request.choices}
        if self.pruner:
            new = prune(scores, self.margin, self.max_suspects)
            if new != self.suspects:
                change = _change(self.suspects, new)
                agent.emit("suspect_list", f"suspects: {', '.join(new) or '(none)'} ({change})",
                           data={"suspects": new, "previous": self.suspects, "change": change,
                                 "scores": {p: round(s, 3) for p, s in scores.items()}},
                           round=request.context.get("round", 0))
                self.suspects = new
        if not scores:
            return None
        lines = [f"- {p}: suspicion {scores[p]:.2f} from {len(self.readings[p])} clue(s); last: "
                 + ", ".join(f"{s} {self.readings[p][-1].get(s, '?')}" for s in sensors)
                 for p in sorted(scores, key=lambda q: -scores[q])]
        ctx = "Your private clue readings (PLAYER* sensors):\n" + "\n".join(lines)
        choices = None
        if self.pruner and self.suspects and not cut_is_a_tie(scores, self.suspects):
            ctx += f"\nYour suspect list: {', '.join(self.suspects)}."
            choices = [c for c in (request.choices or []) if c in self.suspects] or None
        return Contribution(context=ctx, choices=choices, notes={"scores": scores, "suspects": self.suspects})

    def _read_queue(self, agent: BlockAgent, request: Any, sensors: tuple[str, ...]) -> None:
        """Read every queued clue in ONE ``form`` call (a line per clue and sensor); a line still
        unreadable after the re-prompt reads ``unknown``."""
        queue, self._queue = self._queue, []
        if not queue:
            return
        word = request.context.get("word")
        topic = request.context.get("topic")
        mine = (f'your word "{word}"' if word else f'the topic "{topic}"' if topic else "your word")
        labels = [CLUE_SENSORS[s][0] if s != "fit" else "Fits " + ("my word" if word else "the topic") for s in sensors]
        seen: dict[str, int] = {}
        names = []
        for c in queue:       # a player's second queued clue gets its own lines ("Player 2 (clue 2) ...")
            seen[c["player"]] = seen.get(c["player"], 0) + 1
            names.append(c["player"] if seen[c["player"]] == 1 else f'{c["player"]} (clue {seen[c["player"]]})')
        fields = [(f"{name} {label}", list(CLUE_SENSORS[s][1])) for name in names for s, label in zip(sensors, labels)]
        clues = "\n".join(f'- {name}: {quote(c["text"])}' for name, c in zip(names, queue))
        req = ActionRequest(kind="form", actor=agent.name, fields=fields,
                            prompt=(f"Private assessment (not said aloud) of the new clues:\n{clues}\n"
                                    f"Judge each against {mine}: how specific is it, does it fit, and does it copy "
                                    f"earlier clues?"),
                            context={"purpose": "clue_sensors", "private": True}, game=request.game)
        act = agent.act(req, phase="gameplay")
        values = act.value if act.valid else act.partial
        for name, c in zip(names, queue):
            reading = {s: values.get(f"{name} {label}", "unknown") for s, label in zip(sensors, labels)}
            self.readings.setdefault(c["player"], []).append(reading)
            agent.emit("sensor", f"{c['player']}: " + ", ".join(f"{s} {v}" for s, v in reading.items()),
                       data={"player": c["player"], "clue": c["text"], "reading": reading, "valid": act.valid},
                       round=c["round"], llm_call_ids=act.call_ids)


def _change(old: list[str], new: list[str]) -> str:
    o, n = set(old), set(new)
    if not o:
        return "first list"
    if n < o:
        return "shrink"
    if n > o:
        return "grow"
    return "shift" if n != o else "reorder"
