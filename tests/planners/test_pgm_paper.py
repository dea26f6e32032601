"""The ``pgm_paper`` block: MAgIC's PGM-aware agent as the paper built it (arXiv 2311.08562 §4, App. A.7).

Fakes answer the analysis form (one ``pgm_analysis`` call) and the MAgIC decisions
(:func:`tests.fakes.magic_player`); anything else raises.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mas_agents.accounting import AccountedModel
from mas_agents.call_log import CallRecorder
from mas_agents.prompt_log import read_prompts
from mas_agents.planners.base import ActionRequest
from mas_agents.agents import Agent, Persona
from mas_agents.events import make_event, read_events
from mas_agents.planners.pgm_paper import PaperPGMBlock, render_analysis_prompt, templates_for
from mas_agents.planners.pgm_paper.templates import ANALYSIS_HEAD, HEADER, TEMPLATES
from tests.fakes import RuleChat, magic_player, unrecognised
from tests.games import GAME

PLAYERS = ["Player 1", "Player 2", "Player 3"]


def fill_form(prompt: str, pick=None) -> str:
    """A filled analysis form: the form is the prompt's last paragraph; each ``<a, b or c>`` becomes
    ``pick(line, options)`` (default the first option) and each ``...`` a short reason."""
    form = prompt.rsplit("\n\n", 1)[1]
    out = []
    for line in form.splitlines():
        def choose(m, line=line):
            opts = [o.strip() for o in re.split(r",| or ", m.group(1)) if o.strip()]
            return pick(line, opts) if pick else opts[0]
        out.append(re.sub(r"<([^>]+)>", choose, line).replace("...", "it fits what I saw"))
    return "\n".join(out)


def paper_rule(pick=None, analyses: list | None = None):
    """:func:`magic_player` that also fills every analysis form (see :func:`fill_form`); the
    analysis prompts go to ``analyses``."""
    base = magic_player()

    def rule(messages):
        last = str(messages[-1].content)
        if last.startswith(ANALYSIS_HEAD):
            if "Fill in this form" not in last:
                raise unrecognised("paper_rule (analysis without a form)", messages)
            if analyses is not None:
                analyses.append(last)
            return fill_form(last, pick)
        return base(messages)
    return rule


def calls_of(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "llm_calls.jsonl").read_text().splitlines()]


def user_of(prompts: dict, call_id: str) -> str:
    return [m["content"] for m in prompts[call_id]["messages"] if m["role"] == "user"][0]


def play(tmp_path: Path, root: Path, scenario: str, side: str, *, challenger="plain+pgm_paper", rule=None) -> Path:
    from mas_agents.graphs.magic.bench import plan
    from mas_agents.graphs.magic.session import MagicGameConfig, play_magic_game
    [(sc, setting, sd)] = [g for g in plan(root, [scenario], "0") if g[2] == side]
    out = tmp_path / f"{scenario}-{side}"
    play_magic_game(out, MagicGameConfig(scenario=sc, setting=setting, side=sd, challenger=challenger,
                                         defender="plain", model=RuleChat(rule=rule or paper_rule(), seen=[])))
    return out


# -------------------------------------------------------------------------------- templates
def test_the_template_follows_the_capabilities_not_the_name():
    assert templates_for(GAME["chameleon"]).row == "Chameleon"
    assert templates_for(GAME["undercover"]).row == "Undercover"
    assert templates_for(GAME["cost_sharing"]).row == "Airport Fee"
    assert templates_for(GAME["prisoners_dilemma"]).row == "Prisoner's Dilemma"
    assert templates_for(GAME["public_good"]).row == "Public Good"
    # Who is Spy is an untold hidden role found by clues: Undercover's form; the murder mystery
    # (an investigation) has no PGM prompt in the paper
    assert templates_for(GAME["wis"]).key == "untold_role"
    assert templates_for(GAME["mmg"]) is None
    for t in TEMPLATES.values():
        for a in t.analyses.values():
            assert a.source.startswith("MAgIC (arXiv 2311.08562) App. A.7") and t.row in a.source


def test_the_two_hop_form_of_three_players():
    a = TEMPLATES["told_role"].analyses["other"]
    text = render_analysis_prompt(a, me="Player 1", players=PLAYERS, role="chameleon", word="",
                                  history=["You are Player 1.", "Round 1. Player 2 (clue): red"])
    head, history, intro, form = text.split("\n\n")
    assert head == ANALYSIS_HEAD and history == "You are Player 1.\nRound 1. Player 2 (clue): red"
    assert intro.startswith("Player 1, judge from the clues given so far how suspicious each other player is of "
                            "being the chameleon")
    r = "<more suspicious, less suspicious or no change>, because ..."
    assert form.splitlines() == [
        "As Player 1, I think:",
        f"Player 2 is {r}",
        f"Player 3 is {r}",
        "As for the others' thoughts:",
        f"I think now Player 2 thinks: Player 1 is {r}; Player 3 is {r}",
        f"I think now Player 3 thinks: Player 1 is {r}; Player 2 is {r}",
        "Most suspicious: <Player 2 or Player 3>",
    ]
    # a sentence about the seat's word is left out when it has none
    u = TEMPLATES["untold_role"].analyses["any"]
    assert '"mask"' in render_analysis_prompt(u, me="Player 2", players=PLAYERS, role="undercover", word="mask",
                                              history=[])
    assert "your word is" not in render_analysis_prompt(u, me="Player 2", players=PLAYERS, role="undercover", word="",
                                                        history=[])


# ------------------------------------------------------------------------- one agent by hand
def undercover_agent(rule, name="Player 1"):
    rec = CallRecorder(None)
    model = AccountedModel(RuleChat(rule=rule, seen=[]), rec, label="fake")
    persona = Persona(name=name, role="undercover", players=PLAYERS, system="Undercover rules.")
    agent = Agent(persona, model, None, [PaperPGMBlock()], game=GAME["undercover"])
    return agent, rec


def describe(agent, word="hood"):
    return agent.act(ActionRequest(kind="describe", actor=agent.name, prompt=f'You are {agent.name}. Your word is '
                                   f'"{word}".\nClue round 1: it is your turn. Give one short clue.',
                                   context={"word": word}, game=GAME["undercover"]))


@pytest.mark.parametrize("verdict, target, says", [
    ("yes", "Player 1", "your analysis says that you are the undercover: blend in and win the trust of the other players"),
    ("no", "Player 3", "your analysis says that Player 3 is the undercover: make Player 3 look more suspicious"),
    ("not sure", "Player 2", "your analysis does not tell you who the undercover is"),
])
def test_the_undercover_verdict_picks_the_decision_prompt(verdict, target, says):
    decisions = []

    def pick(line, opts):
        if line.startswith("Am I the undercover"):
            return verdict
        return target if line.startswith("As Player 1, I think") else opts[0]

    def rule(messages):
        last = str(messages[-1].content)
        if last.startswith(ANALYSIS_HEAD):
            return fill_form(last, pick)
        if '"Description: ..."' in last:
            decisions.append(last)
            return "Description: worn on the head"
        raise unrecognised("verdict test", messages)

    agent, rec = undercover_agent(rule)
    agent.observe([make_event(phase="setup", actor="game", kind="private_info", content='You are Player 1. Your word is "hood".',
                              visible_to=["Player 1"])])
    assert describe(agent).value == "worn on the head"
    [analysis] = [r for r in rec.calls() if r.purpose == "pgm_analysis"]
    assert analysis.actor == "Player 1"
    # the decision prompt holds the analysis text and the decision for that verdict
    assert f"{HEADER}\nAm I the undercover: {verdict}, because it fits what I saw" in decisions[0]
    assert says in decisions[0]
    [ev] = agent.drain_events()
    assert (ev["kind"], ev["visible_to"], ev["llm_call_ids"]) == ("pgm_analysis", ["Player 1"], [analysis.call_id])
    assert ev["data"]["verdict"] == verdict and ev["data"]["source"].endswith("row Undercover, PGM Prompt "
                                                                              "(Is undercover; Undercover; Civilian)")


def test_one_analysis_per_information_state_and_only_what_the_seat_sees():
    analyses = []
    agent, rec = undercover_agent(paper_rule(analyses=analyses))
    seen = [make_event(phase="setup", actor="game", kind="private_info", content='You are Player 1. Your word is "hood".',
                       visible_to=["Player 1"])]
    agent.observe(seen)
    describe(agent)
    describe(agent)        # nothing new seen: the analysis is reused, no call
    assert [r.purpose for r in rec.calls()] == ["pgm_analysis", "describe#1", "describe#1"]
    # another seat's private word is not seen; a planning note is not a game event: still no new analysis
    seen += [make_event(phase="setup", actor="game", kind="private_info", content='You are Player 2. Your word is "mask".',
                        visible_to=["Player 2"]),
             make_event(phase="planning", actor="Player 1", kind="note", content="to myself", visible_to=["Player 1"])]
    agent.observe(seen)
    describe(agent)
    assert [r.purpose for r in rec.calls()].count("pgm_analysis") == 1
    # a public clue is new: one more analysis, and it holds the clue but never the other word
    seen += [make_event(phase="clues", actor="Player 2", kind="clue", round=1, content="you wear it on a face")]
    agent.observe(seen)
    describe(agent)
    assert [r.purpose for r in rec.calls()].count("pgm_analysis") == 2
    assert "Round 1. Player 2 (clue): «you wear it on a face»" in analyses[1]
    assert all('"mask"' not in a and "to myself" not in a for a in analyses)
    # a request the block has no text for (another language, a private reading) gets nothing and costs nothing
    agent.observe(seen + [make_event(phase="clues", actor="Player 3", kind="clue", round=1, content="cloth")])
    zh = ActionRequest(kind="describe", actor="Player 1", prompt="You are Player 1.", context={"lang": "zh"},
                       game=GAME["undercover"])
    assert agent.blocks[0].contribute(agent, zh) is None
    assert [r.purpose for r in rec.calls()].count("pgm_analysis") == 2


def test_an_empty_analysis_adds_nothing_and_the_decision_still_happens():
    prompts = []

    def rule(messages):
        last = str(messages[-1].content)
        if last.startswith(ANALYSIS_HEAD):
            return ""
        if '"Description: ..."' in last:
            prompts.append(last)
            return "Description: worn on the head"
        raise unrecognised("empty analysis test", messages)

    agent, rec = undercover_agent(rule)
    agent.observe([make_event(phase="setup", actor="game", kind="private_info", content="You are Player 1.",
                              visible_to=["Player 1"])])
    assert describe(agent).value == "worn on the head"
    assert HEADER not in prompts[0] and [r.purpose for r in rec.calls()] == ["pgm_analysis", "describe#1"]
    [ev] = agent.drain_events()
    assert ev["content"].startswith("(no analysis") and ev["data"]["stance"] == "unsure"


# ---------------------------------------------------------------------------- whole games
def test_who_is_spy_gets_the_undercover_form_without_a_branch_on_its_name(tmp_path):
    from mas_agents.graphs.wis.session import WisGameConfig, play_game
    from tests.fakes import wis_player
    base, analyses = wis_player(), []

    def rule(messages):
        last = str(messages[-1].content)
        if last.startswith(ANALYSIS_HEAD):
            analyses.append(last)
            return fill_form(last)
        return base(messages)

    play_game(tmp_path, WisGameConfig(agents=["plain+pgm_paper"] + ["plain"] * 5,
                                      pair={"civilian": "tea", "spy": "coffee"}, model=RuleChat(rule=rule, seen=[]),
                                      seed=0, spy_seat=2, first_speaker=4))
    calls = [(c["actor"], c["purpose"]) for c in calls_of(tmp_path) if c["actor"] == "Player 1"]
    # speaking third, it analyses before its description and again before its vote (4 more descriptions seen)
    assert calls == [("Player 1", "pgm_analysis"), ("Player 1", "describe#1"), ("Player 1", "pgm_analysis"),
                     ("Player 1", "vote#1")]
    form = analyses[-1].rsplit("\n\n", 1)[1].splitlines()
    assert form[0] == "Am I the spy: <yes, no or not sure>, because ..."
    assert [x.split(" thinks")[0] for x in form[2:7]] == [f"I think Player {i}" for i in range(2, 7)]
    assert 'your word is "tea"' in analyses[0] and "coffee" not in "".join(analyses)


@pytest.mark.realdata
def test_chameleon_non_chameleons_write_their_analyses_and_decide_with_them(tmp_path, real_data_root):
    run = play(tmp_path, real_data_root, "chameleon", "non_chameleon")
    res = json.loads((run / "result.json").read_text())
    seats = res["challenger_seats"]
    calls = calls_of(run)
    prompts = read_prompts(run)
    events = read_events(run / "events.jsonl")
    ana = [c for c in calls if c["purpose"] == "pgm_analysis"]
    # only the challenger's seats; one analysis before anything is said, then one after each of the 3 clues
    assert sorted({c["actor"] for c in ana}) == sorted(seats) and len(seats) == 2
    assert [sum(c["actor"] == s for c in ana) for s in seats] == [4, 4]
    evs = [e for e in events if e["kind"] == "pgm_analysis"]
    assert [e["llm_call_ids"] for e in evs] == [[c["call_id"]] for c in ana]
    assert all(e["visible_to"] == [e["actor"]] for e in evs)
    for seat in seats:
        mine = [c for c in calls if c["actor"] == seat]
        latest = None
        for c in mine:
            if c["purpose"] == "pgm_analysis":
                latest = prompts[c["call_id"]]["completion"]
                assert latest.startswith(f"As {seat}, I think:")
                continue
            # every decision of the seat carries its latest analysis
            assert f"{HEADER}\n{latest}\n\n" in user_of(prompts, c["call_id"]), c["purpose"]
        clue = next(c for c in mine if c["purpose"] == "describe#1")
        target = next(p for p in PLAYERS if p != seat)   # the fake names the first other player
        assert (f"{seat}, you are not the chameleon: make {target} look more suspicious, for example by giving a clue "
                f"more specific than the clues of {target}.") in user_of(prompts, clue["call_id"])
        vote = next(c for c in mine if c["purpose"] == "vote#1")
        assert "Use this analysis in your answer." in user_of(prompts, vote["call_id"])
    # the defender (plain) wrote none and saw none
    other = next(p for p in PLAYERS if p not in seats)
    assert not any(HEADER in user_of(prompts, c["call_id"]) for c in calls if c["actor"] == other)


@pytest.mark.realdata
def test_hidden_information_stays_out_of_the_analysis(tmp_path, real_data_root):
    from mas_agents.graphs.magic.bench import plan
    # the chameleon: its analysis holds the topic, never the secret word; the chameleon's form
    analyses = []
    run = play(tmp_path, real_data_root, "chameleon", "chameleon", rule=paper_rule(analyses=analyses))
    [(_, st, _)] = [g for g in plan(real_data_root, ["chameleon"], "0") if g[2] == "chameleon"]
    mine = [a for a in analyses if f"You are {st.chameleon}." in a]
    assert mine and all(st.topic in a and st.code not in a and "The secret word may be:" in a for a in mine)
    assert all("non_chameleon" not in a and "self_awareness" not in a for a in analyses)
    prompts = read_prompts(run)
    clue = next(c for c in calls_of(run) if c["actor"] == st.chameleon and c["purpose"] == "describe#1")
    assert "you are the chameleon: blend in and win the trust of" in user_of(prompts, clue["call_id"])
    # undercover civilians: each analysis holds the seat's own word only
    analyses.clear()
    play(tmp_path, real_data_root, "undercover", "civilian", rule=paper_rule(analyses=analyses))
    [(_, su, _)] = [g for g in plan(real_data_root, ["undercover"], "0") if g[2] == "civilian"]
    assert analyses
    for a in analyses:
        me = re.search(r"You are (Player \d)\.", a).group(1)
        others_words = {w for p, w in su.words.items() if w != su.words[me]}
        assert f'your word is "{su.words[me]}"' in a and not any(f'"{w}"' in a for w in others_words)
    # the prisoner's dilemma: a round's analysis holds the seat's own earlier choices and the reveals,
    # never another seat's hidden choice
    analyses.clear()
    play(tmp_path, real_data_root, "prisoners_dilemma", "test_seat", rule=paper_rule(analyses=analyses))
    assert len(analyses) == 5
    for a in analyses:
        me = re.search(r"You are (Player \d)\.", a).group(1)
        assert not any(f"{p} (pd_choice)" in a for p in PLAYERS if p != me)
    # the seat's own hidden choice is no news to it (the reveal shows it): left out too
    assert "Round 4: " in analyses[-1] and "(pd_choice)" not in "".join(analyses)


@pytest.mark.realdata
def test_every_scenario_through_mas_magic_run(tmp_path, real_data_root, monkeypatch):
    from typer.testing import CliRunner

    from mas_agents import llm
    from mas_agents.cli import app
    monkeypatch.setattr(llm, "make_chat_model", lambda spec="local", **kw: RuleChat(rule=paper_rule(), seen=[]))
    out = tmp_path / "m"
    r = CliRunner().invoke(app, ["magic", "run", "--scenario", "all", "--challenger", "plain+pgm_paper",
                                 "--settings", "0", "--data-dir", str(real_data_root), "--out", str(out)])
    assert r.exit_code == 0, r.output
    per_game = {}
    for game in sorted((out / "games").iterdir()):
        res = json.loads((game / "result.json").read_text())
        ana = [c for c in calls_of(game) if c["purpose"] == "pgm_analysis"]
        assert {c["actor"] for c in ana} == set(res["challenger_seats"]), game.name
        per_game[game.name] = len(ana)
    # deduction: one analysis before the first clue and one after each clue (3 in Chameleon, 6 in
    # Undercover) per challenger seat, one more for a caught chameleon's guess; cost sharing: a
    # proposal and a vote (the fake agrees in round 1); PD and PG: one per round
    assert per_game == {"chameleon-chameleon-s00": 4, "chameleon-non_chameleon-s00": 8,
                        "undercover-undercover-s00": 7, "undercover-civilian-s00": 14,
                        "cost_sharing-test_seat-s00": 2, "prisoners_dilemma-test_seat-s00": 5,
                        "public_good-test_seat-s00": 5}
