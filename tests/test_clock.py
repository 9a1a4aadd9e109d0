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


@pytest.mark.parametrize("naive", ["2026-11-22", "2026-11-22T04:06", "2026-11-22T04:06:00.5"])
def test_the_hint_for_a_naive_time_gives_forms_that_are_accepted(naive: str) -> None:
    """The fix a refusal suggests is taken as given: a bare date's hint is not `2026-11-22Z`,
    which is refused with another message."""
    with pytest.raises(InputError) as caught:
        resolve_now(naive)
    suggested = caught.value.hint.split("e.g. ", 1)[1].split(" or ")
    assert len(suggested) == 2
    for form in suggested:
        assert resolve_now(form) == resolve_now(naive + ("T00:00Z" if "T" not in naive else "Z"))
