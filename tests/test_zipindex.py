"""The ZIP index read from the cached copy of the database is the index of the database itself.

Each case runs in a fresh process with its own cache folder (XDG_CACHE_HOME), so that the index
is built there from nothing but that folder and the installed `zipcodes`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# Prints the index as JSON. With "no-database", reading the database fails, so the index can only
# come from the cached copy.
INDEX = """
import json, sys
from compliance_bake.inputs import zipcache, zipindex
if "no-database" in sys.argv:
    def refuse():
        raise AssertionError("the database was read")
    zipindex.read_database = refuse
index = zipindex.zip_index()
print(json.dumps({
    "places": [[p.zip_code, p.state, p.city, list(p.acceptable_cities)]
               for p in index.places.values()],
    "jurisdictions": sorted(index.jurisdictions),
    "MA": zipindex.is_jurisdiction("MA"), "AA": zipindex.is_jurisdiction("AA"),
    "ZZ": zipindex.is_jurisdiction("ZZ"), "file": str(zipcache.cache_file()),
}))
"""


def _index(cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache))
    return subprocess.run(
        [sys.executable, "-c", INDEX, *args], capture_output=True, text=True, env=env, timeout=120
    )


def _database() -> list[list[Any]]:
    import zipcodes

    return [
        [row["zip_code"], row["state"], row["city"], list(row.get("acceptable_cities") or ())]
        for row in zipcodes.filter_by()
    ]


@pytest.fixture(scope="module")
def database() -> list[list[Any]]:
    return _database()


def test_a_cold_cache_reads_the_database_and_leaves_a_copy_the_next_process_reads(
    tmp_path: Path, database: list[list[Any]]
) -> None:
    cold = _index(tmp_path)
    assert cold.returncode == 0, cold.stderr
    first = json.loads(cold.stdout)
    assert first["places"] == database  # every record, in the database's order
    assert first["MA"] is True and first["AA"] is False and first["ZZ"] is False
    assert "MA" in first["jurisdictions"] and "AA" not in first["jurisdictions"]
    copy = Path(first["file"])
    assert copy.parent == tmp_path / "compliance-bake" and copy.is_file()

    warm = _index(tmp_path, "no-database")
    assert warm.returncode == 0, warm.stderr
    assert json.loads(warm.stdout) == first


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # truncated
        lambda data: data.replace(b'"MA"', b'"NJ"', 1),  # edited
        lambda data: b"",
    ],
)
def test_a_damaged_copy_is_ignored_and_replaced(
    tmp_path: Path, database: list[list[Any]], damage: Any
) -> None:
    first = _index(tmp_path)
    copy = Path(json.loads(first.stdout)["file"])
    copy.write_bytes(damage(copy.read_bytes()))
    refused = _index(tmp_path, "no-database")
    assert refused.returncode != 0 and "the database was read" in refused.stderr
    again = _index(tmp_path)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["places"] == database
    assert _index(tmp_path, "no-database").returncode == 0  # a whole copy again


def test_an_unwritable_cache_folder_costs_only_speed(
    tmp_path: Path, database: list[list[Any]]
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would be\n")
    done = _index(blocker)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["places"] == database
    assert blocker.read_text() == "a file where the cache folder would be\n"


def test_the_audits_zip_columns_are_the_places_zips_and_states() -> None:
    from compliance_bake.inputs.zipindex import zip_index

    index = zip_index()
    zips, states = index.zip_states()
    assert zips == list(index.places)
    assert states == [place.state for place in index.places.values()]
    assert len(set(zips)) == len(zips) > 40_000  # one row per ZIP: a join meets each play once
