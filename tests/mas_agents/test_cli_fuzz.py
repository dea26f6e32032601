"""Every ``mas`` command fed a bad path answers one line (issue 57, item 5).

The commands are enumerated from the typer app (:func:`commands`), not from a hand list: a new
command fails :func:`test_every_command_is_in_the_fuzz_table` until it says here how it is
called (:data:`BASE`) and what each of its path arguments takes (:data:`ROLES`). Each path
argument then gets the bad inputs its role cannot take: a missing path, an empty folder, a file
and a run directory of the wrong kind; the command must end with exit code != 0 and one
``error:`` line on stderr (``stopped:`` never), no traceback. An input a role accepts (an empty
folder for ``--out``) is not fed (it would start a run) and is named in :data:`ACCEPTS` with the
reason; a command that takes no path is listed in :data:`NO_PATH`.

In-process (typer's CliRunner). No model is reachable: the chat-model factory raises (a command
that got as far as a model call with a bad path fails this test with the factory's message), and
``OPENAI_BASE_URL`` names a closed port; the web server never starts (``uvicorn.run`` raises).
"""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from mas_agents.cli import app

runner = CliRunner()

#: Commands that take no path at all.
NO_PATH = {"game list": "--module names a Python module, not a path"}

#: How each command is called besides the path argument under test (valid arguments otherwise,
#: so that the path is what is refused).
BASE: dict[str, list[str]] = {
    "ablate": ["--bench", "spy", "--games", "1"],
    "data check": [],
    "diff": [],
    "doctor": ["--no-self-check"],
    "game play": ["wis", "--agents", "plain,plain,plain", "--set", "pair=tea/coffee"],
    "magic run": ["--scenario", "chameleon", "--settings", "0"],
    "mmg run": ["--script", "Sin", "--rounds", "1"],
    "reproduce": ["magic", "--limit", "1"],
    "rerun": [],
    "fork": ["--at", "round:1", "--seat", "Player 1", "--agent", "plain"],
    "serve": [],
    "spy experiment": ["--kind", "attack", "--subject", "plain", "--games", "1"],
    "spy leaderboard": [],
    "spy play": ["--pair", "tea/coffee"],
    "spy replay": [],
    "spy serve-agent": [],
    "spy tournament": ["--agents", "plain", "--games", "1"],
    "wellplay compare": ["--methods", "always_a", "--script", "Sin"],
    "wellplay eval": ["--method", "always_a", "--script", "Sin"],
}

#: Each path argument's role: ``in`` (an existing folder of the right kind: the datasets root, a
#: run to read), ``out`` (a run directory the command writes: a file or another kind's run is
#: refused), ``db`` (a SQLite file: a folder or a file that is no database is refused).
ROLES: dict[tuple[str, str], str] = {
    **{(c, "data_dir"): "in" for c in BASE},
    **{(c, "out"): "out" for c in BASE},
    ("rerun", "run_dir"): "in", ("fork", "run_dir"): "in", ("spy replay", "game_dir"): "in", ("diff", "run_a"): "in", ("diff", "run_b"): "in", ("wellplay eval", "run"): "in",
    ("serve", "runs"): "in",
    ("spy tournament", "db"): "db", ("spy experiment", "db"): "db", ("spy leaderboard", "db"): "db",
    ("serve", "db"): "db", ("spy serve-agent", "calls"): "file-out",
    ("doctor", "data_dir"): "report",
}

#: What each role is fed.
BAD = {"in": ("missing", "empty", "file", "wrong-kind run"), "out": ("file", "wrong-kind run"),
       "db": ("empty", "file", "wrong-kind run"), "file-out": ("empty", "wrong-kind run"),
       "report": ("missing", "empty", "file", "wrong-kind run")}

#: Inputs a role takes (not fed: the command would run), with why.
ACCEPTS = {"out": "a missing path or an empty folder is a new run directory",
           "db": "a missing path is a new leaderboard database",
           "file-out": "a missing path or a file is the call log it writes"}

#: Arguments of a run-reading option besides the path (``wellplay eval --run`` reads a game).
WITH = {("wellplay eval", "run"): ["--method", "session"]}

