"""The two dataset roots the tests use: the synthetic one in ``tests/data`` and the real one.

* Logic tests that need *some* data read the synthetic root (:data:`TEST_DATA`, see
  ``tests/data/README.md``), passed explicitly: never through ``$MAS_DATA_DIR``.
* Tests that assert facts of the real WellPlay / Who-is-Spy / MAgIC data are marked ``realdata``
  and take the ``real_data_root`` fixture; ``tests/conftest.py`` deselects them when
  :func:`find_real_data` finds nothing (or fails them under ``MAS_REQUIRE_DATA=1``).
"""

from __future__ import annotations

import os
from pathlib import Path

#: The synthetic datasets root (same layout as the real one).
TEST_DATA = Path(__file__).resolve().parent / "data"
#: The synthetic WellPlay script: its id (not a real WellPlay id) and its en / zh names.
LANTERN_ID, LANTERN = "9001", ("Lantern", "灯笼")
#: Its characters in seat order, and the murderer and victim.
LANTERN_CHARACTERS = ["Mira Quill", "Tobias Fenn", "Selka Dorn", "Harlow Reed"]
LANTERN_MURDERER, LANTERN_VICTIM = "Tobias Fenn", "Orrin Vale"
#: Per-character questions per language (3 objective, 11 reasoning, 8 relation).
LANTERN_QUESTIONS = 22
#: What every real datasets root holds.
REAL_PARTS = ("wellplay/en", "wellplay/zh", "whoisspy", "magic/settings")
#: Set to 1 to make every ``realdata`` test fail (not vanish) when the real data is missing.
REQUIRE_ENV = "MAS_REQUIRE_DATA"


def find_real_data() -> tuple[Path | None, str]:
    """``(root, "")`` for the real datasets root as the code finds it
    (:func:`eval.datasets.resolve_data_dir`: ``$MAS_DATA_DIR``, else ``../shared/datasets``), or
    ``(None, why)`` when there is none, it lacks a part, or it is the synthetic ``tests/data``."""
    from eval.datasets import DataError, resolve_data_dir
    try:
        root = resolve_data_dir()
    except DataError as exc:
        return None, " ".join(str(exc).split(". The WellPlay data comes from")[0].split())
    if root == TEST_DATA:
        return None, f"the datasets root {root} is the synthetic tests/data"
    missing = [p for p in REAL_PARTS if not (root / p).is_dir()]
    if missing:
        return None, f"the datasets root {root} has no {', '.join(missing)}"
    return root, ""


def require_real_data() -> bool:
    """Whether ``MAS_REQUIRE_DATA`` asks for the real data (any value but "", "0", "false", "no")."""
    return os.environ.get(REQUIRE_ENV, "").strip().lower() not in ("", "0", "false", "no")


def mixed_root(dest: Path, real_root: Path) -> Path:
    """A datasets root at ``dest`` holding :data:`TEST_DATA`'s WellPlay script and word pairs and
    the REAL MAgIC settings of ``real_root`` (symbolic links: nothing is copied, and the MAgIC
    settings are never committed). It has no ``magic/results`` (no paper rows in reports).
    Returns ``dest``."""
    dest.mkdir(parents=True)
    for part in ("wellplay", "whoisspy"):
        (dest / part).symlink_to(TEST_DATA / part, target_is_directory=True)
    (dest / "magic").mkdir()
    (dest / "magic" / "settings").symlink_to(real_root / "magic" / "settings", target_is_directory=True)
    return dest
