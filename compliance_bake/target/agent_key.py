"""The agent key the HTTP target sends: from `--agent-key-file PATH` or `$COMPLIANCE_AGENT_KEY`.

The key is a credential: no message here quotes it, and its file must not be readable by others.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from compliance_bake.errors import InputError

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
    source = f"--agent-key-file {path}"
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"{source}: not a regular file", "point it at the key file itself")
        if info.st_mode & 0o077:
            raise InputError(
                f"{source}: the key file is readable by others "
                f"(mode {stat.S_IMODE(info.st_mode):04o})",
                f"chmod 600 {path}",
            )
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{source}: no such file", "check the path") from None
    except UnicodeDecodeError:
        raise InputError(f"{source}: not UTF-8 text", _FIX) from None
    except OSError as exc:
        raise InputError(f"{source}: cannot read it ({exc.strerror})", "check the path") from None
    return _checked(text, source)


def resolve_agent_key(path: Path | None, environ: Mapping[str, str] | None = None) -> str | None:
    """The key from the option, else the environment, else None (the service will say 401)."""
    if path is not None:
        return _from_file(path)
    value = (os.environ if environ is None else environ).get(ENV_KEY)
    return None if value is None else _checked(value, f"${ENV_KEY}")
