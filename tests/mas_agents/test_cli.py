"""The `mas` CLI as a user runs it (typer's CliRunner, in-process)."""

import json

import pytest
from typer.testing import CliRunner

from mas_agents.cli import app
from tests.data_roots import SIN, SIN_ID

runner = CliRunner()


def one_script_root(dest, real_root):
    """A datasets root at ``dest`` whose wellplay/en and wellplay/zh hold only the real script Sin
    (symbolic links to its real directories: nothing is copied or committed)."""
    for lang, name in zip(("en", "zh"), SIN):
        src = [d for d in (real_root / "wellplay" / lang).iterdir()
               if (d / "json" / "script_info.json").is_file()
               and json.loads((d / "json" / "script_info.json").read_text(encoding="utf-8-sig"))["script_name"] == name]
        assert len(src) == 1, src
        (dest / "wellplay" / lang).mkdir(parents=True)
        (dest / "wellplay" / lang / src[0].name).symlink_to(src[0], target_is_directory=True)
    return dest


@pytest.mark.realdata
def test_data_check_prints_the_paper_totals_for_both_languages(real_data_root):
    r = runner.invoke(app, ["data", "check", "--data-dir", str(real_data_root)])
    assert r.exit_code == 0, r.output
    assert "en: 12 scripts, 68 characters, 1482 questions (117 / 800 / 565)" in r.output
    assert "zh: 12 scripts, 68 characters, 1482 questions (117 / 800 / 565)" in r.output


def test_missing_data_dir_is_a_clear_error(tmp_path):
    r = runner.invoke(app, ["data", "check", "--data-dir", str(tmp_path / "nowhere")])
    assert r.exit_code == 2
    assert "nowhere" in r.output and "MAS_DATA_DIR" in r.output


@pytest.mark.realdata
def test_data_check_on_one_script(real_data_root, tmp_path):
    root = one_script_root(tmp_path / "datasets", real_data_root)
    r = runner.invoke(app, ["data", "check", "--data-dir", str(root)])
    assert r.exit_code == 0, r.output
    # Sin's four final_result/<character>.csv (en; zh: the same four files under Chinese names)
    # hold 13 + 6 + 11 + 14 = 44 rows, value a/b/c = 3 / 20 / 21 (counted with the csv module)
    assert "en: 1 scripts, 4 characters, 44 questions (3 / 20 / 21)" in r.output
    assert "zh: 1 scripts, 4 characters, 44 questions (3 / 20 / 21)" in r.output


@pytest.mark.realdata
def test_unknown_script_lists_the_known_ones(real_data_root, tmp_path):
    r = runner.invoke(app, ["mmg", "run", "--script", "Nope", "--out", str(tmp_path / "x"),
                            "--data-dir", str(real_data_root)])
    assert r.exit_code == 2
    assert "Sin" in r.output and "Death Wears White" in r.output


@pytest.mark.realdata
def test_unknown_script_lists_the_only_one(real_data_root, tmp_path):
    root = one_script_root(tmp_path / "datasets", real_data_root)
    r = runner.invoke(app, ["mmg", "run", "--script", "Nope", "--out", str(tmp_path / "x"),
                            "--data-dir", str(root)])
    assert r.exit_code == 2
    assert (f"unknown WellPlay script 'Nope' (en); give a name or an id: Sin ({SIN_ID})"
            in " ".join(r.output.split()))


@pytest.mark.realdata
def test_wellplay_always_a_without_shuffle(real_data_root, tmp_path):
    r = runner.invoke(app, ["wellplay", "eval", "--method", "always_a", "--script", "all", "--no-shuffle",
                            "--out", str(tmp_path), "--data-dir", str(real_data_root)])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "result.json").read_text())
    assert round(100 * res["weighted_score"], 1) == 48.9
    assert res["shuffle"] is False and res["method"] == "always_a" and res["scoring"] == "strict"


