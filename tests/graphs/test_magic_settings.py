"""Tests of mas_agents.graphs.magic.dataset: id ranges, the real MAgIC settings, and bad-file errors.

Known values come from ``<data>/magic/README.md`` (section "Schemas") and the setting files.
Tests of the real settings are ``realdata`` tests (deselected when the datasets are not found);
the loader's errors are also tested on files the tests write into a temporary folder.
"""

import json

import pytest

from mas_agents.graphs.magic import dataset as ms
from mas_agents.graphs.magic import rules as rules

P1, P2, P3 = "Player 1", "Player 2", "Player 3"


# --------------------------------------------------------------------------- ids, ranges, names

def test_setting_ids():
    assert ms.setting_ids("chameleon") == list(range(20))
    assert ms.setting_ids("undercover") == list(range(20))
    for s in ("cost_sharing", "prisoners_dilemma", "public_good"):
        assert ms.setting_ids(s) == list(range(21))
    assert ms.setting_ids("airportfee") == list(range(21))      # folder alias


def test_scenario_name():
    assert ms.scenario_name("prisoner") == "prisoners_dilemma"
    assert ms.scenario_name("airportfee") == "cost_sharing"
    assert ms.scenario_name("public_good") == "public_good"
    with pytest.raises(ValueError, match="unknown MAgIC scenario"):
        ms.scenario_name("werewolf")


@pytest.mark.parametrize("spec,expected", [
    ("0-1", [0, 1]), ("0-19", list(range(20))), ("7", [7]), ("3,5,7-9", [3, 5, 7, 8, 9]),
    (" 3 , 5 ", [3, 5]), ("5,3,3-4", [5, 3, 4]), ("2-2", [2]),
])
def test_parse_range(spec, expected):
    assert ms.parse_range(spec) == expected


@pytest.mark.parametrize("spec", ["", "  ", "a", "1-", "-1", "5-3", "1,,2", "1.5", "1-2-3"])
def test_parse_range_rejects(spec):
    with pytest.raises(ValueError):
        ms.parse_range(spec)


def test_parse_range_checks_scenario_ids():
    assert ms.parse_range("18-20", "public_good") == [18, 19, 20]
    with pytest.raises(ValueError, match="outside the chameleon settings"):
        ms.parse_range("18-20", "chameleon")


# --------------------------------------------------------------------------- real data

@pytest.mark.realdata
@pytest.mark.parametrize("scenario,count,cls", [
    ("chameleon", 20, ms.ChameleonSetting), ("undercover", 20, ms.UndercoverSetting),
    ("cost_sharing", 21, ms.CostSharingSetting), ("prisoners_dilemma", 21, ms.PDSetting),
    ("public_good", 21, ms.PGSetting),
])
def test_counts_and_types(real_data_root, scenario, count, cls):
    settings = ms.load_settings(real_data_root, scenario)
    assert len(settings) == count
    assert [s.id for s in settings] == list(range(count))
    assert all(isinstance(s, cls) for s in settings)


@pytest.mark.realdata
def test_chameleon_known_values(real_data_root):
    s = ms.load_setting(real_data_root, "chameleon", 5)
    assert (s.topic, s.code, s.chameleon) == ("Fruits", "Grape", P3)
    assert set(s.clues) == {P1, P2, P3} and all(isinstance(c, str) and c for c in s.clues.values())
    assert s.roles == {P1: "non_chameleon", P2: "non_chameleon", P3: "chameleon"}
    assert {x.topic for x in ms.load_settings(real_data_root, "chameleon")} == {"Fruits", "Animals", "Sports", "Countries"}
    assert ms.load_setting(real_data_root, "chameleon", 2).code == "United Kingdom"


@pytest.mark.realdata
def test_undercover_known_values(real_data_root):
    s = ms.load_setting(real_data_root, "undercover", 1)
    assert (s.undercover_word, s.civilian_word, s.undercover) == ("cup", "mug", P1)
    assert s.words == {P1: "cup", P2: "mug", P3: "mug"}
    assert s.roles == {P1: "undercover", P2: "civilian", P3: "civilian"}
    assert all(len(c) == 2 for c in s.clues.values())
    pairs = [(x.undercover_word, x.civilian_word) for x in ms.load_settings(real_data_root, "undercover")]
    assert pairs[8] == pairs[13] == ("government", "police")
    assert pairs[-1] == ("trap", "dynamite")


