"""`verify` accepts a fresh bake and rejects every kind of tampering, naming the file."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.inputs.jsonio import dumps_pretty, loads_strict
from compliance_bake.signing import proofs as signing
from tests._resign import resign
from tests.conftest import OTHER_SECRET, SECRET, invoke

FILES = [
    "api/compliance.json",
    "registry/compliance-enhancements.json",
    "registry/compliance-shadow.json",
    "portal/compliance/index.html",
]


def _verify(out: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = invoke("verify", str(out), *extra, env=env)
    return result.exit_code, result.output


def _edit(path: Path, change: Any) -> None:
    doc = loads_strict(path.read_bytes())
    change(doc)
    path.write_bytes(dumps_pretty(doc))


def test_fresh_bake_verifies(baked: Path) -> None:
    code, output = _verify(baked)
    assert code == 0, output
    assert "verified" in output


def test_json_output(baked: Path) -> None:
    result = invoke("verify", str(baked), "--json")
    report = json.loads(result.stdout)
    assert result.exit_code == 0
    assert report["ok"] is True and report["hmacChecked"] is True and report["failures"] == []
    assert report["authentic"]["ok"] is True and report["compliant"]["ok"] is True
    assert report["authentic"]["signers"][0].startswith("HMAC-SHA3-256 with REPORT_SIGNING_SECRET")


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("where", [0.1, 0.5, 0.9])
def test_one_changed_byte_in_any_file_fails(baked: Path, name: str, where: float) -> None:
    path = baked / name
    data = bytearray(path.read_bytes())
    index = int(len(data) * where)
    while chr(data[index]) in " \n":  # a byte that carries content, not layout
        index += 1
    data[index] = ord("x") if data[index] != ord("x") else ord("y")
    path.write_bytes(bytes(data))
    code, output = _verify(baked)
    assert code == 1
    assert name in output


def test_whitespace_edit_fails(baked: Path) -> None:
    path = baked / "registry" / "compliance-shadow.json"
    path.write_bytes(path.read_bytes().replace(b"\n  ", b"\n\t", 1))
    code, output = _verify(baked)
    assert code == 1 and "registry/compliance-shadow.json" in output and "layout" in output


def test_block_edited_and_digest_recomputed_without_the_secret(baked: Path) -> None:
    def forge(shadow: dict[str, Any]) -> None:
        row = shadow["rows"][-1]
        row["realAllowed"] = row["shadowAllowed"] = True
        row.pop("reason", None)
        shadow["summary"] = {
            "allow": shadow["summary"]["allow"] + 1,
            "block": shadow["summary"]["block"] - 1,
            "mismatches": 0,
        }
        shadow["proof"]["digest"] = shadow["signature"] = signing.shadow_digest(shadow)

    _edit(baked / "registry" / "compliance-shadow.json", forge)
    _edit(baked / "api" / "compliance.json", lambda snap: forge(snap["shadow"]))

    def reseal(snap: dict[str, Any]) -> None:
        snap["integrity"]["proof"]["digest"] = signing.integrity_digest(snap)

    _edit(baked / "api" / "compliance.json", reseal)
    code, output = _verify(baked)
    assert code == 1
    assert "shadow.proof.hmac" in output and "api/compliance.json" in output


def test_registry_copy_differing_from_snapshot(baked: Path) -> None:
    _edit(baked / "registry" / "compliance-enhancements.json", lambda d: d.update(consoleDepth=3))
    code, output = _verify(baked)
    assert code == 1
    assert "registry/compliance-enhancements.json" in output


@pytest.mark.parametrize("how", ["removed", "emptied"])
@pytest.mark.parametrize("which", ["shadow", "integrity"])
def test_hmac_removed_or_emptied(baked: Path, how: str, which: str) -> None:
    def strip(snap: dict[str, Any]) -> None:
        if how == "removed":
            del snap[which]["proof"]["hmac"]
        else:
            snap[which]["proof"]["hmac"] = ""

    _edit(baked / "api" / "compliance.json", strip)
    code, output = _verify(baked)
    assert code == 1
    assert "api/compliance.json" in output and "hmac" in output


def test_wrong_secret(baked: Path) -> None:
    code, output = _verify(baked, env={"REPORT_SIGNING_SECRET": OTHER_SECRET})
    assert code == 1
    assert "api/compliance.json" in output and "another secret" in output


def test_without_any_key_it_refuses_with_one_line(baked: Path) -> None:
    result = invoke("verify", str(baked), env={"REPORT_SIGNING_SECRET": None})  # type: ignore[dict-item]
    assert result.exit_code == 2
    assert "verified" not in result.output
    (line,) = result.stderr.strip().splitlines()
    assert "REPORT_SIGNING_SECRET" in line and "--public-key" in line and "--digests-only" in line


def test_digests_only_never_says_verified(baked: Path) -> None:
    env = {"REPORT_SIGNING_SECRET": None}
    result = invoke("verify", str(baked), "--digests-only", env=env)  # type: ignore[arg-type]
    assert result.exit_code == 0, result.output
    assert "digests consistent, NOT authenticated" in result.stdout
    assert "verified" not in result.stdout
    report = json.loads(invoke("verify", str(baked), "--digests-only", "--json", env=env).stdout)  # type: ignore[arg-type]
    assert report["ok"] is True and report["authentic"]["ok"] is False


def test_digests_only_still_fails_an_edit(baked: Path) -> None:
    _edit(baked / "api" / "compliance.json", lambda snap: snap.update(ok=False))
    env = {"REPORT_SIGNING_SECRET": None}
    result = invoke("verify", str(baked), "--digests-only", env=env)  # type: ignore[arg-type]
    assert result.exit_code == 1


def _record_a_failure(snap: dict[str, Any]) -> None:
    """An honest failed bake: the escape row measured unsafe, the board 7/8, re-signed."""
    row = next(r for r in snap["enhancements"]["rows"] if r["feature"] == "runtime.escapeHTML")
    row["actualState"]["rawUnsafe"] = True
    row["match"] = False
    snap["enhancements"]["passed"] = 7
    resign(snap, SECRET)


def test_an_authentic_snapshot_recording_a_failure_fails_unless_accepted(baked: Path) -> None:
    path = baked / "api" / "compliance.json"
    _edit(path, _record_a_failure)
    single = str(path)
    code, output = _verify(Path(single))
    assert code == 1, output
    assert "authentic: yes" in output and "recorded check enhancements failed" in output
    code, output = _verify(Path(single), "--allow-recorded-failures")
    assert code == 0, output
    assert "accepted" in output and "verified" not in output
    report = json.loads(invoke("verify", single, "--json", "--allow-recorded-failures").stdout)
    assert report["authentic"]["ok"] is True and report["compliant"]["ok"] is False
    assert report["compliant"]["recordedFailures"] and report["ok"] is True


def test_a_re_serialised_single_file_verifies_and_says_what_applied(
    baked: Path, tmp_path: Path
) -> None:
    doc = loads_strict((baked / "api" / "compliance.json").read_bytes())
    path = tmp_path / "published.json"
    path.write_text(json.dumps(doc, sort_keys=True, indent="\t"), encoding="utf-8")
    code, output = _verify(path)
    assert code == 0, output
    assert "verified" in output and "not applied" in output and "portal page" in output


@pytest.mark.parametrize(
    "stray", ["api/.compliance.json.x7Qd.tmp", "notes.txt", "registry/.hidden", "portal/x/y.html"]
)
def test_a_file_the_tool_does_not_write_fails_naming_it(baked: Path, stray: str) -> None:
    path = baked / stray
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"{}")
    code, output = _verify(baked)
    assert code == 1
    assert f"FAIL {stray}: not a file the tool writes" in output


def test_the_audit_report_is_allowed_and_said_to_be_unsigned(baked: Path) -> None:
    (baked / "audit").mkdir()
    (baked / "audit" / "zip-window.json").write_text("{}")
    result = invoke("verify", str(baked))
    assert result.exit_code == 0, result.output
    assert "audit/zip-window.json" in result.stderr and "no signature" in result.stderr


@pytest.mark.parametrize(
    ("name", "payload"),
    [
        ("registry/compliance-shadow.json", b"[" * 10_000 + b"]" * 10_000),
        ("api/compliance.json", b'{"ok": ' + b"7" * 5_000 + b"}"),
    ],
    ids=["10000-deep", "5000-digit-integer"],
)
def test_a_parser_limit_is_a_failed_check_naming_the_file(
    baked: Path, name: str, payload: bytes
) -> None:
    (baked / name).write_bytes(payload)
    result = invoke("verify", str(baked))
    assert result.exit_code == 1, result.output
    assert f"FAIL {name}: not" in result.output
    single = invoke("verify", str(baked / name))
    assert single.exit_code == 1 and str(baked / name) in single.output


def test_missing_folder_is_bad_input(tmp_path: Path) -> None:
    result = invoke("verify", str(tmp_path / "nowhere"))
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("extra", [[], ["--digests-only"], ["--json"]])
def test_a_folder_without_a_snapshot_is_bad_input_with_no_verdict(
    tmp_path: Path, extra: list[str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("not a bake\n")
    result = invoke("verify", str(empty), *extra)
    assert result.exit_code == 2, result.output
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "holds no snapshot" in result.stderr
    assert "compliant" not in result.output.lower()


def test_a_bake_that_lost_its_snapshot_still_fails_as_a_check(baked: Path) -> None:
    (baked / "api" / "compliance.json").unlink()
    result = invoke("verify", str(baked))
    assert result.exit_code == 1, result.output
    assert "api/compliance.json" in result.output


@pytest.mark.parametrize("depth", [300, 900])
def test_a_deep_value_inside_a_snapshot_is_a_failed_check(baked: Path, depth: int) -> None:
    path = baked / "api" / "compliance.json"
    text = path.read_text(encoding="utf-8")
    deep = "[" * depth + "]" * depth
    path.write_text(text.replace('"vaultMap": "docs/vault-map.md"', f'"vaultMap": {deep}'))
    for source in (baked, path):
        result = invoke("verify", str(source))
        assert result.exit_code == 1, result.output
        assert "api/compliance.json" in result.output


def test_a_fifo_in_out_or_as_the_source_never_hangs(baked: Path, tmp_path: Path) -> None:
    path = baked / "registry" / "compliance-shadow.json"
    path.unlink()
    os.mkfifo(path)
    result = invoke("verify", str(baked))
    assert result.exit_code == 1
    assert "FAIL registry/compliance-shadow.json" in result.output
    fifo = tmp_path / "snapshot.json"
    os.mkfifo(fifo)
    single = invoke("verify", str(fifo))
    assert single.exit_code == 2 and "not a regular file" in single.stderr


NOT_SNAPSHOTS = {
    "empty": (b"", "not a snapshot: it is empty"),
    "blank": (b"  \n", "not a snapshot: it is empty"),
    "not-json": (b"hello\n", "not a snapshot: not JSON at line 1 column 1"),
    "not-utf8": (b"\xff\xfe{}", "not a snapshot: not JSON at byte 0: not UTF-8"),
    "array": (b"[1, 2]", "not a snapshot: the JSON is not an object"),
    "other-object": (b'{"hello": 1}', "not a snapshot: the JSON object holds none of a snapshot's"),
}


@pytest.mark.parametrize("extra", [[], ["--json"], ["--digests-only"]])
@pytest.mark.parametrize("case", sorted(NOT_SNAPSHOTS))
def test_a_file_that_is_not_a_snapshot_is_bad_input_with_no_verdict(
    tmp_path: Path, case: str, extra: list[str]
) -> None:
    """Nothing to judge, so no verdict: one line naming the file, exit 2, nothing on stdout."""
    raw, words = NOT_SNAPSHOTS[case]
    path = tmp_path / "x.json"
    path.write_bytes(raw)
    result = invoke("verify", str(path), *extra)
    assert result.exit_code == 2, result.output
    if extra == ["--json"]:  # the one line is the error object, on stdout
        error = json.loads(result.stdout)
        assert error["code"] == 2 and f"{path}: {words}" in error["message"], error
    else:
        assert result.stdout == "", result.stdout
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and f"{path}: {words}" in lines[0], result.stderr
    assert "compliant" not in result.output and "authentic" not in result.output


def test_a_folder_holding_only_a_non_snapshot_is_bad_input(tmp_path: Path) -> None:
    folder = tmp_path / "site"
    (folder / "api").mkdir(parents=True)
    (folder / "api" / "compliance.json").write_bytes(b'{"hello": 1}')
    result = invoke("verify", str(folder))
    assert result.exit_code == 2 and result.stdout == "", result.output
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "api/compliance.json: not a snapshot" in result.stderr


@pytest.mark.parametrize("raw", [b"", b'{"hello": 1}'], ids=["empty", "other-object"])
def test_a_bake_whose_snapshot_was_replaced_is_still_judged_and_fails(
    baked: Path, raw: bytes
) -> None:
    """The control: beside a bake's other files, the same bytes are a damaged bake (exit 1)."""
    (baked / "api" / "compliance.json").write_bytes(raw)
    result = invoke("verify", str(baked))
    assert result.exit_code == 1, result.output
    assert "FAIL api/compliance.json" in result.stdout and "authentic: NO" in result.stdout