@pytest.mark.realdata
def test_wellplay_always_a_without_shuffle_on_sin(real_data_root, tmp_path):
    r = runner.invoke(app, ["wellplay", "eval", "--method", "always_a", "--script", SIN[0], "--no-shuffle",
                            "--out", str(tmp_path), "--data-dir", str(real_data_root)])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "result.json").read_text())
    # Counted in Sin's four final_result/<character>.csv with the csv module: `a` in upstream order
    # is right for none of the 3 objective rows (truth b), 8 of the 20 reasoning rows (truth a; the
    # three multi-select type-b rows have truth b, which `a` alone misses) and all 21 relation rows
    # (truth a). Weights 10 / 5 / 2 (PLAYER* §3): (0 + 8*5 + 21*2) / (3*10 + 20*5 + 21*2) = 82/172
    assert res["weighted_score"] == pytest.approx(82 / 172)
    assert res["shuffle"] is False and res["method"] == "always_a" and res["scoring"] == "strict"


def test_resume_without_out_is_refused(tmp_path):
    # refused before any script is looked up, so a root without data does
    r = runner.invoke(app, ["mmg", "run", "--script", SIN[0], "--resume", "--data-dir", str(tmp_path)])
    assert r.exit_code == 2 and "--out" in r.output


def test_ticker_writes_one_line_per_cell_when_stderr_is_not_a_terminal(capsys):
    from mas_agents.cli import progress
    with progress.progress() as prog:   # pytest's stderr is not a terminal: the bar is off
        task = prog.add_task("ablate", total=3)
        tick = progress.ticker(prog, task)
        tick("plain / Sin / seed 0")
        tick()
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2
    assert lines[0].endswith(" min") and "ablate: 1/3 done (plain / Sin / seed 0)" in lines[0]
    assert "ablate: 2/3 done," in lines[1]


def test_ablate_default_run_dir_names_the_benches_in_one_order(monkeypatch, tmp_path):
    import mas_agents.eval.ablate.grid
    seen = []

    def fake_run(cfg, **kw):
        seen.append(cfg)
        return {"summary": "ok"}
    monkeypatch.setattr(mas_agents.eval.ablate.grid, "run_ablate", fake_run)
    monkeypatch.chdir(tmp_path)
    for bench in ("all", "magic,spy,wellplay", "spy,wellplay", "wellplay,spy"):
        r = runner.invoke(app, ["ablate", "--bench", bench, "--speak-timeout", "12", "--data-dir", str(tmp_path)])
        assert r.exit_code == 0, r.output
    outs = [str(cfg.out) for cfg in seen]
    assert outs[0] == outs[1] == "runs/ablate-all-plain-player_star-pgm-local-s2g4-0-1-Sin"
    assert outs[2] == outs[3] == "runs/ablate-wellplay_spy-plain-player_star-pgm-local-s2g4-0-1-Sin"
    assert seen[0].speak_timeout == 12.0 and seen[2].benches == ("spy", "wellplay")


def test_mmg_human_who_is_not_a_character_is_refused_before_anything_is_written(tmp_path, real_data_root):
    out = tmp_path / "g"
    r = runner.invoke(app, ["mmg", "run", "--script", SIN[0], "--human", "Nobody", "--out", str(out),
                            "--data-dir", str(real_data_root)])
    assert r.exit_code == 2 and "'Nobody' is not a character of Sin" in r.output
    assert "Chief Wang" in r.output and not out.exists()


def test_a_missing_local_model_file_is_one_line_and_leaves_no_run(real_data_root, tmp_path):
    out = tmp_path / "spy"
    r = runner.invoke(app, ["spy", "play", "--agents", "plain,plain,plain,plain", "--model",
                            f"local:{tmp_path / 'none.gguf'}", "--out", str(out), "--data-dir", str(real_data_root)])
    assert r.exit_code == 2, r.output
    assert r.output.strip().splitlines() == [f"error: model spec 'local:{tmp_path / 'none.gguf'}': GGUF file not "
                                             f"found: {tmp_path / 'none.gguf'}"]
    assert not out.exists()
