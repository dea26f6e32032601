"""The documentation site builds with ``mkdocs build --strict`` (issue 49 item 5), and the README
stays a short front page whose links lead into it.

The strict build fails on any warning: a page missing from the nav or a nav entry without its page,
a link to a missing page or anchor, a docstring mkdocstrings cannot read, a CLI command
mkdocs-click cannot load (``mkdocs.yml``, ``validation``). ~15 s on 2 cores (it imports the CLI
and every documented module).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
MKDOCS = [sys.executable, "-m", "mkdocs"]


def _build(config: Path, site: Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*MKDOCS, "build", "--strict", "-f", str(config), "-d", str(site)], cwd=cwd,
                          capture_output=True, text=True, timeout=600, env=_env())


def _env() -> dict:
    import os
    return {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def test_the_site_builds_strict_with_the_cli_and_api_references(tmp_path):
    site = tmp_path / "site"
    r = _build(ROOT / "mkdocs.yml", site, ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "WARNING" not in r.stderr, r.stderr
    cli = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    # the CLI reference is the typer app's: every command group and a real option with its default
    for command in ("mas mmg run", "mas spy tournament", "mas reproduce", "mas serve", "mas game play"):
        assert command in cli, command
    assert "--max-connections" in cli and "[default: plain]" in cli
    api = (site / "reference" / "python" / "index.html").read_text(encoding="utf-8")
    assert "mas_agents.api" in api and "ActionRequest" in api and "run_ablate" in api
    assert ":func:" not in api and ":class:" not in api        # Sphinx roles shown as code (docs/griffe_sphinx_roles.py)
    for page in ("quickstart", "tutorials/compose-agent", "tutorials/langgraph", "tutorials/add-game",
                 "tutorials/reproduce", "tutorials/serve", "reference/run-files", "reference/engine",
                 "reference/architecture", "api"):
        assert (site / page / "index.html").is_file(), page
    assert (site / "web-runs.png").is_file()                    # the screenshots the serve tutorial shows


def test_the_docs_configuration_fails_a_broken_link(tmp_path):
    """The same ``validation`` settings, on a one-page site with a link to a page that does not
    exist: the strict build must refuse it (so the real build's success means something)."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n\nSee [the guide](guides/missing.md).\n", encoding="utf-8")
    small = {"site_name": "t", "docs_dir": "docs", "strict": True, "validation": config["validation"],
             "nav": [{"Home": "index.md"}]}
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(small), encoding="utf-8")
    r = _build(tmp_path / "mkdocs.yml", tmp_path / "site", tmp_path)
    assert r.returncode != 0 and "guides/missing.md" in r.stderr, r.stderr


def test_the_readme_is_a_short_front_page_whose_links_exist():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if "://" not in link]
    assert "docs/index.md" in local and "docs/api.md" in local and "docs/reference/cli.md" in local
    missing = [link for link in local if not (ROOT / link).exists()]
    assert not missing, missing
