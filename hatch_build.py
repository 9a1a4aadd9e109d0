"""The wheel's build hook: the manual's pages (docs/*.md) become package data under
`compliance_bake/_data/docs/`, so `compliance-bake docs TOPIC` reads them where no checkout is.

Only the manual for users ships. The pages for developers of compliance-bake (`DEVELOPER_PAGES`:
make targets, tests/ and scripts/, benchmarks, the typed core) stay in the repository, and so do
the screenshots: a force-include of the folder would carry every picture into every install, and
a terminal shows none. A shipped page that points at something that stays (a picture, a
developer page) points at it in the repository instead, by the project's Documentation URL, so
the shipped manual names nothing its reader does not have: `![alt](x.png)` becomes a link
`[alt (picture)](URL/docs/x.png)`, `[text](development.md#tests)` a link to
URL/docs/development.md#tests, `[schema](../schemas/x.json)` one to URL/schemas/x.json.
"""

from __future__ import annotations

import posixpath
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

DEVELOPER_PAGES = frozenset({"development.md", "benchmarks.md", "design.md", "report-models.md"})
# A Markdown image or link to a path of the repository: its text, the path and any #part.
_LOCAL = re.compile(r"(!?)\[([^\]]*)\]\(([^):#\s]+)(#[^)\s]*)?\)")


def shipped_text(text: str, docs_url: str) -> str:
    """The page as it ships: whatever stays in the repository (a picture, a developer page,
    a schema beside docs/) pointed at there, by `docs_url` (the repository's docs/ folder)."""
    repository = docs_url.removesuffix("/docs")

    def point(match: re.Match[str]) -> str:
        picture, words, target, part = match[1], match[2], match[3], match[4] or ""
        shipped = "/" not in target and target.endswith(".md")
        if not picture and shipped and target not in DEVELOPER_PAGES:
            return match[0]
        where = f"{repository}/{posixpath.normpath('docs/' + target)}{part}"
        return f"[{words} (picture)]({where})" if picture else f"[{words}]({where})"

    return _LOCAL.sub(point, text)


class ManualPages(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        docs_url = self.metadata.core.urls.get("Documentation", "").rstrip("/")
        self._rewritten = Path(tempfile.mkdtemp(prefix="compliance-bake-manual-"))
        for page in sorted(Path(self.root, "docs").glob("*.md")):
            if page.name in DEVELOPER_PAGES:
                continue
            text = page.read_text("utf-8")
            shipped, source = shipped_text(text, docs_url), page
            if shipped != text:
                source = self._rewritten / page.name
                source.write_text(shipped, "utf-8")
            build_data["force_include"][str(source)] = f"compliance_bake/_data/docs/{page.name}"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        shutil.rmtree(self._rewritten, ignore_errors=True)
