"""A local Who-is-Spy player: one of our agents behind the WiS protocol.

:class:`AgentWisPlayer` takes the game's protocol messages (:mod:`mas_agents.graphs.wis.protocol_types`),
keeps the public history of the game as text, and answers ``round`` (describe) and ``vote``
requests with one strict action each through :class:`mas_agents.agents.Agent`. It needs no
vector memory: a WiS game is short enough for its whole history to be in every prompt.

The prompts are written here. Layout for prefix caching: the system message holds only the
rules and the seated players (the same for every player of a game), the user message starts
with the public history (also the same for everyone), then the player's name and word, then
the task. Consecutive calls of *different* players therefore share rules + history in
llama.cpp's KV cache and only the last few dozen tokens are evaluated anew. Players are told
only their word, never their role (WiS §3.1).

The record a player reads (issue 57, E1): each description is one quoted line attributed to its
speaker, ``Player 2: «...»``, and every line of the host (announcements, votes, the result) starts
with ``Host:`` (:mod:`mas_agents.utterance`; the rules say so in one sentence at their end), so
no description can pass for the host, the judge or another player. The rules otherwise follow
WiS App. A (the judge's three fouls, the vote, the end and victory conditions).
"""

from __future__ import annotations

import logging
import re
import time
from typing import Any, Callable

from mas_agents.graphs.wis.protocol_types import response
from mas_agents.graphs.wis.rules import GAME, MAX_CHARS, foul
from mas_agents.planners.base import ActionRequest
from mas_agents.agents import Agent, Persona
from mas_agents.events import make_event, vote_result_data
from mas_agents.text import norm_text, says_word
from mas_agents.utterance import NOTE, host_line, utterance

log = logging.getLogger(__name__)

RULES = {
    "en": (
        "You are playing the word game \"Who is Spy?\". Every player gets a secret word. All "
        "players share the same word except one, the spy, whose word is different but related. "
        "Nobody is told whether they are the spy. In each round every player describes their "
        "word in one short sentence, without saying the word itself and without repeating an "
        "earlier description (either one is a foul and eliminates you). Then everyone votes for "
        "the player they think is the spy; the player with the most votes is out. Civilians win "
        "by voting out the spy; the spy wins by surviving three rounds. The players are: {players}.\n"
        + NOTE["en"]
    ),
    "zh": (
        "你在玩“谁是卧底”。每位玩家拿到一个秘密词语。除一人（卧底）外，所有人的词语相同；卧底的词语与之相关但不同。"
        "没有人被告知自己是不是卧底。每一轮，每位玩家用一句话描述自己的词语，不能说出词语本身，也不能重复之前的描述"
        "（否则犯规出局）。之后所有人投票选出卧底，得票最多者出局。平民投出卧底即获胜；卧底撑过三轮即获胜。玩家有：{players}。\n"
        + NOTE["zh"]
    ),
}

IDENTITY = {
    "en": "You are {name}. Your word is \"{word}\". If the others' descriptions do not fit your word, "
          "you may be the spy: then describe vaguely so you blend in.",
    "zh": "你是{name}。你的词语是“{word}”。如果别人的描述与你的词语不符，你可能就是卧底：那就描述得含糊一些以免暴露。",
}

TASKS = {
    "en": {
        "history": "What has happened so far:",
        "describe": "Round {round}: it is your turn. Describe your secret word in one short sentence "
                    "(at most {chars} characters), without saying it and without repeating anything said before.",
        "vote": "Round {round}: vote for the player you think is the spy. Choose one of:",
        "nothing": "(nothing yet)",
    },
    "zh": {
        "history": "目前为止发生的事：",
        "describe": "第{round}轮：轮到你发言。用一句话（不超过{chars}个字）描述你的秘密词语，不要说出它本身，也不要重复别人说过的话。",
        "vote": "第{round}轮：投票选出你认为的卧底。从以下玩家中选一个：",
        "nothing": "（暂无）",
    },
}


