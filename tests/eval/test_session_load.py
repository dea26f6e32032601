"""The runner loads embedded models before the first turn, so a model's load is not a player's
time (WiS §3.1: 10 s to describe)."""

from mas_agents.game import runner as session
from mas_agents.local_chat import LocalLlamaChat
from tests.fakes import RuleChat, wis_player


class _Wrapped:
    """An accounted wrapper's shape: the chat model as ``.model``."""

    def __init__(self, model):
        self.model = model


def test_only_local_models_are_loaded(monkeypatch, tmp_path):
    loaded = []
    monkeypatch.setattr(LocalLlamaChat, "load", lambda self: loaded.append(self.model_path))
    local = LocalLlamaChat(model_path=str(tmp_path / "m.gguf"))
    remote_like = _Wrapped("gpt-4o-mini")          # a remote chat model's .model is its name
    n = session.load_local_models([_Wrapped(local), local, remote_like, RuleChat(rule=wis_player())])
    assert n == 2 and loaded == [str(tmp_path / "m.gguf")] * 2


def test_a_missing_local_model_file_stops_before_the_first_move(tmp_path):
    import pytest
    with pytest.raises(FileNotFoundError, match="GGUF model file not found"):
        session.load_local_models([_Wrapped(LocalLlamaChat(model_path=str(tmp_path / "none.gguf")))])


def test_the_runner_loads_before_the_first_turn(monkeypatch, tmp_path):
    order: list[str] = []
    real = session.load_local_models
    monkeypatch.setattr(session, "load_local_models", lambda models: order.append("load") or real(models))
    base = wis_player()

    def rule(messages):
        order.append("call")
        return base(messages)

    session.run("wis", tmp_path, model=RuleChat(rule=rule), agents=["plain"] * 4,
                pair={"civilian": "tea", "spy": "coffee"}, seed=0)
    assert order[0] == "load" and order.count("load") == 1 and order.count("call") >= 8