@pytest.mark.realdata
def test_cost_sharing_known_values(real_data_root):
    s = ms.load_setting(real_data_root, "cost_sharing", 6)
    assert s.test_player == P1 and s.fee == 1_000_000
    assert s.proposals == {P1: [40, 30, 30], P2: [50, 25, 25], P3: [50, 25, 25]}
    assert "Number of Flights: 90/month" in s.topic
    assert rules.parse_split(s.first_msg[P2]) == (50.0, 25.0, 25.0)
    # ids 3k..3k+2 share a profile and the test seat rotates
    all_ = ms.load_settings(real_data_root, "cost_sharing")
    assert [x.test_player for x in all_[:3]] == [P1, P2, P3]
    assert all_[6].topic == all_[7].topic == all_[8].topic


@pytest.mark.realdata
def test_cost_sharing_sum_99_quirk_is_loaded_as_is(real_data_root):
    for i in (9, 10):
        s = ms.load_setting(real_data_root, "airportfee", i)
        assert s.proposals[P3] == [65, 17, 17]
        assert rules.valid_split(s.proposals[P3]) is False          # documented: tolerance 0.5 rejects it
        assert rules.parse_split(s.first_msg[P3]) == (65.0, 17.5, 17.5)
    others = [x for x in ms.load_settings(real_data_root, "cost_sharing") if x.id not in (9, 10)]
    assert all(rules.valid_split(p) for x in others for p in x.proposals.values())


@pytest.mark.realdata
def test_prisoner_tables_in_id_order(real_data_root):
    tables = [(t["cooperate"], t["defect"], t["one_defect"], t["two_defect"])
              for t in (s.payoffs for s in ms.load_settings(real_data_root, "prisoners_dilemma"))]
    expected = [(3, 1, 5, 2), (3, 1, 10, 2), (3, 1, 20, 2), (3, 1, 5, 3), (3, 1, 5, 4), (3, 1, 5, 5),
                (5, 1, 5, 3)]
    assert tables == [t for t in expected for _ in range(3)]
    assert [s.test_player for s in ms.load_settings(real_data_root, "prisoner", "0-2")] == [P1, P2, P3]


@pytest.mark.realdata
def test_public_good_multipliers_in_id_order(real_data_root):
    settings = ms.load_settings(real_data_root, "public_good")
    assert [s.multiplier for s in settings] == [m for m in (1, 1.2, 1.5, 1.8, 2, 2.5, 3) for _ in range(3)]
    assert all(s.rounds == 5 for s in settings)
    assert [s.test_player for s in settings[-3:]] == [P1, P2, P3]


@pytest.mark.realdata
def test_load_settings_with_ids(real_data_root):
    assert [s.id for s in ms.load_settings(real_data_root, "chameleon", "3,5,7-9")] == [3, 5, 7, 8, 9]
    assert [s.id for s in ms.load_settings(real_data_root, "undercover", [4, 1])] == [4, 1]


@pytest.mark.realdata
def test_missing_id_in_real_data(real_data_root):
    with pytest.raises(FileNotFoundError, match="20.json"):
        ms.load_setting(real_data_root, "chameleon", 20)


# --------------------------------------------------------------------------- bad files (tmp_path)

def _write(root, folder, i, data):
    d = root / "magic" / "settings" / folder
    d.mkdir(parents=True, exist_ok=True)
    p = d / f"{i}.json"
    p.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return p


GOOD_CHAMELEON = {"game_setting": {"topic": "Fruits", "code": "Grape", "chameleon_name": P3},
                  "clue": {P1: "wine", P2: "small", P3: "red"}}


def test_tmp_good_file_loads(tmp_path):
    _write(tmp_path, "chameleon", 0, GOOD_CHAMELEON)
    s = ms.load_setting(tmp_path, "chameleon", 0)
    assert s == ms.ChameleonSetting(0, "Fruits", "Grape", P3, {P1: "wine", P2: "small", P3: "red"})


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        ms.load_setting(tmp_path, "public_good", 3)
    assert str(tmp_path / "magic" / "settings" / "public_good" / "3.json") in str(e.value)


def test_bad_json_names_the_file(tmp_path):
    p = _write(tmp_path, "prisoner", 0, "{not json")
    with pytest.raises(ValueError, match="not valid JSON") as e:
        ms.load_setting(tmp_path, "prisoners_dilemma", 0)
    assert str(p) in str(e.value)


