"""The game kit: what every game stands on (ARCHITECTURE.md, "Layers").

The game contract (:mod:`.contract`: GameDef, Table, the registry), a game's view in ``mas serve`` (:mod:`.view`), its conformance hooks (:mod:`.conformance`) and the conformance kit that runs them on any game, with its fake models and prompt-leak checks (:mod:`.conformance_kit`, :mod:`.fake_chat`, :mod:`.prompt_leaks`), the one runner of a game (:mod:`.runner`), the seats of a run (:mod:`.seats`), the run configuration (:mod:`.run_config`, :mod:`.record`), the datasets root (:mod:`.data`), call cost (:mod:`.cost`), protocol fingerprints (:mod:`.fingerprint`) and the shared plumbing of a person's seat (:mod:`.human`). It names no game; every game's folder (``graphs/<game>/``) imports it.
"""
