"""What the ``mas reproduce`` papers share: the papers' tables as data, the side-by-side table,
the progress line, the protocol-differences list, the report files and the base of each paper's
run configuration (:class:`PaperRun`).

The contract of a paper module ``mas_agents.eval.reproduce.<paper>``:

* a frozen, keyword-only configuration, a subclass of :class:`PaperRun` (itself a
  :class:`mas_agents.game.run_config.RunConfig`), whose recorded fields are what the run
  writes to ``out/config.json`` besides the derived ones (``models``, ...), built from the CLI's
  options by :meth:`PaperRun.from_options` (:func:`mas_agents.eval.reproduce.registry.build` by
  paper name);
* ``check_out(config) -> dict``: the options and ``out`` checked, nothing written;
* ``reproduce(config) -> dict``: plays (or resumes: finished cells are reused) the paper's protocol
  under ``config.out``, writes ``out/config.json`` (``kind: "reproduce"``, ``paper``),
  ``out/result.json`` and ``out/report.md`` (with figures beside it) through :func:`write_report`,
  and returns ``result.json``'s dict. ``limit`` runs the same protocol on the first N
  settings/scripts/games; the report then says it is partial. ``config.tick`` receives one line per
  finished cell (:class:`Progress` makes it).

Paper tables (``papers/<name>.csv``): UTF-8 CSV whose first lines start with ``#`` and name the
source, e.g. ``# source: MAgIC (Xu et al., EMNLP 2024), Table 4``; ``# url: ...``; ``# note: ...``.
Numbers are kept as printed (strings in the CSV, converted by :meth:`PaperTable.number`).
"""

from __future__ import annotations

import csv
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterable, Mapping, Sequence

from mas_agents.game.data import cells_data_files
from mas_agents.game.run_config import NOT_RECORDED, RunConfig
from mas_agents.stats import Estimate
from mas_agents.rundir import RunDir, versions, write_json

PAPERS_DIR = Path(__file__).with_name("papers")
PAPERS = ("magic", "player-star", "wis")


#: The papers' own options (``mas reproduce --conditions`` ...) -> the one paper that takes each.
PAPER_OPTIONS = {"conditions": "magic", "langs": "player-star", "methods": "player-star", "eval_runs": "player-star"}


