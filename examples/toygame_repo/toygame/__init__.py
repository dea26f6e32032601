"""A p-beauty contest for mas-agents, as a game in its own repository: its rules (:mod:`.rules`),
its LangGraph flow (:mod:`.graph`) and its registration (:mod:`.game`, kind ``beauty_contest``),
found by mas-agents through the ``mas_agents.games`` entry point of ``pyproject.toml``."""
