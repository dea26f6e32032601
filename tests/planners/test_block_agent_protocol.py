"""The block contract's typed agent (issue 49 item 2): every planner block takes the agent as
:class:`mas_agents.planners.base.BlockAgent`, and what blocks call on it is exactly that Protocol's surface."""

from __future__ import annotations

import ast
import typing
from pathlib import Path

from mas_agents.agents import Agent, Persona
from mas_agents.planners.base import BlockAgent, PersonaView

ROOT = Path(__file__).resolve().parents[2]
PLANNERS = sorted(p for p in (ROOT / "planners").rglob("*.py") if p.name != "base.py")
#: The members of the Protocol (properties and attributes and methods).
MEMBERS = {"name", "persona", "game", "blocks", "act", "choose", "think", "emit", "recall"}


def _agent_params():
    for path in PLANNERS:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for arg in node.args.args + node.args.kwonlyargs:
                    if arg.arg == "agent":
                        yield path, node, arg


def test_the_protocol_lists_what_blocks_may_call():
    declared = set(BlockAgent.__protocol_attrs__) if hasattr(BlockAgent, "__protocol_attrs__") else set(
        typing.get_type_hints(BlockAgent)) | {n for n in vars(BlockAgent) if not n.startswith("_")}
    assert declared == MEMBERS
    assert {"name", "title", "role", "goals", "victims", "players"} == set(typing.get_type_hints(PersonaView))


def test_every_block_signature_types_its_agent_as_the_protocol():
    untyped = [f"{p.relative_to(ROOT)}:{fn.lineno} {fn.name}" for p, fn, arg in _agent_params()
               if not (isinstance(arg.annotation, ast.Name) and arg.annotation.id == "BlockAgent")]
    assert untyped == []
    assert len(list(_agent_params())) >= 50   # the block signatures of issue 49 (50 took Any or nothing)


def test_blocks_call_nothing_on_the_agent_outside_the_protocol():
    used: dict[str, list[str]] = {}
    for path in PLANNERS:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "agent":
                used.setdefault(node.attr, []).append(f"{path.relative_to(ROOT)}:{node.lineno}")
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                    and len(node.args) >= 2 and isinstance(node.args[0], ast.Name) and node.args[0].id == "agent"
                    and isinstance(node.args[1], ast.Constant)):
                used.setdefault(node.args[1].value, []).append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert {k: v for k, v in used.items() if k not in MEMBERS} == {}
    assert {"act", "choose", "think", "emit", "persona", "name"} <= set(used)


def test_the_agent_is_a_block_agent_and_a_stand_in_need_only_the_protocol():
    assert isinstance(Agent(Persona("Officer Li"), None, None), BlockAgent)
    assert not isinstance(object(), BlockAgent)
