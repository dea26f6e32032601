"""``mas doctor``: what this installation is, in plain lines a user can paste into a bug report.

Checks, in order: Python and the packages that shape a run's numbers; whether the installed stack
is the one ``requirements.lock`` pins; the CPU's instruction-set features beside the ones the
llama.cpp build was compiled with; the embedded GGUF and its self-check (:mod:`mas_agents.selfcheck`,
in a subprocess, so a broken build is reported rather than crashing this command); the datasets and
where they were found; Debian's Chromium for the browser tests; and, with ``--model openai:NAME``,
what the endpoint probe sees (structured-output dialect, context window, cached-token reporting).

Exit codes: 0 when everything the README demo needs is there (warnings allowed), 1 when something it
needs is missing or broken (the embedded model, its self-check, the WellPlay script of the demo),
3 when ``--model``'s endpoint answers none of its tries (one ``error:`` line, like every command).

The CLI imports this module at start, so the model layer (``mas_agents.accounting``, ``.llm``,
``.remote``: langchain, the OpenAI SDK) and ``mas_agents.memory.embeddings`` (faiss, numpy) are
imported inside the checks that use them.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any, Optional

import typer

from mas_agents.cli import options
from mas_agents.cli import failure
from mas_agents.embedded import embedded_model_path
from mas_agents.errors import ContextOverflowError, RunStopped
from mas_agents.game.data import ENV_VAR, DataError, resolve_data_dir
from mas_agents.graphs.magic.dataset import setting_ids, setting_path
from mas_agents.graphs.mmg.dataset import find_script, list_scripts
from mas_agents.graphs.wis.dataset import load_pairs
from mas_agents.graphs.magic.events import SCENARIOS
from mas_agents.rundir import llama_build, versions
from mas_agents.selfcheck import CPU_FEATURES, cpu_flags, enabled_features, run_self_check

#: The script the README demo plays (``mas mmg run --script Sin``).
DEMO_SCRIPT = "Sin"
#: Where a source checkout keeps its lock (scripts/setup.sh installs under it).
LOCK_FILE = Path(__file__).resolve().parents[2] / "requirements.lock"
#: A prompt long enough for a server to cache its prefix (about 700 tokens), sent twice.
CACHE_PROBE_TEXT = " ".join(f"Line {i}: the butler carried tea to room {i} at {i % 12 + 1} o'clock." for i in range(60))


class _Report:
    """Lines of ``name: value`` plus the problems (exit 1) and warnings (exit 0) found."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str]] = []
        self.problems: list[str] = []
        self.warnings: list[str] = []
        self.data: dict[str, Any] = {}

    def row(self, name: str, value: str) -> None:
        self.rows.append((name, value))

    def problem(self, text: str) -> None:
        self.problems.append(text)

    def warn(self, text: str) -> None:
        self.warnings.append(text)


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def lock_differences(lock: Path) -> tuple[int, list[str]]:
    """``(packages checked, differences)`` between the installed distributions and ``lock``
    (a ``name==version [; marker]`` constraints file as scripts/lock.sh writes it). Entries whose
    marker does not hold here are skipped; an entry not installed is not a difference (a
    constraint only binds what is installed); a local version label (``2.13.0+cpu``) matches its
    public version.

    Raises:
        OSError: the lock cannot be read.
    """
    from packaging.markers import Marker
    from packaging.utils import canonicalize_name

    checked, diffs = 0, []
    for lineno, raw in enumerate(lock.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        spec, _, marker = line.partition(";")
        m = re.fullmatch(r"([A-Za-z0-9._-]+)(?:\[[^\]]*\])?==([^\s]+)", spec.strip())
        if not m:
            continue
        if marker.strip() and not Marker(marker.strip()).evaluate():
            continue
        name, want = canonicalize_name(m.group(1)), m.group(2)
        have = _version(name)
        if have is None:
            continue
        checked += 1
        if have.split("+")[0] != want.split("+")[0]:
            diffs.append(f"{name} {have} (lock {want})")
    return checked, diffs


def _check_packages(rep: _Report) -> None:
    vers = versions()
    rep.data["versions"] = vers
    rep.row("python", f"{platform.python_version()} ({sys.executable}) on {platform.platform()}")
    rep.row("packages", ", ".join(f"{k} {v}" for k, v in vers.items() if k not in ("python", "llama_cpp_build")))
    if LOCK_FILE.is_file():
        n, diffs = lock_differences(LOCK_FILE)
        rep.data["lock"] = {"file": str(LOCK_FILE), "checked": n, "differences": diffs}
        if diffs:
            rep.row("lock", f"{len(diffs)} of {n} installed packages differ from {LOCK_FILE.name}: " + "; ".join(diffs[:12])
                    + (" ..." if len(diffs) > 12 else ""))
            rep.warn(f"the installed stack differs from {LOCK_FILE.name} in {len(diffs)} packages "
                     "(results may not match the goldens and benchmarks; bash scripts/setup.sh reinstalls the lock)")
        else:
            rep.row("lock", f"all {n} installed packages match {LOCK_FILE}")
    else:
        rep.row("lock", "no requirements.lock (not a source checkout): versions as installed")


def _check_cpu_and_engine(rep: _Report, self_check: bool) -> None:
    name, flags = cpu_flags()
    have = [f for f in CPU_FEATURES if f in flags]
    rep.data["cpu"] = {"model": name, "cores": os.cpu_count(), "features": have, "machine": platform.machine()}
    rep.row("cpu", f"{name or platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
                   f"features: {' '.join(have) or 'none of ' + ' '.join(CPU_FEATURES)}")
    lcp = _version("llama_cpp_python")
    if lcp is None:
        rep.row("llama.cpp", "llama-cpp-python is not installed")
        rep.problem("llama-cpp-python is not installed (bash scripts/setup.sh)")
        return
    build_flags = llama_build()
    how = (f"built by scripts/setup.sh with {build_flags}" if build_flags
           else "not built by scripts/setup.sh (flags unknown: it may be a -march=native build)")
    rep.row("llama.cpp", f"llama-cpp-python {lcp}, {how}")
    try:
        gguf = Path(embedded_model_path())
        rep.row("embedded model", f"{gguf} ({gguf.stat().st_size / 1e6:.0f} MB)")
    except FileNotFoundError as exc:
        rep.row("embedded model", f"missing: {exc}")
        rep.problem(str(exc))
        return
    if not self_check:
        rep.row("self-check", "skipped (--no-self-check)")
        return
    res = run_self_check(str(gguf))
    rep.data["self_check"] = asdict(res)
    rep.row("llama.cpp system info", res.system_info or "(not read: the child died first)")
    built = set(enabled_features(res.system_info).lower().split())
    # llama.cpp names a few features differently from /proc/cpuinfo
    alias = {"sse3": "pni", "avx512": "avx512f", "avx512_vbmi": "avx512vbmi"}
    missing = sorted(f for f in built if f in {*CPU_FEATURES, "sse3", "ssse3", "avx512"} and alias.get(f, f) not in flags)
    if missing and flags:
        rep.warn(f"the llama.cpp build uses {' '.join(missing)}, which this CPU lacks")
    if res.ok:
        rep.row("self-check", f"ok: decoded {' '.join(res.plain.split())!r} and {res.constrained.strip()!r} in {res.seconds:.1f} s")
    else:
        rep.row("self-check", f"FAILED: {res.error}")
        rep.problem(res.error)


def _check_data(rep: _Report, data_dir: Optional[Path]) -> None:
    try:
        root = resolve_data_dir(data_dir)
    except DataError as exc:
        rep.row("datasets", f"not found: {exc}")
        rep.problem("no datasets root (the demo plays a WellPlay script): " + str(exc).split(". ")[0])
        return
    source = ("--data-dir" if data_dir else f"${ENV_VAR}" if os.environ.get(ENV_VAR) else "../shared/datasets beside the repository")
    rep.row("datasets", f"{root} (from {source})")
    found: dict[str, Any] = {"root": str(root)}
    wp = []
    for lang in ("en", "zh"):
        try:
            n = len(list_scripts(root, lang))
        except (DataError, OSError) as exc:
            n = 0
            rep.warn(f"WellPlay {lang}: {exc}")
        wp.append(f"{lang}: {n} scripts")
        found[f"wellplay_{lang}"] = n
    rep.row("  wellplay", ", ".join(wp))
    try:
        find_script(root, DEMO_SCRIPT, "en")
    except (DataError, OSError, ValueError, KeyError) as exc:
        rep.problem(f"the demo's WellPlay script {DEMO_SCRIPT!r} is not found under {root}: {exc}")
    pairs = []
    for lang in ("en", "zh"):
        try:
            pairs.append(f"{lang}: {len(load_pairs(root, lang))} pairs")
        except (OSError, ValueError) as exc:
            pairs.append(f"{lang}: none ({exc})")
            rep.warn(f"Who-is-Spy pairs {lang}: {exc}")
    rep.row("  whoisspy", ", ".join(pairs))
    magic = []
    for sc in SCENARIOS:
        n = sum(1 for i in setting_ids(sc) if setting_path(root, sc, i).is_file())
        magic.append(f"{sc} {n}/{len(setting_ids(sc))}")
        if n < len(setting_ids(sc)):
            rep.warn(f"MAgIC {sc}: {n} of {len(setting_ids(sc))} settings found")
    rep.row("  magic", "settings: " + ", ".join(magic))
    rep.data["datasets"] = found


def _check_embedding_cache(rep: _Report) -> None:
    """Where retrieval vectors are kept between runs (:func:`mas_agents.memory.vector_cache.default_cache_dir`)."""
    from mas_agents.memory.vector_cache import CACHE_ENV, CACHE_FILE, default_cache_dir

    try:
        where = default_cache_dir()
    except RuntimeError as exc:             # no home folder: the runs warn and keep vectors per process
        rep.data["embedding_cache"] = None
        rep.row("embedding cache", f"none: {exc} (set {CACHE_ENV} to a folder, or to off)")
        rep.warn(f"no embedding cache folder: {exc}")
        return
    rep.data["embedding_cache"] = None if where is None else str(where)
    if where is None:
        rep.row("embedding cache", f"off ({CACHE_ENV}={os.environ.get(CACHE_ENV)}): vectors are kept per process")
        return
    try:
        files = [f for f in (where / CACHE_FILE, where / f"{CACHE_FILE}-wal") if f.is_file()]
        size = f"{sum(f.stat().st_size for f in files) / 1e6:.1f} MB" if files else "empty"
    except OSError as exc:
        size = f"unreadable: {exc.strerror or exc}"
        rep.warn(f"embedding cache {where}: {size}")
    rep.row("embedding cache", f"{where} ({size}; {CACHE_ENV}=off to keep vectors per process, "
                               f"delete the folder to empty it)")


def _check_chromium(rep: _Report) -> None:
    exe = "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else shutil.which("chromium")
    if not exe:
        rep.row("chromium", "missing (only the browser tests of mas serve need it: apt-get install chromium)")
        rep.warn("no Chromium: the browser tests cannot run")
        return
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        out = f"does not answer --version ({type(exc).__name__})"
        rep.warn(f"{exe} {out}")
    rep.row("chromium", f"{exe}: {out}")


def _check_endpoint(rep: _Report, spec: str) -> None:
    """Probe ``openai:NAME``: dialect, context window, whether usage reports cached prompt tokens.
    RunStopped / ContextOverflowError propagate (the command ends with one line, exit 3)."""
    from langchain_core.messages import HumanMessage, SystemMessage

    from mas_agents.accounting import AccountedModel
    from mas_agents.call_log import CallRecorder
    from mas_agents.llm import make_chat_model
    from mas_agents.remote.chat import RemoteChat
    from mas_agents.remote.endpoints import endpoint

    try:
        model = make_chat_model(spec, temperature=0.0, max_tokens=8)
    except ValueError as exc:
        failure.fail(str(exc))
    if not isinstance(model, RemoteChat):
        rep.row("endpoint", f"{spec} is not an OpenAI-compatible endpoint (give --model openai:NAME)")
        return
    ep = endpoint(model.openai_api_base)
    report = ep.report(model)
    rep.row("endpoint", f"{report['base_url']} model {model.model_name!r}")
    rep.row("  structured outputs", f"{report['structured']} ({report['structured_probe']})")
    ctx, src = report["context_window"], report["context_window_source"]
    rep.row("  context window", f"{ctx} ({src})" if ctx else src)
    rec = CallRecorder(None)
    am = AccountedModel(model, rec, label=spec, phase="doctor")
    msgs = [SystemMessage(CACHE_PROBE_TEXT), HumanMessage("Say OK.")]
    for i in range(2):
        am.chat(msgs, actor="doctor", purpose=f"cache probe {i + 1}", max_tokens=4)
    first, second = rec.calls()
    if second.cached_tokens is None:
        cached = "not reported (usage has no prompt_tokens_details.cached_tokens)"
    else:
        cached = (f"reported: {second.cached_tokens} of {second.input_tokens} prompt tokens cached on the repeated prompt "
                  f"({first.cached_tokens or 0} on the first)")
    rep.row("  cached tokens", cached)
    rep.row("  latency", f"{first.latency_s:.2f} s, then {second.latency_s:.2f} s for the same {first.input_tokens}-token prompt")
    rep.data["endpoint"] = {**report, "cached_tokens_reported": second.cached_tokens is not None,
                            "cached_tokens": second.cached_tokens, "input_tokens": second.input_tokens}


def doctor(
    model: Optional[str] = typer.Option(None, "--model", help="Also probe this OpenAI-compatible endpoint: openai:NAME "
                                                              "(with $OPENAI_BASE_URL)."),
    data_dir: Optional[Path] = options.DataDir,
    self_check: bool = typer.Option(True, "--self-check/--no-self-check",
                                    help="Load the embedded model and decode a few tokens (a subprocess, ~2 s)."),
    as_json: bool = typer.Option(False, "--json", help="Everything as one JSON object on stdout."),
) -> None:
    """What this installation is: versions, CPU and llama.cpp build, the embedded model's
    self-check, datasets, Chromium, and an endpoint's probe. Paste it into a bug report. Exit 1
    when something the README demo needs is missing."""
    rep = _Report()
    _check_packages(rep)
    _check_cpu_and_engine(rep, self_check)
    _check_data(rep, data_dir)
    _check_embedding_cache(rep)
    _check_chromium(rep)
    stop: str | None = None
    if model:
        try:
            _check_endpoint(rep, model)
        except (RunStopped, ContextOverflowError) as exc:
            stop = " ".join(str(exc).split())
            rep.row("endpoint", f"FAILED: {stop}")
    status = ("ok: the README demo can run" if not rep.problems
              else f"{len(rep.problems)} problem(s): " + " | ".join(rep.problems))
    if stop is not None:
        status += f"; but the endpoint of --model {model} answered none of its tries (the error line below)"
    if as_json:
        print(json.dumps({"rows": dict(rep.rows), "problems": rep.problems, "warnings": rep.warnings,
                          "status": status, **rep.data}, indent=2, default=str))
    else:
        width = max(len(n) for n, _ in rep.rows) + 2
        print("mas doctor (paste this into a bug report)")
        for name, value in rep.rows:
            print(f"{name + ':':<{width}} {value}")
        for w in rep.warnings:
            print(f"{'warning:':<{width}} {w}")
        print(f"{'status:':<{width}} {status}")
    if stop is not None:
        from rich.markup import escape
        failure.console.print(f"[red]error:[/red] {escape(stop)}", soft_wrap=True, markup=True, highlight=False)
        raise typer.Exit(3)
    if rep.problems:
        raise typer.Exit(1)
