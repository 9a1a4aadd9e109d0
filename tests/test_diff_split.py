"""diff/split.py: a large OLD read in its own process gives exactly the in-process result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.diff import digest
from compliance_bake.diff.run import run_diff
from compliance_bake.errors import BakeError
from compliance_bake.signing.secret import resolve_secret
from tests._diff_helpers import bake, bake_lying, fixtures_with
from tests.conftest import OTHER_SECRET
from tests.test_diff import _add_state, _remove_partner, _reorder, _revoke

ALL_IN_PROCESS = 10**12


def _both(old: Path, new: Path, **options: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    secret = resolve_secret(None)
    split = run_diff(str(old), str(new), secret=secret, fork_min_bytes=1, **options)
    whole = run_diff(str(old), str(new), secret=secret, fork_min_bytes=ALL_IN_PROCESS, **options)
    return split.as_json(), whole.as_json()


@pytest.mark.parametrize("chunk", [1, 3, 2_000])
def test_split_equals_in_process_on_every_known_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(digest, "CHUNK_ROWS", chunk)
    base = bake(fixtures_with(tmp_path, "base"), tmp_path / "base-out")
    news = [
        bake(fixtures_with(tmp_path, name, edit), tmp_path / f"{name}-out")
        for name, edit in (
            ("revoked", _revoke),
            ("state", _add_state),
            ("partner", _remove_partner),
            ("reorder", _reorder),
            ("same", None),
        )
    ]
    news.append(bake_lying(fixtures_with(tmp_path, "lying"), tmp_path / "lying-out",
                           "node-offshore-04", "MA"))  # fmt: skip
    for new in news:
        split, whole = _both(base, new)
        assert split == whole, new.name
        split, whole = _both(new, base)
        assert split == whole, new.name
    assert json.dumps(_both(base, news[0])[0]["counts"]) == (
        '{"decision": 1, "coverage": 0, "self-check": 0, "cosmetic": 0}'
    )


def test_split_refuses_as_in_process(tmp_path: Path) -> None:
    base = bake(fixtures_with(tmp_path, "base"), tmp_path / "base-out")
    other = tmp_path / "other-out"
    bake(fixtures_with(tmp_path, "other"), other)
    snapshot = other / "api" / "compliance.json"
    doc = json.loads(snapshot.read_bytes())
    doc["shadow"]["rows"][0]["match"] = False
    snapshot.write_text(json.dumps(doc))  # edited: no longer authentic
    missing = tmp_path / "nowhere"
    for old, new in ((other, base), (base, other), (missing, base), (base, missing)):
        errors = []
        for fork_min_bytes in (1, ALL_IN_PROCESS):
            with pytest.raises(BakeError) as caught:
                run_diff(str(old), str(new), secret=resolve_secret(None),
                         fork_min_bytes=fork_min_bytes)  # fmt: skip
            errors.append((type(caught.value), caught.value.message, caught.value.exit_code))
        assert errors[0] == errors[1] and errors[0][2] == 2
    # Allowed unauthenticated, the split path compares the edited side as in-process.
    split, whole = _both(other, base, allow_unauthenticated=True)
    assert split == whole and split["authenticated"] is False
    assert split["counts"]["self-check"] == 1


def test_another_secret_is_not_authentic_in_the_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = bake(fixtures_with(tmp_path, "base"), tmp_path / "base-out")
    monkeypatch.setenv("REPORT_SIGNING_SECRET", OTHER_SECRET)
    result = run_diff(str(base), str(base), secret=resolve_secret(None), fork_min_bytes=1,
                      allow_unauthenticated=True)  # fmt: skip
    assert result.old.authentic is False and result.new.authentic is False
    assert "hmac does not match" in result.old.checked


def test_a_child_that_fails_is_exit_4_never_authentic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compliance_bake.diff import split

    base = bake(fixtures_with(tmp_path, "base"), tmp_path / "base-out")

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the checking process breaks")

    monkeypatch.setattr(split, "authenticate", broken)  # in the forked child only
    with pytest.raises(split.CheckingFailed) as caught:
        run_diff(str(base), str(base), secret=resolve_secret(None), fork_min_bytes=1,
                 allow_unauthenticated=True)  # fmt: skip
    assert caught.value.exit_code == 4 and "OLD" in caught.value.message


def _edited(base: Path, root: Path, name: str, edit: Any) -> Path:
    """A copy of base's snapshot file, its rows edited (so no longer authentic)."""
    doc = json.loads((base / "api" / "compliance.json").read_bytes())
    edit(doc["shadow"]["rows"])
    path = root / f"{name}.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("chunk", [1, 2_000])
