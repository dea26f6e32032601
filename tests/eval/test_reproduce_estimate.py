"""What a `mas reproduce` run will cost, before it runs (issue 47 item 4): `--estimate` runs the
paper's protocol dry on :class:`mas_agents.eval.reproduce.estimate.DryRunChat` (no model is called), counts the
games, calls and tokens per cell and prices them; a real run reports its estimate beside the calls
and tokens it actually used.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mas_agents.eval.reproduce import estimate as E
from mas_agents.eval.reproduce import common
from mas_agents.eval.reproduce.magic import MagicRun
from mas_agents.eval.reproduce.player_star import PlayerStarRun
from mas_agents.actions import parse_reply
from mas_agents.grammar import ReplyFormat
from mas_agents.planners.base import ActionRequest


class NoModel:
    """Stands in for every real chat model: building one fails the test."""

    def __init__(self, *a, **k):
        raise AssertionError("the estimate built a real model")


@pytest.fixture
def no_model(monkeypatch):
    from mas_agents import llm
    monkeypatch.setattr(llm, "LocalLlamaChat", NoModel)
    monkeypatch.setattr(E, "default_tokenizer", E.Tokenizer)   # the GGUF vocabulary stays unread in tests


# ------------------------------------------------------------------ the fake and its counts


@pytest.mark.parametrize("req", [
    ActionRequest(kind="introduce", actor="A", prompt="p"),
    ActionRequest(kind="ask", actor="A", prompt="p", choices=["Bob", "Cy"]),
    ActionRequest(kind="answer", actor="A", prompt="p"),
    ActionRequest(kind="vote", actor="A", prompt="p", choices=["Bob", "Cy"]),
    ActionRequest(kind="choose", actor="A", prompt="p", choices=["cooperate", "defect"]),
    ActionRequest(kind="mcq", actor="A", prompt="p", choices=["x", "y", "z"]),
    ActionRequest(kind="mcq", actor="A", prompt="p", choices=["x", "y", "z"], multi=True),
    ActionRequest(kind="describe", actor="A", prompt="p"),
    ActionRequest(kind="guess", actor="A", prompt="p"),
    ActionRequest(kind="contribute", actor="A", prompt="p", max_value=100),
    ActionRequest(kind="propose", actor="A", prompt="p", fields=[("Airline A", []), ("Airline B", []), ("Airline C", [])]),
    ActionRequest(kind="form", actor="A", prompt="p", fields=[("Bob emotion", ["Calm", "Angry"]), ("Cy motive", ["Yes", "No"])]),
], ids=lambda r: f"{r.kind}{'-multi' if r.multi else ''}")
@pytest.mark.parametrize("think", [True, False])
def test_every_dry_reply_is_read_by_the_strict_parser(req, think):
    """The fake never needs a re-prompt: its reply to every action kind parses, to a legal value."""
    value, _ = parse_reply(req, E.dry_reply(ReplyFormat(req, think)))
    if req.kind in ("vote", "choose", "ask"):
        assert (value["target"] if req.kind == "ask" else value) == req.choices[0]
    if req.kind == "propose":
        assert sum(value) == 100
    if req.kind == "mcq":
        assert value == frozenset("a")


def test_the_dry_model_reports_the_tokens_of_the_prompt_it_got_and_of_its_reply():
    from langchain_core.messages import HumanMessage, SystemMessage
    tok = E.Tokenizer()
    chat = E.DryRunChat(tokenizer=tok)
    msgs = [SystemMessage(content="You are Bob. " * 10), HumanMessage(content="Who was in the garden at nine? " * 5)]
    req = ActionRequest(kind="vote", actor="Bob", prompt="p", choices=["Ann", "Cy"])
    reply = chat.invoke(msgs, **chat.constrain(ReplyFormat(req, True)))
    # 4 characters a token: 130 -> 33, 155 -> 39; 4 a message, 3 to start the reply
    assert reply.usage_metadata["input_tokens"] == tok.chat(msgs) == 33 + 4 + 39 + 4 + 3
    assert reply.usage_metadata["output_tokens"] == tok.text(reply.content) + 1
    assert reply.content.splitlines()[-1] == "Vote: Ann"
    free = chat.invoke(msgs)                       # a free-text call (no reply format): its set length
    assert E.REPLY_CHARS["free"] - 1 <= len(free.content) <= E.REPLY_CHARS["free"]
    assert tok.text("中文 abcd") == 2 + 2     # one a CJK character; the space and abcd: 5 ASCII -> 2


def test_price_is_per_million_tokens():
    assert common.price(2_000_000, 500_000, 0.5, 4.0) == pytest.approx(1.0 + 2.0)


# ------------------------------------------------------------------ a dry run of a protocol


@pytest.mark.realdata
def test_magic_estimate_counts_each_condition_without_calling_a_model(real_data_root, no_model):
    est = E.estimate(MagicRun(data_root=real_data_root, out=Path("unused"), model="local", limit=1,
                              conditions="vanilla,pgm_paper"))
    cells = {c["cell"]: c for c in est["cells"]}
    assert set(cells) == {"vanilla", "pgm_paper"}
    assert cells["vanilla"]["games"] == cells["pgm_paper"]["games"] == 7
    # the paper's agent writes an analysis before its decisions: more calls, longer prompts
    assert cells["pgm_paper"]["calls"] > cells["vanilla"]["calls"] > 7
    assert est["total"]["calls"] == cells["vanilla"]["calls"] + cells["pgm_paper"]["calls"]
    lines = "\n".join(E.render(est, price_in=1.0, price_out=2.0))
    t = est["total"]
    assert f"| **total** |  | 14 | {t['calls']} | {t['input_tokens']} | {t['output_tokens']} | " \
           f"{common.price(t['input_tokens'], t['output_tokens'], 1.0, 2.0):.2f} |" in lines
    assert "--limit 1 --conditions vanilla,pgm_paper" in lines and "4 characters per token" in lines


@pytest.mark.realdata
def test_the_estimate_equals_the_actual_cost_of_a_run_whose_model_behaves_like_the_fake(real_data_root, tmp_path,
                                                                                        no_model, monkeypatch):
    """A real run on the dry model itself costs exactly the estimate, and its report says so."""
    from mas_agents.eval.reproduce import magic
    from mas_agents import llm
    opts = {"conditions": "vanilla"}
    config = magic.MagicRun(data_root=real_data_root, out=tmp_path / "run", model="local", limit=1, concurrency=1,
                            **opts)
    est = E.estimate_for_run(config, price_in=3.0, price_out=15.0)
    monkeypatch.setattr(llm, "make_chat_model", lambda spec="local", **k: E.DryRunChat(tokenizer=E.Tokenizer()))
    res = magic.reproduce(config.replace(estimate=est))
    rows = {r["key"]: r for r in res["estimate_vs_actual"]["rows"]}
    assert rows["calls"]["actual"] == rows["calls"]["estimate"] == res["cost"]["calls"] > 0
    assert rows["input_tokens"]["actual"] == rows["input_tokens"]["estimate"] > 0
    assert rows["output_tokens"]["actual"] == rows["output_tokens"]["estimate"] > 0
    rep = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    assert f"| model calls | {res['cost']['calls']} | {res['cost']['calls']} | +0 % |" in rep
    assert "At 3 / 15 USD per million prompt / completion tokens: estimate" in rep
    stored = json.loads((tmp_path / "run" / "estimate.json").read_text())
    assert stored["total"] == est["total"] and stored["key"]["options"] == opts
    # a resumed run reuses the stored estimate (no new dry run)
    monkeypatch.setattr(E, "estimate", lambda *a, **k: pytest.fail("estimated again"))
    again = E.estimate_for_run(config)
    assert again["total"] == est["total"]


@pytest.mark.realdata
def test_player_star_estimate_counts_one_evaluation_run_per_run_asked(real_data_root, no_model):
    est = E.estimate(PlayerStarRun(data_root=real_data_root, out=Path("unused"), model="local", limit=1, langs="en",
                                   methods="pp", eval_runs=3))
    cells = {c["cell"]: c for c in est["cells"]}
    # Deadly Fountain: 36 questions, one call each, 3 runs; pp plays no game; the chance lines call nothing
    assert cells["en pp"]["calls"] == 3 * 36 and cells["en pp"]["games"] == 0
    assert cells["en pp"]["input_tokens"] % 3 == 0
    assert all(c["calls"] == 0 for k, c in cells.items() if k != "en pp")
    assert "player-star: one evaluation run answered, counted 3 times" in est["notes"]


def test_the_cli_prints_the_estimate_and_writes_nothing(tmp_path, monkeypatch):
    from mas_agents.cli import app
    seen = {}

    def fake_estimate(config, **kw):
        paper, opts = config.PAPER, config.as_options()
        seen.update(paper=paper, **opts)
        return {"paper": paper, "model": opts["model"], "others": None, "limit": opts["limit"],
                "options": opts["options"], "cells": [{"paper": paper, "cell": "en ocot", "games": 1, "calls": 100, "input_tokens": 2_000_000,
                           "output_tokens": 100_000}],
                "total": {"games": 1, "calls": 100, "input_tokens": 2_000_000, "output_tokens": 100_000},
                "tokenizer": "t", "reply_chars": E.REPLY_CHARS, "notes": []}
    monkeypatch.setattr(E, "estimate", fake_estimate)
    r = CliRunner().invoke(app, ["reproduce", "player-star", "--limit", "1", "--langs", "en", "--methods", "ocot",
                                 "--eval-runs", "1", "--estimate", "--price-in", "0.5", "--price-out", "2",
                                 "--out", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    assert "| player-star | en ocot | 1 | 100 | 2000000 | 100000 | 1.20 |" in r.output     # 1.00 + 0.20 USD
    assert seen["options"] == {"langs": "en", "methods": "ocot", "eval_runs": 1} and seen["limit"] == 1
    assert not (tmp_path / "o").exists()


def test_a_bad_option_is_one_error_line_before_any_dry_run(tmp_path, no_model):
    from mas_agents.cli import app
    r = CliRunner().invoke(app, ["reproduce", "magic", "--estimate", "--conditions", "nope", "--data-dir", str(tmp_path)])
    assert r.exit_code == 2 and "error: --conditions: unknown 'nope'" in r.output


@pytest.mark.realdata
def test_a_wis_run_reports_its_estimate_beside_what_it_used(real_data_root, tmp_path, no_model, monkeypatch):
    from mas_agents.eval.reproduce import wis
    from mas_agents import llm
    config = wis.WisRun(data_root=real_data_root, out=tmp_path / "w", pool="local,local", limit=1)
    est = E.estimate_for_run(config)
    assert est["total"]["games"] == 4 and est["total"]["calls"] > 0
    assert "a real model's may last 3 rounds" in "\n".join(E.render(est))
    monkeypatch.setattr(llm, "make_chat_model", lambda spec="local", **k: E.DryRunChat(tokenizer=E.Tokenizer()))
    res = wis.reproduce(config.replace(estimate=est))
    rows = {r["key"]: r for r in res["estimate_vs_actual"]["rows"]}
    assert rows["calls"]["actual"] == rows["calls"]["estimate"] == res["llm_calls"]
    assert rows["input_tokens"]["actual"] == rows["input_tokens"]["estimate"] > 0
    rep = (tmp_path / "w" / "report.md").read_text(encoding="utf-8")
    assert f"| model calls | {res['llm_calls']} | {res['llm_calls']} | +0 % |" in rep
    assert (tmp_path / "w" / "estimate.json").is_file()


@pytest.mark.realdata
def test_the_dry_run_stays_in_this_process_whatever_the_executor(real_data_root, no_model):
    """With --executor ray the cells would run in Ray workers, where the fake is not installed."""
    from mas_agents import cells
    before = cells.configure("ray", address="127.0.0.1:1")
    try:
        seen = []
        real_run_cells = cells.run_cells

        def spy(*a, **k):
            seen.append(cells.settings().kind)
            return real_run_cells(*a, **k)
        with pytest.MonkeyPatch.context() as mp:
            from mas_agents.graphs.magic import bench as magic_bench
            mp.setattr(magic_bench, "run_cells", spy, raising=False)
            est = E.estimate(MagicRun(data_root=real_data_root, out=Path("unused"), model="local", limit=1,
                                      conditions="vanilla"))
        assert est["total"]["games"] == 7 and est["total"]["calls"] > 0
        assert set(seen) <= {"local"}
        assert cells.settings().kind == "ray"              # put back afterwards
    finally:
        cells.restore(before)
