"""The CLI's one-line answers to bad paths, its help at 80 columns and its --data-dir hint
(issue 46, item 4 and the smaller items). typer's CliRunner, in-process; nothing here reaches a
model server (``OPENAI_BASE_URL`` names a closed port: a command that called it would fail
otherwise)."""

from __future__ import annotations

import os
import re

import pytest
from typer.testing import CliRunner

from mas_agents.cli import app

runner = CliRunner()


def _bad_outs(tmp_path):
    (tmp_path / "afile").write_text("a file, not a directory")
    outs = [(str(tmp_path / "afile" / "sub"), f"{tmp_path / 'afile'} is a file, not a directory"),
            ("/dev/null", "/dev/null exists and is not a directory"),
            ("/proc/x/out", None)]
    if os.path.ismount("/sys") and os.path.isdir("/sys/kernel"):   # sysfs refuses a new directory
        outs.append(("/sys/kernel/x", None))
    return outs


RUNNERS = {
    "spy play": ["spy", "play", "--pair", "tea/coffee"],
    "spy tournament": ["spy", "tournament", "--agents", "plain", "--games", "1"],
    "mmg run": ["mmg", "run", "--script", "Sin"],
    "magic run": ["magic", "run", "--scenario", "chameleon", "--settings", "0"],
    "wellplay eval": ["wellplay", "eval", "--method", "always_a", "--script", "Sin"],
    "ablate": ["ablate", "--bench", "spy", "--games", "1"],
    "reproduce magic": ["reproduce", "magic", "--limit", "1"],
    "spy experiment": ["spy", "experiment", "--kind", "attack", "--subject", "plain", "--games", "1"],
}
MODEL = ["--model", "openai:stub"]