#: Generic descriptions the served agent falls back on when its model said its own word twice
#: (:func:`safe_description`): true of almost any word, so they neither give the word away nor
#: contradict it. Ours.
SAFE_DESCRIPTIONS = {
    "en": ("It is something many people know.", "You can come across it in everyday life.",
           "Most people have met it at some point.", "People feel differently about it.",
           "It is easy to recognise once you have seen it.", "Some people care about it more than others."),
    "zh": ("这是很多人都知道的。", "日常生活中能碰到它。", "大多数人都接触过它。", "大家对它的感受不太一样。",
           "见过一次就容易认出来。", "有的人比别人更在意它。"),
}


def safe_description(lang: str, word: str, earlier: list[str]) -> str | None:
    """The safest legal description when the model keeps saying its own word: the first of
    :data:`SAFE_DESCRIPTIONS` (in the game's language) that the judge cannot foul.

    Why a generic sentence: the platform eliminates a description that says the speaker's word,
    repeats an earlier description, or is missing (WiS §3.1), so after the model has said its word
    twice every reply of its own is a foul, and so is none. A generic sentence is legal and gives
    nothing away; cutting the word out of the model's reply would not do: the rest of that
    sentence was written around the word (``my secret word is ...``) and may still hold a form of
    it (a plural, a compound) that a judge stricter than ours counts as the word. A candidate is
    taken only when :func:`mas_agents.graphs.wis.rules.foul` finds nothing in it (the own-word check is
    :func:`mas_agents.text.says_word`, the one our agents check themselves with) and, stricter,
    the word is not even inside it (``norm_text`` substring); ``earlier`` are the descriptions
    shown so far, this player's own included. None when every candidate is ruled out.
    """
    w = norm_text(word).replace(" ", "")
    for text in SAFE_DESCRIPTIONS.get(lang, SAFE_DESCRIPTIONS["en"]):
        if foul(text, word, earlier) is None and not (w and w in norm_text(text).replace(" ", "")):
            return text
    return None


