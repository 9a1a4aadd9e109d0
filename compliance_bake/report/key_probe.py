"""The board's `identity.agent_key_prefix` feature: the package's KeyStore, measured by counting.

No clock: a timing measurement on a shared machine proves nothing. Instead the probe runs the
store `serve` runs (`compliance_bake.identity.keys.KeyStore`) over an index that counts the
entries each lookup touches, and through the store's comparison seam with a counter around the
function the store would compare with. `timing: constant` is earned only when
- the store compares with `hmac.compare_digest` (not `==`),
- a found key, a wrong secret and an unknown prefix each make exactly one comparison (an unknown
  prefix against a dummy hash, never a stored one: no early return), and
- each touches the same number of index entries, with one key stored or 64.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass, field

from compliance_bake.identity import keys
from compliance_bake.identity.keys import KeyRecord

STORE_SIZES = (1, 64)


class ObservedIndex(MutableMapping[str, KeyRecord]):
    """A dict that counts how many entries a lookup touches, and by which keys."""

    def __init__(self) -> None:
        self._data: dict[str, KeyRecord] = {}
        self.touched = 0
        self.addressed: list[str] = []

    def __getitem__(self, key: str) -> KeyRecord:
        self.touched += 1
        self.addressed.append(key)
        return self._data[key]

    def __setitem__(self, key: str, value: KeyRecord) -> None:
        self._data[key] = value

    def __delitem__(self, key: str) -> None:
        del self._data[key]

    def __contains__(self, key: object) -> bool:
        self.touched += 1
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        for key in self._data:
            self.touched += 1
            yield key

    def __len__(self) -> int:
        return len(self._data)

    def stored(self) -> list[str]:
        """The stored keys, read without counting (for the probe, not the store)."""
        return list(self._data)

    def stored_hashes(self) -> set[bytes]:
        return {record.key_hash for record in self._data.values()}

    def reset(self) -> None:
        self.touched = 0
        self.addressed = []


@dataclass
class CountingCompare:
    """Wraps the store's own comparison; records what each call compared against."""

    inner: keys.Compare
    against: list[bytes] = field(default_factory=list)

    def __call__(self, presented: bytes, expected: bytes) -> bool:
        self.against.append(expected)
        return self.inner(presented, expected)


@dataclass(frozen=True, slots=True)
class LookupCosts:
    touched: list[int]  # index entries touched: found, wrong secret, unknown prefix
    comparisons: list[int]  # comparisons made, same order
    unknown_against_stored: bool  # the unknown prefix was compared with a stored hash
    prefix_lengths: set[int]
    found: bool


def lookup_costs(size: int) -> LookupCosts:
    """Mint `size` keys, then look up a found key, a wrong secret and an unknown prefix."""
    index = ObservedIndex()
    counter = CountingCompare(keys.KeyStore().compare)
    store = keys.KeyStore(index, compare=counter)
    minted = [store.mint() for _ in range(size)]
    target_key = minted[-1]
    wrong_rest = target_key[:-1] + ("b" if target_key[-1] == "a" else "a")
    stored = index.stored()
    unknown_key = target_key
    for candidate in ("zzzzz", "yyyyy", "xxxxx", "wwwww"):
        unknown_key = candidate + target_key[len(candidate) :]
        if not any(unknown_key.startswith(k) for k in stored):
            break
    touched: list[int] = []
    comparisons: list[int] = []
    found = False
    for presented in (target_key, wrong_rest, unknown_key):
        index.reset()
        counter.against.clear()
        record = store.lookup(presented)
        touched.append(index.touched)
        comparisons.append(len(counter.against))
        if presented is target_key:
            found = record is not None
    stored_hashes = index.stored_hashes()
    return LookupCosts(
        touched=touched,
        comparisons=comparisons,
        unknown_against_stored=any(h in stored_hashes for h in counter.against),
        prefix_lengths={len(k) for k in stored},
        found=found,
    )


@dataclass(frozen=True, slots=True)
class KeyStoreFindings:
    method: str  # "prefix_lookup" or "scan"
    timing: str  # "constant" or "varies"
    prefix_len: int  # -1 when the stored prefixes differ in length
    touched: tuple[list[int], list[int]]  # per store size
    comparisons: tuple[list[int], list[int]]
    compare_name: str


def measure_key_store() -> KeyStoreFindings:
    small, large = (lookup_costs(size) for size in STORE_SIZES)
    compare = keys.KeyStore().compare
    direct = small.found and large.found and all(c == 1 for c in small.touched + large.touched)
    constant = (
        compare is hmac.compare_digest
        and len(set(small.touched + large.touched)) == 1
        and all(c == 1 for c in small.comparisons + large.comparisons)
        and not (small.unknown_against_stored or large.unknown_against_stored)
    )
    lengths = small.prefix_lengths | large.prefix_lengths
    return KeyStoreFindings(
        method="prefix_lookup" if direct else "scan",
        timing="constant" if constant else "varies",
        prefix_len=lengths.pop() if len(lengths) == 1 else -1,
        touched=(small.touched, large.touched),
        comparisons=(small.comparisons, large.comparisons),
        compare_name=_name(compare),
    )


def _name(compare: keys.Compare) -> str:
    if compare is hmac.compare_digest:
        return "hmac.compare_digest"
    return f"{getattr(compare, '__module__', '?')}.{getattr(compare, '__qualname__', '?')}"
