"""A run's clock, read once: `--now`, else SOURCE_DATE_EPOCH, else the system clock.

Timestamps are UTC with milliseconds, e.g. `2026-11-22T04:06:00.000Z`.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

from compliance_bake.errors import InputError


def parse_instant(text: str, *, source: str) -> datetime:
    """Parse an ISO 8601 instant that names its offset; naive times are ambiguous and refused."""
    try:
        value = datetime.fromisoformat(text.strip().replace("z", "Z"))
        if value.tzinfo is None:
            # The hint shows the whole instant with its offset: a bare date takes no Z of its own.
            raise InputError(
                f"{source}: {text!r} has no UTC offset",
                f"give the offset, e.g. {value.isoformat()}Z or {value.isoformat()}+00:00",
            )
        return value.astimezone(UTC)
    except (ValueError, OverflowError):
        raise InputError(
            f"{source}: {text!r} is not an ISO 8601 timestamp in range",
            "use a form like 2026-11-22T04:06:00Z",
        ) from None


def resolve_now(now: str | None, environ: dict[str, str] | None = None) -> datetime:
    env = os.environ if environ is None else environ
    if now is not None:
        return parse_instant(now, source="--now")
    epoch = env.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch:
        try:
            if not (epoch.isascii() and epoch.isdigit()):
                raise ValueError(epoch)
            return datetime.fromtimestamp(int(epoch), tz=UTC)
        except (ValueError, OverflowError, OSError):
            raise InputError(
                f"SOURCE_DATE_EPOCH={epoch!r} is not a Unix time in seconds",
                "set it to a timestamp such as 1795320360, or unset it",
            ) from None
    return datetime.now(tz=UTC)


def iso_millis(moment: datetime) -> str:
    """`2026-11-22T04:06:00.000Z`: UTC, milliseconds, a literal Z."""
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"
