"""WellPlay QA evaluation (PLAYER* §3): the answering methods, the run, the scores and ``mas wellplay compare``."""
