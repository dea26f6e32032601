"""One registry of run kinds, shared by the game contract (:mod:`mas_agents.game.contract`) and
the experiments (:mod:`mas_agents.game.experiments`): a kind is registered by importing the module
that defines it, either a built-in one (a ``kind -> module`` table imported on first use) or one
named by an entry point of another installed package.

Everything here is pure Python: importing a module is the only side effect.
"""

from __future__ import annotations

import importlib
import logging
import threading
from importlib.metadata import entry_points
from typing import Generic, Mapping, TypeVar

T = TypeVar("T")
log = logging.getLogger(__name__)


class Registry(Generic[T]):
    """Registered values of one family (games, experiments) by run kind.

    Args:
        what: the family's word in errors (``"game"``).
        builtin: ``{kind: module}``: the modules that register the built-in kinds, in the order
            :meth:`kinds` lists them; each is imported the first time its kind is asked for.
        group: the entry-point group through which another package names its modules.
        example: example kinds for the error of a malformed kind (``"'wis' or 'my_game'"``).

    Attributes:
        loaded: every built-in module and entry point has been imported (a test that adds a
            built-in line sets it back to False, as a new process would start).
    """

    def __init__(self, what: str, builtin: Mapping[str, str], group: str, example: str):
        self.what, self.builtin, self.group, self.example = what, builtin, group, example
        self._items: dict[str, T] = {}
        self._lock = threading.Lock()
        self.loaded = False

    def add(self, kind: str, value: T) -> T:
        """Register ``value`` under ``kind`` (again: replaces it) and return it.

        Raises:
            ValueError: an empty kind, or one that is not a lowercase name of letters, digits,
                ``_`` and ``-`` (a kind names run directories' ``config.json`` and URLs).
        """
        if not kind or not kind.replace("_", "").replace("-", "").isalnum() or kind.lower() != kind:
            raise ValueError(f"{self.what} kind {kind!r}: expected a lowercase name such as {self.example}")
        with self._lock:
            self._items[kind] = value
        return value

    def remove(self, kind: str) -> None:
        """Forget ``kind`` (tests that register a toy kind clean up with it)."""
        with self._lock:
            self._items.pop(kind, None)

    def load_all(self) -> None:
        """Import every built-in module and every entry point of :attr:`group`, once per process
        (until :attr:`loaded` is set back). Another package's entry point that fails to import
        is logged in one warning line naming it and skipped (its kinds are then unknown), so one
        broken plugin neither stops the others nor is retried at every lookup; a built-in
        module that fails to import raises (a bug of this package)."""
        if self.loaded:
            return
        for module in dict.fromkeys(self.builtin.values()):
            importlib.import_module(module)
        for ep in entry_points(group=self.group):
            try:
                importlib.import_module(ep.value.split(":")[0])
            except Exception as exc:          # a plugin's own fault, reported, never ours to raise
                log.warning("%s entry point %s = %s (group %s) failed to import, skipped: %s",
                            self.what, ep.name, ep.value, self.group, " ".join(str(exc).split()))
        self.loaded = True

    def lookup(self, kind: str) -> T | None:
        """The value registered under ``kind``, importing its built-in module (else every module)
        first; None when no module registers it."""
        if kind not in self._items and kind in self.builtin:
            importlib.import_module(self.builtin[kind])
        if kind not in self._items:
            self.load_all()
        return self._items.get(kind)

    def kinds(self) -> list[str]:
        """Every registered kind: the built-ins in :attr:`builtin` order, then the others in
        registration order."""
        self.load_all()
        return [k for k in self.builtin if k in self._items] + [k for k in self._items if k not in self.builtin]

    def items(self) -> dict[str, T]:
        """Every registered value by kind, in :meth:`kinds` order (a copy)."""
        return {k: self._items[k] for k in self.kinds()}
