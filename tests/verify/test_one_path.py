"""Every command that reads a snapshot reads it the same way (verify/source.py).

The same file, a baked snapshot with a second `mode` key inserted before the real one (a reader
that keeps the last key sees the baked value, one that keeps the first sees "tampered"), is given
to `verify` (as a file and inside an out/ folder), to `diff` as OLD and as NEW, and to
`bake snapshot --previous`. Each refuses it with the same words, naming the key: `verify` as a
failed check (exit 1), the others as bad input (exit 2), nothing compared or written.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests._attest_helpers import mint
from tests.conftest import invoke

REFUSAL = "not JSON at $.mode: duplicate key 'mode'"


def _duplicate_key(baked: Path, target: Path) -> Path:
    text = (baked / "api" / "compliance.json").read_text(encoding="utf-8")
    assert text.count('\n  "mode": ') == 1
    target.write_text(text.replace('\n  "mode": ', '\n  "mode": "tampered",\n  "mode": '))
    return target


def test_a_duplicate_key_is_refused_alike_by_verify_diff_and_previous(
    baked: Path, tmp_path: Path
) -> None:
    dup = _duplicate_key(baked, tmp_path / "dup.json")
    folder = Path(shutil.copytree(baked, tmp_path / "dup-out"))
    _duplicate_key(baked, folder / "api" / "compliance.json")

    as_file = invoke("verify", str(dup))
    assert as_file.exit_code == 1 and f"FAIL {dup}: {REFUSAL}" in as_file.stdout, as_file.output
    in_folder = invoke("verify", str(folder))
    assert in_folder.exit_code == 1, in_folder.output
    assert f"FAIL api/compliance.json: {REFUSAL}" in in_folder.stdout

    for old, new, label in ((baked, dup, "NEW"), (dup, baked, "OLD")):
        result = invoke("diff", str(old), str(new))
        assert result.exit_code == 2 and result.stdout == "", result.output
        assert f"{label} {dup}: {REFUSAL}" in result.stderr
    as_side = invoke("diff", str(baked), str(folder))
    assert as_side.exit_code == 2 and REFUSAL in as_side.stderr, as_side.output

    key = mint(tmp_path)
    new = tmp_path / "new"
    previous = invoke(
        "bake", "snapshot", "--out", str(new), "--signing-key", str(key.private),
        "--previous", str(dup),
    )  # fmt: skip
    assert previous.exit_code == 2 and not new.exists(), previous.output
    assert f"--previous {dup}: {REFUSAL}" in previous.stderr


def test_the_same_snapshot_without_the_duplicate_passes_all_three(
    baked: Path, tmp_path: Path
) -> None:
    """The control: the refusal above is the key's, not the way the file was written."""
    plain = tmp_path / "plain.json"
    plain.write_bytes((baked / "api" / "compliance.json").read_bytes())
    assert invoke("verify", str(plain)).exit_code == 0
    assert invoke("diff", str(baked), str(plain)).exit_code == 0
    key = mint(tmp_path)
    result = invoke(
        "bake", "snapshot", "--out", str(tmp_path / "new"), "--signing-key", str(key.private),
        "--previous", str(plain),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
