"""The ``mas`` command line as one click command, for the documentation site's CLI reference.

``docs/reference/cli.md`` renders ``command`` with mkdocs-click (``::: mkdocs-click`` with
``:module: mas_agents.cli.reference`` and ``:command: command``): every command, option, default
and help text of the typer app in :mod:`mas_agents.cli`, so the reference cannot drift from
``mas --help``. Nothing here runs a command.
"""

from __future__ import annotations

import typer.main

from mas_agents.cli import app

#: The click group typer builds from :data:`mas_agents.cli.app` (the same one ``mas`` runs).
command = typer.main.get_command(app)
