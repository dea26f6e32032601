"""Who is Spy's protocol, the inputs of its leaderboard's fingerprint (issue 56 item 4): what a
season of Who-is-Spy games shares (:mod:`mas_agents.game.fingerprint` hashes and compares them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mas_agents.game.fingerprint import UNKNOWN, canonical

__all__ = ["legacy_wis_protocol", "wis_protocol"]


def wis_protocol(*, lang: str, players: int, speak_timeout: float | None, structured: str | None = None
                 ) -> dict[str, Any]:
    """The fingerprint's inputs of a Who-is-Spy tournament, as ``config.json`` records them.

    Covers (every field below; nothing else):

    * ``game``: ``"wis"``.
    * ``rules``: :data:`mas_agents.graphs.wis.rules.RULES_VERSION` (bumped when the judge's code
      changes a rule) and the rule constants of WiS §3.1 and Appendix A as this repository plays
      them: ``max_chars`` (the description limit in ``lang``), ``max_rounds``, ``min_alive``,
      ``total_points``, ``spy_points_by_round``, ``fouls``.
    * ``lang``: ``en`` or ``zh`` (``--lang``; it picks the prompts and the word-pair file).
    * ``players``: seats per game (``--players``).
    * ``speak_timeout``: the speaking limit in seconds as resolved for the tournament, None for
      none (``--speak-timeout``; a late description is a foul, so it is a rule).
    * ``reply_format``: the reply-format mode asked for (``--structured``: auto, grammar, json,
      prompt; it applies to seats on remote models, the embedded model always decodes under
      its grammar); None: the process-wide setting of :func:`mas_agents.remote.endpoints.settings`.
    * ``prompts``: the full text of every prompt template a seat's model reads in ``lang``:
      ``rules`` (the system message, :data:`mas_agents.graphs.wis.player.RULES`), ``identity``
      (``IDENTITY``), ``task.history``, ``task.describe``, ``task.vote``, ``task.nothing``
      (``TASKS``), the answer-format lines of the two actions (``answer.describe``,
      ``answer.vote``, :func:`mas_agents.prompts.format_instruction`) and the re-prompt
      (``reprompt``, :func:`mas_agents.prompts.reprompt`). The templates are read when called, so
      a changed sentence (in the source, or patched at run time) changes the fingerprint.
    * ``judge``: what the judge announces to every seat in ``lang``
      (:data:`mas_agents.graphs.wis.runtime.HOST`: the rules introduction, the players line, the
      turn, the round and the foul lines) and the foul sentences
      (:data:`mas_agents.graphs.wis.rules.FOUL_TEXT`).
    * ``record``: how a seat's record renders another seat's words and the host's lines
      (:func:`mas_agents.utterance.utterance` and :func:`~mas_agents.utterance.host_line` applied to
      placeholders, so a change of the quotation marks or of the host marker is a new protocol).

    Not covered: agents, models, planner blocks (part of an agent), seeds, games, word pairs.

    Returns:
        A JSON-ready dict (keys sorted when hashed); see :func:`mas_agents.game.fingerprint.protocol_fingerprint`.

    Raises:
        ValueError: ``lang`` is not a language of the game.
    """
    from mas_agents.planners.base import ActionRequest
    from mas_agents.remote import endpoints
    from mas_agents.graphs.wis import player, rules, runtime
    from mas_agents.prompts import format_instruction, reprompt
    from mas_agents.utterance import host_line, utterance

    rules.check_lang(lang)
    tasks = player.TASKS[lang]
    vote = ActionRequest(kind="vote", actor="{name}", prompt="", choices=["{candidate}"], game=rules.GAME)
    describe = ActionRequest(kind="describe", actor="{name}", prompt="", game=rules.GAME)
    return canonical({
        "game": "wis",
        "rules": {"version": rules.RULES_VERSION, "max_chars": rules.MAX_CHARS[lang], "max_rounds": rules.MAX_ROUNDS,
                  "min_alive": rules.MIN_ALIVE, "total_points": rules.TOTAL_POINTS,
                  "spy_points_by_round": rules.SPY_POINTS_BY_ROUND, "fouls": list(rules.FOULS)},
        "lang": lang,
        "players": int(players),
        "speak_timeout": None if speak_timeout is None else float(speak_timeout),
        "reply_format": structured if structured is not None else endpoints.settings().structured,
        "prompts": {"rules": player.RULES[lang], "identity": player.IDENTITY[lang],
                    **{f"task.{k}": v for k, v in sorted(tasks.items())},
                    "answer.describe": format_instruction(describe), "answer.vote": format_instruction(vote),
                    "reprompt": reprompt("{error}", describe)},
        "judge": {**{k: v for k, v in sorted(runtime.HOST[lang].items())},
                  **{f"foul.{k}": v for k, v in sorted(rules.FOUL_TEXT.items())}},
        "record": {"utterance": utterance("{name}", "{text}"), "host": host_line("{text}")},
    })


def legacy_wis_protocol(config: Mapping[str, Any]) -> dict[str, Any]:
    """The inputs of a tournament stored before fingerprints existed, from its leaderboard
    ``config`` (which records ``lang``, ``players`` and the resolved ``speak_timeout``; its run
    directory's ``config.json`` records no more of the protocol): the fields it recorded, and
    :data:`mas_agents.game.fingerprint.UNKNOWN` for ``rules``, ``reply_format``, ``prompts``, ``judge`` and ``record``, with
    ``recorded: False``.

    Such tournaments form "unknown protocol" seasons, one per recorded ``lang`` / ``players`` /
    ``speak_timeout``: never pooled with a fingerprinted season, nor English with Chinese."""
    st = config.get("speak_timeout")
    return canonical({"game": "wis", "recorded": False, "rules": UNKNOWN, "lang": config.get("lang", UNKNOWN),
                       "players": config.get("players", UNKNOWN),
                       "speak_timeout": float(st) if isinstance(st, (int, float)) else st,
                       "reply_format": UNKNOWN, "prompts": UNKNOWN, "judge": UNKNOWN, "record": UNKNOWN})
