"""The dataset root the tests use: the real one (nothing of it is committed).

Every test that reads WellPlay scripts, Who-is-Spy word pairs or MAgIC settings reads the REAL
datasets: it is marked ``realdata`` and takes the ``real_data_root`` fixture; ``tests/conftest.py``
deselects it when :func:`find_real_data` finds nothing (or fails it under ``MAS_REQUIRE_DATA=1``).
The WellPlay tests use the script "Sin" (:data:`SIN_ID`). A test that needs one word pair and
no dataset gives it in code (``pair={"civilian": "tea", "spy": "coffee"}``).
"""

from __future__ import annotations

import os
from pathlib import Path

#: The real WellPlay script the tests use (``wellplay/en/Sin (4 people closed)``; README
#: "Layout"): its id and its en / zh names.
SIN_ID, SIN = "131", ("Sin", "罪恶")
#: Its characters in seat order, the murderer and the victim (``json/*.json``: ``is_murderer``,
#: ``victims``), in English.
SIN_CHARACTERS = ["Zhang Villager", "Chief Wang", "Officer Li", "Hu Investigate"]
SIN_MURDERER, SIN_VICTIM = "Chief Wang", "Zhao Cishan"
#: Its questions (``final_result/*.csv``): 44 = 3 objective + 20 reasoning + 21 relation.
SIN_QUESTIONS = 44
#: What every real datasets root holds.
REAL_PARTS = ("wellplay/en", "wellplay/zh", "whoisspy", "magic/settings")
#: Set to 1 to make every ``realdata`` test fail (not vanish) when the real data is missing.
REQUIRE_ENV = "MAS_REQUIRE_DATA"


def find_real_data() -> tuple[Path | None, str]:
    """``(root, "")`` for the real datasets root as the code finds it
    (:func:`mas_agents.game.data.resolve_data_dir`: ``$MAS_DATA_DIR``, else ``../shared/datasets``), or
    ``(None, why)`` when there is none or it lacks a part."""
    from mas_agents.game.data import DataError, resolve_data_dir
    try:
        root = resolve_data_dir()
    except DataError as exc:
        return None, " ".join(str(exc).split(". The WellPlay data comes from")[0].split())
    missing = [p for p in REAL_PARTS if not (root / p).is_dir()]
    if missing:
        return None, f"the datasets root {root} has no {', '.join(missing)}"
    return root, ""


def require_real_data() -> bool:
    """Whether ``MAS_REQUIRE_DATA`` asks for the real data (any value but "", "0", "false", "no")."""
    return os.environ.get(REQUIRE_ENV, "").strip().lower() not in ("", "0", "false", "no")


def mixed_root(dest: Path, real_root: Path) -> Path:
    """A datasets root at ``dest`` holding the REAL WellPlay scripts, word pairs and MAgIC settings
    of ``real_root`` (symbolic links: nothing is copied) but no ``magic/results``, so reports carry
    no paper rows. Returns ``dest``."""
    dest.mkdir(parents=True)
    (dest / "wellplay").symlink_to(real_root / "wellplay", target_is_directory=True)
    (dest / "whoisspy").symlink_to(real_root / "whoisspy", target_is_directory=True)
    (dest / "magic").mkdir()
    (dest / "magic" / "settings").symlink_to(real_root / "magic" / "settings", target_is_directory=True)
    return dest
