"""Reading a credential from a file that only its owner may read (mode 0600 or stricter).

The report signing secret (`--secret-file`, `$REPORT_SIGNING_SECRET_FILE`, the minted local file)
and the agent key (`--agent-key-file`) follow one rule; messages name the file, never its content.
"""

from __future__ import annotations

import stat
from collections.abc import Mapping
from pathlib import Path

from compliance_bake.errors import InputError
from compliance_bake.inputs.atomic_write import write_whole
from compliance_bake.inputs.files import CREDENTIAL_MAX_BYTES, file_kind, read_regular_file


def read_private_text(
    path: Path, source: str, what: str, error: type[InputError], missing_fix: str
) -> str:
    """The file's UTF-8 text; `error` (one line, with a fix) when it is missing, not a regular
    file (a FIFO, a device, a socket), over 64 KiB, readable by group or others, or not UTF-8."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise error(f"{source}: {what} {path} does not exist", missing_fix) from None
    except OSError as exc:
        raise error(
            f"{source}: cannot read {what} {path} ({exc.strerror})", "check its path"
        ) from None
    if not stat.S_ISREG(info.st_mode):
        raise error(
            f"{source}: {path}: not a regular file ({file_kind(info.st_mode)})",
            f"point it at the {what} itself",
        )
    if info.st_mode & 0o077:
        raise error(
            f"{source}: {what} {path} is readable by others "
            f"(mode {stat.S_IMODE(info.st_mode):04o})",
            f"chmod 600 {path}",
        )
    try:
        # Opened again without blocking and checked on the descriptor: a FIFO swapped in after
        # the stat above is refused, not waited on.
        missing = error(f"{what} {path} does not exist", missing_fix)
        raw = read_regular_file(
            path, max_bytes=CREDENTIAL_MAX_BYTES, what=what, error=error, missing=missing
        )
    except InputError as exc:
        raise error(f"{source}: {exc.message}", exc.hint) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise error(f"{source}: cannot read {what} {path} as UTF-8 text", "rewrite it") from None


def write_private_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` with mode 0600 (its folder 0700 when created), whole or not at
    all: a crash leaves the old file whole."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_whole(path, data, mode=0o600)


def configured_file(
    given: Path | None,
    option: str,
    env: Mapping[str, str],
    env_file: str,
    local: tuple[Path, str],
    cwd: Path | None = None,
) -> tuple[Path, str] | None:
    """Which credential file to read, and the name of where it came from, by the order every
    credential follows: the option, then `$<env_file>`, then the minted local file (`local`: its
    path and name) when it exists; the last two relative to the folder the command runs in.
    None when none is configured."""
    if given is not None:
        return given, option
    here = cwd or Path.cwd()
    if env.get(env_file):
        return here / env[env_file], f"${env_file}"
    path, name = local
    if (here / path).exists():
        return here / path, name
    return None