class AgentWisPlayer:
    """A WiS player backed by an :class:`~mas_agents.agents.Agent`.

    Args:
        make_agent: builds the agent for a :class:`Persona` (called when the player first has to
            act, and again if it meets players it did not know then; a new game builds a new one).
        label: the agent spec (for the record).
        lang: ``"en"`` or ``"zh"`` (prompt language), or ``"auto"``: Chinese when the word holds
            Chinese characters, else English (a platform tells an agent no language).
        role: the true role, known to the harness (``"spy"``/``"civilian"``); put in the
            persona for strategy blocks, never in the prompt.
        safe_reply: the served agent's guard (``mas spy serve-agent``): a description that still
            says the player's word after the re-prompt of :meth:`Agent.act_avoiding
            <mas_agents.agents.Agent.act_avoiding>` is replaced by :func:`safe_description`,
            counted in the agent's stats (``own_word_safe_reply``), the response's ``meta``
            (``safe_reply``) and a warning in the log. Off at our own table, whose judge is shown
            the text the model chose (an own-word foul there is what the attack experiments measure).

    Accepts both our judge's sequence and the platform's (:mod:`mas_agents.graphs.wis.protocol_types`):

    * its own name from the ``start`` message's ``name``, or, when that is empty, from its
      ``message`` (where agents built on the platform's SDK take it: spy-agent-build-sdk 0.0.29,
      ``example/spy_agent.py``);
    * the players from a host line ``Players: A, B`` (``玩家：A, B``), from speakers, voters and
      vote lists, in the order met; never itself among the candidates of its vote (a platform's
      vote list may hold the voter);
    * a description longer than the game's limit (WiS §3.1: 400 characters in English, 120 in
      Chinese, :data:`mas_agents.graphs.wis.rules.MAX_CHARS`) is cut by the player itself at the last sentence
      or word end within it, rather than mid-word by the judge.

    Every public event is also passed to the agent's blocks (``Agent.observe``), as an event dict
    with kinds ``describe``, ``vote``, ``vote_result``, ``host``, ``result``.
    """

    def __init__(self, make_agent: Callable[[Persona], Agent], label: str, lang: str = "en", role: str = "civilian",
                 safe_reply: bool = False):
        if lang not in RULES and lang != "auto":
            raise ValueError(f"unknown language {lang!r}; expected one of {', '.join(RULES)}, auto")
        self.make_agent = make_agent
        self.label = label
        self.auto_lang = lang == "auto"
        self.lang = "en" if self.auto_lang else lang
        self.role = role
        self.safe_reply = safe_reply
        self.said: list[str] = []   # this player's own descriptions, as sent
        self.name = ""
        self.word = ""
        self.players: list[str] = []
        self.history: list[str] = []
        self.events: list[dict[str, Any]] = []
        self.agent: Agent | None = None

    # -- protocol ----------------------------------------------------------------------------
    def perceive(self, req: dict[str, Any]) -> None:
        """Take in one protocol message (see :mod:`mas_agents.graphs.wis.protocol_types`)."""
        status, name, msg, rnd = req.get("status"), req.get("name", ""), req.get("message", ""), req.get("round", 0)
        if status == "start":
            self.name = (name or msg).strip()
            self.word, self.history, self.events, self.agent, self.players = "", [], [], None, []
            self.said = []
            self._meet([self.name] if self.name else [])
            return
        if status == "distribution":
            self.word = req.get("word", "")
            if self.auto_lang:
                self.lang = "zh" if _CJK.search(self.word) else "en"
            return
        if status == "round":
            if name:
                self._meet([name])
                self._log(utterance(name, msg), "describe", name, msg, rnd)
            else:
                listed = _players_from(msg)
                if listed:   # the table, in seat order
                    self.players = listed + [p for p in self.players if p not in listed]
                self._log(host_line(msg), "host", "game", msg, rnd)
        elif status == "vote":
            self._meet([name, msg])
            self._log(host_line(f"{name} voted for {msg or 'nobody (abstained)'}."), "vote", name, msg, rnd,
                      target=msg or None)
        elif status == "vote_result":
            out = name or msg   # our judge fills both; some platform judges may fill only one
            self._log(host_line(f"{out} was voted out." if out else "no one was voted out."),
                      "vote_result", "game", out, rnd, **vote_result_data(out or None))
        elif status == "result":
            self._log(host_line(msg), "result", "game", msg, rnd)

    def interact(self, req: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """Describe (``round``) or vote (``vote``); returns ``{success, result, errMsg, meta}``.

        ``meta`` holds the LLM call ids, whether the reply parsed, the number of attempts and
        the reasoning (the text before the tagged line). An unparseable reply after one re-prompt
        gives ``success=False`` and ``result=None`` (the game counts it as no answer / abstain).
        """
        status, rnd = req.get("status"), int(req.get("round", 0))
        if not self.name:
            return response(None, success=False, err="no name: no start message gave this player one")
        t = TASKS[self.lang]
        if status == "vote":
            cands = [c for c in split_names(req.get("message", "")) if c != self.name]
            self._meet(cands)
        agent = self._ensure_agent()
        if status == "round":
            request = ActionRequest(kind="describe", actor=self.name,
                                    prompt=self._task(t["describe"].format(round=rnd, chars=MAX_CHARS[self.lang])),
                                    context={"round": rnd, "word": self.word, "lang": self.lang}, game=GAME)
        elif status == "vote":
            if not cands:
                return response(None, success=False, err="no candidates to vote for")
            request = ActionRequest(kind="vote", actor=self.name, prompt=self._task(t["vote"].format(round=rnd)),
                                    choices=cands, context={"round": rnd, "word": self.word, "lang": self.lang},
                                    game=GAME)
        else:
            return response(None, success=False, err=f"cannot interact on status {status!r}")
        t0 = time.monotonic()
        retried = False
        if request.kind == "describe":
            # our agent checks its own description for its word once; the game judges the final text
            action, retried = agent.act_avoiding(request, [self.word], phase="gameplay")
        else:
            action = agent.act(request, phase="gameplay")
        meta = {"call_ids": action.call_ids, "valid": action.valid, "attempts": action.attempts, "self_check_retry": retried,
                "reasoning": action.reasoning, "errors": action.errors, "seconds": time.monotonic() - t0,
                "planning_events": agent.drain_events()}
        if not action.valid:
            return response(None, success=False, err="; ".join(action.errors) or "invalid reply", meta=meta)
        if request.kind != "describe":
            return response(action.value, meta=meta)
        value = fit(action.value, MAX_CHARS[self.lang])
        if self.safe_reply and says_word(value, self.word):   # said it again after the re-prompt
            safe = safe_description(self.lang, self.word, self._shown())
            if safe is not None:
                agent.stats["own_word_safe_reply"] += 1
                log.warning("WiS agent %s: the description still said its word after a re-prompt; "
                            "answering a generic one instead (%r)", self.name, safe)
                meta["safe_reply"] = True
                value = safe
        self.said.append(value)
        return response(value, meta=meta)

    # -- internals ---------------------------------------------------------------------------
    def _meet(self, names: list[str]) -> None:
        for n in names:
            n = (n or "").strip()
            if n and n not in self.players:
                self.players.append(n)

    def _ensure_agent(self) -> Agent:
        """The agent for the players known now: built on first use, rebuilt (its counters kept, the
        game so far observed again) when players it did not know have appeared since, as in a
        platform game that names no table and the first describer knows only itself."""
        if self.agent is None or set(self.agent.persona.players) != set(self.players):
            system = RULES[self.lang].format(players=", ".join(self.players))
            persona = Persona(name=self.name, title="Who is Spy?", role=self.role, players=list(self.players),
                              system=system)
            old, self.agent = self.agent, self.make_agent(persona)
            if old is not None:
                self.agent.stats.update(old.stats)
            self.agent.observe(self.events)
        return self.agent

    def _shown(self) -> list[str]:
        """Every description heard so far (the others' and this player's own)."""
        return [e["content"] for e in self.events if e["kind"] == "describe"] + self.said

    def _task(self, task: str) -> str:
        t = TASKS[self.lang]
        hist = "\n".join(self.history) if self.history else t["nothing"]
        me = IDENTITY[self.lang].format(name=self.name, word=self.word)
        return f"{t['history']}\n{hist}\n\n{me}\n{task}"

    def _log(self, line: str, kind: str, actor: str, content: str, rnd: int, **data: Any) -> None:
        self.history.append(line)
        self.events.append(make_event(phase="wis", actor=actor, kind=kind, content=content, round=rnd, data=data))
        if self.agent is not None:
            self.agent.observe(self.events)


#: Chinese characters (CJK Unified Ideographs and Extension A, compatibility ideographs).
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
#: A host line naming the table: ``Players: A, B`` / ``玩家：A, B``.
_PLAYERS_LINE = re.compile(r"^\s*(?:players|玩家)\s*[:：]\s*(.+)$", re.I)
#: Where a description may be cut: after a sentence end, else after a space or a Chinese comma.
_SENTENCE_END = re.compile(r"[.!?。！？…]")
_WORD_END = re.compile(r"[\s,，、;；]")


def fit(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at the last sentence end within it, else at
    the last word end, else hard (the judge would cut at ``limit`` wherever it falls).

    Args:
        text: a description. limit: characters (Unicode code points), e.g. 120 (WiS §3.1, Chinese).
    """
    if len(text) <= limit:
        return text
    head = text[:limit]
    for pattern, keep_mark in ((_SENTENCE_END, True), (_WORD_END, False)):
        ends = [m.end() if keep_mark else m.start() for m in pattern.finditer(head)]
        ends = [e for e in ends if e >= limit // 2]
        if ends:
            return head[: ends[-1]].rstrip()
    return head


def _players_from(message: str) -> list[str]:
    """The names of a host line ``Players: A, B`` (or ``玩家：A，B``), or []."""
    for line in message.splitlines():
        m = _PLAYERS_LINE.match(line)
        if m:
            return split_names(m.group(1))
    return []


def split_names(text: str) -> list[str]:
    """The names of a comma-separated list (``,``, ``，`` or ``、``), stripped, empty ones dropped."""
    return [n.strip() for n in re.split(r"[,，、]", text) if n.strip()]
