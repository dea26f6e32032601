"""What a run directory records about its configuration and its models, and the one check that a
run into a directory that already holds one is the same run (issue 46).

**The models** (the run-record contract, docs/reference/run-files.md): every ``config.json`` says
which models the seats *actually* used, not only the ``--model`` default:

* ``models``: the sorted distinct model specs of the run's seats (for an experiment run, the union
  over its cells), e.g. ``["local", "openai:stub"]``;
* ``seat_models`` (single games): ``{seat name as the events name it: model spec}``;
* ``model``: the one model when ``models`` has one entry, else ``", ".join(models)``;
* ``default_model``: the ``--model`` given (unused when every seat names its model).

A seat's model spec is :func:`seat_model` of its agent spec: the ``@MODEL`` of ``BLOCKS@MODEL``,
else the default; a WiS-protocol agent (a URL) is recorded as its URL and a person's seat as
``human``, since no model of ours plays them. Readers of runs written before ``models`` existed
fall back to ``[config["model"]]`` (:func:`recorded_models`).

**The configuration** of a run is every field of its ``config.json`` except:

* :data:`NOT_CONFIGURATION`: what may differ between two invocations of the same run: package
  ``versions`` and the ``events_format`` of the code that wrote it, the embedded engine's
  ``prefix_cache_mb`` (what is kept between calls, not what is played), the ``endpoints`` a server reported (probed anew each time), ``record_prompts``
  (what is kept, not what is played), the ``executor`` record, the ``command`` line as typed,
  the ``data_dir`` path (the data are named by their own fields: script, pairs, settings), and
  ``model`` / ``default_model`` (the default matters only through the models the seats used,
  ``models`` and ``seat_models``, which are compared);
* the fields a runner names as ``may_differ``: the ones it extends a run by (more methods,
  scripts or seeds of ``mas wellplay compare``; more scenarios or settings of ``mas magic run``;
  more benches of ``mas ablate``); their finished cells are reused either way;
* a field only one side has (a ``config.json`` written before the field existed).

``data_files`` (``{path relative to the datasets root: SHA-256}`` of the dataset files the run
read, :mod:`mas_agents.game.data`) *is* compared: a WellPlay script, a MAgIC setting or a
pairs file whose bytes changed makes another game (other prompts, answer keys, payoffs, draws),
so a finished run is not reused for it nor an unfinished one resumed with it; the first file
that differs is named (``data_files.<path>``). Its location (``data_dir``) is not compared, the
paths being relative to it. A run that read no file, or was written before the field, has none.

A runner may compare one of :data:`NOT_CONFIGURATION` after all (its ``ignore``): a tournament
and a spy experiment compare ``default_model`` (the tournament id hashes it), ``mas wellplay
compare`` too (every seat and evaluation runs it, and its ``models`` follow the methods, which
may differ), and ``mas reproduce`` compares ``model``, there the model under test.

A stored ``config.json`` without ``models`` (written before the contract) is compared through
its ``model``, which then was the default: against ``default_model``.

:func:`check_same_run` is what every runner calls before it writes anything: a directory with a
finished run of the same configuration is reused (a single game or evaluation returns its
``result.json``; a many-cell run skips its finished cells); one with another configuration is
refused with :class:`RunConflict`, naming the first field that differs; nothing is overwritten.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Mapping

from mas_agents.rundir import RunConflict  # noqa: F401  (defined with marks_run, which raises it too)
from mas_agents.rundir import CHECKPOINTS_FILE, EVENTS_FILE, RESULT_FILE, RunDir

#: Fields of ``config.json`` that are not part of a run's configuration (see the module text).
NOT_CONFIGURATION = frozenset({"versions", "events_format", "endpoints", "record_prompts", "executor", "command",
                               "data_dir", "model", "default_model", "prefix_cache_mb"})


def seat_model(spec: str, default: Any) -> str:
    """The model spec a seat with agent spec ``spec`` runs: ``@MODEL`` of ``BLOCKS@MODEL``, else
    ``default`` as :func:`mas_agents.model_specs.spec_text` writes it; a URL (a WiS-protocol agent) as it
    is, and ``human`` for a person's seat.

    ``seat_model("plain@openai:m", "local") == "openai:m"``; ``seat_model("plain", "local") == "local"``.

    Raises:
        ValueError: an empty model after ``@`` (:func:`mas_agents.specs.split_model`).
    """
    from mas_agents.game.human import HUMAN
    from mas_agents.model_specs import spec_text
    from mas_agents.specs import is_remote, split_model
    if spec == HUMAN or is_remote(spec):
        return spec
    return spec_text(split_model(spec)[1] or default)


def model_fields(models: Iterable[str], default: Any, seat_models: Mapping[str, str] | None = None) -> dict:
    """The model fields of a ``config.json``: ``{"model", "models", ["seat_models",] "default_model"}``.

    Args:
        models: the model specs the seats used (any order, repeats allowed).
        default: the ``--model`` given (a spec string, or a chat-model object: its class name).
        seat_models: seat name -> model spec, for a single game (None: not written).
    """
    from mas_agents.model_specs import spec_text
    ms = sorted({str(m) for m in models})
    out: dict[str, Any] = {"model": ms[0] if len(ms) == 1 else ", ".join(ms), "models": ms}
    if seat_models is not None:
        out["seat_models"] = dict(seat_models)
    out["default_model"] = spec_text(default)
    return out


def recorded_models(config: Mapping[str, Any]) -> list[str]:
    """The models a stored ``config.json`` says its seats used: ``models``, else (a run written
    before the contract) ``[config["model"]]``, else ``[]``."""
    if isinstance(config.get("models"), list):
        return [str(m) for m in config["models"]]
    return [str(config["model"])] if config.get("model") else []


def _plain(value: Any) -> Any:
    """``value`` as ``config.json`` stores it (tuples as lists, other objects as ``str``)."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def _first_difference(stored: Any, asked: Any, path: str) -> tuple[str, Any, Any] | None:
    if isinstance(stored, dict) and isinstance(asked, dict):
        for k in asked:
            if k in stored:
                d = _first_difference(stored[k], asked[k], f"{path}.{k}")
                if d:
                    return d
        return None
    return None if stored == asked else (path, stored, asked)