def test_a_damaged_snapshot_file_is_still_judged(baked: Path, tmp_path: Path) -> None:
    """The control: a snapshot that lost a block, or holds doubtful JSON, is a snapshot that
    fails (exit 1), not bad input."""
    path = tmp_path / "snapshot.json"
    path.write_bytes((baked / "api" / "compliance.json").read_bytes())
    _edit(path, lambda d: d.pop("geo"))
    result = invoke("verify", str(path))
    assert result.exit_code == 1 and "compliant: NO" in result.stdout, result.output
    path.write_bytes(b'{"mode": "snapshot", "mode": "snapshot"}')
    result = invoke("verify", str(path))
    assert result.exit_code == 1 and "duplicate key 'mode'" in result.stdout, result.output


def _verdicts(output: str) -> tuple[str, str]:
    lines = output.splitlines()
    return (
        next(line for line in lines if line.startswith("authentic:")),
        next(line for line in lines if line.startswith("compliant:")),
    )


@pytest.mark.parametrize("signed", [False, True], ids=["secret", "public-key"])
def test_a_stray_file_is_named_as_an_unexpected_file_not_as_bytes_that_differ(
    tmp_path: Path, signed: bool
) -> None:
    """The signed bytes are intact; out/ holds a file more. The authentic line says so (and
    still fails, exit 1); an edited byte beside it is named as what it is too."""
    from tests._attest_helpers import bake, mint

    key = mint(tmp_path) if signed else None
    out = bake(tmp_path / "out", key)
    (out / "notes.txt").write_text("a stray\n")
    extra = ["--public-key", str(key.public)] if key is not None else []
    code, output = _verify(out, *extra)
    authentic, compliant = _verdicts(output)
    assert code == 1, output
    assert authentic == (
        "authentic: NO, out/ holds 1 file the tool does not write (notes.txt); "
        "the signed bytes are intact"
    ), authentic
    assert compliant.startswith("compliant: yes") and "bytes differ" not in output
    path = out / "registry" / "compliance-shadow.json"
    path.write_bytes(path.read_bytes().replace(b'"base"', b' "base"', 1))
    code, output = _verify(out, *extra)
    authentic, _ = _verdicts(output)
    assert code == 1 and "intact" not in authentic, output
    assert authentic.endswith("; and out/ holds 1 file the tool does not write (notes.txt)")


