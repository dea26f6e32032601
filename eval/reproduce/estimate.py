"""What a ``mas reproduce`` run will cost, before it runs (issue 47 item 4): ``--estimate``.

How (:func:`estimate`): the paper's own ``reproduce(...)`` is run, with the same ``--limit``,
subsets and conditions, into a temporary folder, with every model spec answered by
:class:`DryRunChat`, a fake chat model that calls nothing: it answers each action in the format the
game asks (from the request's own reply format, :class:`mas_agents.grammar.ReplyFormat`, so no
re-prompt is ever needed) and counts the tokens of every prompt it gets and every reply it gives.
It runs in this process whatever ``--executor`` says (a Ray worker would build the real models).
The games, planner blocks, retrieval and evaluations are the real ones, so the number of calls and
the prompts (rules, scripts, retrieved excerpts, dialogue so far) are the protocol's; what the
fake cannot know is how long a real model's replies are, which also feeds later prompts.

* **Calls** are exact for the protocol as planned: the same games and questions; a real model's
  re-prompts after an unreadable reply (at most one per action) and the different course of its
  games (a game that ends earlier or later) are not in them.
* **Prompt tokens**: every message as the model receives it, counted by :class:`Tokenizer`: the
  embedded model's own tokenizer and chat template (SmolLM2's, read from its GGUF without loading
  the weights: exact for ``--model local``; for another model an estimate, GPT-family tokenizers
  count English text within about 10-20 % of it), else 4 characters per token (1 per CJK
  character) plus 4 per message.
* **Completion tokens**: the fake's replies, whose lengths (:data:`REPLY_CHARS`) were checked
  against the embedded model's replies in a measured PLAYER* game: a thought line, then the tagged
  line(s); a free-text call (a reflection, a PGM analysis) writes :data:`REPLY_CHARS` ``["free"]``
  characters.
* **Evaluation runs** of PLAYER*: the dry run answers one run and multiplies it by
  ``--eval-runs`` (each run asks the same questions with other option orders).

``render`` prints the table per cell and the price at ``--price-in`` / ``--price-out`` (USD per
million tokens). After a real run (every paper but ``all``, :data:`COMPARED`) the report
sets the estimate it made first (``OUT/estimate.json``) beside the calls and tokens actually
used (:func:`versus_actual`).

Who is Spy? is the least certain: the fake's votes agree, so its games often end in round 1,
while a real model's may last the 3 rounds (up to three times the descriptions and votes);
:func:`render` says so.

:func:`estimate` and :func:`estimate_for_run` take the run's own configuration
(:class:`mas_agents.eval.reproduce.common.PaperRun`, as the CLI builds it). Imports kept inside a
function: ``llama_cpp`` (:class:`GGUFTokenizer`; optional, and heavy to load).
"""

from __future__ import annotations

import contextlib
import json
import tempfile
import threading
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from mas_agents import cells as executor
from mas_agents.accounting import message_text
from mas_agents.prompt_log import set_record_prompts
from mas_agents.eval.reproduce import registry
from mas_agents.eval.reproduce.common import PaperRun, md_table, price
from mas_agents.grammar import render_json_reply, reply_schema
from mas_agents.embedded import embedded_model_path
from mas_agents.model_specs import set_spec_override
from mas_agents.local_chat import to_llama_messages
from mas_agents.rundir import CALLS_FILE

#: Papers whose real run makes an estimate first and reports it beside the actual cost.
COMPARED = ("magic", "player-star", "wis")

#: Characters of the dry-run replies: ``thought`` (the line before a tagged line; the grammar
#: allows 200), ``text`` (an utterance: introduction, question, answer, description; 10-400
#: allowed), ``free`` (a free-text call such as a reflection or a PGM analysis). Checked against
#: the embedded model (SmolLM2-135M) playing PLAYER* on Deadly Fountain, measured earlier (README:
#: 41 calls, 75,926 prompt and 3,467 completion tokens): the dry run of that game makes 41 calls,
#: 74,186 prompt and 3,469 completion tokens (SmolLM2's tokenizer). The first 10 calls of a later
#: real game had 10 % more prompt and 33 % more completion tokens than the dry run's first 10
#: (its utterances ran longer), so a single game can differ by that much.
REPLY_CHARS = {"thought": 160, "text": 180, "free": 420}


# ----------------------------------------------------------------------------------- tokens