#: Inputs a command takes (not fed: it would start a server or replay a run), with why.
TAKEN = {("rerun", "data_dir", "empty"): "the finished Who-is-Spy game reads no dataset (its pair is in config.json)",
         ("rerun", "data_dir", "wrong-kind run"): "the finished Who-is-Spy game reads no dataset",
         ("fork", "data_dir", "empty"): "the finished Who-is-Spy game reads no dataset (its pair is in config.json)",
         ("fork", "data_dir", "wrong-kind run"): "the finished Who-is-Spy game reads no dataset",
         ("serve", "runs", "empty"): "an empty folder is a runs folder with no runs yet: the server starts",
         ("serve", "runs", "wrong-kind run"): "a run directory is a folder mas serve lists (as a runs folder)",
         **{("serve", "data_dir", bad): "the datasets root is optional for mas serve (word pairs of games "
                                        "started in the browser)" for bad in BAD["in"]}}




def commands() -> dict[str, typing.Any]:
    """``{"spy replay": click command, ...}``: every leaf command of the app."""
    found: dict[str, typing.Any] = {}

    def walk(cmd: typing.Any, path: list[str]) -> None:
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, path + [name])
        else:
            found[" ".join(path)] = cmd

    walk(typer.main.get_command(app), [])
    return found


def _is_path(p: typing.Any) -> bool:
    """``p`` (a typer/click parameter) takes a filesystem path (annotated ``Path`` /
    ``Optional[Path]``, or a click ``Path`` type)."""
    ann = getattr(getattr(p, "type_descriptor", None), "annotation", None)
    if ann is not None:
        return ann is Path or Path in typing.get_args(ann)
    return type(getattr(p, "type", None)).__name__ == "Path"


def path_params(cmd: typing.Any) -> list[typing.Any]:
    return [p for p in cmd.params if _is_path(p)]


def cases() -> list[typing.Any]:
    out = []
    for name, cmd in sorted(commands().items()):
        for p in path_params(cmd):
            role = ROLES.get((name, p.name))
            for bad in BAD.get(role, ()):
                if (name, p.name, bad) in TAKEN:
                    continue
                out.append(pytest.param(name, p.name, bad, id=f"{name}-{p.name}-{bad}"))
    return out


def test_every_command_is_in_the_fuzz_table():
    """A new command or path argument must say how it is fuzzed (or that it takes no path)."""
    cmds = commands()
    assert len(cmds) >= 17
    for name, cmd in cmds.items():
        params = path_params(cmd)
        if not params:
            assert name in NO_PATH, f"{name} takes no path: list it in NO_PATH with why"
            continue
        assert name in BASE, f"mas {name}: add its valid arguments to BASE"
        for p in params:
            assert (name, p.name) in ROLES, f"mas {name} {p.name}: give its role in ROLES"
    assert set(BASE) | set(NO_PATH) == set(cmds), set(BASE) ^ set(cmds)
    every = set(BAD["in"])
    for role, fed in BAD.items():   # what a role is not fed, it takes: said in ACCEPTS
        assert set(fed) == every or role in ACCEPTS, role


class _NoModel(AssertionError):
    pass


