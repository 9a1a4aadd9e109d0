"""A large folder's layout checked in a forked child (verify/beside.py) says what in-process says.

Every case runs `verify` on the same folder twice: once with the child (FORK_MIN_BYTES 0, so the
demo's small files take that path) and once in-process, and asserts the same findings (file,
verdict, words, kind, rule), signers, notes and verdicts. The cases: the folder as baked (the
child's answer and the tail are used), every re-signed rule edit of tests/test_verify_rules.py
written as a whole folder in the baked layout, files off the layout (a float, a duplicate key,
other whitespace), registry copies edited or missing, the portal edited, a stray file, keys of
either kind; and a child that fails or answers nonsense (then everything is checked here).
"""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compliance_bake.inputs.jsonio import dumps_pretty, loads_strict
from compliance_bake.inputs.schemas import SchemaViolation
from compliance_bake.report import layout, portal
from compliance_bake.report.models import Shadow, ShadowRow
from compliance_bake.signing.secret import Secret
from compliance_bake.verify import beside, files
from compliance_bake.verify.columns import shadow_columns, state_totals
from compliance_bake.verify.verifier import KeyMaterial, VerifyOptions, verify_source
from tests._attest_helpers import bake, mint
from tests._resign import resign
from tests.conftest import NOW, SECRET, bake_deep_demo, invoke
from tests.test_verify_rules import CASES

DEMO_PLAYS = Path(__file__).resolve().parent.parent / "fixtures" / "plays.csv"
KEYS = KeyMaterial(Secret(SECRET, "test"))
Edit = Callable[[Path], None]


