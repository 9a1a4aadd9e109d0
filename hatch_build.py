"""The wheel's build hook: the manual's pages (docs/*.md) become package data under
`compliance_bake/_data/docs/`, so `compliance-bake docs TOPIC` reads them where no checkout is.
Only the pages: the screenshots beside them stay in the repository (a force-include of the folder
would carry every picture into every install)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class ManualPages(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        for page in sorted(Path(self.root, "docs").glob("*.md")):
            build_data["force_include"][str(page)] = f"compliance_bake/_data/docs/{page.name}"
