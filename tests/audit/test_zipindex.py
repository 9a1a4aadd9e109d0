"""The ZIP index the package ships is the `zipcodes` database's, written by the repository's
script, and the index reads it back field for field."""

from __future__ import annotations

from pathlib import Path

import pytest

from compliance_bake.inputs.zipindex import INDEX_FILE, ZipIndex, is_jurisdiction, zip_index
from scripts.build_zip_index import TARGET, database_rows, render

Rows = list[tuple[str, str, str, tuple[str, ...]]]


@pytest.fixture(scope="module")
def database() -> Rows:
    return database_rows()


def test_the_shipped_file_is_the_script_s_rendering_of_the_installed_database(
    database: Rows,
) -> None:
    assert TARGET == INDEX_FILE
    assert INDEX_FILE.read_text(encoding="utf-8") == render(database), (
        "the ZIP index differs from the installed zipcodes: run python scripts/build_zip_index.py"
    )


def test_the_index_reads_every_record_back_in_the_database_s_order(database: Rows) -> None:
    index = ZipIndex.read()
    places = [(p.zip_code, p.state, p.city, p.acceptable_cities) for p in index.places.values()]
    assert places == database
    assert index.lookup("02108") == index.places["02108"]
    assert index.lookup("00000") is None


def test_a_changed_record_is_seen(tmp_path: Path, database: Rows) -> None:
    edited = list(database)
    zip_code, _, city, others = edited[0]
    edited[0] = (zip_code, "NJ", city, others)
    copy = tmp_path / "zip_index.tsv"
    copy.write_text(render(edited), encoding="utf-8")
    assert copy.read_text(encoding="utf-8") != INDEX_FILE.read_text(encoding="utf-8")
    assert ZipIndex.read(copy).places[zip_code].state == "NJ"


def test_a_field_holding_a_separator_is_refused(database: Rows) -> None:
    zip_code, state, _, others = database[0]
    with pytest.raises(SystemExit, match=zip_code):
        render([(zip_code, state, "Tab\tCity", others)])


def test_jurisdictions_leave_out_military_posts_and_unknown_codes() -> None:
    assert is_jurisdiction("MA") and not is_jurisdiction("AA") and not is_jurisdiction("ZZ")


def test_the_audits_zip_columns_are_the_places_zips_and_states() -> None:
    index = zip_index()
    zips, states = index.zip_states()
    assert zips == list(index.places)
    assert states == [place.state for place in index.places.values()]
    assert len(set(zips)) == len(zips) > 40_000  # one row per ZIP: a join meets each play once