class Tokenizer:
    """Counts tokens: ``text(s)`` of plain text, ``chat(messages)`` of a prompt as sent.

    The default (:func:`default_tokenizer`) is the embedded model's; this base class is the
    fallback heuristic: 4 characters per token for ASCII text, 1 token per other character (CJK
    text runs close to one token per character in BPE vocabularies), 4 tokens per message for
    its role and separators, 3 to start the reply."""

    name = "4 characters per token (1 per non-ASCII character) + 4 per message"

    def text(self, s: str) -> int:
        ascii_chars = sum(1 for ch in s if ord(ch) < 128)
        return -(-ascii_chars // 4) + (len(s) - ascii_chars)

    def chat(self, messages: list[BaseMessage]) -> int:
        return sum(self.text(message_text(m.content)) + 4 for m in messages) + 3


class GGUFTokenizer(Tokenizer):
    """The tokenizer and chat template of a GGUF model file, read with ``vocab_only`` (no weights,
    no inference): the count is the one llama.cpp reports for that model's calls.

    Raises:
        FileNotFoundError / ImportError: the file or llama-cpp-python is missing."""

    def __init__(self, path: str):
        from llama_cpp import Llama, llama_chat_format
        try:   # llama.cpp warns on stderr about the context of a vocabulary-only load: noise here
            from llama_cpp._utils import suppress_stdout_stderr
            quiet = suppress_stdout_stderr(disable=False)
        except ImportError:
            quiet = contextlib.nullcontext()
        with quiet:
            self._llama = Llama(model_path=path, vocab_only=True, verbose=False)
        meta = self._llama.metadata
        template = meta.get("tokenizer.chat_template")
        eos_id, bos_id = self._llama.token_eos(), self._llama.token_bos()
        eos = self._llama.detokenize([eos_id], special=True).decode("utf-8", "ignore") if eos_id != -1 else ""
        bos = self._llama.detokenize([bos_id], special=True).decode("utf-8", "ignore") if bos_id != -1 else ""
        self._format = (llama_chat_format.Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
                        if template else llama_chat_format.format_chatml)
        self._lock = threading.Lock()
        self.name = f"{Path(path).name}'s own tokenizer and chat template"

    def text(self, s: str) -> int:
        with self._lock:
            return len(self._llama.tokenize(s.encode("utf-8"), add_bos=False, special=False))

    def chat(self, messages: list[BaseMessage]) -> int:
        result = self._format(messages=to_llama_messages(messages))
        with self._lock:
            return len(self._llama.tokenize(result.prompt.encode("utf-8"), add_bos=not result.added_special,
                                            special=True))


def default_tokenizer() -> Tokenizer:
    """The embedded model's tokenizer (:class:`GGUFTokenizer` of SmolLM2's GGUF), or the
    heuristic :class:`Tokenizer` when that package or llama-cpp-python is not installed."""
    try:
        return GGUFTokenizer(embedded_model_path())
    except (ImportError, FileNotFoundError, OSError, ValueError):
        return Tokenizer()


# ----------------------------------------------------------------------------------- the fake


def _filler(chars: int, what: str) -> str:
    """Plain English text of about ``chars`` characters (no format tag, no newline)."""
    base = (f"Thinking about the {what}, I weigh what each player said and did so far and what I know "
            "myself, then choose what fits the facts best and keep my own goal in mind. ")
    return (base * (chars // len(base) + 1))[:chars].rstrip()


def dry_reply(fmt: Any, chars: dict[str, int] = REPLY_CHARS) -> str:
    """A reply that the strict parser accepts for the request of ``fmt`` (a
    :class:`mas_agents.grammar.ReplyFormat`): a thought line when asked, then the tagged line(s)
    with the first legal choice, option ``a``, an even split, 10 points, or an utterance of
    ``chars["text"]`` characters. Rendered by :func:`mas_agents.grammar.render_json_reply` from an
    object of its JSON schema, so it follows the same rules as a constrained model's reply.

    Raises:
        ValueError: an action kind the reply schema does not know."""
    req = fmt.request
    schema = reply_schema(req, fmt.think)
    obj: dict[str, Any] = {}
    for key, prop in schema["properties"].items():
        if key == "thought":
            obj[key] = _filler(chars["thought"], req.kind)
        elif key == "proposal":
            names = list(prop["required"])
            shares = [100 // len(names)] * len(names)
            shares[0] += 100 - sum(shares)
            obj[key] = dict(zip(names, shares))
        elif "enum" in prop:
            obj[key] = prop["enum"][0]
        elif prop.get("type") == "integer":
            obj[key] = 10
        elif key == "guess":
            obj[key] = "apple"
        else:
            obj[key] = _filler(max(prop.get("minLength", 1), min(chars["text"], prop.get("maxLength", 400))), key)
    return render_json_reply(req, fmt.think, json.dumps(obj))


class DryRunChat(BaseChatModel):
    """A chat model that calls nothing: it answers in the format asked (:func:`dry_reply`; a call
    without a reply format gets ``REPLY_CHARS["free"]`` characters of text) and reports the tokens
    of the prompt and of its reply by ``tokenizer`` in ``usage_metadata``, which
    :class:`mas_agents.accounting.AccountedModel` records like a real model's."""

    tokenizer: Any
    chars: dict = REPLY_CHARS

    @property
    def _llm_type(self) -> str:
        return "dry-run"

    def constrain(self, fmt: Any) -> dict:
        """The reply format travels to :meth:`_generate` (a real model gets a grammar here)."""
        return {"dry_format": fmt}

    def _generate(self, messages: list[BaseMessage], stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        fmt = kwargs.get("dry_format")
        text = dry_reply(fmt, self.chars) if fmt is not None else _filler(self.chars["free"], "situation")
        n_in, n_out = self.tokenizer.chat(messages), self.tokenizer.text(text) + 1   # + the end token
        msg = AIMessage(content=text, usage_metadata={"input_tokens": n_in, "output_tokens": n_out,
                                                      "total_tokens": n_in + n_out})
        return ChatResult(generations=[ChatGeneration(message=msg)])


# ----------------------------------------------------------------------------------- the estimate


def _cell(paper: str, rel: Path) -> tuple[str, str | None]:
    """``(cell label, game folder or None)`` of a call log at ``rel`` (relative to the run)."""
    parts = rel.parts[:-1]
    if paper == "player-star" and "cells" in parts:   # <lang>/cells/<method>/<script>/seed0/<game|eval>
        i = parts.index("cells")
        lang, method, part = parts[0], parts[i + 1], parts[-1]
        return f"{lang} {method}", ("/".join(parts) if part == "game" else None)
    if "games" in parts:                               # magic: <condition>/games/<game>
        i = parts.index("games")
        return " ".join(parts[:i]) or "games", "/".join(parts[:i + 2])
    return (parts[0] if parts else "run"), ("/".join(parts) if parts else None)


def collect(paper: str, root: Path, eval_scale: int = 1) -> list[dict]:
    """Per cell, from every ``llm_calls.jsonl`` under ``root``: ``{"cell", "games", "calls",
    "input_tokens", "output_tokens"}``; the evaluation logs of PLAYER* (folders named ``eval``)
    count ``eval_scale`` times (the dry run answers one evaluation run)."""
    cells: dict[str, dict] = {}
    for path in sorted(Path(root).rglob(CALLS_FILE)):
        rel = path.relative_to(root)
        label, game = _cell(paper, rel)
        row = cells.setdefault(label, {"cell": label, "games": set(), "calls": 0, "input_tokens": 0,
                                       "output_tokens": 0})
        k = eval_scale if rel.parts[-2] == "eval" else 1
        if game is not None:
            row["games"].add(game)
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    c = json.loads(line)
                    row["calls"] += k
                    row["input_tokens"] += k * int(c.get("input_tokens") or 0)
                    row["output_tokens"] += k * int(c.get("output_tokens") or 0)
    return [{**r, "games": len(r["games"])} for r in cells.values()]


def estimate(config: PaperRun, *, tokenizer: Tokenizer | None = None, workdir: Path | None = None) -> dict:
    """The cost of ``mas reproduce PAPER`` with this configuration, from a dry run (module text).

    Args:
        config: the run's configuration (any paper's, ``all`` for the three, each with its
            options); its ``out`` and ``estimate`` are not used, its ``tick`` gets the dry run's
            progress lines (None: quiet).
        tokenizer: default :func:`default_tokenizer`.
        workdir: where the dry run writes (default a temporary folder, removed after).

    Returns:
        ``{"paper", "model", "others", "limit", "options", "cells": [{"paper", "cell", "games",
        "calls", "input_tokens", "output_tokens"}], "total": {...}, "tokenizer": str,
        "reply_chars": {...}, "notes": [str]}`` (``model`` ... ``options`` as the command line
        gives them, :meth:`mas_agents.eval.reproduce.common.PaperRun.as_options`).

    Raises:
        ValueError / FileNotFoundError: what the run itself would refuse (bad options, data).
    """
    opts = config.as_options()
    tok = tokenizer or default_tokenizer()
    parts = ([(folder, part) for folder, _mod, _title, part in config.parts()] if config.PAPER == "all"
             else [(config.PAPER, config)])
    notes = []

    def factory(spec: str, **_: Any) -> BaseChatModel:
        return DryRunChat(tokenizer=tok)

    cells: list[dict] = []
    # in this process, whatever --executor says: a Ray worker would build the real models
    prev_executor = executor.configure("local")
    prev_override = set_spec_override(factory)
    prev_prompts = set_record_prompts(False)
    try:
        with tempfile.TemporaryDirectory(prefix="mas-estimate-", dir=workdir) as tmp:
            for p, part in parts:
                scale = 1
                if p == "player-star":   # one evaluation run answered, counted eval_runs times
                    scale = part.eval_runs
                    part = part.replace(eval_runs=1)
                    if scale > 1:
                        notes.append(f"player-star: one evaluation run answered, counted {scale} times")
                registry.run(part.replace(out=Path(tmp) / p, tick=config.tick, estimate=None))
                cells += [{"paper": p, **c} for c in collect(p, Path(tmp) / p, eval_scale=scale)]
    finally:
        set_spec_override(prev_override)
        set_record_prompts(prev_prompts)
        executor.restore(prev_executor)
    total = {k: sum(c[k] for c in cells) for k in ("games", "calls", "input_tokens", "output_tokens")}
    return {"paper": config.PAPER, "model": opts["model"], "others": opts["others"], "limit": opts["limit"],
            "options": opts["options"], "cells": cells, "total": total, "tokenizer": tok.name,
            "reply_chars": dict(REPLY_CHARS), "notes": notes}


def render(est: dict, *, price_in: float = 0.0, price_out: float = 0.0) -> list[str]:
    """The ``--estimate`` printout (Markdown): one row per cell and the total, with the price."""
    rows = [[c["paper"], c["cell"], c["games"], c["calls"], c["input_tokens"], c["output_tokens"],
             f"{price(c['input_tokens'], c['output_tokens'], price_in, price_out):.2f}"] for c in est["cells"]]
    t = est["total"]
    rows.append(["**total**", "", t["games"], t["calls"], t["input_tokens"], t["output_tokens"],
                 f"{price(t['input_tokens'], t['output_tokens'], price_in, price_out):.2f}"])
    opts = "".join(f" --{k.replace('_', '-')} {v}" for k, v in est["options"].items())
    lines = [f"# Estimate: mas reproduce {est['paper']} --model {est['model']}"
             + (f" --others {est['others']}" if est.get("others") else "")
             + (f" --limit {est['limit']}" if est.get("limit") else "") + opts, "",
             "No model was called: a dry run of the same protocol on a fake model that answers every action in "
             "the format asked and counts the tokens (eval/reproduce/estimate.py).", ""]
    lines += md_table(["paper", "cell", "games", "calls", "prompt tokens", "completion tokens",
                       f"USD at {price_in:g} in / {price_out:g} out per 1M"], rows)
    lines += ["", f"Tokens counted with {est['tokenizer']}. Replies of the fake: a thought of "
              f"{est['reply_chars']['thought']} characters, utterances of {est['reply_chars']['text']}, free-text "
              f"calls of {est['reply_chars']['free']} (the embedded model's lengths). Not counted: re-prompts after "
              "an unreadable reply (at most one per action) and games that a real model ends sooner or later."]
    if any(c["paper"] == "wis" for c in est["cells"]):
        lines.append("Who is Spy?: the fake's votes agree, so its games often end in round 1; a real model's may "
                     "last 3 rounds, up to three times these calls and tokens.")
    lines += [f"Note: {n}." for n in est.get("notes", [])]
    return lines


def plan_key(config: PaperRun) -> dict:
    """What an estimate depends on (a stored one is reused only for the same key): the paper, its
    options as the command line gives them (:meth:`mas_agents.eval.reproduce.common.PaperRun.as_options`)
    and the fake's reply lengths."""
    opts = config.as_options()
    return {"paper": config.PAPER, "model": opts["model"], "others": opts["others"], "limit": opts["limit"],
            "seed": opts["seed"], "options": {k: opts["options"][k] for k in sorted(opts["options"])},
            "reply_chars": dict(REPLY_CHARS)}


def estimate_for_run(config: PaperRun, *, price_in: float = 0.0, price_out: float = 0.0) -> dict:
    """The estimate a real run sets beside its actual cost: ``config.out/estimate.json`` when it
    holds one for the same :func:`plan_key` (a resumed run), else a new :func:`estimate` (quiet;
    ``config.tick`` gets a line before and after it). Not written here: the paper's ``reproduce``
    writes it once it has checked that ``out`` is its own."""
    key = plan_key(config)
    path = Path(config.out) / "estimate.json"
    if path.is_file():
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
            if stored.get("key") == key:
                return {**stored, "price_in": price_in, "price_out": price_out}
        except ValueError:
            pass
    tick, paper = config.tick, config.PAPER
    if tick:
        tick(f"{paper}: estimating the run's cost (a dry run on a fake model, no model call)")
    est = estimate(config.replace(tick=None))
    if tick:
        t = est["total"]
        tick(f"{paper}: estimate: {t['games']} games, {t['calls']} calls, {t['input_tokens']} prompt / "
             f"{t['output_tokens']} completion tokens")
    return {**est, "key": key, "price_in": price_in, "price_out": price_out}
