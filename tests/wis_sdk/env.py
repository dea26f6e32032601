"""The SDK's own virtualenv: built once, cached, shared by every test that runs an SDK agent.

``spy-agent-build-sdk==0.0.29`` pins ``FastAPI==0.110.1``, ``uvicorn==0.29.0`` and
``langchain==0.0.291`` (its wheel metadata), which clash with our FastAPI and langchain, so it
cannot be installed into our venv. :func:`ensure_sdk_env` builds a separate venv with it:

* where: ``$MAS_WIS_SDK_CACHE`` if set, else ``$XDG_CACHE_HOME/mas-agents`` (else
  ``~/.cache/mas-agents``), then ``wis-sdk-<version>/py<X.Y>-<hash>/``; the hash is of
  ``sdk-constraints.txt`` (the exact distributions installed), so editing that file rebuilds.
* ``$MAS_WIS_SDK_VENV`` points at a ready venv instead (checked, never modified).
* a build runs under a file lock (parallel test processes build once) and counts as done only
  when its marker ``mas-wis-sdk.json`` is written, after the SDK imported; a half-built venv
  found later is removed and rebuilt.

Skips and failures: the test is *skipped* only when no package registry can be reached (a quick
``pip download --no-deps`` of the SDK fails with a connection error), the one case a machine
cannot help. Anything else (the SDK version gone from the index, a failed install, an SDK that
does not import) *fails* the test with pip's output.

``python -m tests.wis_sdk.env`` builds the venv (if needed) and prints its python.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import venv
from dataclasses import dataclass
from pathlib import Path

import pytest

SDK_DIST = "spy-agent-build-sdk"
SDK_VERSION = "0.0.29"
SDK_REQUIREMENT = f"{SDK_DIST}=={SDK_VERSION}"
CONSTRAINTS = Path(__file__).with_name("sdk-constraints.txt")
MARKER = "mas-wis-sdk.json"
#: modules the SDK agent script imports (checked after the install, and on a cache hit)
SDK_MODULES = ("agent_build_sdk.sdk.agent", "agent_build_sdk.server.server", "agent_build_sdk.model.model",
               "agent_build_sdk.memory.memory", "uvicorn")
PROBE_TIMEOUT_S = 60
INSTALL_TIMEOUT_S = 900

#: pip output that means the registry could not be reached (urllib3 / socket errors pip reports)
_UNREACHABLE = ("NewConnectionError", "ConnectTimeoutError", "Failed to establish a new connection",
                "Temporary failure in name resolution", "Name or service not known", "Network is unreachable",
                "No route to host", "Connection refused", "ProxyError", "Max retries exceeded",
                "ReadTimeoutError", "Read timed out", "Connection reset by peer", "ConnectionResetError")


@dataclass(frozen=True)
class SdkEnv:
    """A ready SDK venv.

    Attributes:
        root: the venv directory.
        python: its interpreter.
        built_seconds: wall time of the build this call did, or None (cached / given).
        info: the marker's content (SDK version, ``pip freeze``, build time, python).
    """

    root: Path
    python: Path
    built_seconds: float | None
    info: dict


def cache_dir() -> Path:
    """Where SDK venvs are cached (see the module docstring)."""
    if os.environ.get("MAS_WIS_SDK_CACHE"):
        return Path(os.environ["MAS_WIS_SDK_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "mas-agents"


def env_dir() -> Path:
    """The venv directory for this SDK version, this python (X.Y) and these constraints."""
    digest = hashlib.sha256(CONSTRAINTS.read_bytes()).hexdigest()[:10]
    return cache_dir() / f"wis-sdk-{SDK_VERSION}" / f"py{sys.version_info[0]}.{sys.version_info[1]}-{digest}"


def _python(root: Path) -> Path:
    return root / "bin" / "python"


def _run(cmd: list[str], timeout: float) -> subprocess.CompletedProcess:
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1", "PYTHONNOUSERSITE": "1"}
    env.pop("PYTHONPATH", None)
    try:
        return subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = (exc.stderr or b"").decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        return subprocess.CompletedProcess(cmd, returncode=-9, stdout=out,
                                           stderr=err + f"\n(timed out after {timeout:g} s: Read timed out)")


def _tail(proc: subprocess.CompletedProcess, lines: int = 25) -> str:
    text = (proc.stdout or "") + (proc.stderr or "")
    return "\n".join(text.strip().splitlines()[-lines:])


def _unreachable_line(text: str) -> str | None:
    """pip's first line that says the registry could not be reached, or None."""
    for line in text.splitlines():
        if any(marker in line for marker in _UNREACHABLE):
            return line.strip()[:300]
    return None


