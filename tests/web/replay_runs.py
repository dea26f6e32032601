"""Extra games for the replay tests, played by the project's own runners on fake models: a Chinese
Who-is-Spy game (a fake that describes and votes in Chinese; Player 4 repeats Player 3's description,
a foul) and a one-round MAgIC Chameleon game whose challenger seat is ``plain+pgm`` (belief tables,
clue readings; the MAgIC settings are real data)."""

from __future__ import annotations

import re
import zlib
from pathlib import Path


def zh_rule(messages) -> str:
    """The fake Chinese Who-is-Spy player: ``暗号<n>`` from its word (equal words, equal codes), votes
    for the first player whose code differs; Player 4 repeats Player 3's description of round 1."""
    from tests.fakes import numbered, unrecognised
    last = str(messages[-1].content)
    everything = "\n".join(str(m.content) for m in messages)
    name = re.search(r"你是(Player \d+)", everything)
    word = re.search(r"你的词语是“([^”]+)”", everything)
    if not (name and word):
        raise unrecognised("zh_rule", messages)
    me, code = name.group(1), zlib.crc32(word.group(1).encode()) % 997
    if '"Description: ..."' in last:
        rnd = re.search(r"第(\d+)轮", last).group(1)
        if me == "Player 4" and rnd == "1":
            return f"Description: 暗号{code}，Player 3第{rnd}轮说"
        return f"Description: 暗号{code}，{me}第{rnd}轮说"
    if '"Vote: ..."' in last:
        choices = numbered(last)
        codes = dict(re.findall(r"^(Player \d+): «暗号(\d+)", last, re.M))
        odd = [c for c in choices if c in codes and int(codes[c]) != code]
        return f"Vote: {(odd or choices)[0]}"
    raise unrecognised("zh_rule", messages)


def build_extra(root: Path, data_root: Path) -> dict[str, Path]:
    """Play the games into ``root`` (a ``--runs`` folder). Returns ``{"zh": game dir, "cham": game dir}``."""
    from mas_agents.graphs.magic.bench import MagicBenchConfig, run_magic
    from mas_agents.graphs.wis.session import WisGameConfig, play_game
    from tests.data_roots import mixed_root
    from tests.fakes import RuleChat, magic_player
    root.mkdir(parents=True, exist_ok=True)
    zh = root / "spy-zh"
    play_game(zh, WisGameConfig(agents=["plain", "plain+reasoning", "plain", "plain"],
                                pair={"civilian": "苹果", "spy": "梨"}, model=RuleChat(rule=zh_rule), lang="zh", seed=3,
                                spy_seat=1, first_speaker=0, speak_timeout=None))
    run_magic(MagicBenchConfig(data_root=mixed_root(root.parent / "magic-data", data_root), out=root / "magic-cham",
                               scenarios=["chameleon"], challenger="plain+pgm", defender="plain", settings="0",
                               model=RuleChat(rule=magic_player()), replay_openings=False))
    return {"zh": zh, "cham": root / "magic-cham" / "games" / "chameleon-chameleon-s00"}