def test_a_wrong_secret_is_named_as_the_secret_and_breaks_no_rule(baked: Path) -> None:
    code, output = _verify(baked, env={"REPORT_SIGNING_SECRET": OTHER_SECRET})
    authentic, compliant = _verdicts(output)
    assert code == 1, output
    assert authentic.startswith(
        "authentic: NO, an HMAC does not check with the report signing secret given"
    ), authentic
    assert compliant == "compliant: yes, every recorded check and every rule holds", output
    assert "rule(s) broken" not in output and "rule integrity-checks" not in output
    assert "shadow.proof.hmac does not match (tampered, or another secret)" in output


def test_a_bake_over_leftover_files_warns_and_still_passes(baked: Path) -> None:
    (baked / "old-report.html").write_text("left over\n")
    (baked / "api" / "notes.txt").write_text("left over\n")
    result = invoke("bake", "snapshot", "--out", str(baked), "--now", "2026-11-22T04:06:00Z")
    assert result.exit_code == 0, result.output
    assert "PASS: every check holds" in result.stdout
    warning = [line for line in result.stderr.splitlines() if "warning" in line]
    assert warning == [
        f"compliance-bake: warning: {baked} holds 2 files the bake does not write "
        "(api/notes.txt, old-report.html): `verify` fails on them and a server publishes "
        "them; remove them before publishing"
    ], result.stderr
    (baked / "old-report.html").unlink()
    (baked / "api" / "notes.txt").unlink()
    again = invoke("bake", "snapshot", "--out", str(baked), "--now", "2026-11-22T04:06:00Z")
    assert again.exit_code == 0 and "warning" not in again.stderr, again.stderr


def test_a_file_where_a_folder_of_out_should_be_is_a_failed_check_not_a_crash(
    baked: Path, tmp_path: Path
) -> None:
    """`api` a file (the snapshot's folder), `portal/compliance` a file (the page's): each is
    named missing (exit 1); a file path through a file is bad input (exit 2); never exit 4."""
    shutil.rmtree(baked / "portal" / "compliance")
    (baked / "portal" / "compliance").write_text("a file\n")
    result = invoke("verify", str(baked))
    assert result.exit_code == 1, result.output
    assert "FAIL portal/compliance/index.html: missing" in result.stdout
    shutil.rmtree(baked / "api")
    (baked / "api").write_text("a file\n")
    result = invoke("verify", str(baked))
    assert result.exit_code == 1 and "FAIL api/compliance.json: missing" in result.stdout
    single = invoke("verify", str(baked / "api" / "compliance.json"))
    assert single.exit_code == 2 and "no such file" in single.stderr, single.output
