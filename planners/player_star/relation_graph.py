"""PLAYER* relationship map, the graph itself: pure functions on a ``networkx.Graph``; the block
that keeps it (:class:`mas_agents.planners.player_star.relations.RelationMap`) is in ``relations.py``.

The map (§2.3: "each agent first updates its understanding of interpersonal
relationships"), one ``networkx.Graph`` per agent.

* **Nodes**: every player and victim (attribute ``kind``: ``"player"`` / ``"victim"``).
* **Edges**: relations this agent learned, with attributes ``labels`` (sorted list of relation
  labels), ``count`` (how many sentences/exchanges support it), ``evidence`` (the last
  :data:`MAX_EVIDENCE` supporting items ``{source, round, speaker, text, labels}``), and, on the
  edge between the agent and a character, ``emotion`` / ``emotion_round`` / ``emotion_victim`` —
  its latest emotion sensor reading.
* **Sources** (rule-based, no model call):

  - its own script, once: a script sentence naming character X relates the agent to X (the script
    is written to the agent, in the second person); a sentence naming X and Y also relates X and Y;
  - every introduction and answer it hears (:func:`update_from_event`, called from the ``on_event``
    hook): the speaker is related to every character named in a sentence of what they said, the
    characters named together in one sentence are related to each other (co-mention), and an
    answer relates asker and speaker with the label ``questioned``.

  Labels come from a keyword lexicon per sentence (:data:`LABEL_KEYWORDS`: family, romance,
  friendship, work, money, conflict, encounter), else ``mentioned``. A sentence's labels go to the
  pairs it names: to speaker–X when it names one other character X ("Bob is my brother"), to the
  co-mentioned pairs when it names several ("Bob owed Vic money": Bob–Vic gets ``money``, the
  speaker's edges to Bob and Vic only ``mentioned``). With
  ``PlayerStarConfig.relation_model`` the block also asks the model (one ``choose`` call per new
  pair named in an answer, at most :data:`MAX_MODEL_PAIRS` per answer) for one label from
  :data:`MODEL_LABELS`.

The map is logged once per round as a private ``relations`` event (``data`` = node-link JSON,
:func:`graph_json`) and summarised by :func:`relation_summary` for the sensors (motivation and
emotion prompts) and for the evaluation's relation questions.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

import networkx as nx

from mas_agents.memory import split_sentences
from mas_agents.utterance import fold, quote

#: Supporting items kept per edge (the latest ones).
MAX_EVIDENCE = 5
#: Characters of a sentence kept as evidence.
EVIDENCE_CHARS = 300
#: Model calls per answer event at most, when ``relation_model`` is on.
MAX_MODEL_PAIRS = 2

#: label -> lower-case English keywords that signal it in a sentence (ours). A plain word matches
#: as a whole word with an optional suffix (s, es, d, ed, ing, 's); a word ending in ``*`` matches
#: as a prefix.
LABEL_KEYWORDS: dict[str, tuple[str, ...]] = {
    "family": ("wife", "wives", "husband", "son", "daughter", "father", "mother", "brother", "sister", "uncle",
               "aunt", "cousin", "nephew", "niece", "family", "married", "marry", "grandfather", "grandmother",
               "parent", "child", "children", "dad", "mom", "mum"),
    "romance": ("lover", "love", "loved", "affair", "fianc*", "girlfriend", "boyfriend", "romance", "kiss",
                "darling", "sweetheart"),
    "friendship": ("friend", "friendship"),
    "work": ("boss", "employer", "employee", "servant", "master", "colleague", "assistant", "maid", "butler",
             "apprentice", "partner", "manager", "hired", "employ*"),
    "money": ("owe", "debt", "money", "loan", "inherit*", "paid", "pay", "bribe", "fortune", "rent"),
    "conflict": ("hate", "hated", "enemy", "enemies", "quarrel*", "argu*", "fight", "fought", "threat*",
                 "revenge", "rival", "blackmail*", "grudge", "jealous*"),
    "encounter": ("saw", "seen", "met", "meet", "meeting", "visit"),
}
#: Chinese keywords for the same labels (WellPlay zh scripts).
LABEL_KEYWORDS_ZH: dict[str, tuple[str, ...]] = {
    "family": ("妻", "丈夫", "儿子", "女儿", "父亲", "母亲", "哥哥", "姐姐", "弟弟", "妹妹", "家人", "结婚"),
    "romance": ("恋人", "爱", "情人", "未婚", "男友", "女友"),
    "friendship": ("朋友",),
    "work": ("老板", "雇", "仆", "同事", "助手", "管家", "徒弟"),
    "money": ("钱", "债", "借", "遗产"),
    "conflict": ("恨", "仇", "吵", "威胁", "报复", "敌"),
    "encounter": ("看见", "见到", "遇见"),
}
#: The options of the optional model call.
MODEL_LABELS = ("family", "romance", "friendship", "work", "money", "conflict", "strangers", "unclear")


def _name_forms(name: str) -> list[str]:
    forms = [name.strip()]
    short = name.split("(")[0].split("（")[0].strip()
    if short and short != forms[0]:
        forms.append(short)
    return forms


def mentioned_names(text: str, names: Iterable[str]) -> list[str]:
    """The names of ``names`` that occur in ``text``, in the order of ``names``.

    A name matches in full or by its part before a parenthesis, case-insensitively; ASCII names
    must stand as whole words, names with other letters (e.g. Chinese) match as substrings.
    """
    out = []
    low = text.casefold()
    for n in names:
        for form in _name_forms(n):
            f = form.casefold()
            if not f:
                continue
            if f.isascii():
                if re.search(rf"(?<![\w]){re.escape(f)}(?![\w])", low):
                    out.append(n)
                    break
            elif f in low:
                out.append(n)
                break
    return out


def label_sentence(sentence: str) -> list[str]:
    """Relation labels signalled by keywords in ``sentence`` (sorted), or ``["mentioned"]``."""
    low = " " + sentence.casefold() + " "
    found = set()
    for table in (LABEL_KEYWORDS, LABEL_KEYWORDS_ZH):
        for label, words in table.items():
            for w in words:
                if w.isascii():
                    pat = (rf"(?<![a-z]){re.escape(w[:-1])}" if w.endswith("*")
                           else rf"(?<![a-z]){re.escape(w)}(?:s|es|d|ed|ing|'s)?(?![a-z])")
                    if re.search(pat, low):
                        found.add(label)
                        break
                elif w in low:
                    found.add(label)
                    break
    return sorted(found) or ["mentioned"]


def new_graph(players: Iterable[str], victims: Iterable[str]) -> nx.Graph:
    """An empty map with one node per player (``kind="player"``) and victim (``kind="victim"``)."""
    g = nx.Graph()
    for p in players:
        g.add_node(p, kind="player")
    for v in victims:
        if v not in g:
            g.add_node(v, kind="victim")
    return g


def add_relation(g: nx.Graph, a: str, b: str, labels: Iterable[str], evidence: dict[str, Any]) -> None:
    """Add (or strengthen) the relation a–b with ``labels`` and one evidence item. ``a == b`` is
    ignored. A real label replaces the placeholder ``mentioned``."""
    if a == b:
        return
    if not g.has_edge(a, b):
        g.add_edge(a, b, labels=[], count=0, evidence=[])
    e = g.edges[a, b]
    e.setdefault("labels", [])
    e.setdefault("evidence", [])
    labs = set(e["labels"]) | set(labels)
    if len(labs) > 1:
        labs.discard("mentioned")
    e["labels"] = sorted(labs)
    e["count"] = int(e.get("count", 0)) + 1
    item = dict(evidence)
    item["text"] = str(item.get("text", ""))[:EVIDENCE_CHARS]
    e["evidence"] = (e["evidence"] + [item])[-MAX_EVIDENCE:]


def add_script_relations(g: nx.Graph, me: str, script: str, names: list[str]) -> int:
    """Seed the map from the agent's own script (rules in the module docstring). Returns the
    number of relation items added."""
    n = 0
    for s in split_sentences(script or ""):
        found = [x for x in mentioned_names(s, names) if x != me]
        if not found:
            continue
        labels = label_sentence(s)
        own = labels if len(found) == 1 else ["mentioned"]
        ev = {"source": "script", "round": 0, "speaker": me, "text": s}
        for x in found:
            add_relation(g, me, x, own, {**ev, "labels": own})
            n += 1
        for i, x in enumerate(found):
            for y in found[i + 1:]:
                add_relation(g, x, y, labels, {**ev, "labels": labels})
                n += 1
    return n


def update_from_event(g: nx.Graph, event: dict[str, Any], names: list[str]) -> list[tuple[str, str]]:
    """Update the map from one ``introduce`` or ``answer`` event (other kinds: no change).

    Returns the pairs touched (speaker–named and co-mention pairs; plus asker–speaker for an
    answer), in order.
    """
    kind = event.get("kind")
    if kind not in ("introduce", "answer"):
        return []
    speaker = event.get("actor", "")
    rnd = int(event.get("round", 0))
    data = event.get("data") or {}
    touched: list[tuple[str, str]] = []
    if kind == "answer" and data.get("asker") and data["asker"] != speaker:
        add_relation(g, data["asker"], speaker, ["questioned"],
                     {"source": "dialogue", "round": rnd, "speaker": data["asker"],
                      "text": str(data.get("question", "")), "labels": ["questioned"]})
        touched.append((data["asker"], speaker))
    if kind == "introduce" and data.get("valid") is False:
        return touched
    for s in split_sentences(str(event.get("content", ""))):
        found = [x for x in mentioned_names(s, names) if x != speaker]
        if not found:
            continue
        labels = label_sentence(s)
        own = labels if len(found) == 1 else ["mentioned"]
        ev = {"source": "dialogue", "round": rnd, "speaker": speaker, "text": s}
        for x in found:
            if speaker in g:
                add_relation(g, speaker, x, own, {**ev, "labels": own})
                touched.append((speaker, x))
        for i, x in enumerate(found):
            for y in found[i + 1:]:
                add_relation(g, x, y, labels, {**ev, "labels": labels})
                touched.append((x, y))
    return touched


def note_emotion(g: nx.Graph, me: str, reading: Any) -> None:
    """Record an emotion sensor reading on the edge me–character (created if absent, with no
    label and no evidence)."""
    c = reading.character
    if c == me:
        return
    if not g.has_edge(me, c):
        g.add_edge(me, c, labels=[], count=0, evidence=[])
    e = g.edges[me, c]
    e["emotion"] = reading.value
    e["emotion_round"] = int(reading.round)
    e["emotion_victim"] = reading.victim


def relation_summary(g: nx.Graph, a: str, b: str, *, max_evidence: int = 3, me: str | None = None) -> str:
    """A short English summary of what the map holds about a and b.

    Example: ``Ann – Bob: conflict, money (3 mentions; from the script: "You owe Bob money.";
    from Bob, round 1: «...»). Your feeling towards Bob: Negative (round 1).`` What another seat said
    (a question, a sentence of an answer) is quoted with :func:`mas_agents.utterance.quote`, so a
    seat's text cannot put a line of its own (``Host: ...``) into the prompt that holds the summary.
    Returns ``"No known relation between a and b."`` when the map has no such edge.
    """
    if a not in g or b not in g or not g.has_edge(a, b):
        return f"No known relation between {a} and {b}."
    e = g.edges[a, b]
    labels = ", ".join(e.get("labels") or []) or "no label"
    items = []
    for ev in (e.get("evidence") or [])[-max_evidence:] if max_evidence > 0 else []:
        if ev.get("source") == "script":   # the seat's own script (the dataset's text)
            items.append(f'from the script: "{fold(str(ev.get("text", "")))}"')
        else:   # another seat's words: one quoted utterance its text cannot close (issue 57, E1)
            items.append(f"from {ev.get('speaker')}, round {ev.get('round')}: {quote(str(ev.get('text', '')))}")
    n = int(e.get("count", 0))
    head = f"{a} – {b}: {labels}"
    if n or items:
        head += f" ({n} mention{'s' if n != 1 else ''}" + ("; " + "; ".join(items) if items else "") + ")"
    head += "."
    if "emotion" in e:
        if me is not None and me in (a, b):
            who = b if a == me else a
            head += f" Your feeling towards {who}: {e['emotion']} (round {e.get('emotion_round', 0)})."
        else:
            head += f" Feeling (emotion sensor): {e['emotion']} (round {e.get('emotion_round', 0)})."
    return head


def graph_json(g: nx.Graph) -> dict[str, Any]:
    """The map as node-link JSON (``networkx.node_link_data``; keys ``nodes`` and ``edges``).
    Rebuild it with ``networkx.node_link_graph(data)``."""
    return nx.node_link_data(g)
