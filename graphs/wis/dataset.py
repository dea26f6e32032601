"""Who-is-Spy word pairs: ``<data>/whoisspy/pairs_<lang>.jsonl`` (``whoisspy/README`` of the
datasets says where they come from; one ``{"civilian": word, "spy": word, ...}`` object per line;
fields other than the two words are not read)."""

from __future__ import annotations

from pathlib import Path

from mas_agents.game.data import note_file
from mas_agents.rundir import read_jsonl


class Pair(dict):
    """One word pair, ``{"civilian": word, "spy": word}`` (a plain ``dict`` to every reader and to
    JSON), that also says which file it was read from: ``data_files``, ``{"whoisspy/pairs_<lang>.jsonl":
    SHA-256 hex}`` (:mod:`mas_agents.game.data`), so the game it is played in records the file
    in ``config.json``. A copy (``dict(pair)``) is a pair given by hand: no file."""

    def __init__(self, civilian: str, spy: str, data_files: dict[str, str] | None = None) -> None:
        super().__init__(civilian=civilian, spy=spy)
        self.data_files = dict(data_files or {})


def load_pairs(data_root: Path, lang: str = "en") -> list[dict[str, str]]:
    """The word pairs of ``lang`` as ``[{"civilian": w, "spy": w2}, ...]`` in file order (each a
    :class:`Pair` naming the pairs file and its SHA-256).

    Raises:
        FileNotFoundError: the pairs file is missing (its path is named).
        ValueError: ``lang`` is not a language of the game (en or zh, :func:`mas_agents.graphs.wis.rules.check_lang`);
            a line that is not JSON or lacks ``civilian``/``spy`` (file and line named).
    """
    from mas_agents.graphs.wis.rules import check_lang
    check_lang(lang)
    path = Path(data_root) / "whoisspy" / f"pairs_{lang}.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"Who-is-Spy word pairs not found: {path}")
    files: dict[str, str] = {}
    note_file(files, path, Path(data_root), path.read_bytes())
    out: list[dict[str, str]] = []
    for i, row in read_jsonl(path):
        if not isinstance(row, dict) or not str(row.get("civilian", "")).strip() or not str(row.get("spy", "")).strip():
            raise ValueError(f"{path}:{i}: needs non-empty 'civilian' and 'spy' fields")
        out.append(Pair(row["civilian"].strip(), row["spy"].strip(), files))
    if not out:
        raise ValueError(f"{path}: no word pairs")
    return out