@pytest.fixture(scope="module")
def deep_out(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A demo bake with the ZIP-window audit, copied by each test."""
    out = bake_deep_demo(tmp_path_factory.mktemp("beside") / "out")
    yield out


@pytest.fixture
def out(deep_out: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(deep_out, tmp_path / "out"))


class Spy:
    """Whether the child answered, and whether the tail was used, in the last run."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.known: list[bool] = []
        self.settled: list[bool] = []
        known, settles = beside.Ahead.known, beside.Ahead.settles

        def spy_known(ahead: beside.Ahead) -> Any:
            found = known(ahead)
            self.known.append(found is not None)
            return found

        def spy_settles(ahead: beside.Ahead, *args: Any) -> bool:
            used = settles(ahead, *args)
            self.settled.append(used)
            return used

        monkeypatch.setattr(beside.Ahead, "known", spy_known)
        monkeypatch.setattr(beside.Ahead, "settles", spy_settles)


def _outcome(folder: Path, keys: KeyMaterial) -> tuple[Any, ...]:
    report = verify_source(str(folder), keys, VerifyOptions())
    found = [(f.file, f.ok, f.what, f.kind, f.rule) for f in report.findings]
    return found, report.signers, report.notes, report.applied, report.verdicts(), report.ok


def _both(
    folder: Path, monkeypatch: pytest.MonkeyPatch, keys: KeyMaterial = KEYS, forks: bool = True
) -> tuple[Any, Spy]:
    """The outcome with the child (`forks`: unless the snapshot file cannot be parsed at all);
    asserted equal to the outcome in-process."""
    spy = Spy(monkeypatch)
    with monkeypatch.context() as patch:
        patch.setattr(beside, "FORK_MIN_BYTES", 0)
        forked = _outcome(folder, keys)
    assert len(spy.known) == int(forks), "the child was not forked, or was"
    in_process = _outcome(folder, keys)
    assert len(spy.known) == int(forks), "a child was forked for a small folder"
    assert forked == in_process
    return forked, spy


def test_the_folder_as_baked_uses_the_child_and_the_tail(
    out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcome, spy = _both(out, monkeypatch)
    assert outcome[-1] is True
    assert spy.known == [True] and spy.settled == [True]
    snap = loads_strict((out / layout.API_FILE).read_bytes())
    columns = shadow_columns(snap)
    assert columns is not None and columns.grid is not None  # the portal's totals: counted
    assert state_totals(columns) == portal.state_totals(Shadow.from_json(snap["shadow"]).rows)


def _rewrite(edit: Callable[[dict[str, Any]], None], recheck: bool) -> Edit:
    def apply(folder: Path) -> None:
        snap = loads_strict((folder / layout.API_FILE).read_bytes())
        edit(snap)
        resign(snap, SECRET, recheck=recheck)
        for name, data in layout.render_files(snap).items():
            (folder / name).write_bytes(data)

    return apply


@pytest.mark.parametrize(
    ("rule_id", "edit", "recheck"), [pytest.param(r, e, c, id=f"{r}-{n}") for r, n, e, c in CASES]
)
def test_every_re_signed_rule_edit_fails_alike(
    out: Path, monkeypatch: pytest.MonkeyPatch, rule_id: str, edit: Any, recheck: bool
) -> None:
    _rewrite(edit, recheck)(out)
    (found, *_, ok), spy = _both(out, monkeypatch)
    assert not ok and spy.known == [True]  # in the layout: the child's answer was used
    assert any(kind == "rule" and not good and rule == rule_id for *_, good, _, kind, rule in found)


def _text(name: str, old: str, new: str) -> Edit:
    def apply(folder: Path) -> None:
        data = (folder / name).read_text(encoding="utf-8")
        assert old in data
        (folder / name).write_text(data.replace(old, new, 1), encoding="utf-8")

    return apply


def _value(change: Callable[[dict[str, Any]], None], name: str = layout.API_FILE) -> Edit:
    def apply(folder: Path) -> None:
        doc = loads_strict((folder / name).read_bytes())
        change(doc)
        (folder / name).write_bytes(dumps_pretty(doc))

    return apply


def _other_whitespace(folder: Path) -> None:
    doc = loads_strict((folder / layout.API_FILE).read_bytes())
    (folder / layout.API_FILE).write_text(json.dumps(doc, indent=4) + "\n", encoding="utf-8")


def _remove(name: str) -> Edit:
    return lambda folder: (folder / name).unlink()


def _write(name: str, data: bytes) -> Edit:
    return lambda folder: (folder / name).write_bytes(data)


def _audit(folder: Path) -> None:
    run = invoke("audit", "deep", "--plays", str(DEMO_PLAYS), "--now", NOW, "--out", str(folder))
    assert run.exit_code == 0, run.output
    assert (folder / files.AUDIT_FILE).is_file()


def _copy_row(doc: dict[str, Any]) -> None:
    doc["rows"][-1]["match"] = not doc["rows"][-1]["match"]


def _secret_in_copy(doc: dict[str, Any]) -> None:
    doc["base"] = f"{doc.get('base')} {SECRET}"


LAYOUT_EDITS: dict[str, tuple[Edit, bool | None]] = {  # edit, whether the child can answer
    "float": (_text(layout.API_FILE, '"consoleDepth": 2', '"consoleDepth": 2.5'), False),
    "exponent": (_text(layout.API_FILE, '"consoleDepth": 2', '"consoleDepth": 2e0'), False),
    "duplicate-key": (
        _text(layout.API_FILE, '  "ok": true,\n', '  "ok": true,\n  "ok": true,\n'),
        False,
    ),  # noqa: E501
    "other-whitespace": (_other_whitespace, False),
    "a-string-like-a-float": (
        _text(layout.API_FILE, '"mode": "snapshot"', '"mode": "x: 1.5"'),
        False,
    ),  # noqa: E501
    "schema-broken": (_value(lambda d: d.update(mode=5)), True),
    "unreadable": (_write(layout.API_FILE, b'{\n  "ok": tru\n}\n'), None),
    "not-an-object": (_write(layout.API_FILE, b"[]\n"), None),
    "snapshot-missing": (_remove(layout.API_FILE), None),
    "shadow-copy-value": (_value(_copy_row, layout.SHADOW_FILE), True),
    "shadow-copy-key-order": (
        _value(lambda d: d.update(dict(reversed(list(d.items())))), layout.SHADOW_FILE),
        True,
    ),  # noqa: E501
    "shadow-copy-whitespace": (_text(layout.SHADOW_FILE, '{\n  "', '{\n   "'), True),
    "shadow-copy-secret": (_value(_secret_in_copy, layout.SHADOW_FILE), True),
    "shadow-copy-missing": (_remove(layout.SHADOW_FILE), True),
    "enhancements-copy-missing": (_remove(layout.ENHANCEMENTS_FILE), True),
    "portal-edited": (_text(layout.PORTAL_FILE, "</body>", "<p>edited</p></body>"), True),
    "portal-missing": (_remove(layout.PORTAL_FILE), True),
    "audit-file-added": (_audit, True),
    "stray-file": (_write("api/compliance.json.tmp", b"{}"), True),
}


PASSING = {"shadow-copy-key-order", "audit-file-added"}  # key order: still the same copy


@pytest.mark.parametrize("case", list(LAYOUT_EDITS))
def test_a_folder_off_the_baked_layout_gives_the_in_process_findings(
    out: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    edit, answers = LAYOUT_EDITS[case]
    edit(out)
    (found, *_, ok), spy = _both(out, monkeypatch, forks=answers is not None)
    assert ok is (case in PASSING)
    if answers is not None:
        assert spy.known == [answers]


def test_a_keyed_bake_with_the_public_key_alone_and_with_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = mint(tmp_path)
    folder = bake(tmp_path / "out", key)
    public = (key.public_pem,)
    for keys in (KeyMaterial(None, public), KeyMaterial(Secret(SECRET, "test"), public)):
        (*_, ok), spy = _both(folder, monkeypatch, keys)
        assert ok and spy.settled == [True]
    _text(layout.PORTAL_FILE, "</body>", "<p>edited</p></body>")(folder)
    (*_, ok), _ = _both(folder, monkeypatch, KeyMaterial(None, public))
    assert not ok


def test_a_child_that_fails_leaves_every_check_to_this_process(
    out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: Any) -> Any:
        raise RuntimeError("the child fails")

    monkeypatch.setattr(files, "known", broken)  # called in the child only
    (*_, ok), spy = _both(out, monkeypatch)
    assert ok and spy.known == [False] and spy.settled == [False]
    _rewrite(CASES[0][2], True)(out)
    (*_, ok), spy = _both(out, monkeypatch)
    assert not ok and spy.known == [False]


@pytest.mark.parametrize(
    "answer",
    [b"", b"[", b"{}", b'["known"]', b'["known", 3, {}]', b'["known", null, {"x": true}]',
     b'["known", null, {"registry/compliance-shadow.json": 1}]', b'["known", ["a", "b"], {}]',
     b'["unknown", null, {}]'],
)  # fmt: skip
def test_a_child_answering_nonsense_leaves_every_check_to_this_process(
    out: Path, monkeypatch: pytest.MonkeyPatch, answer: bytes
) -> None:
    monkeypatch.setattr(beside, "_encode", lambda _found: answer)
    (*_, ok), spy = _both(out, monkeypatch)
    assert ok and spy.known == [False]


def test_answers_are_decoded_as_encoded() -> None:
    violation = SchemaViolation("$.mode", "5 is not of type 'string'", "type")
    copies = {layout.SHADOW_FILE: True, layout.ENHANCEMENTS_FILE: False}
    for schema in (None, "RecursionError", violation):
        found = files.Known("value", schema, copies)
        assert beside._decode(beside._encode(found), "value") == found
    assert beside._decode(beside._encode(None), "value") is None


@st.composite
def _grids(draw: st.DrawFn) -> dict[str, Any]:
    states = draw(st.lists(st.sampled_from(["MA", "NJ", "NY", 1, True]), min_size=1, max_size=4))
    partners = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3))
    rows = []
    for state in states:
        for partner in partners:
            real, match = draw(st.sampled_from([True, False, True, False, 1])), draw(st.booleans())
            rows.append({"state": state, "partner": partner, "licenseStatus": None,
                         "realAllowed": real, "shadowAllowed": False, "match": match})  # fmt: skip
    if draw(st.booleans()) and len(rows) > 1:
        rows.insert(draw(st.integers(0, len(rows))), copy.deepcopy(rows[0]))
    return {"shadow": {"rows": rows}}


@settings(max_examples=300, deadline=None)
@given(_grids())
def test_the_totals_on_columns_are_the_portals(snap: dict[str, Any]) -> None:
    columns = shadow_columns(snap)
    assert columns is not None
    totals = state_totals(columns)
    if totals is not None:
        # The rows hold values no schema lets through (a state 1, a decision 1): built as they
        # are, not read through `from_json`.
        rows = [ShadowRow(*(r[k] for k in list(r)[:6])) for r in snap["shadow"]["rows"]]
        assert totals == portal.state_totals(rows)
        assert list(totals) == list(portal.state_totals(rows))
