"""Which source column holds each of the audit's fields (`--plays-columns`), and whether the ZIP
column holds 5-digit ZIPs or 3-digit ZIP prefixes.

`--plays-columns play_id=COL,partner=COL,state=COL,zip=COL|zip_prefix=COL,enriched_at=COL`
names any subset; the rest keep their own names. With no map a plays file names the eight
columns of audit/plays_source.py, as it always did; with a map, or from a database, only the five
the audit reads are needed (play id, partner, state, ZIP or ZIP prefix, `enriched_at`), and the
others are read as absent. A column the map names and the source lacks is bad input (exit 2)
naming it and the columns the source has (`missing`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compliance_bake.errors import InputError

# The fields the audit reads, in the plays relation's names.
AUDITED = ("play_id", "partner", "state", "zip", "enriched_at")
_KEYS = ("play_id", "partner", "state", "zip", "zip_prefix", "enriched_at")
_FIX = (
    "write --plays-columns as play_id=COL,partner=COL,state=COL,zip=COL (or zip_prefix=COL),"
    "enriched_at=COL, each field once"
)


@dataclass(frozen=True, slots=True)
class ColumnMap:
    """The source column of each audited field, and the kind of ZIP the `zip` field holds."""

    names: tuple[tuple[str, str], ...] = ()  # (field, source column) as the map gave them
    prefix: bool = False  # the `zip` field holds 3-digit ZIP prefixes (`zip_prefix=COL`)

    @property
    def given(self) -> bool:
        return bool(self.names)

    @property
    def zip_kind(self) -> str:
        """What the ZIP column holds, as the report names it."""
        return "zip_prefix" if self.prefix else "zip"

    def source(self, field: str) -> str:
        """The source column of a plays-relation field (`zip` is the prefix column when
        prefixes are audited)."""
        for name, column in self.names:
            if name == field or (field == "zip" and name == "zip_prefix"):
                return column
        return "zip_prefix" if field == "zip" and self.prefix else field

    def required(self, all_columns: Sequence[str]) -> list[str]:
        """The source columns that must exist: the eight of a file with no map, else the five
        the audit reads."""
        fields = AUDITED if self.given else tuple(all_columns)
        return [self.source(f) for f in fields]

    def read(self, all_columns: Sequence[str]) -> list[tuple[str, str | None]]:
        """Each of `all_columns` and the source column it is read from (None: not read, NULL;
        with a map only the audited fields are read)."""
        needed = self.required(all_columns)
        return [(c, self.source(c) if self.source(c) in needed else None) for c in all_columns]

    def present(self, all_columns: Sequence[str]) -> list[str]:
        """The source columns read."""
        return [s for _, s in self.read(all_columns) if s is not None]

    def text(self) -> str:
        """The map as `--plays-columns` takes it."""
        return ",".join(f"{name}={column}" for name, column in self.names)

    def missing(self, label: str, have: Sequence[str]) -> None:
        """Bad input naming each audited column the source lacks, and the columns it has."""
        lacking = [c for c in self.required(AUDITED) if c not in have]
        if lacking:
            raise InputError(
                f"{label}: no column {', '.join(lacking)}; the source has "
                f"{', '.join(have) if have else 'no column'}",
                "name the source's columns in --plays-columns (field=COLUMN)",
            )


DEFAULT = ColumnMap()


def parse_columns(text: str | None) -> ColumnMap:
    """`--plays-columns` as a ColumnMap; bad input raises InputError naming the part."""
    if text is None or not text.strip():
        return DEFAULT
    names: list[tuple[str, str]] = []
    for part in text.split(","):
        field, sep, column = part.partition("=")
        field, column = field.strip(), column.strip()
        if not sep or not column:
            raise InputError(f"--plays-columns: {part.strip()!r} is not field=COLUMN", _FIX)
        if field not in _KEYS:
            raise InputError(
                f"--plays-columns: unknown field {field!r} (fields: {', '.join(_KEYS)})", _FIX
            )
        if any(field == n for n, _ in names):
            raise InputError(f"--plays-columns: {field} is given twice", _FIX)
        names.append((field, column))
    given = {n for n, _ in names}
    if {"zip", "zip_prefix"} <= given:
        raise InputError(
            "--plays-columns: give zip= (5-digit ZIPs) or zip_prefix= (3-digit prefixes), not both",
            _FIX,
        )
    return ColumnMap(tuple(names), prefix="zip_prefix" in given)
