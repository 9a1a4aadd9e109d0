"""US ZIP codes and jurisdictions, from the ZIP index the package ships (`zip_index.tsv`).

The file holds four fields of the `zipcodes` package's database (ZIP, state, city, acceptable
cities) as one tab-separated line per column, in the database's order; the repository's
scripts/build_zip_index.py writes it from that database, and a test holds the two equal. Reading
it takes a few milliseconds, where loading and listing the database takes over a second of CPU.

It is read once per process, on first use. The audit asks only for the ZIPs and their states
(`zip_states`) and the fixture checks for the jurisdictions and a few lookups, so the dictionary
of ZIP to state and city is built on the first lookup, and the ZipPlace of every ZIP only when a
caller asks for all of them (`places`, `by_state`: the generators).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

INDEX_FILE = Path(__file__).with_name("zip_index.tsv")
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
    """The index's columns, and lookups built from them on first use."""

    def __init__(
        self, zips: list[str], states: list[str], cities: list[str], acceptable: list[str]
    ) -> None:
        if not len(zips) == len(states) == len(cities) == len(acceptable):
            raise ValueError("the ZIP index's columns differ in length")
        self._zips, self._states, self._cities, self._acceptable = zips, states, cities, acceptable
        self.jurisdictions = frozenset(states) - _NOT_JURISDICTIONS

    @classmethod
    def read(cls, path: Path = INDEX_FILE) -> ZipIndex:
        zips, states, cities, acceptable = path.read_text(encoding="utf-8").split("\n")[:4]
        return cls(zips.split("\t"), states.split("\t"), cities.split("\t"), acceptable.split("\t"))

    @cached_property
    def _where(self) -> dict[str, int]:
        return {zip_code: i for i, zip_code in enumerate(self._zips)}

    def _place(self, i: int) -> ZipPlace:
        others = tuple(self._acceptable[i].split("|")) if self._acceptable[i] else ()
        return ZipPlace(self._zips[i], self._states[i], self._cities[i], others)

    def lookup(self, zip_code: str) -> ZipPlace | None:
        found = self._where.get(zip_code)
        return None if found is None else self._place(found)

    def zip_states(self) -> tuple[list[str], list[str]]:
        """Every ZIP and its state, in the order of `places`: the audit's `zips` relation."""
        return list(self._zips), list(self._states)

    @cached_property
    def places(self) -> dict[str, ZipPlace]:
        return {self._zips[i]: self._place(i) for i in range(len(self._zips))}

    @cached_property
    def by_state(self) -> dict[str, dict[str, ZipPlace]]:
        by_state: dict[str, dict[str, ZipPlace]] = {}
        for zip_code, place in self.places.items():
            by_state.setdefault(place.state, {})[zip_code] = place
        return by_state


@lru_cache(maxsize=1)
def zip_index() -> ZipIndex:
    """The whole index, read from the shipped file once per process."""
    return ZipIndex.read()


def is_jurisdiction(code: str) -> bool:
    """A state or territory that licenses wagers: in the ZIP database, not a military post."""
    return code in zip_index().jurisdictions
