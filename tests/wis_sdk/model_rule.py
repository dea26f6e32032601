"""The fake model behind our served agent in the platform-style tests, and the prompt checks.

:class:`ServedAgentModel` answers our WiS player's two prompts in the strict reply format of
:func:`mas_agents.actions.parse_reply` (``Description: ...``, ``Vote: <name>``, the format lines
of :data:`mas_agents.prompts.FORMATS`; vote choices are the numbered lines ``1. Name``):

* describe: ``Description: <a clue unique per call>`` (never a game word);
* vote: *adversarial*: the driven agent's own name when the prompt offers it, else the first
  choice. So an agent that failed to drop itself from the candidates would vote for itself,
  and "never votes for itself" is a real check of the agent, not of this fake.

It serves :class:`tests.stub_openai.StubServer` (``reply=model.stub_reply``, request bodies) and
:class:`tests.fakes.RuleChat` (``rule=model.rule``, langchain messages); every prompt it answers
is kept in :attr:`ServedAgentModel.prompts` (system + user text) for :func:`prompt_problems`.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Iterable
from typing import Any

DESCRIBE_FORMAT = '"Description: ..."'
VOTE_FORMAT = '"Vote: ..."'
_NUMBERED = re.compile(r"^\d+\. (.+)$", re.MULTILINE)


def numbered(text: str) -> list[str]:
    """The numbered choice lines (``1. Name``) of a prompt."""
    return _NUMBERED.findall(text)


class UnknownPrompt(ValueError):
    """The served agent asked something this fake does not answer (a prompt format changed)."""


class ServedAgentModel:
    """A fake model for the served agent whose name (as the platform gives it) is ``me``."""

    def __init__(self, me: str):
        self.me = me
        self.prompts: list[str] = []
        self._n = itertools.count(1)
        self._lock = threading.Lock()

    def answer(self, system: str, last_user: str) -> str:
        with self._lock:
            self.prompts.append(f"{system}\n\n{last_user}")
            if DESCRIBE_FORMAT in last_user:
                text = f"Description: a thing you can hold, clue number {next(self._n)}"
            elif VOTE_FORMAT in last_user:
                choices = numbered(last_user)
                if not choices:
                    raise UnknownPrompt(f"a vote prompt without numbered choices: {last_user[-300:]!r}")
                text = f"Vote: {self.me if self.me in choices else choices[0]}"
            else:
                raise UnknownPrompt(f"unrecognised prompt: {last_user[-300:]!r}")
            return text

    def stub_reply(self, body: dict) -> str:
        """``StubServer(reply=...)``: answer an OpenAI chat-completions request body."""
        msgs = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        system = "\n".join(_text(m.get("content")) for m in msgs if m.get("role") == "system")
        users = [_text(m.get("content")) for m in msgs if m.get("role") == "user"]
        return self.answer(system, users[-1] if users else "")

    def rule(self, messages: list) -> str:
        """``RuleChat(rule=...)``: answer langchain messages."""
        system = "\n".join(str(m.content) for m in messages if getattr(m, "type", "") == "system")
        users = [str(m.content) for m in messages if getattr(m, "type", "") == "human"]
        return self.answer(system, users[-1] if users else "")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


#: prompt fragments that show an empty name where a player's name belongs
EMPTY_NAME = [
    (re.compile(r"You are\s*[.,:;]"), "'You are .' (empty own name)"),
    (re.compile(r"The players are:\s*[.]"), "'The players are: .' (no players)"),
    (re.compile(r"你是\s*[。，,.]"), "'你是。' (empty own name)"),
    (re.compile(r"玩家有：\s*[。.]"), "'玩家有：。' (no players)"),
    (re.compile(r"^\s*:\s", re.MULTILINE), "a history line with an empty speaker (': ...')"),
    (re.compile(r"voted for\s*[.]"), "'voted for .' (empty target)"),
    (re.compile(r"^\d+\.\s*$", re.MULTILINE), "an empty numbered choice"),
]
_PLAYER_LISTS = [re.compile(r"The players are: (.*?)\.\s*$", re.MULTILINE), re.compile(r"玩家有：(.*?)。")]


def prompt_problems(prompt: str, *, me: str, players: Iterable[str], lang: str,
                    candidates: list[str] | None = None) -> list[str]:
    """What is wrong with one prompt of our served agent named ``me`` at a table of ``players``.

    Checks: no empty-name fragment (:data:`EMPTY_NAME`); the agent is told its name ("You are
    <me>" / zh "你是<me>"); a players list, if any, names only real players (not the rules text,
    not ""); for a vote prompt (``candidates`` given) the numbered choices are exactly the
    candidates without ``me``, in order.
    """
    players = list(players)
    out = [f"{why}: ...{prompt[max(0, m.start() - 50):m.end() + 50]!r}..."
           for rx, why in EMPTY_NAME for m in [rx.search(prompt)] if m]
    ident = f"你是{me}" if lang == "zh" else f"You are {me}"
    if ident not in prompt:
        out.append(f"the prompt never says {ident!r}")
    for rx in _PLAYER_LISTS:
        for m in rx.finditer(prompt):
            names = [n.strip() for n in re.split(r"[,，、]", m.group(1))]
            bad = [n for n in names if n and n not in players]
            if bad:
                out.append(f"players list {m.group(1)[:120]!r} names non-players {bad[:3]}")
    if candidates is not None:
        want = [c for c in candidates if c != me]
        got = numbered(prompt)
        if got != want:
            out.append(f"vote choices: {got} != the candidates without itself {want}")
    return out


def summarize(problems_per_prompt: list[list[str]], label: str = "prompt") -> list[str]:
    """One line per kind of problem (the text before the first ``": "``), with how many prompts
    had it and the first one's detail, instead of the same problem once per prompt."""
    seen: dict[str, tuple[int, int, str]] = {}
    for i, probs in enumerate(problems_per_prompt):
        for p in probs:
            kind = p.split(": ", 1)[0]
            n, first, detail = seen.get(kind, (0, i, p))
            seen[kind] = (n + 1, first, detail)
    return [f"{n} {label}(s), first {label} {first}: {detail}" for n, first, detail in seen.values()]


