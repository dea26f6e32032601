"""Every game's :class:`planners.base.GameInfo` by name, for tests that build requests by hand."""

from graphs.magic.rules import GAMES as _MAGIC
from graphs.mmg.rules import GAME as _MMG
from graphs.wis.rules import GAME as _WIS

GAME = {"mmg": _MMG, "wis": _WIS, **_MAGIC}
