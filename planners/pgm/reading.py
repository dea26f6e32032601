"""The PGM block's reading pass: the one ``form`` request that reads every queued clue or statement
(:func:`reading_request`, the texts :data:`READ_PROMPT`, ours) and the requests before which it is
made (:data:`READ_ON`). Split from :mod:`mas_agents.planners.pgm.block` (issue 51 item 6).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping

from mas_agents.planners.base import ActionRequest, GameInfo
from mas_agents.planners.pgm.belief import SCALES
from mas_agents.utterance import quote

__all__ = ["FIT_CHOICES", "READ_ON", "READ_PROMPT", "reading_request"]

FIT_CHOICES = list(SCALES["fit"])

#: The requests before which the queued clues / statements are read: the ones that judge the
#: others (whom to vote for, whom to question; a WellPlay question after the game). Any other
#: request is shown the belief as it stands, so a Who-is-Spy round costs one reading call, not
#: one per action (PLAYER* §4, Table A5: gameplay calls are the cost compared).
READ_ON = ("vote", "ask", "mcq")

#: The texts of a reading pass (one ``form`` call for every queued clue or statement). Ours.
READ_PROMPT = {
    "en": {
        "head": "Private assessment (not said aloud) of what the others said.",
        "word": 'Your own secret word is "{word}".',
        "topic": 'The topic is "{topic}".',
        "clue": '- {tag} gave this clue: {text}',
        "statement": '- {tag} said: {text}',
        "ask_word": ("How well does each clue fit YOUR word? fits = clearly about your word; neutral = vague, "
                     "could be about it; odd = seems to be about a different word."),
        "ask_topic": ("You do not know the secret word. How well does each clue fit the topic and the other clues? "
                      "fits = plausible for the shared word; neutral = vague; odd = looks off."),
        "ask_statement": ("You are finding out who killed {victims}. Judged by each statement alone, how does its "
                          "speaker look? fits = consistent and open, nothing to hide; neutral = tells nothing either "
                          "way; odd = evasive, contradicts known facts, or has a motive or chance to kill."),
        "victim": "the victim", "and": " and ",
    },
    "zh": {
        "head": "私下评估（不说出口）其他人说的话。",
        "word": "你自己的秘密词语是“{word}”。",
        "topic": "主题是“{topic}”。",
        "clue": "- {tag} 的描述：{text}",
        "statement": "- {tag} 说：{text}",
        "ask_word": "每条描述与你的词语有多吻合？fits = 明显在说你的词；neutral = 含糊，可能是；odd = 像在说另一个词。",
        "ask_topic": "你不知道秘密词语。每条描述与主题和其他描述有多吻合？fits = 合理；neutral = 含糊；odd = 不对劲。",
        "ask_statement": ("你在查明谁杀了{victims}。仅凭每句话，说话的人看起来如何？fits = 一致坦诚，没有隐瞒；"
                          "neutral = 看不出什么；odd = 回避、与已知事实矛盾，或有杀人动机或机会。"),
        "victim": "死者", "and": "、",
    },
}


def reading_request(items: list[Mapping[str, Any]], *, word: str = "", topic: str = "", victims: list[str] | None = None,
                    lang: str = "en", actor: str = "", game: GameInfo | None = None) -> ActionRequest:
    """The one ``form`` request that reads every queued clue or statement.

    Args:
        items: queued ``{"subject", "clue", "statement"?}`` dicts, in order (non-empty).
        word, topic: the agent's own word / the topic, when known (word games).
        victims: the victims (murder mystery statements).
        lang: ``en`` or ``zh`` (other values: ``en``).

    Returns:
        A private ``form`` request with one field per item, tag = the speaker's name (``Name (2)``
        for their second item), choices ``fits / neutral / odd`` (:data:`FIT_CHOICES`).

    Raises:
        ValueError: no items.
    """
    if not items:
        raise ValueError("a reading pass needs at least one clue or statement")
    t = READ_PROMPT.get(lang, READ_PROMPT["en"])
    seen: Counter = Counter()
    tags = []
    for it in items:
        seen[it["subject"]] += 1
        tags.append(it["subject"] if seen[it["subject"]] == 1 else f'{it["subject"]} ({seen[it["subject"]]})')
    lines = [t["head"]]
    statements = any(it.get("statement") for it in items)
    if word and not statements:
        lines.append(t["word"].format(word=word))
    if topic and not statements:
        lines.append(t["topic"].format(topic=topic))
    # what the others said, each one quoted line (mas_agents.utterance: it cannot pass for the game)
    lines += [t["statement" if it.get("statement") else "clue"].format(tag=tag, text=quote(str(it["clue"])[:600]))
              for tag, it in zip(tags, items)]
    if statements:
        lines.append(t["ask_statement"].format(victims=t["and"].join(victims or []) or t["victim"]))
    else:
        lines.append(t["ask_word"] if word else t["ask_topic"])
    kw = {"game": game} if game is not None else {}
    return ActionRequest(kind="form", actor=actor, prompt="\n".join(lines), fields=[(tag, list(FIT_CHOICES)) for tag in tags],
                         context={"private": True, "purpose": "pgm_read", "lang": lang}, **kw)
