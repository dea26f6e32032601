"""/play's new run directory and its starter's memory (review finding 6): two games started in
one second never share (nor fail on) a name; a long-lived server keeps a bounded number of errors
and no finished games' threads."""

from __future__ import annotations

import random

from mas_agents.web.routes.play import GameStarter, new_run_dir


class _Same(random.Random):
    """Draws 0x00ab twice, then 0x00cd: the second game's first name is taken."""

    def __init__(self):
        super().__init__()
        self.seq = [0xAB, 0xAB, 0xCD]

    def randrange(self, *a, **k):
        return self.seq.pop(0)


def test_a_name_taken_in_the_same_second_is_not_reused(tmp_path):
    rng = _Same()
    a = new_run_dir(tmp_path / "runs", "spy", rng)
    b = new_run_dir(tmp_path / "runs", "spy", rng)
    assert a.name.endswith("-00ab") and b.name.endswith("-00cd") and a != b
    assert a.is_dir() and b.is_dir() and list(b.iterdir()) == []


class _Fails:
    folder = "spy"

    def start(self, out, model, **kw):
        raise ValueError(f"no game in {out.name}")


def test_the_starter_keeps_a_bounded_record(tmp_path):
    st = GameStarter(model="local", data_root=None)
    n = GameStarter.MAX_ERRORS + 40
    for i in range(n):
        st.start(tmp_path / f"g{i}", f"g{i}", _Fails())
        st.threads[f"g{i}"].join()
    assert len(st.errors) == GameStarter.MAX_ERRORS
    assert "g0" not in st.errors and st.errors[f"g{n - 1}"] == f"ValueError: no game in g{n - 1}"
    assert list(st.threads) == [f"g{n - 1}"]        # the finished games' threads were dropped
