"""US ZIP codes and jurisdictions, from the `zipcodes` package's database.

Loaded once per process on first use, and indexed by ZIP so that a lookup is one dictionary
access instead of a scan. The fixture loader needs only the states its fixtures name:
`state_places(code)` loads one state's ZIPs on first use (the package's query runs in Rust; the
whole index costs about 0.2 s to materialise and 0.1 s more to index, a state a few ms), and takes
them from the whole index when that is already loaded (the audit loads it), so nothing is built
twice. `zip_index()` is the whole index, for the audit and the generators.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from compliance_bake.memory import gc_paused

# Present in the ZIP database but not jurisdictions that license wagers: military post offices
# and the freely associated states.
_NOT_JURISDICTIONS = frozenset({"AA", "AE", "AP", "FM", "MH", "PW"})


@dataclass(frozen=True, slots=True)
class ZipPlace:
    zip_code: str
    state: str
    city: str
    acceptable_cities: tuple[str, ...]

    def names_city(self, city: str) -> bool:
        wanted = city.strip().casefold()
        return wanted == self.city.casefold() or any(
            wanted == other.casefold() for other in self.acceptable_cities
        )


@dataclass(frozen=True, slots=True)
class ZipIndex:
    places: dict[str, ZipPlace]
    jurisdictions: frozenset[str]
    # The same places grouped by state (every state or territory of the database).
    by_state: dict[str, dict[str, ZipPlace]]

    def lookup(self, zip_code: str) -> ZipPlace | None:
        return self.places.get(zip_code)


def _places(rows: list[dict[str, Any]]) -> dict[str, ZipPlace]:
    return {
        row["zip_code"]: ZipPlace(
            zip_code=row["zip_code"],
            state=row["state"],
            city=row["city"],
            acceptable_cities=tuple(row.get("acceptable_cities") or ()),
        )
        for row in rows
    }


# Up to this many states, each is queried on its own; past it, the whole index is loaded once
# (each query scans the whole database: measured, 50 queries cost more than one full load).
PER_STATE_LIMIT = 10


def load_states(codes: Collection[str]) -> None:
    """Say which states the caller will look up: many states load the whole index at once."""
    if len(set(codes)) > PER_STATE_LIMIT:
        zip_index()


@cache
def state_places(code: str) -> dict[str, ZipPlace]:
    """The ZIPs of one state or territory (empty for a code the database does not know)."""
    if zip_index.cache_info().currsize:
        return zip_index().by_state.get(code, {})
    import zipcodes

    with gc_paused():  # the ZipPlace records are all kept
        return _places(zipcodes.filter_by(state=code))  # type: ignore[no-untyped-call]


def is_jurisdiction(code: str) -> bool:
    """A state or territory that licenses wagers: in the ZIP database, not a military post."""
    return code not in _NOT_JURISDICTIONS and bool(state_places(code))


@lru_cache(maxsize=1)
def zip_index() -> ZipIndex:
    import zipcodes

    # `filter_by()` with no filter is every record, as `list_all()` gives them, but in a list of
    # our own: `list_all()` keeps its 42,000 dicts (and 120,000 lists) cached for the life of the
    # process, which costs memory and every later garbage collection walks them.
    with gc_paused():  # the ZipPlace records are all kept
        places = _places(zipcodes.filter_by())  # type: ignore[no-untyped-call]
        by_state: dict[str, dict[str, ZipPlace]] = {}
        for zip_code, place in places.items():
            by_state.setdefault(place.state, {})[zip_code] = place
    states = frozenset(by_state) - _NOT_JURISDICTIONS
    return ZipIndex(places=places, jurisdictions=states, by_state=by_state)
