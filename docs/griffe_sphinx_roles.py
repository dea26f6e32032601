"""A griffe extension for the documentation site: Sphinx cross-reference roles in our docstrings
(``:func:`play```, ``:class:`mas_agents.planners.base.GameInfo```, ``:data:`STOP```...) are shown as code,
the way the text reads in ``help()``, instead of as literal ``:func:`` markup.

mkdocs.yml loads it (mkdocstrings' python handler, ``extensions``). The docstrings stay as they
are; only the rendered page changes. A role's ``~`` prefix (show the last name only) is honoured.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

#: ``:role:`target``` with the roles our docstrings use (Python domain, optionally ``py:``-prefixed)
ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|data|attr|exc|obj|const|ref|term):`(~?)([^`]+)`")


def plain(text: str) -> str:
    """``text`` with every Sphinx role replaced by a Markdown code span of its target.

    ``:func:`mas_agents.api.play``` -> ```mas_agents.api.play```; ``:class:`~a.b.C``` -> ```C```.
    """
    return ROLE.sub(lambda m: "`" + (m.group(2).rsplit(".", 1)[-1] if m.group(1) else m.group(2)) + "`", text)


class SphinxRolesAsCode(griffe.Extension):
    """Rewrites the docstring of every object griffe loads (see :func:`plain`)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:  # noqa: D102
        if obj.docstring is not None:
            obj.docstring.value = plain(obj.docstring.value)
