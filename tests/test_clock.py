"""The clock: millisecond ISO stamps, an explicit offset or SOURCE_DATE_EPOCH, no naive time."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from compliance_bake.clock import iso_millis, resolve_now
from compliance_bake.errors import InputError


def test_clock() -> None:
    assert (
        iso_millis(datetime(2026, 11, 22, 4, 6, 0, 123456, tzinfo=UTC))
        == "2026-11-22T04:06:00.123Z"
    )
    assert iso_millis(resolve_now("2026-11-22T05:06:00+01:00")) == "2026-11-22T04:06:00.000Z"
    assert iso_millis(resolve_now(None, {"SOURCE_DATE_EPOCH": "0"})) == "1970-01-01T00:00:00.000Z"
    with pytest.raises(InputError):
        resolve_now("2026-11-22T04:06:00")  # no offset: ambiguous