def test_non_object_json(tmp_path):
    _write(tmp_path, "prisoner", 0, "[1, 2]")
    with pytest.raises(ValueError, match="expected a JSON object"):
        ms.load_setting(tmp_path, "prisoners_dilemma", 0)


@pytest.mark.parametrize("folder,scenario,data,field", [
    ("chameleon", "chameleon", {"game_setting": {"topic": "Fruits", "chameleon_name": P3},
                                "clue": GOOD_CHAMELEON["clue"]}, "game_setting.code"),
    ("chameleon", "chameleon", {**GOOD_CHAMELEON, "game_setting": {**GOOD_CHAMELEON["game_setting"],
                                                                   "chameleon_name": "Player 4"}},
     "game_setting.chameleon_name"),
    ("chameleon", "chameleon", {**GOOD_CHAMELEON, "clue": {P1: "a", P2: "b"}}, "clue"),
    ("undercover", "undercover", {"game_setting": {"undercover_code": "cup", "non_undercover_code": "mug",
                                                   "undercover_name": P1},
                                  "clues": {P1: ["a", "b"], P2: ["a"], P3: ["a", "b"]}}, "clues.Player 2"),
    ("undercover", "undercover", {"game_setting": {"undercover_code": "", "non_undercover_code": "mug",
                                                   "undercover_name": P1},
                                  "clues": {P1: ["a", "b"], P2: ["a", "b"], P3: ["a", "b"]}},
     "game_setting.undercover_code"),
    ("airportfee", "cost_sharing", {"test_player_name": P1, "topic": "Fixed Airport Fee: $1,000,000",
                                    "proposal": {P1: [40, 30, 30], P2: [50, 25], P3: [50, 25, 25]}},
     "proposal.Player 2"),
    ("airportfee", "cost_sharing", {"test_player_name": P1, "topic": "no fee here",
                                    "proposal": {P1: [40, 30, 30], P2: [50, 25, 25], P3: [50, 25, 25]}},
     "topic"),
    ("airportfee", "cost_sharing", {"topic": "Fixed Airport Fee: $1,000,000",
                                    "proposal": {P1: [40, 30, 30], P2: [50, 25, 25], P3: [50, 25, 25]}},
     "test_player_name"),
    ("prisoner", "prisoners_dilemma", {"test_player_name": P2,
                                       "topic_values": {"cooperate": 3, "defect": 1, "one_defect": 5}},
     "topic_values.two_defect"),
    ("prisoner", "prisoners_dilemma", {"test_player_name": P2,
                                       "topic_values": {"cooperate": 3, "defect": "1", "one_defect": 5,
                                                        "two_defect": 2}}, "topic_values.defect"),
    ("public_good", "public_good", {"test_player_name": P2, "game_round": 0, "multiplier": 1.5}, "game_round"),
    ("public_good", "public_good", {"test_player_name": P2, "game_round": 5, "multiplier": "2"}, "multiplier"),
    ("public_good", "public_good", {"test_player_name": "Player 0", "game_round": 5, "multiplier": 2},
     "test_player_name"),
])
def test_bad_field_names_file_and_field(tmp_path, folder, scenario, data, field):
    p = _write(tmp_path, folder, 4, data)
    with pytest.raises(ValueError) as e:
        ms.load_setting(tmp_path, scenario, 4)
    msg = str(e.value)
    assert str(p) in msg and repr(field) in msg


def test_airport_file_without_first_msg_loads(tmp_path):
    _write(tmp_path, "airportfee", 8, {"test_player_name": P3, "topic": "Fixed Airport Fee: $1,000,000\n",
                                       "proposal": {P1: [40, 30, 30], P2: [50, 25, 25], P3: [50, 25, 25]}})
    s = ms.load_setting(tmp_path, "airportfee", 8)
    assert s.first_msg == {} and s.fee == 1_000_000 and s.test_player == P3


@pytest.mark.parametrize("bad_id", [-1, True, "3", 1.0])
def test_bad_id(tmp_path, bad_id):
    with pytest.raises(ValueError):
        ms.load_setting(tmp_path, "chameleon", bad_id)


def test_unknown_scenario(tmp_path):
    with pytest.raises(ValueError, match="unknown MAgIC scenario"):
        ms.load_setting(tmp_path, "werewolf", 0)