@pytest.fixture
def no_server(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    monkeypatch.setenv("MAS_DATA_HOME", str(tmp_path / "home"))   # a default leaderboard stays here
    monkeypatch.chdir(tmp_path)


def _one_error_line(r) -> str:
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert "Traceback" not in r.output, r.output
    errors = [ln for ln in lines if ln.startswith("error:")]
    assert len(errors) == 1 and errors[0] == lines[-1], r.output
    return errors[0]


@pytest.mark.realdata
@pytest.mark.parametrize("name", list(RUNNERS))
def test_a_bad_out_is_one_line_naming_the_option_and_path(name, real_data_root, tmp_path, no_server):
    args = RUNNERS[name] + ([] if name == "wellplay eval" else MODEL)
    if name != "spy play":
        args += ["--data-dir", str(real_data_root)]
    for out, why in _bad_outs(tmp_path):
        r = runner.invoke(app, args + ["--out", out])
        assert r.exit_code == 2, (out, r.output)
        line = _one_error_line(r)
        assert line.startswith(f"error: --out {out}: "), line
        if why:
            assert line == f"error: --out {out}: {why}"
    assert not (tmp_path / "home").exists() or not any((tmp_path / "home").rglob("*.sqlite"))


@pytest.mark.realdata
@pytest.mark.parametrize("name", ["spy tournament", "spy experiment"])
def test_a_bad_db_is_one_line_naming_the_option_and_path(name, real_data_root, tmp_path, no_server):
    r = runner.invoke(app, RUNNERS[name] + MODEL + ["--data-dir", str(real_data_root), "--out", str(tmp_path / "t"),
                                                    "--db", "/proc/x.sqlite"])
    assert r.exit_code == 2, r.output
    assert _one_error_line(r) == ("error: --db /proc/x.sqlite: cannot open or create the SQLite database "
                                  "(unable to open database file)")
    assert not (tmp_path / "t" / "config.json").exists()   # refused before anything of the run is written


def test_an_os_error_under_an_option_names_the_option_and_the_file(tmp_path, monkeypatch):
    """The mapping itself: a file deep under --out is named with the option; an errno that is
    not about the path as given (a full disk) is a fault, exit code 1."""
    import errno

    from mas_agents.cli import paths
    from mas_agents.cli import paths as cli_paths

    out = tmp_path / "run"
    monkeypatch.setattr(paths, "_path_options", lambda: [("--data-dir", tmp_path), ("--out", out)])
    deep = out / "games" / "g0001" / "config.json"
    assert cli_paths.path_error(PermissionError(errno.EACCES, "Permission denied", str(deep))) == (
        f"--out {out}: permission denied ({deep})", 2)
    assert cli_paths.path_error(OSError(errno.ENOSPC, "No space left on device", str(deep))) == (
        f"--out {out}: no space left on device ({deep})", 1)
    assert cli_paths.path_error(OSError(errno.EACCES, "Permission denied", "/elsewhere/x")) is None
    # on the way to --out: a parent it had to make
    assert cli_paths.path_error(FileNotFoundError(errno.ENOENT, "No such file or directory", str(tmp_path / "x"))) == (
        f"--data-dir {tmp_path}: no such file or directory ({tmp_path / 'x'})", 2)


def test_only_sqlite_refusing_the_file_is_blamed_on_db(tmp_path, monkeypatch):
    import sqlite3

    from mas_agents.cli import paths
    from mas_agents.cli import paths as cli_paths

    monkeypatch.setattr(paths, "_path_options", lambda: [("--db", tmp_path / "x.sqlite")])
    assert cli_paths.path_error(sqlite3.OperationalError("unable to open database file")) == (
        f"--db {tmp_path / 'x.sqlite'}: cannot open or create the SQLite database (unable to open database file)", 2)
    assert cli_paths.path_error(sqlite3.OperationalError("database is locked")) is None
    assert cli_paths.path_error(sqlite3.IntegrityError("UNIQUE constraint failed: games.id")) is None


def test_ctrl_c_inside_a_command_is_one_stopped_line_with_exit_code_130(tmp_path, monkeypatch):
    """A KeyboardInterrupt raised inside a command (the Ctrl-C handler raises it in the main
    thread) ends it with one ``stopped:`` line and 130, not typer's silent exit."""
    from mas_agents.cli import spy

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(spy, "_specs", interrupted)
    r = runner.invoke(app, ["spy", "play", "--pair", "tea/coffee", "--out", str(tmp_path / "g")])
    assert r.exit_code == 130
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert lines == ["stopped: Ctrl-C. Finished work is kept; rerun the same command to continue (finished "
                     "games and cells are reused)."]


@pytest.mark.parametrize("command, options", [
    (["spy", "tournament"], ["--max-connections", "--adaptive-connections", "--context-window",
                             "--record-prompts / --no-record-prompts", "--ray-address", "--concurrency"]),
    (["mmg", "run"], ["--max-connections", "--dialogue-budget", "--script-budget"]),
])
def test_help_at_80_columns_shows_every_option_name_whole(command, options):
    r = runner.invoke(app, command + ["--help"], env={"COLUMNS": "80", "TERMINAL_WIDTH": "80"}, terminal_width=80)
    assert r.exit_code == 0, r.output
    assert "…" not in r.output
    names = set(re.findall(r"^\s+(--[a-z-]+(?: / --[a-z-]+)?)", r.output, flags=re.M))
    for opt in options:
        assert opt in names, (opt, r.output)
    assert max(len(line) for line in r.output.splitlines()) <= 80


def test_help_texts_that_were_missing():
    r = runner.invoke(app, ["wellplay", "eval", "--help"], terminal_width=200)
    text = " ".join(r.output.split())
    for opt in ("--out", "--script-budget", "--dialogue-budget"):
        assert re.search(re.escape(opt) + r" <[a-z]+> [A-Z]", text), (opt, text)
    r = runner.invoke(app, ["ablate", "--help"], terminal_width=200)
    assert re.search(r"--data-dir <path> Datasets root", " ".join(r.output.split())), r.output
    r = runner.invoke(app, ["spy", "tournament", "--help"], terminal_width=200)
    assert "mas-agents[ray]" in " ".join(r.output.split()).replace("- ", "-")   # not taken for markup


@pytest.mark.parametrize("args, holds, licence", [
    (["spy", "play"], "whoisspy/", False),
    (["magic", "run"], "magic/", False),
    (["mmg", "run", "--script", "Sin"], "wellplay/", True),
    (["reproduce", "wis"], "whoisspy/", False),
    (["ablate", "--bench", "spy,magic"], "whoisspy/ and magic/", False),
])
def test_a_missing_data_dir_names_the_datasets_the_command_needs(args, holds, licence, tmp_path):
    r = runner.invoke(app, args + ["--data-dir", str(tmp_path / "nowhere")])
    assert r.exit_code == 2, r.output
    line = _one_error_line(r)
    assert line == (f"error: --data-dir '{tmp_path / 'nowhere'}' does not exist or is not a directory; point at "
                    f"the folder that holds {holds} with --data-dir PATH or MAS_DATA_DIR=PATH"
                    + (" (WellPlay comes from github.com/alickzhu/PLAYER and has no licence, so it is not shipped "
                       "with this repository)" if licence else ""))