#: why the registry was found unreachable in this process (later calls skip without a new probe)
_UNREACHABLE_SEEN: list[str] = []


def _skip_unreachable(why: str) -> None:
    _UNREACHABLE_SEEN.append(why)
    pytest.skip(why)


def _check_imports(python: Path) -> subprocess.CompletedProcess:
    code = ("import importlib, importlib.metadata as m\n"
            f"for mod in {SDK_MODULES!r}: importlib.import_module(mod)\n"
            f"print(m.version({SDK_DIST!r}))")
    return _run([str(python), "-c", code], timeout=300)


def _probe_registry(python: Path) -> None:
    """Skip the test when no registry answers; fail when one answers but has no such SDK."""
    with tempfile.TemporaryDirectory(prefix="wis-sdk-probe-") as tmp:
        proc = _run([str(python), "-m", "pip", "download", "--no-deps", "--no-cache-dir", "--retries", "1",
                     "--timeout", "20", "-d", tmp, SDK_REQUIREMENT], timeout=PROBE_TIMEOUT_S)
    if proc.returncode == 0:
        return
    line = _unreachable_line((proc.stdout or "") + (proc.stderr or ""))
    if line:
        _skip_unreachable(f"no package registry reachable to install {SDK_REQUIREMENT} (pip download: {line})")
    pytest.fail(f"a registry answered but {SDK_REQUIREMENT} could not be downloaded:\n{_tail(proc)}", pytrace=False)


def _build(root: Path) -> dict:
    """Create the venv at ``root`` and install the SDK into it; returns the marker content."""
    if root.exists():
        shutil.rmtree(root)            # a half-built venv (no marker)
    root.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    venv.EnvBuilder(with_pip=True, clear=True, symlinks=True).create(root)
    python = _python(root)
    _probe_registry(python)
    proc = _run([str(python), "-m", "pip", "install", "--no-cache-dir", "-c", str(CONSTRAINTS), SDK_REQUIREMENT],
                timeout=INSTALL_TIMEOUT_S)
    if proc.returncode != 0:
        line = _unreachable_line((proc.stdout or "") + (proc.stderr or ""))
        if line:
            _skip_unreachable(f"the package registry stopped answering while installing {SDK_REQUIREMENT}: {line}")
        pytest.fail(f"pip install {SDK_REQUIREMENT} failed:\n{_tail(proc)}", pytrace=False)
    check = _check_imports(python)
    if check.returncode != 0 or check.stdout.strip() != SDK_VERSION:
        pytest.fail(f"{SDK_REQUIREMENT} installed but does not import as expected:\n{_tail(check)}", pytrace=False)
    freeze = _run([str(python), "-m", "pip", "freeze"], timeout=120).stdout.split()
    info = {"sdk": SDK_VERSION, "python": sys.version.split()[0], "build_seconds": round(time.monotonic() - t0, 1),
            "freeze": freeze, "built_at": time.strftime("%Y-%m-%dT%H:%M:%S")}
    (root / MARKER).write_text(json.dumps(info, indent=1), encoding="utf-8")
    return info


def ensure_sdk_env() -> SdkEnv:
    """The SDK venv, built first if needed (see the module docstring for skips and failures)."""
    given = os.environ.get("MAS_WIS_SDK_VENV")
    if given:
        root = Path(given).expanduser()
        check = _check_imports(_python(root))
        if check.returncode != 0 or check.stdout.strip() != SDK_VERSION:
            pytest.fail(f"MAS_WIS_SDK_VENV={given} is not a venv with {SDK_REQUIREMENT}:\n{_tail(check)}",
                        pytrace=False)
        return SdkEnv(root, _python(root), None, {"sdk": SDK_VERSION, "given": given})
    root = env_dir()
    if _UNREACHABLE_SEEN and not (root / MARKER).exists():
        pytest.skip(_UNREACHABLE_SEEN[0])
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f"{root.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)          # another process may be building it right now
        marker = root / MARKER
        if marker.exists() and _python(root).exists():
            return SdkEnv(root, _python(root), None, json.loads(marker.read_text(encoding="utf-8")))
        t0 = time.monotonic()
        info = _build(root)
        return SdkEnv(root, _python(root), time.monotonic() - t0, info)


if __name__ == "__main__":
    try:
        env = ensure_sdk_env()
    except pytest.skip.Exception as exc:
        sys.exit(f"skipped: {exc}")
    except pytest.fail.Exception as exc:
        sys.exit(f"failed: {exc}")
    built = f"built in {env.built_seconds:.0f} s" if env.built_seconds is not None else "cached"
    print(f"{env.python}  ({SDK_REQUIREMENT}, {built})")
