"""What `verify` prints: the two verdicts first, what it did not check on its own line, each
failure once in plain words with JSON values, and a last screen that still names what failed."""

from __future__ import annotations

import base64
import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.inputs import schemas
from compliance_bake.inputs.jsonio import dumps_pretty, loads_strict
from compliance_bake.report import layout
from compliance_bake.signing.attestation import ATTESTATION_FILE
from tests._attest_helpers import KeyPair, bake, mint
from tests.conftest import invoke

NO_SECRET: dict[str, str] = {"REPORT_SIGNING_SECRET": None}  # type: ignore[dict-item]
UNCHECKED = "attestation: present, not checked: give --public-key"
PYTHON_REPRS = re.compile(r"\b(True|False|None)\b|\{'|'\}|: '")
SCHEMA_INTERNALS = re.compile(r"is not allowed for|should not be valid|\{\"required\"")


def _keyed_bake(tmp_path: Path) -> tuple[Path, KeyPair]:
    key = mint(tmp_path)
    return bake(tmp_path / "out", key), key


def _corrupt_signature(out: Path) -> None:
    path = out / ATTESTATION_FILE
    envelope = json.loads(path.read_bytes())
    sig = bytearray(base64.b64decode(envelope["signatures"][0]["sig"]))
    sig[0] ^= 1
    envelope["signatures"][0]["sig"] = base64.b64encode(bytes(sig)).decode()
    path.write_text(json.dumps(envelope))


def _tamper_row(out: Path) -> None:
    """An unlicensed row flipped to allowed, its reason left: the schema, three rules, the
    digests and the copies all fail."""
    path = out / layout.API_FILE
    snap = loads_strict(path.read_bytes())
    row = next(r for r in snap["shadow"]["rows"] if r["realAllowed"] is False)
    row["realAllowed"] = row["shadowAllowed"] = True
    path.write_bytes(dumps_pretty(snap))


def test_an_attestation_not_checked_is_named_and_never_verified(tmp_path: Path) -> None:
    out, _ = _keyed_bake(tmp_path)
    _corrupt_signature(out)  # only a public key could tell
    report = tmp_path / "verify.json"
    result = invoke("verify", str(out), "--report", f"json:{report}")
    assert result.exit_code == 0, result.output  # the HMAC authenticates the snapshot
    assert UNCHECKED in result.output.splitlines()
    assert "verified" not in result.output
    last = result.output.rstrip().splitlines()[-1]
    assert last.startswith("PASS: authentic and compliant; " + UNCHECKED)
    written = json.loads(report.read_bytes())
    assert UNCHECKED in written["verdict"] and written["details"]["notChecked"] == [UNCHECKED]

    as_json = json.loads(invoke("verify", str(out), "--json").stdout)
    assert as_json["notChecked"] == [UNCHECKED]
    assert as_json["attestation"] == {"present": True, "checked": False, "verdict": UNCHECKED}


def test_the_reports_name_the_unchecked_attestation(tmp_path: Path) -> None:
    """JUnit (read by xmllint against junit-10.xsd) holds it as a skipped case, the JSON report
    (valid against its schema) as a skipped case and in its verdict, the step summary and the
    GitHub notice in the verdict they print."""
    from jsonschema import Draft202012Validator

    from compliance_bake.resources import schemas_dir
    from tests.cli._xsd import assert_valid

    out, _ = _keyed_bake(tmp_path)
    junit, summary, markdown = tmp_path / "v.xml", tmp_path / "v.json", tmp_path / "v.md"
    reports = [f"junit:{junit}", f"json:{summary}", f"markdown:{markdown}", "github:-"]
    result = invoke("verify", str(out), *(x for r in reports for x in ("--report", r)))
    assert result.exit_code == 0, result.output
    root = assert_valid(junit)
    skipped = [c for c in root.iter("testcase") if c.find("skipped") is not None]
    assert [c.get("name") for c in skipped] == ["attestation not checked"]
    assert skipped[0].find("skipped").get("message") == "present, not checked: give --public-key"  # type: ignore[union-attr]
    assert root.find("testsuite").get("skipped") == "1"  # type: ignore[union-attr]
    document = json.loads(summary.read_bytes())
    schema = json.loads((schemas_dir() / "run-summary.schema.json").read_bytes())
    Draft202012Validator(schema).validate(document)
    cases = document["suites"][0]["cases"]
    assert [c["name"] for c in cases if c.get("skipped")] == ["attestation not checked"]
    assert "present, not checked\\: give \\-\\-public\\-key" in markdown.read_text()
    assert UNCHECKED in result.stdout  # the ::notice