def check_options(paper: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` (a paper's own options by name, e.g. ``{"langs": "en"}``) if ``paper`` takes
    every one of them.

    Raises:
        ValueError: an option of another paper (``--langs: only for 'mas reproduce player-star',
            not magic``) or no option of ``mas reproduce`` at all."""
    for key in options:
        only = PAPER_OPTIONS.get(key)
        if only is None:
            raise ValueError(f"{key}: not an option of mas reproduce (choose from others, limit, seed, "
                             f"{', '.join(PAPER_OPTIONS)})")
        if only != paper:
            raise ValueError(f"--{key.replace('_', '-')}: only for 'mas reproduce {only}', not {paper}")
    return dict(options)


@dataclass(frozen=True, kw_only=True)
class PaperRun(RunConfig):
    """The run configuration every paper's shares (issue 51 item 5): where it runs and the hooks,
    none of them recorded in ``config.json``. Each paper's subclass adds its recorded fields
    (those of its ``config.json``), normalised and checked on construction (a bad value raises
    ``ValueError`` naming the option, as ``mas reproduce`` spells it).

    Attributes:
        data_root: the datasets root (``wellplay/``, ``whoisspy/``, ``magic/``).
        out: the run directory (rerun with the same configuration to resume).
        tick: receives one progress line per finished cell (the CLI prints it on stderr).
        estimate: the run's cost estimate made before it
            (:func:`mas_agents.eval.reproduce.estimate.estimate_for_run`), kept as
            ``out/estimate.json`` and set beside the actual calls and tokens in the report.
    """

    KIND: ClassVar[str] = "reproduce"
    #: The paper's name as ``mas reproduce`` and ``config.json`` spell it.
    PAPER: ClassVar[str] = ""

    data_root: Path = field(metadata=NOT_RECORDED)
    out: Path = field(metadata=NOT_RECORDED)
    tick: Callable[[str], None] | None = field(default=None, metadata=NOT_RECORDED)
    estimate: dict | None = field(default=None, metadata=NOT_RECORDED)

    def __post_init__(self) -> None:
        object.__setattr__(self, "data_root", Path(self.data_root))
        object.__setattr__(self, "out", Path(self.out))

    @classmethod
    def from_options(cls, *, data_root: Path, out: Path, model: Any, others: str | None = None,
                     limit: int | None = None, seed: int = 0, options: Mapping[str, Any] | None = None) -> "PaperRun":
        """The configuration from ``mas reproduce``'s options (``options``: the paper's own,
        :data:`PAPER_OPTIONS`); each paper says how.

        Raises:
            ValueError: an option the paper does not take or a bad value (named)."""
        raise NotImplementedError(cls.__name__)

    def as_options(self) -> dict[str, Any]:
        """The inverse of :meth:`from_options`: ``{"model", "others", "limit", "seed", "options"}``
        as the command line gives them (``others`` None and ``options`` left out where they are the
        protocol's default); what an estimate is keyed and printed by."""
        raise NotImplementedError(type(self).__name__)


class PaperDataError(ValueError):
    """A paper table that is missing or malformed (the message names the file and line)."""


@dataclass(frozen=True)
class PaperTable:
    """One published table: its rows as printed and where it comes from.

    Attributes:
        name: file stem under ``papers/`` (e.g. ``magic_table4``).
        source: the ``# source:`` line (paper, version, table number).
        meta: every ``# key: value`` header line (``source``, ``url``, ``note``...).
        columns: the CSV header.
        rows: one dict per row, values as printed (``""`` where the paper prints nothing).
    """

    name: str
    source: str
    meta: dict[str, str]
    columns: list[str]
    rows: list[dict[str, str]] = field(default_factory=list)

    def row(self, **match: str) -> dict[str, str]:
        """The one row whose columns equal ``match``.

        Raises:
            KeyError: no row or more than one row matches (names the table and the match).
        """
        hits = [r for r in self.rows if all(r.get(k) == v for k, v in match.items())]
        if len(hits) != 1:
            raise KeyError(f"{self.name}.csv: {len(hits)} rows match {match}")
        return hits[0]

    @staticmethod
    def number(text: str | None) -> float | None:
        """``"63.5"`` -> 63.5; ``""``/``"-"``/``None`` -> None; a trailing ``%`` is dropped.

        Raises:
            ValueError: text that is not a number."""
        if text is None:
            return None
        t = text.strip().rstrip("%").strip()
        if t in ("", "-", "–"):
            return None
        return float(t)


def load_table(name: str, papers_dir: Path = PAPERS_DIR) -> PaperTable:
    """Read ``papers/<name>.csv``.

    Raises:
        PaperDataError: the file is missing, has no ``# source:`` line, no header, or a row whose
            cell count differs from the header (named by file and line).
    """
    path = Path(papers_dir) / f"{name}.csv"
    if not path.exists():
        raise PaperDataError(f"{path}: paper table not found")
    meta: dict[str, str] = {}
    body: list[tuple[int, str]] = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("#"):
            key, _, val = line[1:].partition(":")
            meta[key.strip()] = (meta.get(key.strip(), "") + " " + val.strip()).strip()
        elif line.strip():
            body.append((i, line))
    if "source" not in meta:
        raise PaperDataError(f"{path}: no '# source:' line naming the paper and table")
    if not body:
        raise PaperDataError(f"{path}: no header row")
    reader = list(csv.reader([b for _, b in body]))
    columns = reader[0]
    rows = []
    for (lineno, _), cells in zip(body[1:], reader[1:]):
        if len(cells) != len(columns):
            raise PaperDataError(f"{path}:{lineno}: {len(cells)} cells, the header has {len(columns)}")
        rows.append(dict(zip(columns, cells)))
    return PaperTable(name=name, source=meta["source"], meta=meta, columns=columns, rows=rows)


def source_line(table: PaperTable) -> str:
    """``*Paper numbers: <source>* (papers/<name>.csv)`` for under a report table."""
    return f"*Paper numbers: {table.source} (`eval/reproduce/papers/{table.name}.csv`).*"


def fmt_estimate(est: Estimate | dict | None, *, scale: float = 100, digits: int = 1, unit: str = "",
                 n_unit: str = "") -> str:
    """An estimate as ``"41.2 [35.0, 47.9] (n=6)"``, or with ``n_unit`` (what n counts, plural)
    ``"41.2 [35.0, 47.9] (n=6 settings)"`` (:meth:`Estimate.fmt`); a dict is read as
    :class:`Estimate` fields; ``None`` prints ``"-"``."""
    if est is None:
        return "-"
    if isinstance(est, dict):
        est = Estimate(**{k: est.get(k) for k in ("mean", "low", "high", "n", "level", "method")
                          if k in est or k in ("mean", "low", "high", "n")})
    return est.fmt(scale=scale, digits=digits, unit=unit, n_unit=n_unit)


def md_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    """A Markdown table (lines); ``None`` cells print ``-``; ``|`` in a cell is escaped."""
    def cell(x: Any) -> str:
        return "-" if x is None else str(x).replace("|", "\\|")
    lines = ["| " + " | ".join(map(cell, header)) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
    return lines


def claim(text: str, holds: bool | None, evidence: str) -> str:
    """A paper's qualitative claim as one list item: ``holds`` / ``does not hold`` /
    ``cannot tell`` (``None``: the run has too little data), with the evidence."""
    verdict = {True: "holds", False: "does not hold", None: "cannot tell"}[holds]
    return f"- {text}: **{verdict}** on this run ({evidence})."


def differences(items: Sequence[str]) -> list[str]:
    """The "Protocol differences" section: what the paper did that this run could not or did not."""
    return ["## Protocol differences", "",
            *[f"- {t}" for t in items], ""]


def partial_note(limit: int | None, done: int, planned_full: int, what: str) -> list[str]:
    """A warning paragraph when ``--limit`` cut the protocol (``[]`` for a full run)."""
    if limit is None:
        return []
    return [f"> **Partial run** (`--limit {limit}`): {done} of the protocol's {planned_full} {what}. "
            "The numbers below are a smoke test of the pipeline, not a reproduction.", ""]


class Progress:
    """One line per finished cell with an estimate of the model calls still to make.

    ``Progress(total, say, free=k)``; call ``done(label, calls, free=...)`` after each cell with
    the calls that cell made; the estimate is the mean calls of the cells played here (those that
    made calls) × the cells left that make calls (``?`` until such a cell has finished). A reused
    cell (0 calls: finished by an earlier run) is not in the mean: counted there, it pulled the
    mean down, and the estimate rose as played cells finished. ``free``: how many of the ``total``
    cells never call a model (PLAYER*'s chance lines), each finished with ``done(..., free=True)``:
    they are not cells left to pay for (the last PLAYER* cells said "~154 model calls left" when
    none were). ``say`` gets the line (the CLI prints it on stderr).

    The estimate never rises (issue 57, E10): cells of one protocol differ (a PLAYER* game cell
    makes several times the calls of an evaluation-only one), so the mean rose when a dearer
    cell finished and "~N left" went up mid-run. Each estimate is the smaller of the mean's and
    the last one shown (fewer cells are left than then), so it only falls, and it is 0 once no
    cell that makes calls is left.
    """

    def __init__(self, total: int, say: Callable[[str], None] | None, paper: str = "", free: int = 0) -> None:
        self.total, self.say, self.paper, self.free = total, say, paper, free
        self.finished, self.played, self.calls, self.start = 0, 0, 0, time.monotonic()
        self.free_done = 0
        #: the estimate last shown (None: "?" so far)
        self.left_estimate: int | None = None

    def done(self, label: str, calls: int = 0, free: bool = False) -> None:
        """Count one finished cell that made ``calls`` model calls (0 for a reused cell);
        ``free``: a cell that never calls a model."""
        self.finished += 1
        self.free_done += bool(free)
        self.played += calls > 0
        self.calls += calls
        left = (self.total - self.free) - (self.finished - self.free_done)
        if self.calls:
            by_mean = round(self.calls / self.played * max(left, 0))
            self.left_estimate = (by_mean if self.left_estimate is None
                                  else min(by_mean, self.left_estimate))
        est = "?" if self.left_estimate is None else f"~{self.left_estimate}"
        if self.say:
            self.say(f"{self.paper + ': ' if self.paper else ''}cell {self.finished}/{self.total} done ({label}); "
                     f"{est} model calls left, {(time.monotonic() - self.start) / 60:.1f} min")


def write_report(out: Path, *, paper: str, config: dict, result: dict, markdown: str) -> None:
    """Write ``config.json`` (``kind: "reproduce"``), ``result.json`` and ``report.md`` in ``out``
    (atomically each), the files ``mas serve`` reads for a reproduce run. ``config.json`` also
    records ``data_files``: the union of the dataset files the run's cells recorded
    (:func:`mas_agents.game.data.cells_data_files`; left out when they read none)."""
    out.mkdir(parents=True, exist_ok=True)
    files = cells_data_files(out)
    RunDir(out).write_config({"kind": "reproduce", "paper": paper, **config,
                                     **({"data_files": files} if files else {}), "versions": versions()})
    RunDir(out).write_result({"kind": "reproduce", "paper": paper, **result})
    tmp = out / "report.md.tmp"
    tmp.write_text(markdown, encoding="utf-8")
    tmp.replace(RunDir(out).report)


# ------------------------------------------------------------ estimate vs actual (mas_agents.eval.reproduce.estimate)


def price(tokens_in: int, tokens_out: int, price_in: float, price_out: float) -> float:
    """USD at ``price_in`` / ``price_out`` USD per million prompt / completion tokens."""
    return tokens_in / 1e6 * price_in + tokens_out / 1e6 * price_out


def save_estimate(out: Path, est: dict) -> None:
    """Keep ``est`` (:func:`mas_agents.eval.reproduce.estimate.estimate`) as ``out/estimate.json`` (the run's own
    folder, after its check)."""
    write_json(Path(out) / "estimate.json", {k: v for k, v in est.items() if k not in ("price_in", "price_out")})


def versus_actual(est: dict, actual: dict) -> dict:
    """Estimate vs actual (issue 47 item 4): ``{"rows": [{"what", "key", "estimate", "actual", "ratio"}],
    "tokenizer", "price_in", "price_out"}``
    for calls, prompt tokens and completion tokens (ratio = actual / estimate, None when the
    estimate is 0)."""
    rows = []
    for key, what in (("calls", "model calls"), ("input_tokens", "prompt tokens"),
                      ("output_tokens", "completion tokens")):
        e, a = int(est["total"][key]), int(actual.get(key) or 0)
        rows.append({"what": what, "key": key, "estimate": e, "actual": a, "ratio": (a / e) if e else None})
    return {"rows": rows, "tokenizer": est.get("tokenizer"), "price_in": est.get("price_in", 0.0),
            "price_out": est.get("price_out", 0.0)}


def versus_lines(v: dict) -> list[str]:
    """The report's "Estimate vs actual" section (:func:`versus_actual`)."""
    rows = [[r["what"], r["estimate"], r["actual"], "-" if r["ratio"] is None else f"{100 * (r['ratio'] - 1):+.0f} %"]
            for r in v["rows"]]
    lines = ["## Estimate vs actual", "",
             "Before it ran, this run estimated its cost with a dry run of the same protocol on a fake model "
             "(`mas reproduce ... --estimate`, eval/reproduce/estimate.py); below, what it actually used.", ""]
    lines += md_table(["", "estimate", "actual", "actual vs estimate"], rows)
    pi, po = v.get("price_in") or 0.0, v.get("price_out") or 0.0
    if pi or po:
        e = {r["key"]: r["estimate"] for r in v["rows"]}
        a = {r["key"]: r["actual"] for r in v["rows"]}
        lines += ["", f"At {pi:g} / {po:g} USD per million prompt / completion tokens: estimate "
                  f"{price(e['input_tokens'], e['output_tokens'], pi, po):.2f} USD, actual "
                  f"{price(a['input_tokens'], a['output_tokens'], pi, po):.2f} USD."]
    return lines + ["", f"Tokens of the estimate counted with {v.get('tokenizer')}.", ""]
