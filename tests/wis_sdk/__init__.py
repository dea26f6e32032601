"""Test harness for the Who-is-Spy platform's agent SDK (``spy-agent-build-sdk`` on PyPI).

The WiS platform publishes the SDK its contestants build agents with. Our judge must drive such
agents the way the platform does, and our served agent (``mas spy serve-agent``) must play when
the platform drives it. The SDK pins a FastAPI and a langchain that clash with ours, so it lives in
a virtualenv of its own, and its memory is a class-level dict (all agents of a process share it),
so every SDK agent runs in a process of its own.

* :mod:`tests.wis_sdk.env` builds (once, cached) the SDK virtualenv and returns its python.
* :mod:`tests.wis_sdk.sdk_agent` is a script for that python: one deterministic SDK agent that
  perceives like the SDK's example agent and logs every request it gets.
* :mod:`tests.wis_sdk.deterministic` holds the (stdlib-only) speech and vote rules that the SDK
  agent and the in-process replay fake share.
* :mod:`tests.wis_sdk.platform_judge` drives one agent URL through a game as the platform does.
* :mod:`tests.wis_sdk.exchange` reduces exchanges to their protocol shape and reads / writes /
  compares the recorded fixtures of ``tests/data/wis_sdk/``.
* :mod:`tests.wis_sdk.procs` starts and stops the agent processes of the contract tests.
* :mod:`tests.wis_sdk.model_rule` is the fake model behind our served agent (stub server or
  in-process fake chat model).

Nothing here copies SDK code: the facts it relies on are cited by SDK file
(``agent_build_sdk/<path>`` of ``spy-agent-build-sdk==0.0.29``).
"""
