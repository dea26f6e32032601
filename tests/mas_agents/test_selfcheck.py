"""The embedded engine's self-check (mas_agents/selfcheck.py) and ``mas doctor``.

The real build is checked on the embedded GGUF (about 2 s). A broken build is played by a fake
interpreter (``sys.executable`` replaced by a shell script) that prints the child's stage lines and
then dies as a wrongly compiled llama.cpp does, so the parent's one line can be checked for every
way the child can end.
"""

from __future__ import annotations

import json
import socket
import stat
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mas_agents import selfcheck
from mas_agents.cli import app
from mas_agents.cli.doctor import lock_differences


def fake_python(tmp_path: Path, monkeypatch, body: str) -> None:
    """Make ``sys.executable`` a shell script running ``body`` (the child's behaviour)."""
    exe = tmp_path / "python"
    exe.write_text("#!/bin/sh\n" + body + "\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(sys, "executable", str(exe))


INFO = "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 1 | LLAMAFILE = 1 |"


def test_the_installed_build_decodes_on_this_cpu():
    res = selfcheck.run_self_check()
    assert res.ok, res.error
    assert selfcheck.PLAIN_EXPECT in res.plain
    assert selfcheck.GRAMMAR_EXPECT.fullmatch(res.constrained.strip())
    assert res.returncode == 0 and res.llama_cpp_version
    # the portable build: no instruction set beyond x86-64-v3 (scripts/setup.sh)
    enabled = set(selfcheck.enabled_features(res.system_info).split())
    assert "AVX2" in enabled
    assert not enabled & {"AVX512", "AVX512_VNNI", "AVX512_BF16", "AVX_VNNI", "AMX_INT8", "AMX_BF16"}, res.system_info


def test_a_segfault_while_decoding_is_one_line_with_the_cause_and_the_fix(tmp_path, monkeypatch):
    fake_python(tmp_path, monkeypatch,
                f"echo '{json.dumps({'stage': 'loaded library', 'system_info': INFO, 'llama_cpp_version': '0.3.36'})}'\n"
                "echo '{\"stage\": \"loaded model\"}'\nkill -SEGV $$")
    res = selfcheck.run_self_check("/nonexistent.gguf")
    assert not res.ok and res.returncode == -11
    assert res.error.startswith("self-check failed: the embedded model died with SIGSEGV while decoding (plain completion)")
    assert "AVX512 AMX_INT8" in res.error and "bash scripts/setup.sh" in res.error and "\n" not in res.error


def test_sigill_names_a_missing_instruction(tmp_path, monkeypatch):
    fake_python(tmp_path, monkeypatch, "kill -ILL $$")
    res = selfcheck.run_self_check("/nonexistent.gguf")
    assert "SIGILL while importing llama_cpp (an instruction this CPU does not have" in res.error
    assert "-DGGML_AVX2=OFF" in res.error


def test_wrong_text_fails_the_check(tmp_path, monkeypatch):
    done = {"stage": "done", "plain": " Lyon, the city", "constrained": "Vote: Alice", "system_info": INFO}
    fake_python(tmp_path, monkeypatch, f"echo '{json.dumps(done)}'")
    res = selfcheck.run_self_check("/nonexistent.gguf")
    assert not res.ok and "with ' Lyon, the city', not 'Paris'" in res.error
    done.update(plain=" Paris.", constrained="Vote: Carol")
    fake_python(tmp_path, monkeypatch, f"echo '{json.dumps(done)}'")
    res = selfcheck.run_self_check("/nonexistent.gguf")
    assert not res.ok and "grammar-constrained reply was 'Vote: Carol'" in res.error
    done.update(constrained="Vote: Bob")
    fake_python(tmp_path, monkeypatch, f"echo '{json.dumps(done)}'")
    assert selfcheck.run_self_check("/nonexistent.gguf").ok


def test_an_exception_in_the_child_is_its_last_line(tmp_path):
    bad = tmp_path / "not-a-model.gguf"
    bad.write_bytes(b"this is no GGUF file")
    res = selfcheck.run_self_check(str(bad))
    assert not res.ok and res.returncode == 1
    assert res.error.startswith("self-check failed while loading the model: ") and "\n" not in res.error


def test_a_hung_child_is_a_timeout(tmp_path, monkeypatch):
    fake_python(tmp_path, monkeypatch, "echo '{\"stage\": \"loaded model\"}'; sleep 30")
    res = selfcheck.run_self_check("/nonexistent.gguf", timeout_s=1.0)
    assert not res.ok and "did not finish within 1 s (last stage: loaded model)" in res.error


def test_the_module_exits_1_with_one_error_line(tmp_path, monkeypatch, capsys):
    fake_python(tmp_path, monkeypatch, "kill -SEGV $$")
    assert selfcheck.main(["--model", "/nonexistent.gguf"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("error: self-check failed")


def test_cpu_flags_reads_the_first_cpu(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Test CPU\nflags\t\t: fpu sse4_2 avx avx2 amx_int8\n\n"
                    "processor\t: 1\nmodel name\t: Other\nflags\t\t: fpu\n")
    assert selfcheck.cpu_flags(str(info)) == ("Test CPU", {"fpu", "sse4_2", "avx", "avx2", "amx_int8"})
    assert selfcheck.cpu_flags(str(tmp_path / "missing")) == ("", set())


def test_lock_differences_read_pins_markers_and_local_labels(tmp_path):
    from importlib import metadata
    pytest_version = metadata.version("pytest")
    lock = tmp_path / "requirements.lock"
    lock.write_text(f"# header\npytest=={pytest_version}\n    # via x\n"
                    f"typer==0.0.1\nnot-installed-pkg==1.0\n"
                    f"rich==0.0.2 ; sys_platform == 'no-such-platform'\n")
    checked, diffs = lock_differences(lock)
    assert checked == 2
    assert diffs == [f"typer {metadata.version('typer')} (lock 0.0.1)"]


# ---------------------------------------------------------------------------------------------
# mas doctor


def rows(output: str) -> dict[str, str]:
    out = {}
    for line in output.splitlines():
        name, sep, value = line.partition(":")
        if sep:
            out.setdefault(name.strip(), value.strip())
    return out


@pytest.mark.realdata
def test_doctor_on_this_machine(real_data_root):
    res = CliRunner().invoke(app, ["doctor", "--data-dir", str(real_data_root)])
    assert res.exit_code == 0, res.output
    r = rows(res.output)
    assert r["self-check"].startswith("ok: decoded")
    assert r["datasets"] == f"{real_data_root} (from --data-dir)"
    assert r["wellplay"] == "en: 12 scripts, zh: 12 scripts"
    assert "chameleon 20/20" in r["magic"] and "public_good 21/21" in r["magic"]
    assert "AVX2 = 1" in r["llama.cpp system info"]
    assert r["status"] == "ok: the README demo can run"


def test_doctor_without_the_datasets_exits_1(tmp_path):
    res = CliRunner().invoke(app, ["doctor", "--no-self-check", "--data-dir", str(tmp_path / "nowhere")])
    assert res.exit_code == 1
    assert rows(res.output)["status"].startswith("1 problem(s): no datasets root")


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_doctor_with_an_unreachable_endpoint_is_one_line_and_exit_3(tmp_path, monkeypatch):
    from mas_agents.remote import dialects as remote_dialects
    monkeypatch.setattr(remote_dialects, "PROBE_BACKOFF_S", 0.01)
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{closed_port()}/v1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    res = CliRunner().invoke(app, ["doctor", "--no-self-check", "--data-dir", str(tmp_path), "--model", "openai:x"])
    assert res.exit_code == 3
    assert "Traceback" not in res.output
    [line] = [x for x in res.output.splitlines() if x.startswith("error:")]
    assert "is unreachable" in line and "127.0.0.1" in line
    assert rows(res.output)["status"].endswith("but the endpoint of --model openai:x answered none of its tries (the error line below)")


def test_doctor_reports_what_the_endpoint_probe_sees(tmp_path, monkeypatch):
    from mas_agents.remote import dialects
    from tests.stub_openai import StubServer

    grammar = f'root ::= "{dialects.PROBE_TEXT}"'

    def reply(body: dict) -> str:
        if body.get("grammar") == grammar:
            return dialects.PROBE_TEXT
        if body["messages"][-1]["content"] == "Say OK.":
            return "OK"
        raise AssertionError(f"unexpected request {body}")

    models = [{"id": "stub", "object": "model", "max_model_len": 8192}]
    with StubServer(reply=reply, models=models, cached_tokens=512) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        res = CliRunner().invoke(app, ["doctor", "--no-self-check", "--data-dir", str(tmp_path), "--model", "openai:stub"])
        assert len(stub.requests) == 3                     # the probe and the same prompt twice
    r = rows(res.output)
    assert r["structured outputs"].startswith("gbnf (probe: the server applied gbnf")
    assert r["context window"] == "8192 (server: /models max_model_len)"
    assert r["cached tokens"].startswith("reported: 512 of ")
    assert res.exit_code == 1                              # no datasets in tmp_path: the demo could not run


def test_doctor_says_where_the_embedding_cache_is_and_how_big(tmp_path, monkeypatch):
    from mas_agents.cli.doctor import _check_embedding_cache, _Report
    from mas_agents.memory import HashEmbedder

    monkeypatch.delenv("MAS_EMBED_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    where = tmp_path / "mas-agents" / "embeddings"
    rep = _Report()
    _check_embedding_cache(rep)
    assert rep.rows == [("embedding cache", f"{where} (empty; MAS_EMBED_CACHE=off to keep vectors per "
                                            f"process, delete the folder to empty it)")]
    assert rep.data["embedding_cache"] == str(where) and not rep.warnings
    HashEmbedder(dim=8, cache_dir=where).encode([f"text {i}" for i in range(100)])
    rep = _Report()
    _check_embedding_cache(rep)
    assert rep.rows[0][1].startswith(f"{where} (0.0") and " MB; " in rep.rows[0][1]   # 100 small vectors
    monkeypatch.setenv("MAS_EMBED_CACHE", "off")
    rep = _Report()
    _check_embedding_cache(rep)
    assert rep.rows == [("embedding cache", "off (MAS_EMBED_CACHE=off): vectors are kept per process")]
    assert rep.data["embedding_cache"] is None
