"""US ZIP codes and jurisdictions, from the `zipcodes` package's database.

Loaded once per process on first use (about 0.7 s: the package decompresses its data on import),
and indexed by ZIP so that a lookup is one dictionary access instead of a scan.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

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

    def lookup(self, zip_code: str) -> ZipPlace | None:
        return self.places.get(zip_code)


@lru_cache(maxsize=1)
def zip_index() -> ZipIndex:
    import zipcodes

    places: dict[str, ZipPlace] = {}
    # `filter_by()` with no filter is every record, as `list_all()` gives them, but in a list of
    # our own: `list_all()` keeps its 42,000 dicts (and 120,000 lists) cached for the life of the
    # process, which costs memory and every later garbage collection walks them.
    with gc_paused():  # the ZipPlace records are all kept
        for row in zipcodes.filter_by():  # type: ignore[no-untyped-call]
            places[row["zip_code"]] = ZipPlace(
                zip_code=row["zip_code"],
                state=row["state"],
                city=row["city"],
                acceptable_cities=tuple(row.get("acceptable_cities") or ()),
            )
    states = frozenset(p.state for p in places.values()) - _NOT_JURISDICTIONS
    return ZipIndex(places=places, jurisdictions=states)
