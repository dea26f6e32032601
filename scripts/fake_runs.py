"""Run the commands of the README and the guides (docs/) on a seeded fake model and print a SHA-256 of every output file.

The check behind "every documented command produces byte-identical ``result.json`` on seeded
fake-model runs before and after" (ARCHITECTURE.md): run this on two commits and diff::

    .venv/bin/python scripts/fake_runs.py /tmp/before > before.txt   # on the old commit
    .venv/bin/python scripts/fake_runs.py /tmp/after  > after.txt    # on the new one
    diff <(grep result.json before.txt) <(grep result.json after.txt)

The fake replaces :func:`mas_agents.llm.make_chat_model` for every spec: its reply is a pure
function of the prompt (a SHA-256 picks the numbered choice or option letter), so two runs of
the same code give the same files. Needs the datasets (``../shared/datasets`` or
``$MAS_DATA_DIR``). Every file's bytes are hashed with the run root replaced by ``R``;
JSON and JSONL files after zeroing clock readings and call ids (the keys :data:`CLOCK_KEYS`
matches, ending in ``_s``, ``seconds``, ``_at``, ``date``, ``time``, ``call_id``, ``reprompt_of``...:
latency and wall time differ between two runs of the same commit); a gzip-compressed JSONL file (the
prompt log ``llm_prompts.jsonl.gz``) is hashed as its decompressed lines, normalised the same way;
every other byte counts. Markdown and
HTML files are hashed as written, so a diff also shows which of them moved. The conformance and
golden tests (``tests/test_conformance.py``, ``tests/test_golden.py``) drop the same keys before
comparing runs (:func:`_untimed` with ``drop=True``).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult


class HashChat(BaseChatModel):
    """Answers every tagged field the prompt asks for; choices and letters picked by a hash."""

    @property
    def _llm_type(self) -> str:
        return "hash-fake"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        prompt = "\n".join(str(m.content) for m in messages)
        last = str(messages[-1].content)
        h = int(hashlib.sha256(prompt.encode()).hexdigest(), 16)
        tags = list(dict.fromkeys(re.findall(r'"([A-Z][A-Za-z ]{0,30}): \.\.\."', last)))
        choices = re.findall(r"^\d+\. (.+)$", last, re.M)
        letters = re.findall(r"^([a-h])[.)] ", last, re.M)
        lines = ["Thinking it over."]
        for i, tag in enumerate(tags or ["Answer"]):
            k = (h >> (8 * i)) & 0xFFFF
            if letters and tag == "Answer":
                val = letters[k % len(letters)]
            elif choices:
                val = choices[k % len(choices)]
            else:
                val = f"something round and warm number {k % 97}"
            lines.append(f"{tag}: {val}")
        text = "\n".join(lines)
        msg = AIMessage(content=text, usage_metadata={"input_tokens": len(prompt.split()),
                                                     "output_tokens": len(text.split()), "total_tokens": 0})
        return ChatResult(generations=[ChatGeneration(message=msg)])


def _fake_make(spec: Any = "local", **kwargs: Any) -> BaseChatModel:
    if isinstance(spec, BaseChatModel):
        return spec
    return HashChat()


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
    llm.make_chat_model = _fake_make
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
            data = json.dumps(_untimed(json.loads(data)), sort_keys=True).encode()
        elif path.suffix == ".jsonl" or path.name.endswith(".jsonl.gz"):
            data = "\n".join(json.dumps(_untimed(json.loads(line)), sort_keys=True)
                              for line in data.decode().splitlines() if line.strip()).encode()
        print(f"{hashlib.sha256(data).hexdigest()[:16]}  {path.relative_to(root)}")


#: Keys whose values are clock readings (seconds measured, dates) or random call ids (uuid4; a
#: prompt record's ``reprompt_of`` is one);
#: zeroed before hashing JSON, dropped before the tests compare runs.
CLOCK_KEYS = re.compile(r"(_s|_seconds|^seconds|_at|^started|^created|_date|^date|_time|^time|^call_ids?|_call_ids"
                        r"|^reprompt_of)$")


def _untimed(obj: Any, drop: bool = False) -> Any:
    """``obj`` (parsed JSON) with the value of every :data:`CLOCK_KEYS` key set to None, in every
    nested dict; with ``drop``, without those keys."""
    if isinstance(obj, dict):
        if drop:
            return {k: _untimed(v, drop) for k, v in obj.items() if not CLOCK_KEYS.search(str(k))}
        return {k: (None if CLOCK_KEYS.search(str(k)) else _untimed(v, drop)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_untimed(v, drop) for v in obj]
    return obj


if __name__ == "__main__":
    main()