def config_difference(stored: Mapping[str, Any], asked: Mapping[str, Any], *, may_differ: Iterable[str] = (),
                      ignore: Iterable[str] = NOT_CONFIGURATION) -> tuple[str, Any, Any] | None:
    """The first field (in ``asked``'s order; dotted for a nested one) whose value differs
    between a stored ``config.json`` and the configuration asked for, as ``(field, stored,
    asked)``; None when they describe the same run (see the module text for what is compared)."""
    asked = _plain(dict(asked))
    skip = set(ignore) | set(may_differ)
    if "models" in asked and "models" not in stored and stored.get("model") is not None and "default_model" in asked:
        if stored["model"] != asked["default_model"]:   # a config.json from before the contract
            return "model", stored["model"], asked["default_model"]
    for k, v in asked.items():
        if k in skip or k not in stored:
            continue
        d = _first_difference(stored[k], v, k)
        if d:
            return d
    return None


def check_same_run(out: Path, config: Mapping[str, Any], *, may_differ: Iterable[str] = (),
                   ignore: Iterable[str] = NOT_CONFIGURATION) -> dict | None:
    """Refuse to write the run ``config`` into ``out`` when ``out/config.json`` holds another.

    Args:
        out: the run directory (it need not exist).
        config: the ``config.json`` the run would write (values as JSON will store them).
        may_differ: fields the runner extends a run by (see the module text).
        ignore: fields that are no part of the configuration (default :data:`NOT_CONFIGURATION`).

    Returns:
        The stored ``config.json`` when it describes the same run, None when there is none.

    Raises:
        RunConflict: a field differs; the message names the file, the field and both values.
        ValueError: ``out/config.json`` is not valid JSON (:func:`mas_agents.rundir.read_json`).
    """
    from mas_agents.rundir import read_json
    path = RunDir(out).config
    if not path.is_file():
        return None
    stored = read_json(path)
    if not isinstance(stored, dict):
        raise RunConflict(f"{path}: not a run's config.json (a JSON object); choose another --out")
    d = config_difference(stored, config, may_differ=may_differ, ignore=ignore)
    if d:
        field, old, new = d
        _drop_own_marker(Path(out))
        raise RunConflict(f"{path}: field {field!r} is {old!r} but this run asks for {new!r}; use another --out "
                          f"or the same settings to reuse or resume the run there (a run is never overwritten)")
    return stored


def _drop_own_marker(out: Path) -> None:
    """Undo the process marker this process's runner has just put in ``out``
    (:func:`mas_agents.rundir.marks_run`), so that a refused run leaves the directory as it was:
    the marker that was there before (a stopped run's ``stopped`` and ``argv``) is written back,
    none is removed (:func:`mas_agents.rundir.restore_run_marker`)."""
    from mas_agents.rundir import restore_run_marker
    restore_run_marker(out)


def holds_record(out: Path) -> bool:
    """Whether ``out`` holds a played (or playing) run: one of :data:`RECORD_FILES` beside its
    ``config.json``. A directory with only a ``config.json`` (a run refused before its first move,
    e.g. a missing model file) holds nothing to keep, so a corrected rerun may write over it."""
    out = Path(out)
    return RunDir(out).config.is_file() and any((out / n).exists() for n in RECORD_FILES)


#: The files that make a directory hold a run (:func:`holds_record`): a result, a game's events or
#: checkpoint, an evaluation's answers (``answered.jsonl``: those saved as they come, issue 47).
RECORD_FILES = (RESULT_FILE, EVENTS_FILE, CHECKPOINTS_FILE, "answers.jsonl", "answered.jsonl")