def served_agent_problems(ex: list[dict], model: ServedAgentModel, *, lang: str, me: str, word: str,
                          players: list[str], model_name: str) -> list[str]:
    """Everything wrong with our served agent's side of a platform-style exchange ``ex``.

    Every call answered HTTP 200 ``success: true``; ``checkHealth`` answers ``result: null`` and
    ``init`` the model name (as the SDK's server does: ``agent_build_sdk/server/server.py``);
    each vote names a candidate other than itself although the list offered it (and ``model``
    would have voted for it); each description is non-empty and does not hold the word; the
    model was called once per description and vote; no prompt shows an empty name, every prompt
    names the agent, each vote prompt offers exactly the candidates without the agent
    (:func:`prompt_problems`).
    """
    probs = [f"call {i} {e['path']} {e['request']} -> HTTP {e['http_status']} {e['response']}"
             for i, e in enumerate(ex)
             if e["http_status"] != 200 or not (isinstance(e["response"], dict) and e["response"].get("success") is True)]

    def result(e: dict) -> Any:
        return e["response"].get("result") if isinstance(e["response"], dict) else None

    for e in ex:
        if e["path"] == "/agent/checkHealth" and result(e) is not None:
            probs.append(f"checkHealth answers result {result(e)!r}, not null as the SDK's server does")
        if e["path"] == "/agent/init" and result(e) != model_name:
            probs.append(f"init answers {result(e)!r}, not the model name {model_name!r}")
    votes = [e for e in ex if e["path"] == "/agent/interact" and e["request"].get("status") == "vote"]
    speeches = [e for e in ex if e["path"] == "/agent/interact" and e["request"].get("status") == "round"]
    for v in votes:
        cands, said = v["request"]["message"].split(","), result(v)
        if said not in cands or said == me:
            probs.append(f"round {v['request'].get('round')}: voted {said!r} from {cands} (itself: {me})")
    for s in speeches:
        text = result(s)
        if not (isinstance(text, str) and text.strip() and word not in text):
            probs.append(f"round {s['request'].get('round')}: described {text!r}")
    prompts = list(model.prompts)
    vote_prompts = [p for p in prompts if VOTE_FORMAT in p]
    if len(prompts) != len(votes) + len(speeches) or len(vote_prompts) != len(votes):
        probs.append(f"{len(prompts)} model calls ({len(vote_prompts)} for votes) for {len(speeches)} descriptions "
                     f"and {len(votes)} votes")
    probs += summarize([prompt_problems(text, me=me, players=players, lang=lang) for text in prompts])
    probs += summarize([[p for p in prompt_problems(text, me=me, players=players, lang=lang,
                                                    candidates=v["request"]["message"].split(","))
                         if p.startswith("vote choices")]
                        for text, v in zip(vote_prompts, votes)], "vote prompt")
    return probs
