"""US ZIP codes and jurisdictions, from the `zipcodes` package's database.

Loaded once per process on first use, as one dictionary of ZIP to state and city, so that a
lookup is one dictionary access instead of a scan. The columns come from a compact copy of the
database in the user's cache folder when there is one (`inputs/zipcache.py`: about 20 ms to read,
where the package's own database costs about 0.5 s to load and list), else from the package,
which then leaves such a copy for the next process. Every caller (the fixture checks, the audit,
the generators) reads the one index, so nothing is built twice; the ZipPlace of every ZIP is
built only when a caller asks for all of them (`places`, `by_state`); the audit asks for the
ZIPs and their states alone (`zip_states`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

from compliance_bake.inputs.zipcache import ZipColumns, read_cached, read_database
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


class ZipIndex:
    """Lookups by ZIP, and the jurisdictions, straight from the columns (one C-level dict of
    ZIP to state and city); the ZipPlace of every ZIP (`places`, in the database's order) and
    those grouped by state (`by_state`) are built on first use, by the audit and the
    generators: the fixture checks only look up their profiles' ZIPs."""

    def __init__(self, columns: ZipColumns) -> None:
        self._acceptable = columns.acceptable
        self._where = dict(
            zip(columns.zips, zip(columns.states, columns.cities, strict=True), strict=True)
        )
        self.jurisdictions = frozenset(columns.states) - _NOT_JURISDICTIONS

    def lookup(self, zip_code: str) -> ZipPlace | None:
        found = self._where.get(zip_code)
        if found is None:
            return None
        return ZipPlace(zip_code, *found, tuple(self._acceptable.get(zip_code, ())))

    def zip_states(self) -> tuple[list[str], list[str]]:
        """Every ZIP and its state, in the order of `places`, without building a ZipPlace for
        each: the audit's `zips` relation (about 5 ms, where `places` takes about 50 ms)."""
        return list(self._where), [state for state, _ in self._where.values()]

    @cached_property
    def places(self) -> dict[str, ZipPlace]:
        with gc_paused(keep=True):  # the ZipPlace records are all kept
            acceptable = self._acceptable
            return {
                zip_code: ZipPlace(zip_code, state, city, tuple(acceptable.get(zip_code, ())))
                for zip_code, (state, city) in self._where.items()
            }

    @cached_property
    def by_state(self) -> dict[str, dict[str, ZipPlace]]:
        by_state: dict[str, dict[str, ZipPlace]] = {}
        for zip_code, place in self.places.items():
            by_state.setdefault(place.state, {})[zip_code] = place
        return by_state


@lru_cache(maxsize=1)
def zip_index() -> ZipIndex:
    """The whole index: from the cached copy of the database, else from the database."""
    with gc_paused(keep=True):
        return ZipIndex(read_cached() or read_database())


def state_places(code: str) -> dict[str, ZipPlace]:
    """The ZIPs of one state or territory (empty for a code the database does not know)."""
    return zip_index().by_state.get(code, {})


def is_jurisdiction(code: str) -> bool:
    """A state or territory that licenses wagers: in the ZIP database, not a military post."""
    return code in zip_index().jurisdictions
