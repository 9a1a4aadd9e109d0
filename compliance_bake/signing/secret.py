"""REPORT_SIGNING_SECRET: where it comes from, and the refusals that keep it safe.

Order: `--secret-file PATH`, the environment variable REPORT_SIGNING_SECRET, the file named by
REPORT_SIGNING_SECRET_FILE (how a vault agent or an orchestrator injects it), then the local file
that `secret mint` creates. REPORT_SIGNING_SECRET and REPORT_SIGNING_SECRET_FILE both set (both
non-empty) is refused as ambiguous, as the official database images do; `--secret-file` is an
explicit choice and still wins over both. The value never appears in a message, a report or a
page: `Secret` hides it from repr/str, and messages name only where it came from.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from compliance_bake.errors import SecretError
from compliance_bake.inputs.private_file import (
    configured_file,
    read_private_text,
    write_private_bytes,
)

ENV_VALUE = "REPORT_SIGNING_SECRET"
ENV_FILE = "REPORT_SIGNING_SECRET_FILE"
LOCAL_FILE = Path(".compliance-bake") / "report-signing.secret"
MIN_LENGTH = 32
_FIX_MISSING = f"run `compliance-bake secret mint`, or set {ENV_VALUE} or {ENV_FILE}"


@dataclass(frozen=True, slots=True)
class Secret:
    value: str = field(repr=False)
    source: str  # where it came from, safe to print

    def __str__(self) -> str:
        return f"<secret from {self.source}>"


def _checked(value: str, source: str) -> Secret:
    value = value.strip()
    if not value:
        raise SecretError(f"the report signing secret from {source} is empty", _FIX_MISSING)
    if len(value) < MIN_LENGTH:
        raise SecretError(
            f"the report signing secret from {source} is shorter than {MIN_LENGTH} characters",
            "use `compliance-bake secret mint` or a vault-generated value of 32+ characters",
        )
    return Secret(value, source)


def _from_file(path: Path, source: str) -> Secret:
    text = read_private_text(path, source, "secret file", SecretError, _FIX_MISSING)
    return _checked(text, f"{source} ({path})")


def resolve_secret(
    secret_file: Path | None, environ: dict[str, str] | None = None, cwd: Path | None = None
) -> Secret | None:
    """The secret by the documented order, None when no source is configured."""
    env = os.environ if environ is None else environ
    if secret_file is None and env.get(ENV_VALUE) and env.get(ENV_FILE):
        raise SecretError(
            f"both ${ENV_VALUE} and ${ENV_FILE} are set, so the secret is ambiguous",
            f"unset one of {ENV_VALUE} and {ENV_FILE}, or pass --secret-file",
        )
    if secret_file is None and ENV_VALUE in env:
        return _checked(env[ENV_VALUE], f"${ENV_VALUE}")
    local = (LOCAL_FILE, "the local secret")
    found = configured_file(secret_file, "--secret-file", env, ENV_FILE, local, cwd)
    return None if found is None else _from_file(*found)


def require_secret(
    secret_file: Path | None, environ: dict[str, str] | None = None, cwd: Path | None = None
) -> Secret:
    found = resolve_secret(secret_file, environ, cwd)
    if found is None:
        local = (cwd or Path.cwd()) / LOCAL_FILE
        raise SecretError(
            "no report signing secret is configured: looked at --secret-file (not given), "
            f"${ENV_VALUE} (unset), ${ENV_FILE} (unset) and {local} (no such file; the local "
            "secret is read from the folder the command runs in)",
            f"run `compliance-bake secret mint` in {local.parent.parent} (it writes {local}), "
            f"or pass --secret-file, or set {ENV_VALUE} or {ENV_FILE}",
        )
    return found


def mint_secret(path: Path, *, force: bool = False) -> Path:
    """Write a fresh 256-bit secret to path with mode 0600; refuse to overwrite unless forced."""
    if path.exists() and not force:
        raise SecretError(
            f"{path} already exists", "pass --force to replace it (old snapshots stop verifying)"
        )
    write_private_bytes(path, (secrets.token_hex(32) + "\n").encode("ascii"))
    return path