@pytest.fixture
def world(tmp_path, monkeypatch, real_data_root):
    """The bad inputs, the real datasets for everything else, no model and no server."""
    from mas_agents import llm

    def no_model(*a, **k):
        raise _NoModel("a command fed a bad path went on to build a model")

    def no_server(*a, **k):
        raise _NoModel("a command fed a bad path started the web server")

    import uvicorn

    from mas_agents import http_guard
    monkeypatch.setattr(llm, "make_chat_model", no_model)
    monkeypatch.setattr(uvicorn, "run", no_server)
    # the servers bind their port first (a busy port is one line), then serve on it: neither may
    # happen for a bad path, and a server that did start would never return
    monkeypatch.setattr(http_guard, "bind", no_server)
    monkeypatch.setattr(http_guard, "serve", no_server)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    monkeypatch.setenv("MAS_DATA_DIR", str(real_data_root))
    monkeypatch.setenv("MAS_DATA_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    (tmp_path / "afile").write_text("a file, not what the command reads\n", encoding="utf-8")
    # a finished game of another kind than any command reading a run expects of it: a MAgIC game
    # for the WiS replay, the murder-mystery evaluation and as an --out of another run; for the
    # datasets root, a folder without wellplay/, whoisspy/ or magic/
    magic = tmp_path / "magic-game"
    magic.mkdir()
    (magic / "config.json").write_text(json.dumps({"kind": "magic", "scenario": "chameleon", "setting_id": 0,
                                                   "side": "chameleon", "challenger": "plain", "defender": "plain",
                                                   "model": "local", "seed": 0}), encoding="utf-8")
    (magic / "result.json").write_text(json.dumps({"scenario": "chameleon", "setting_id": 0}), encoding="utf-8")
    (magic / "events.jsonl").write_text("", encoding="utf-8")
    return {"missing": tmp_path / "missing" / "x", "empty": tmp_path / "empty", "file": tmp_path / "afile",
            "wrong-kind run": magic}


#: Commands whose positional argument is a run they read: while one of their options is under
#: test, it is a finished Who-is-Spy game (the ``finished`` fixture), which each of them takes.
POSITIONAL = {"rerun", "fork", "spy replay"}
#: Commands that read two runs (their positional arguments, in order): the one under test gets the
#: bad input, the other the finished Who-is-Spy game.
TWO_RUNS = {"diff": ("run_a", "run_b")}


def _argv(name: str, param: typing.Any, value: Path, finished: Path) -> list[str]:
    """``mas NAME ...`` with ``value`` given to ``param`` and the command's other arguments valid."""
    args = list(WITH.get((name, param.name), BASE[name]))
    if name in TWO_RUNS:
        return name.split() + [str(value if p == param.name else finished) for p in TWO_RUNS[name]] + args
    if type(param).__name__.endswith("Argument"):
        return name.split() + [str(value), *args]
    if name in POSITIONAL:
        args = [str(finished), *args]
    opt = max((o for o in param.opts if o.startswith("--")), key=len)
    return name.split() + args + [opt, str(value)]


@pytest.fixture(scope="module")
def finished(tmp_path_factory, real_data_root):
    """A finished Who-is-Spy game played on the conformance kit's fake model."""
    from mas_agents.game.runner import run
    from mas_agents.game.fake_chat import GameChat

    out = tmp_path_factory.mktemp("fuzz") / "wis-game"
    run("wis", out, model=GameChat(), seed=0, agents=["plain", "plain", "plain"],
        pair={"civilian": "tea", "spy": "coffee"})
    assert (out / "result.json").is_file()
    return out


@pytest.mark.realdata
@pytest.mark.parametrize("name, param, bad", cases())
def test_a_bad_path_is_one_line_and_a_nonzero_exit(name, param, bad, world, finished):
    cmd = commands()[name]
    p = next(x for x in cmd.params if x.name == param)
    argv = _argv(name, p, world[bad], finished)
    r = runner.invoke(app, argv)
    shown = f"mas {' '.join(argv)} -> exit {r.exit_code}:\n{r.output}"
    assert not isinstance(r.exception, _NoModel) and _NoModel.__name__ not in r.output, shown
    assert r.exception is None or isinstance(r.exception, SystemExit), shown + repr(r.exception)
    assert "Traceback" not in r.output, shown
    assert r.exit_code != 0, shown
    if ROLES[(name, param)] == "report":    # mas doctor: the problem is its report's status line
        status = [ln for ln in r.stdout.splitlines() if ln.startswith("status:")]
        assert len(status) == 1 and "problem" in status[0] and str(world[bad]) in status[0], shown
        return
    # one error line, the last; before it at most the command's own progress note ("Loading
    # model ...", "estimating the run's cost ..."), never a log record or a second error
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert lines and lines[-1].startswith("error: "), shown
    assert sum(ln.startswith(("error", "stopped")) for ln in lines) == 1, shown
    assert len(lines) <= 2, shown


def test_an_os_error_about_a_positional_argument_names_it(tmp_path, monkeypatch):
    """The error handler itself named a positional argument by click's ``human_readable_name``,
    which typer 0.29's ``TyperArgument`` lacks: ``mas spy replay`` ended in an AttributeError
    inside it. The argument is named as its help shows it (``GAME_DIR``)."""
    import errno

    from mas_agents.cli import spy

    def unreadable(game_dir):
        raise PermissionError(errno.EACCES, "Permission denied", str(game_dir / "result.json"))

    monkeypatch.setattr(spy, "game_kind", lambda d: None)
    monkeypatch.setattr(spy, "write_replay", unreadable)
    r = runner.invoke(app, ["spy", "replay", str(tmp_path)])
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    assert r.stderr.strip() == f"error: GAME_DIR {tmp_path}: permission denied ({tmp_path / 'result.json'})"
