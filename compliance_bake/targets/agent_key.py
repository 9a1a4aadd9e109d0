"""The agent key the HTTP target sends: from `--agent-key-file PATH` or `$COMPLIANCE_AGENT_KEY`.

The key is a credential: no message here quotes it, and its file must not be readable by others.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from compliance_bake.errors import InputError
from compliance_bake.inputs.private_file import read_private_text

ENV_KEY = "COMPLIANCE_AGENT_KEY"
_FIX = "use a key from `compliance-bake keys mint`, one line, as printed"


def _checked(value: str, source: str) -> str:
    key = value.strip()
    if not key:
        raise InputError(f"{source}: the agent key is empty", _FIX)
    # It travels in an HTTP header: printable ASCII, no spaces (the service would answer 401
    # anyway; saying so here names the real problem).
    if not all("!" <= char <= "~" for char in key):
        raise InputError(f"{source}: the agent key has a space or a non-ASCII character", _FIX)
    return key


def _from_file(path: Path) -> str:
    source = "--agent-key-file"
    return _checked(read_private_text(path, source, "key file", InputError, _FIX), source)


def resolve_agent_key(path: Path | None, environ: Mapping[str, str] | None = None) -> str | None:
    """The key from the option, else the environment, else None (the service will say 401)."""
    if path is not None:
        return _from_file(path)
    value = (os.environ if environ is None else environ).get(ENV_KEY)
    return None if value is None else _checked(value, f"${ENV_KEY}")
