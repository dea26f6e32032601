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
