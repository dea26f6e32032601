"""Run the commands of the README and the guides (docs/) on a seeded fake model and print a SHA-256 of every output file.

The check behind "every documented command produces byte-identical ``result.json`` on seeded
fake-model runs before and after" (ARCHITECTURE.md): run this on two commits and diff::

    .venv/bin/python scripts/fake_runs.py /tmp/before > before.txt   # on the old commit
    .venv/bin/python scripts/fake_runs.py /tmp/after  > after.txt    # on the new one
    diff <(grep result.json before.txt) <(grep result.json after.txt)

The fake (:func:`mas_agents.game.fake_chat.make_hash_model`, answering with
:class:`mas_agents.game.fake_chat.HashChat`) replaces :func:`mas_agents.llm.make_chat_model` for
every spec: its reply is a pure function of the prompt (a SHA-256 picks the numbered choice or option letter), so two runs of
the same code give the same files. Needs the datasets (``../shared/datasets`` or
``$MAS_DATA_DIR``). Every file's bytes are hashed with the run root replaced by ``R``;
JSON and JSONL files after zeroing clock readings and call ids (the keys
:data:`mas_agents.game.conformance_kit.CLOCK_KEYS` matches, ending in ``_s``, ``seconds``, ``_at``, ``date``, ``time``, ``call_id``, ``reprompt_of``...:
latency and wall time differ between two runs of the same commit); a gzip-compressed JSONL file (the
prompt log ``llm_prompts.jsonl.gz``) is hashed as its decompressed lines, normalised the same way;
every other byte counts. Markdown and
HTML files are hashed as written, so a diff also shows which of them moved. The conformance kit
(:mod:`mas_agents.game.conformance_kit`) and the golden tests (``tests/test_golden.py``) drop the
same keys before comparing runs (:func:`mas_agents.game.conformance_kit.untimed` with ``drop=True``).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import sys
from pathlib import Path

from mas_agents.game.conformance_kit import untimed
from mas_agents.game.fake_chat import make_hash_model


COMMANDS = [
    "mmg run --script Sin --out {R}/sin",
    "wellplay eval --method session --run {R}/sin --out {R}/sin-eval",
    "wellplay eval --method pp --script Sin --out {R}/pp",
    "wellplay eval --method op --script Sin --out {R}/op",
    "wellplay eval --method always_a --script all --out {R}/always_a",
    "wellplay eval --method random --script all --lang zh --out {R}/random",
    "wellplay compare --methods pp,op,plain,player_star,werewolf,ocot,thinkthrice,always_a,random"
    " --script Sin --seeds 1 --rounds 1 --out {R}/compare",
    "spy play --agents plain,plain+reasoning --seed 0 --out {R}/spy",
    "spy play --agents plain+attack,plain+defense,plain,plain --lang zh --seed 3 --out {R}/spy-zh",
    "spy tournament --agents plain,plain+reasoning,plain+attack --games 3 --db {R}/wis.sqlite --out {R}/tour",
    "spy leaderboard --db {R}/wis.sqlite --markdown",
    "spy experiment --kind attack --subject plain --others plain --games 2 --db {R}/wis.sqlite --out {R}/exp",
    "spy replay {R}/spy",
    "magic run --scenario all --challenger plain+pgm --defender plain --settings 0-1 --out {R}/magic",
    "ablate --bench all --base plain --blocks player_star,pgm --seeds 1 --script Sin --games 2 --settings 0-1"
    " --rounds 1 --out {R}/ablate",
]


def main() -> None:
    root = Path(sys.argv[1]).resolve()
    root.mkdir(parents=True, exist_ok=True)
    os.environ["MAS_DATA_HOME"] = str(root / "home")
    import mas_agents.llm as llm
    llm.make_chat_model = make_hash_model
    from typer.testing import CliRunner
    from mas_agents.cli import app
    runner = CliRunner()
    for cmd in COMMANDS:
        argv = cmd.format(R=root).split()
        res = runner.invoke(app, argv)
        out = re.sub(re.escape(str(root)), "R", res.output)
        print(f"## {' '.join(argv[:2])} exit={res.exit_code} stdout-sha={hashlib.sha256(out.encode()).hexdigest()[:16]}")
        if res.exit_code != 0:
            print(out[-2000:], file=sys.stderr)
            if res.exception is not None and not isinstance(res.exception, SystemExit):
                import traceback
                traceback.print_exception(res.exception, file=sys.stderr)
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "home" not in p.parts):
        data = path.read_bytes()
        if path.name.endswith(".jsonl.gz"):
            data = gzip.decompress(data)
        data = data.replace(str(root).encode(), b"R")
        if path.suffix == ".json":
            data = json.dumps(untimed(json.loads(data)), sort_keys=True).encode()
        elif path.suffix == ".jsonl" or path.name.endswith(".jsonl.gz"):
            data = "\n".join(json.dumps(untimed(json.loads(line)), sort_keys=True)
                              for line in data.decode().splitlines() if line.strip()).encode()
        print(f"{hashlib.sha256(data).hexdigest()[:16]}  {path.relative_to(root)}")


if __name__ == "__main__":
    main()
