"""Reading what `verify` is given, and the checks that only an `out/` folder allows.

A document that cannot be read or parsed (including the strict parser's limits: depth, integer
size) is a failure naming the file, never a crash. The folder checks: every file is one the tool
writes, the JSON files are in the baked byte layout, the registry copies equal the snapshot's
blocks, and the portal page is the rendering of the snapshot.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from jinja2 import TemplateError

from compliance_bake.errors import InputError
from compliance_bake.inputs import schemas
from compliance_bake.inputs.files import read_regular_file
from compliance_bake.inputs.jsonio import StrictJSONError, dumps_pretty, loads_strict
from compliance_bake.report import layout
from compliance_bake.report.deepequal import strict_equals
from compliance_bake.report.portal import render_portal
from compliance_bake.targets.fetch import SNAPSHOT_MAX_BYTES
from compliance_bake.verify.findings import RULE, VerifyReport

ATTESTATION_FILE = "attestation/compliance.intoto.json"
AUDIT_FILE = "audit/zip-window.json"
KEEP_FILE = ".gitkeep"  # allowed empty at the top, as the attestation allows it
# Written by the bake (and the attestation, when a signing key is given) ...
BAKED_FILES = (*layout.JSON_FILES, layout.PORTAL_FILE)
# ... or by `audit deep` into the same out/ (allowed, but no signature of the snapshot covers it).
EXPECTED_FILES = frozenset((*BAKED_FILES, ATTESTATION_FILE, AUDIT_FILE))


def parse_document(name: str, raw: bytes, report: VerifyReport) -> Any | None:
    """The strictly parsed document, or None after a finding naming `name`."""
    try:
        return loads_strict(raw)
    except StrictJSONError as exc:
        report.add(name, False, f"not strict JSON at {exc.where}: {exc}")
    except RecursionError:
        report.add(name, False, "not readable JSON: nested deeper than the parser's limit")
    except ValueError as exc:  # e.g. an integer longer than Python's digit limit
        report.add(name, False, f"not readable JSON: {exc}")
    return None


def schema_valid(  # a schema is a rule of meaning: its findings count for *compliant*
    name: str, schema: str, doc: Any, report: VerifyReport
) -> bool:
    try:
        problem = schemas.first_violation(schema, doc)
    except (RecursionError, ValueError) as exc:  # jsonschema-rs on a pathological document
        return report.add(name, False, f"schema: cannot validate ({type(exc).__name__})", RULE)
    if problem is not None:
        what = f"schema: {problem.path}: {problem.message}"
        return report.add(name, False, what, RULE, "schema")
    return report.add(name, True, "schema valid", RULE, "schema")


def _empty_regular(path: Path) -> bool:
    return path.is_file() and not path.is_symlink() and path.stat().st_size == 0


def unexpected_files(out_dir: Path, report: VerifyReport) -> None:
    """Every entry of out/ that the tool does not write is a failure naming it: a stale temporary
    file of a killed bake, a file someone dropped in, anything a static server would publish."""
    found: list[str] = []
    for root, dirs, files in os.walk(out_dir):
        here = Path(root)
        for entry in [*files, *(d for d in dirs if (here / d).is_symlink())]:
            name = (here / entry).relative_to(out_dir).as_posix()
            path = here / entry
            if name == KEEP_FILE and _empty_regular(path):  # a checkout keeps out/ this way
                continue
            if name not in EXPECTED_FILES or path.is_symlink() or not path.is_file():
                found.append(name)
    for name in sorted(found):
        report.add(name, False, "not a file the tool writes: remove it before publishing out/")
    report.add(".", True, "every file of out/ is one the tool writes")
    if (out_dir / AUDIT_FILE).is_file():
        report.notes.append(
            f"{AUDIT_FILE} (written by `audit deep`) is allowed in out/, "
            "but no signature of the snapshot covers it"
        )


def read_folder_file(out_dir: Path, name: str, report: VerifyReport) -> bytes | None:
    """A regular file of out/ (a FIFO planted there must not hang verify), or a finding."""
    try:
        return read_regular_file(out_dir / name, max_bytes=SNAPSHOT_MAX_BYTES, what=name)
    except FileNotFoundError:
        report.add(name, False, "missing")
    except InputError as exc:
        report.add(name, False, f"cannot read: {exc.message}")
    return None


def load_folder_file(out_dir: Path, name: str, report: VerifyReport) -> tuple[Any | None, bytes]:
    """Read, parse, validate one JSON file of out/ and check its byte layout."""
    raw = read_folder_file(out_dir, name, report)
    if raw is None:
        return None, b""
    doc = parse_document(name, raw, report)
    if doc is None:
        return None, raw
    valid = schema_valid(name, layout.JSON_FILES[name], doc, report)
    try:
        same = dumps_pretty(doc) == raw
    except TypeError:  # orjson refuses nesting deeper than 255: not the baked layout
        same = False
    report.add(
        name,
        same,
        "bytes are in the baked layout"
        if same
        else "bytes differ from the baked layout (the file was edited after the bake)",
    )
    # The snapshot goes on to the rules even when its schema fails (each rule fails closed);
    # a registry copy that breaks its schema is only compared.
    return (doc if valid or name == layout.API_FILE else None), raw


def registry_copies(docs: dict[str, Any], report: VerifyReport) -> None:
    snap = docs.get(layout.API_FILE)
    for copy_name, block in (
        (layout.ENHANCEMENTS_FILE, "enhancements"),
        (layout.SHADOW_FILE, "shadow"),
    ):
        copy = docs.get(copy_name)
        if copy is not None and isinstance(snap, dict):
            report.add(
                copy_name,
                strict_equals(copy, snap.get(block)),
                f"registry copy equals the snapshot's {block}",
            )


def portal_page(out_dir: Path, snap: dict[str, Any], report: VerifyReport) -> bytes:
    raw = read_folder_file(out_dir, layout.PORTAL_FILE, report)
    if raw is None:
        return b""
    try:
        same = raw == render_portal(snap)
    except (KeyError, TypeError, ValueError, AttributeError, RecursionError, TemplateError):
        same = False  # an edited snapshot the page cannot even render from
    report.add(
        layout.PORTAL_FILE,
        same,
        "portal page renders the snapshot"
        if same
        else "portal page differs from the snapshot's rendering (edited after the bake)",
    )
    return raw
