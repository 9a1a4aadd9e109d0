"""The portal template compiled once per user, not once per bake (about 0.1 s each time).

Jinja2 compiles a template to Python code on first use in every process. Its file bytecode
cache keeps that code in the user's cache folder (`resources.user_cache_dir()`, under
`templates/`), keyed by the template and checked against a checksum of its source, so an edited
template is compiled again; a copy of another Python version is ignored. The cache is never
needed: a folder that cannot be made or written only costs the compilation.
"""

from __future__ import annotations

import contextlib
from typing import Any

from compliance_bake.resources import user_cache_dir


def compiled_templates() -> Any:
    """A Jinja2 bytecode cache in the user's cache folder (a jinja2.BytecodeCache)."""
    from jinja2 import FileSystemBytecodeCache
    from jinja2.bccache import Bucket

    class QuietCache(FileSystemBytecodeCache):
        def load_bytecode(self, bucket: Bucket) -> None:
            with contextlib.suppress(OSError):
                super().load_bytecode(bucket)

        def dump_bytecode(self, bucket: Bucket) -> None:
            with contextlib.suppress(OSError):
                super().dump_bytecode(bucket)

    folder = user_cache_dir() / "templates"
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
    return QuietCache(str(folder))
