"""One typed run configuration per run kind (issue 51 item 5): the contract the runners share.

A run kind (a WellPlay evaluation, a comparison, an ablation, a Who-is-Spy tournament, a MAgIC
bench, a reproduction, ...) declares one frozen dataclass, a subclass of :class:`RunConfig`,
beside its runner. The CLI builds it once from its options, the Python API from its keyword
arguments; the runner takes it instead of a long parameter list; what it writes to
``config.json`` is :meth:`RunConfig.record`, and a resume or ``mas serve`` reads it back with
:meth:`RunConfig.from_record` (or :meth:`RunConfig.load` from a run directory).

Fields and ``config.json``: a field is recorded under its own name unless its metadata says
``record=False`` (a model *object*, a progress callback, an output folder: what is not the
configuration or cannot be written as JSON); ``Path`` values are written as strings and tuples as
lists, and are converted back by :meth:`RunConfig.from_record` from the field's annotation.
Keys of ``config.json`` that are not fields (the run-record contract's ``models``,
``versions``, ...: :mod:`mas_agents.game.record`) are ignored when reading, so one
``config.json`` holds both.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from pathlib import Path
from typing import Any, ClassVar, Mapping, TypeVar

from mas_agents.rundir import RunDir

C = TypeVar("C", bound="RunConfig")

#: metadata of a field that is not written to config.json (``field(default=None, metadata=NOT_RECORDED)``)
NOT_RECORDED = types.MappingProxyType({"record": False})


def _jsonable(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


def _convert(value: Any, hint: Any) -> Any:
    """``value`` read from JSON, brought back to the field's annotation ``hint`` (Path, tuple,
    Optional of those); anything else as read."""
    if value is None:
        return None
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(hint):
            if arg is not type(None):
                return _convert(value, arg)
    if hint is Path:
        return Path(value)
    if origin is tuple and isinstance(value, list):
        args = typing.get_args(hint)
        inner = args[0] if args else Any
        return tuple(_convert(v, inner) for v in value)
    return value


def ordered(config: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """``config`` with the ``keys`` it has first, in that order, then its other keys in their
    order: a runner that adds derived keys (``script_id``, ``scripts``, ``model``) to
    :meth:`RunConfig.record` writes them where its ``config.json`` has always had them."""
    return {**{k: config[k] for k in keys if k in config}, **{k: v for k, v in config.items() if k not in keys}}


@dataclasses.dataclass(frozen=True, kw_only=True)
class RunConfig:
    """The base of every run kind's configuration (a frozen, keyword-only dataclass).

    Subclasses set :attr:`KIND` (the run kind, as ``config.json`` names it where it does) and
    declare their fields with defaults as the CLI's; a field not written to ``config.json`` has
    ``metadata=NOT_RECORDED``.
    """

    KIND: ClassVar[str] = ""

    def record(self) -> dict[str, Any]:
        """The recorded fields as JSON values (``{name: value}``, in declaration order)."""
        return {f.name: _jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)
                if f.metadata.get("record", True)}

    @classmethod
    def from_record(cls: type[C], record: Mapping[str, Any], **extra: Any) -> C:
        """The configuration a ``config.json`` (or :meth:`record`) holds, plus ``extra`` fields
        (the ones not recorded, e.g. a model object). Keys that are not fields are ignored.

        Raises:
            ValueError: a required field is missing from both ``record`` and ``extra``, naming it.
        """
        hints = typing.get_type_hints(cls)
        kw: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            if f.name in extra:
                kw[f.name] = extra[f.name]
            elif f.name in record and f.metadata.get("record", True):
                kw[f.name] = _convert(record[f.name], hints.get(f.name, Any))
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ValueError(f"{cls.__name__}: the record has no field {f.name!r}")
        return cls(**kw)

    @classmethod
    def load(cls: type[C], run_dir: Path, **extra: Any) -> C:
        """:meth:`from_record` of ``run_dir/config.json``.

        Raises:
            FileNotFoundError: no ``config.json`` in ``run_dir``.
            ValueError: it is not JSON, or lacks a required field (naming the file).
        """
        path = RunDir(run_dir).config
        try:
            rec = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from None
        try:
            return cls.from_record(rec, **extra)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None

    def replace(self: C, **changes: Any) -> C:
        """A copy with ``changes`` (:func:`dataclasses.replace`)."""
        return dataclasses.replace(self, **changes)
