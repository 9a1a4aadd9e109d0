"""Build compliance_bake/inputs/zip_index.tsv, the ZIP index the package ships, from `zipcodes`.

    python scripts/build_zip_index.py          # rewrite the file from the installed zipcodes
    python scripts/build_zip_index.py --check  # exit 1 when the file differs from the data

The `zipcodes` package keeps its database inside a compiled extension that costs over a second
of CPU to load and list; the index needs four of its fields. The file holds them as four
tab-separated lines, one per column, in the database's order: ZIP codes, states, cities, and
each ZIP's acceptable cities joined by `|` (empty for most). Reading it costs a few
milliseconds, and it is the same for every user of an installation: nothing to cache or
invalidate. tests/audit/test_zipindex.py holds it equal to the installed database; a new
`zipcodes` release is taken in by running this script and committing the result.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

TARGET = Path(__file__).resolve().parent.parent / "compliance_bake" / "inputs" / "zip_index.tsv"
_SEPARATORS = ("\t", "\n", "\r", "|")


def database_rows() -> list[tuple[str, str, str, tuple[str, ...]]]:
    """Every record of the installed `zipcodes` database: ZIP, state, city, acceptable cities."""
    import zipcodes

    return [
        (row["zip_code"], row["state"], row["city"], tuple(row.get("acceptable_cities") or ()))
        for row in zipcodes.filter_by()
    ]


def render(rows: list[tuple[str, str, str, tuple[str, ...]]]) -> str:
    """The file's text: one line per column (module docstring)."""
    for row in rows:
        texts = (row[0], row[1], row[2], *row[3])
        if any(s in text for text in texts for s in _SEPARATORS):
            raise SystemExit(f"ZIP {row[0]}: a field holds a tab, a line end or '|'")
    columns = (
        [r[0] for r in rows],
        [r[1] for r in rows],
        [r[2] for r in rows],
        ["|".join(r[3]) for r in rows],
    )
    return "".join("\t".join(column) + "\n" for column in columns)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    text = render(database_rows())
    if args.check:
        same = TARGET.read_text(encoding="utf-8") == text
        print(f"{TARGET}: {'up to date' if same else 'differs from the zipcodes data'}")
        sys.exit(0 if same else 1)
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET} ({len(text.encode()):,} bytes)")


if __name__ == "__main__":
    main()
