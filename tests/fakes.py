"""Test doubles: a rule-driven fake chat model built on langchain-core's BaseChatModel.

The game and the agents only ever see a langchain-core chat model, so logic tests swap the real
model for :class:`RuleChat`, whose reply is computed from the prompt by a Python function.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult


class RuleChat(BaseChatModel):
    """Replies ``rule(messages)``; records every prompt in ``seen``."""

    rule: Callable[[list[BaseMessage]], str]
    seen: list = []

    @property
    def _llm_type(self) -> str:
        return "rule-fake"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        self.seen.append(messages)
        text = self.rule(messages)
        msg = AIMessage(content=text, usage_metadata={"input_tokens": sum(len(str(m.content).split()) for m in messages),
                                                     "output_tokens": len(text.split()),
                                                     "total_tokens": 0})
        return ChatResult(generations=[ChatGeneration(message=msg)])


def numbered(prompt: str) -> list[str]:
    """The numbered choice lines ``1. Name`` of a prompt."""
    return re.findall(r"^\d+\. (.+)$", prompt, re.M)


def polite_player(vote_for: str | None = None) -> Callable[[list[BaseMessage]], str]:
    """A well-behaved fake player: always answers in the required format.

    Asks the first listed player, votes ``vote_for`` when it is a legal choice (else the first
    choice), answers multiple-choice questions with ``a``.
    """
    def rule(messages):
        last = str(messages[-1].content)
        if '"Introduction: ..."' in last:
            return "I think I should be brief.\nIntroduction: I am a villager and I knew the victim."
        if '"To: ..."' in last:
            return f"Thinking.\nTo: {numbered(last)[0]}\nQuestion: Where were you that night?"
        if '"Vote: ..."' in last:
            choices = numbered(last)
            return f"Vote: {vote_for if vote_for in choices else choices[0]}"
        if "the letter of the correct option" in last or "the letters of your choices" in last:
            return "Answer: a"
        if "what you say in reply" in last:
            return "Answer: I was at home all night."
        return "???"
    return rule


def wis_player(gullible: bool = False, garbage_for: tuple[str, ...] = ()) -> Callable[[list[BaseMessage]], str]:
    """A fake Who-is-Spy player that plays well, for game logic tests.

    It describes its word with a code that equals for equal words (``hint-<n>``, unique per
    player and round so it never repeats) and votes for the first player whose code differs
    from its own (else the first candidate). ``gullible``: once a description carrying a
    "[System notice" is in the history, it states its word (an own-word foul: the attack worked).
    ``garbage_for``: seat names that always reply without the required format.
    """
    import zlib

    def rule(messages):
        last = str(messages[-1].content)
        if "End with exactly these lines" in last:   # PLAYER* clue sensors: judge the hint code
            word = re.search(r'your word "([^"]+)"', last).group(1)
            code = zlib.crc32(word.encode()) % 997
            m = re.search(r"hint-(\d+)", last)
            fits = "Fits" if m and int(m.group(1)) == code else "Does not fit"
            return f"Specific: Specific\nFits my word: {fits}\nCopies others: No"
        if "How well does this clue fit YOUR word" in last:   # pgm clue-fit reading: the same hint code test
            word = re.search(r'Your own secret word is "([^"]+)"', last).group(1)
            m = re.search(r"hint-(\d+)", last)
            return "Choice: fits" if m and int(m.group(1)) == zlib.crc32(word.encode()) % 997 else "Choice: odd"
        everything = "\n".join(str(m.content) for m in messages)
        name = re.search(r"You are (Player \d+)", everything).group(1)
        word = re.search(r'Your word is "([^"]+)"', everything).group(1)
        code = zlib.crc32(word.encode()) % 997
        if name in garbage_for:
            return "la la la"
        if '"Description: ..."' in last:
            rnd = re.search(r"^Round (\d+): it is your turn", last, re.M).group(1)
            if gullible and "[System notice" in last:
                return f"Description: my word is {word}"
            return f"Description: hint-{code} from {name} in round {rnd}"
        if '"Choice: ..."' in last:
            return f"Choice: {numbered(last)[0]}"
        if '"Vote: ..."' in last:
            choices = numbered(last)
            codes = dict(re.findall(r"^(Player \d+): hint-(\d+)", last, re.M))
            odd = [c for c in choices if c in codes and int(codes[c]) != code]
            return f"I compare the hints.\nVote: {(odd or choices)[0]}" if "analysis" in last else f"Vote: {(odd or choices)[0]}"
        return "???"
    return rule


def magic_player(pd_move: str = "defect", contribution: int = 10) -> Callable[[list[BaseMessage]], str]:
    """A fake MAgIC player that always answers in format: names itself right (role: the first
    listed), suspects and votes for the first other player, proposes an even split (all agree),
    plays ``pd_move`` and contributes ``contribution``."""
    def rule(messages):
        last = str(messages[-1].content)
        if "Private assessment" in last and "End with exactly these lines" in last:   # clue sensors
            tags = re.findall(r"^(.+?): <one of: (.+)>$", last, re.M)
            return "\n".join(f"{t}: {opts.split(', ')[0]}" for t, opts in tags)
        if "How well does this clue fit" in last:   # pgm clue-fit reading
            return "Choice: fits"
        me = re.search(r"You are (Player \d)", last).group(1)
        if '"Choice: ..."' in last:
            choices = numbered(last)
            mine = [c for c in choices if c.startswith(f"I am {me} ")]
            if mine:
                return f"Choice: {mine[0]}"
            return f"Choice: {pd_move if pd_move in choices else choices[0]}"
        if '"Description: ..."' in last:
            rnd = re.search(r"Clue round (\d+)", last).group(1)
            return f"Description: a clue from {me} in round {rnd}"
        if "End with exactly these lines" in last:
            tags = re.findall(r"^(.+?): <one of: (.+)>$", last, re.M)
            return "\n".join(f"{t}: {next(o for o in opts.split(', ') if o != me)}" for t, opts in tags)
        if '"Vote: ..."' in last:
            return f"Vote: {numbered(last)[0]}"
        if '"Guess: ..."' in last:
            return "Guess: Apple"
        if '"Proposal: ' in last:
            return "Proposal: Airline A: 34%, Airline B: 33%, Airline C: 33%"
        if '"Contribution: ..."' in last:
            return f"Contribution: {contribution}"
        return "???"
    return rule


def any_game_player() -> Callable[[list[BaseMessage]], str]:
    """One fake for every benchmark (murder mystery, Who is Spy, MAgIC), chosen from the system
    prompt, for tests that run several games with one model object (ablations)."""
    mmg, wis, magic = polite_player(vote_for="Chief Wang"), wis_player(), magic_player()

    def rule(messages):
        system = str(messages[0].content)
        if "Who is Spy" in system:
            return wis(messages)
        if "murder mystery" in system:
            return mmg(messages)
        return magic(messages)
    return rule