def test_rows_the_bytes_path_declines_give_the_in_process_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """A pair listed twice, a state split into two runs, a reason holding `},{`: the split path
    parses the rows and answers (or refuses) exactly as in-process."""
    monkeypatch.setattr(digest, "CHUNK_ROWS", chunk)
    base = bake(fixtures_with(tmp_path, "base"), tmp_path / "base-out")
    edits = {
        "twice": lambda rows: rows.insert(1, dict(rows[0])),
        "split": lambda rows: rows.append(rows.pop(0)),
        "braces": lambda rows: rows[3].update(reason="odd },{ reason"),
        "braces-removed": lambda rows: rows[3].update(reason="x},{y") or rows.pop(5),
    }
    for name, edit in edits.items():
        edited = _edited(base, tmp_path, name, edit)
        for old, new in ((base, edited), (edited, base)):
            found = []
            for fork_min_bytes in (1, ALL_IN_PROCESS):
                try:
                    result = run_diff(str(old), str(new), secret=resolve_secret(None),
                                      fork_min_bytes=fork_min_bytes,
                                      allow_unauthenticated=True)  # fmt: skip
                    found.append(result.as_json())
                except BakeError as error:
                    found.append((type(error).__name__, error.message, error.exit_code))
            assert found[0] == found[1], name
    twice = _edited(base, tmp_path, "twice", edits["twice"])
    with pytest.raises(BakeError, match="pair twice") as caught:
        run_diff(str(base), str(twice), secret=resolve_secret(None), fork_min_bytes=1,
                 allow_unauthenticated=True)  # fmt: skip
    assert caught.value.exit_code == 2


def test_a_removed_partner_is_compared_as_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The keyed case (rows that no longer line up) parses neither side's rows here."""
    from compliance_bake.diff import rowbytes

    base = bake(fixtures_with(tmp_path, "base"), tmp_path / "base-out")
    new = bake(fixtures_with(tmp_path, "partner", _remove_partner), tmp_path / "partner-out")
    whole = run_diff(str(base), str(new), secret=resolve_secret(None),
                     fork_min_bytes=ALL_IN_PROCESS).as_json()  # fmt: skip

    def refused(chunks: list[bytes]) -> list[Any]:
        raise AssertionError("parsed whole")

    monkeypatch.setattr(rowbytes, "_parsed", refused)
    split = run_diff(str(base), str(new), secret=resolve_secret(None), fork_min_bytes=1)
    assert split.as_json() == whole
    assert [c["kind"] for c in whole["changes"]][:2] == ["partner-removed", "geo-removed"]


def test_a_new_side_whose_child_fails_is_exit_4(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compliance_bake.diff import split

    base = bake(fixtures_with(tmp_path, "base"), tmp_path / "base-out")
    parse = split.parse_snapshot

    def broken(raw: bytes, label: str, source: str) -> Any:
        if label == "NEW":
            raise RuntimeError("the checking process breaks")
        return parse(raw, label, source)

    monkeypatch.setattr(split, "parse_snapshot", broken)  # in the forked children only
    with pytest.raises(split.CheckingFailed) as caught:
        run_diff(str(base), str(base), secret=resolve_secret(None), fork_min_bytes=1)
    assert caught.value.exit_code == 4 and caught.value.message.startswith("NEW:")
