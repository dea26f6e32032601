"""Self-check of the embedded engine: load a GGUF and decode a few tokens, in a child process.

A llama.cpp build made for another CPU does not fail politely: it dies with SIGSEGV or SIGILL in
``llama_decode`` (issue 25: a build with AMX and AVX-512 BF16 kernels segfaulted on the first
decode). So the check runs in a subprocess of the same interpreter, and the parent turns whatever
happened (a signal, a timeout, an exception, a wrong answer) into one line that names the cause and
the fix. ``scripts/setup.sh`` ends with ``python -m mas_agents.selfcheck``; ``mas doctor`` shows the
same result.

Two decodes, both greedy (temperature 0, so a healthy build always gives the same text):

* **plain completion** of :data:`PLAIN_PROMPT` (no chat template), :data:`PLAIN_TOKENS` tokens:
  must contain :data:`PLAIN_EXPECT`. A build that computes garbage (wrong SIMD kernels) does not.
* **grammar-constrained chat reply** (the path every local game call takes: the chat template plus
  a GBNF grammar built like :mod:`mas_agents.grammar`'s): must be exactly ``Vote: Alice`` or
  ``Vote: Bob``.

Run ``python -m mas_agents.selfcheck [--model PATH] [--json]``: exit 0 and one ``self-check: ok``
line, or exit 1 and one ``error: self-check failed: ...`` line on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field

__all__ = ["CheckResult", "run_self_check", "cpu_flags", "enabled_features", "CPU_FEATURES", "PORTABLE_HINT"]

#: Prompt of the plain completion, and what its greedy continuation must contain.
PLAIN_PROMPT = "The capital of France is"
PLAIN_EXPECT = "Paris"
PLAIN_TOKENS = 8
#: The constrained chat decode: a grammar with two legal replies.
GRAMMAR = 'root ::= "Vote: " ("Alice" | "Bob")'
GRAMMAR_PROMPT = "Two players are left: Alice and Bob. Vote for one of them."
GRAMMAR_EXPECT = re.compile(r"Vote: (Alice|Bob)")
#: Seconds the child may take (loading a 135M model and 20 tokens take about 1 s on 2 cores).
TIMEOUT_S = 180.0
#: The /proc/cpuinfo flags that decide which llama.cpp kernels can run (x86-64).
CPU_FEATURES = ("sse4_2", "avx", "avx2", "fma", "f16c", "bmi2", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
                "avx512_bf16", "avx512_vbmi", "avx_vnni", "amx_tile", "amx_int8", "amx_bf16")
#: What to do about a build that does not run here (scripts/setup.sh explains the flags).
PORTABLE_HINT = ("rebuild the portable engine: bash scripts/setup.sh (it builds llama-cpp-python for any "
                 "x86-64-v3 CPU); on a CPU without AVX2: MAS_LLAMA_CMAKE_ARGS='-DGGML_NATIVE=OFF -DGGML_AVX2=OFF "
                 "-DGGML_FMA=OFF -DGGML_F16C=OFF -DGGML_BMI2=OFF' bash scripts/setup.sh")


@dataclass
class CheckResult:
    """What the self-check saw.

    Attributes:
        ok: both decodes gave what a healthy build gives.
        error: one line (cause and fix) when not ok, else "".
        plain, constrained: the decoded texts ("" when not reached).
        system_info: ``llama_cpp.llama_print_system_info()`` of the build (the instruction sets it
            was compiled with), "" when the child died before reading it.
        llama_cpp_version: the installed llama-cpp-python.
        seconds: wall time of the child process.
        returncode: the child's exit code (negative: killed by that signal).
    """

    ok: bool
    error: str = ""
    plain: str = ""
    constrained: str = ""
    system_info: str = ""
    llama_cpp_version: str = ""
    model: str = ""
    seconds: float = 0.0
    returncode: int | None = None
    details: dict = field(default_factory=dict)


def cpu_flags(path: str = "/proc/cpuinfo") -> tuple[str, set[str]]:
    """``(model name, flags)`` of the first CPU in ``path`` (``("", set())`` where there is none,
    e.g. not Linux)."""
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except OSError:
        return "", set()
    name = re.search(r"^model name\s*:\s*(.*)$", text, re.M)
    flags = re.search(r"^flags\s*:\s*(.*)$", text, re.M)
    return (name.group(1).strip() if name else ""), set(flags.group(1).split()) if flags else set()


def _child(model_path: str) -> None:
    """Runs in the child process: print one JSON line with what was decoded (or die trying)."""
    out: dict = {}
    import llama_cpp

    out["llama_cpp_version"] = getattr(llama_cpp, "__version__", "")
    out["system_info"] = llama_cpp.llama_print_system_info().decode("utf-8", "replace").strip()
    print(json.dumps({"stage": "loaded library", **out}), flush=True)
    llama = llama_cpp.Llama(model_path=model_path, n_ctx=512, n_threads=1, n_threads_batch=1, seed=0, verbose=False)
    print(json.dumps({"stage": "loaded model"}), flush=True)
    r = llama.create_completion(PLAIN_PROMPT, max_tokens=PLAIN_TOKENS, temperature=0.0, top_k=1)
    out["plain"] = r["choices"][0]["text"]
    print(json.dumps({"stage": "plain decode", "plain": out["plain"]}), flush=True)
    grammar = llama_cpp.LlamaGrammar.from_string(GRAMMAR, verbose=False)
    r = llama.create_chat_completion(messages=[{"role": "user", "content": GRAMMAR_PROMPT}], grammar=grammar,
                                     max_tokens=8, temperature=0.0, top_k=1)
    out["constrained"] = r["choices"][0]["message"]["content"] or ""
    print(json.dumps({"stage": "done", **out}), flush=True)


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def run_self_check(model_path: str | None = None, timeout_s: float = TIMEOUT_S) -> CheckResult:
    """Load ``model_path`` (default: the embedded GGUF) with llama-cpp-python in a child process
    and decode twice (see the module docstring).

    Returns:
        a :class:`CheckResult`; never raises for a broken build (that is what it reports).
        ``error`` names the stage the child reached, the cause (signal, timeout, exception, wrong
        text) and the fix.
    """
    if model_path is None:
        from mas_agents.embedded import embedded_model_path
        try:
            model_path = embedded_model_path()
        except FileNotFoundError as exc:
            return CheckResult(ok=False, error=f"self-check failed: {exc}")
    cmd = [sys.executable, "-c", "import sys; from mas_agents.selfcheck import _child; _child(sys.argv[1])", model_path]
    env = {**os.environ, "PYTHONFAULTHANDLER": "1"}
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, env=env)
    except subprocess.TimeoutExpired as exc:
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        res = _from_lines(stdout, model_path)
        res.seconds = round(time.monotonic() - t0, 2)
        res.error = (f"self-check failed: the embedded model did not finish within {timeout_s:.0f} s "
                     f"(last stage: {res.details.get('stage', 'starting')}); an overloaded machine, or a broken build: "
                     f"{PORTABLE_HINT}")
        return res
    res = _from_lines(proc.stdout, model_path)
    res.seconds = round(time.monotonic() - t0, 2)
    res.returncode = proc.returncode
    stage = res.details.get("stage", "starting")
    where = {"starting": "importing llama_cpp", "loaded library": "loading the model",
             "loaded model": "decoding (plain completion)", "plain decode": "decoding (grammar-constrained)",
             "done": "finishing"}.get(stage, stage)
    if proc.returncode < 0:
        name = _signal_name(proc.returncode)
        cause = ("an instruction this CPU does not have" if name == "SIGILL"
                 else "a llama.cpp build whose kernels do not run on this CPU")
        res.error = (f"self-check failed: the embedded model died with {name} while {where} ({cause}; "
                     f"build: {enabled_features(res.system_info) or 'unknown'}); {PORTABLE_HINT}")
        return res
    if proc.returncode != 0:
        last = next((ln for ln in reversed(proc.stderr.strip().splitlines()) if ln.strip()), "no message")
        fix = ("install it: bash scripts/setup.sh" if "No module named" in last else PORTABLE_HINT)
        res.error = f"self-check failed while {where}: {last.strip()[:300]}; {fix}"
        return res
    if PLAIN_EXPECT not in res.plain:
        res.error = (f"self-check failed: the embedded model continued {PLAIN_PROMPT!r} with {res.plain!r}, "
                     f"not {PLAIN_EXPECT!r}: the build computes wrong results on this CPU; {PORTABLE_HINT}")
        return res
    if not GRAMMAR_EXPECT.fullmatch(res.constrained.strip()):
        res.error = (f"self-check failed: the grammar-constrained reply was {res.constrained!r}, not "
                     f"'Vote: Alice' or 'Vote: Bob': llama.cpp's grammar sampler is broken in this build; {PORTABLE_HINT}")
        return res
    res.ok = True
    return res


def _from_lines(stdout: str, model_path: str) -> CheckResult:
    res = CheckResult(ok=False, model=model_path)
    for line in stdout.splitlines():
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if not isinstance(d, dict):
            continue
        res.details["stage"] = d.get("stage", res.details.get("stage"))
        res.system_info = d.get("system_info", res.system_info)
        res.llama_cpp_version = d.get("llama_cpp_version", res.llama_cpp_version)
        res.plain = d.get("plain", res.plain)
        res.constrained = d.get("constrained", res.constrained)
    return res


def enabled_features(system_info: str) -> str:
    """The enabled CPU features of a ``llama_print_system_info()`` line: ``AVX AVX2 FMA ...``."""
    return " ".join(k for k, v in re.findall(r"([A-Z0-9_]+) = (\d)", system_info) if v == "1")


def main(argv: list[str] | None = None) -> int:
    """``python -m mas_agents.selfcheck``: print one line; 0 when the build works here, else 1."""
    ap = argparse.ArgumentParser(description="Load the embedded GGUF and decode a few tokens in a subprocess.")
    ap.add_argument("--model", default=None, help="a GGUF file (default: the embedded SmolLM2-135M)")
    ap.add_argument("--json", action="store_true", help="print the whole result as JSON")
    args = ap.parse_args(argv)
    res = run_self_check(args.model)
    if args.json:
        print(json.dumps(asdict(res), indent=2))
    elif res.ok:
        print(f"self-check: ok: decoded {' '.join(res.plain.split())!r} and {res.constrained.strip()!r} in {res.seconds:.1f} s "
              f"(llama-cpp-python {res.llama_cpp_version}; build: {enabled_features(res.system_info)})")
    if not res.ok:
        print(f"error: {res.error}", file=sys.stderr)
    return 0 if res.ok else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
