"""US ZIP codes and jurisdictions, from the `zipcodes` package's database.

Loaded once per process on first use, and indexed by ZIP (and by state) so that a lookup is one
dictionary access instead of a scan. The records come from a compact copy of the database in the
user's cache folder when there is one (`inputs/zipcache.py`: about 20 ms to read, where the
package's own database costs about 0.5 s to load and list), else from the package, which then
leaves such a copy for the next process. Every caller (the fixture checks, the audit, the
generators) reads the one index, so nothing is built twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from compliance_bake.inputs.zipcache import PlaceRecord, read_cached, read_database
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


def _index(records: list[PlaceRecord]) -> ZipIndex:
    with gc_paused(keep=True):  # the ZipPlace records are all kept
        places = {
            zip_code: ZipPlace(zip_code, state, city, acceptable)
            for zip_code, state, city, acceptable in records
        }
        by_state: dict[str, dict[str, ZipPlace]] = {}
        for zip_code, place in places.items():
            by_state.setdefault(place.state, {})[zip_code] = place
    states = frozenset(by_state) - _NOT_JURISDICTIONS
    return ZipIndex(places=places, jurisdictions=states, by_state=by_state)


@lru_cache(maxsize=1)
def zip_index() -> ZipIndex:
    """The whole index: from the cached copy of the database, else from the database."""
    return _index(read_cached() or read_database())


def state_places(code: str) -> dict[str, ZipPlace]:
    """The ZIPs of one state or territory (empty for a code the database does not know)."""
    return zip_index().by_state.get(code, {})


def is_jurisdiction(code: str) -> bool:
    """A state or territory that licenses wagers: in the ZIP database, not a military post."""
    return code not in _NOT_JURISDICTIONS and code in zip_index().by_state