def test_a_checked_attestation_is_not_listed_as_unchecked(tmp_path: Path) -> None:
    out, key = _keyed_bake(tmp_path)
    result = invoke("verify", str(out), "--public-key", str(key.public), "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["notChecked"] == [] and summary["attestation"]["checked"] is True


@pytest.mark.parametrize(
    "content",
    [b"{not json", b'{"payloadType": "x"}', b'{"payloadType": "application/vnd.in-toto+json",'
     b' "payload": "e30=", "signatures": [{"keyid": "k", "sig": "AA=="}]}'],
    ids=["not-json", "not-dsse", "not-a-statement"],
)  # fmt: skip
def test_an_attestation_that_cannot_be_parsed_fails_without_a_key(
    tmp_path: Path, content: bytes
) -> None:
    out, _ = _keyed_bake(tmp_path)
    (out / ATTESTATION_FILE).write_bytes(content)
    result = invoke("verify", str(out))
    assert result.exit_code == 1, result.output
    assert result.stdout.splitlines()[0].startswith("authentic: NO")
    assert f"FAIL {ATTESTATION_FILE}: attestation: " in result.output
    assert UNCHECKED not in result.output


def test_a_changed_envelope_names_its_key_once(tmp_path: Path) -> None:
    out, key = _keyed_bake(tmp_path)
    _corrupt_signature(out)
    result = invoke("verify", str(out), "--public-key", str(key.public), env=NO_SECRET)
    assert result.exit_code == 1
    assert (
        f"signature: does not verify with key {key.key_id}, the key the envelope names: "
        "the envelope changed after signing"
    ) in result.output
    assert result.output.count(key.key_id) == 1


def test_a_wrong_key_names_the_signer_and_the_given_key_apart(tmp_path: Path) -> None:
    out, key = _keyed_bake(tmp_path)
    other = mint(tmp_path, "other.pem")
    result = invoke("verify", str(out), "--public-key", str(other.public), env=NO_SECRET)
    assert result.exit_code == 1
    assert key.key_id != other.key_id
    assert (
        f"signature: signed by key {key.key_id}; the given key {other.key_id} is another key"
    ) in result.output


def test_a_tampered_folder_leads_with_the_verdicts_and_lists_each_failure_once(
    baked: Path,
) -> None:
    _tamper_row(baked)
    result = invoke("verify", str(baked), env={"COLUMNS": "80"})
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("authentic: NO") and lines[1].startswith("compliant: NO")
    fails = [line for line in lines if line.startswith("FAIL ")]
    assert len(fails) >= 5 and len(fails) == len(set(fails))
    for fail in fails:
        assert result.stdout.count(fail.partition(": ")[2]) == 1, fail  # listed once
    assert lines[-1].startswith("FAIL: not authentic, not compliant: ")
    assert PYTHON_REPRS.search(result.stdout) is None, result.stdout
    assert SCHEMA_INTERNALS.search(result.stdout) is None, result.stdout
    assert ': "reason" is not allowed with the other values of this object' in result.stdout
    assert 'counted {"allow": ' in result.stdout


def test_the_last_screen_at_80_columns_names_what_failed(baked: Path) -> None:
    _tamper_row(baked)
    result = invoke("verify", str(baked), env={"COLUMNS": "80"})
    screen: list[str] = []
    for line in result.stdout.splitlines():
        screen += textwrap.wrap(line, 80) or [""]
    last = "\n".join(screen[-24:])
    assert "FAIL api/compliance.json: does not match the schema" in last
    assert "FAIL api/compliance.json: rule shadow-summary" in last
    assert "FAIL: not authentic, not compliant" in last


@pytest.mark.parametrize(
    ("edit", "plain"),
    [
        (lambda s: s.__setitem__("ok", "yes"), '$.ok is "yes"; it must be true'),
        (lambda s: s.__setitem__("extra", {"a": 1}),
         '$: "extra" is not a property this object may have'),
        (lambda s: s.pop("geo"), '$: the required property "geo" is missing'),
        (lambda s: s["integrity"].__setitem__("checks", {"sha3": True}),
         '$.integrity.checks is {"sha3": true}; it must be of type "array"'),
        (lambda s: s["shadow"]["rows"][0].__setitem__("licenseStatus", "gone"),
         '$.shadow.rows[0].licenseStatus is "gone"; it must be one of "active" or null'),
    ],
    ids=["const", "additional", "required", "type", "enum"],
)  # fmt: skip
def test_schema_errors_say_what_is_wrong_where(baked: Path, edit: Any, plain: str) -> None:
    from compliance_bake.verify.source import plain_violation

    snap = loads_strict((baked / layout.API_FILE).read_bytes())
    edit(snap)
    found = schemas.first_violation(schemas.SNAPSHOT, snap)
    assert found is not None and plain_violation(found) == plain
