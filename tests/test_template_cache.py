"""The portal template compiled once per user: the page is the same whether the compiled code
comes from the cache folder, is compiled afresh, or cannot be cached at all.

Each render runs in a fresh process with its own cache folder (XDG_CACHE_HOME).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

# Renders the demo bake's snapshot; prints the page's digest and whether it compiled the
# template in this process (jinja2's Environment.compile is what a cache hit skips).
RENDER = """
import hashlib, sys
from pathlib import Path
from jinja2 import Environment
from compliance_bake.inputs.jsonio import loads_strict
from compliance_bake.report.portal import render_portal
compiled = []
original = Environment.compile
def compile(self, *args, **kwargs):
    compiled.append(1)
    return original(self, *args, **kwargs)
Environment.compile = compile
snapshot = loads_strict(Path(sys.argv[1]).read_bytes())
print(hashlib.sha256(render_portal(snapshot)).hexdigest(), len(compiled))
"""


def _render(cache: Path, snapshot: Path) -> tuple[str, int]:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache))
    done = subprocess.run(
        [sys.executable, "-c", RENDER, str(snapshot)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    digest, compiled = done.stdout.split()
    return digest, int(compiled)


def test_the_page_is_the_same_compiled_afresh_from_the_cache_or_uncached(
    baked: Path, tmp_path: Path
) -> None:
    snapshot = baked / "api" / "compliance.json"
    written = hashlib.sha256((baked / "portal" / "compliance" / "index.html").read_bytes())
    cache = tmp_path / "cache"
    assert _render(cache, snapshot) == (written.hexdigest(), 1)  # compiled, then kept
    assert list((cache / "compliance-bake" / "templates").iterdir())
    assert _render(cache, snapshot) == (written.hexdigest(), 0)  # from the cache

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    assert _render(blocker, snapshot) == (written.hexdigest(), 1)
    assert _render(blocker, snapshot) == (written.hexdigest(), 1)  # never cached, still right


def test_a_damaged_cache_entry_is_compiled_again(baked: Path, tmp_path: Path) -> None:
    snapshot = baked / "api" / "compliance.json"
    cache = tmp_path / "cache"
    digest, _ = _render(cache, snapshot)
    for entry in (cache / "compliance-bake" / "templates").iterdir():
        data = entry.read_bytes()
        entry.write_bytes(data[:-20])  # a damaged entry
    assert _render(cache, snapshot) == (digest, 1)
