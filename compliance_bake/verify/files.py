"""Reading what `verify` is given, and the checks that only an `out/` folder allows.

A document that cannot be read or parsed (including the strict parser's limits: depth, integer
size) is a failure naming the file, never a crash. The folder checks: every file is one the tool
writes, the JSON files are in the baked byte layout, the registry copies equal the snapshot's
blocks, and the portal page is the rendering of the snapshot.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import TemplateError

from compliance_bake.errors import InputError
from compliance_bake.inputs import schemas
from compliance_bake.inputs.files import read_regular_file
from compliance_bake.inputs.jsonio import dumps_pretty, loads_strict, plainly_pretty
from compliance_bake.report import layout
from compliance_bake.report.deepequal import json_equals
from compliance_bake.report.portal import Totals, read_facts, render_portal
from compliance_bake.targets.fetch import SNAPSHOT_MAX_BYTES
from compliance_bake.verify.documents import (
    SchemaOutcome,
    parse_pretty,
    schema_finding,
    schema_outcome,
    schema_valid,
)
from compliance_bake.verify.findings import RULE, VerifyReport

ATTESTATION_FILE = "attestation/compliance.intoto.json"
AUDIT_FILE = "audit/zip-window.json"
KEEP_FILE = ".gitkeep"  # allowed empty at the top, as the attestation allows it
# Written by the bake (and the attestation, when a signing key is given) ...
BAKED_FILES = (*layout.JSON_FILES, layout.PORTAL_FILE)
# ... or by `audit deep` into the same out/ (allowed, but no signature of the snapshot covers it).
# ... or by `bake --log`: the log's inclusion proof and checkpoint (they verify on their own).
LOG_FILES = ("log/inclusion.json", "log/checkpoint")
EXPECTED_FILES = frozenset((*BAKED_FILES, ATTESTATION_FILE, AUDIT_FILE, *LOG_FILES))
RawFile = tuple[str, bytes]  # a file's name in out/ and the bytes read


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


def _read(out_dir: Path, name: str) -> bytes:
    return read_regular_file(out_dir / name, max_bytes=SNAPSHOT_MAX_BYTES, what=name)


def read_folder_file(
    out_dir: Path, name: str, report: VerifyReport, pending: Future[bytes] | None = None
) -> bytes | None:
    """A regular file of out/ (a FIFO planted there must not hang verify), or a finding;
    `pending`: the same read, already under way."""
    try:
        return _read(out_dir, name) if pending is None else pending.result()
    except FileNotFoundError:
        report.add(name, False, "missing")
    except InputError as exc:
        report.add(name, False, f"cannot read: {exc.message}")
    return None


REGISTRY_BLOCKS = {layout.ENHANCEMENTS_FILE: "enhancements", layout.SHADOW_FILE: "shadow"}
Reads = dict[str, "Future[bytes]"]


def read_files(out_dir: Path, names: Iterable[str]) -> tuple[Reads, ThreadPoolExecutor]:
    """Start reading files of out/ in two threads (reading lets go of the GIL); shut the
    executor down, waiting or not, once they are submitted."""
    reader = ThreadPoolExecutor(max_workers=2, thread_name_prefix="read")
    return {name: reader.submit(_read, out_dir, name) for name in names}, reader


@dataclass(frozen=True, slots=True)
class Folder:
    docs: dict[str, Any]  # each JSON file's document (None: unreadable, or a copy off schema)
    raws: list[RawFile]
    renderings: frozenset[str]  # files whose bytes are `dumps_pretty` of the snapshot or a block


@dataclass(frozen=True, slots=True)
class Known:
    """What load_folder would find, found already (verify/beside.py). `value` is orjson's
    reading of the snapshot file, whose bytes are plainly its rendering (`plainly_pretty`): the
    strict reading; `schema` is the snapshot schema's outcome on it; `copies` says, for each
    registry copy read, whether its bytes are the rendering of the value's block."""

    value: Any
    schema: SchemaOutcome
    copies: dict[str, bool]


def known(raw: bytes, value: Any, copies: Mapping[str, bytes]) -> Known | None:
    """Known, for the snapshot file `raw` read as `value` and the registry copies' bytes; None
    when `raw` is not plainly the rendering of `value` (load_folder then reads it as ever)."""
    if not plainly_pretty(value, raw):
        return None
    snap = value if isinstance(value, dict) else {}
    renders = {
        name: _renders(snap.get(REGISTRY_BLOCKS[name]), data) for name, data in copies.items()
    }
    return Known(value, schema_outcome(schemas.SNAPSHOT, value), renders)


def load_folder(
    out_dir: Path, report: VerifyReport, reads: Reads | None = None, found: Known | None = None
) -> Folder:
    """Every JSON file of out/, parsed and checked (`load_folder_file`), snapshot first; a
    registry copy is offered the snapshot's block to compare its bytes with. `reads`: the files'
    reads, under way; `found`: what is known of them already."""
    docs: dict[str, Any] = {}
    raws: list[RawFile] = []
    renderings: set[str] = set()
    snapshot_valid = False
    if reads is None:  # the copies are read while the snapshot is parsed
        reads, reader = read_files(out_dir, layout.JSON_FILES)
        reader.shutdown(wait=False)  # the thread ends with its work
    for name in layout.JSON_FILES:
        snap = docs.get(layout.API_FILE)
        block = (
            snap.get(REGISTRY_BLOCKS[name])
            if name in REGISTRY_BLOCKS and isinstance(snap, dict)
            else None
        )
        covered = snapshot_valid and name in REGISTRY_BLOCKS and _schema_holds_copy(name)
        docs[name], raw, valid, rendering = load_folder_file(
            out_dir, name, report, block, covered, reads[name], found
        )
        snapshot_valid = snapshot_valid or (name == layout.API_FILE and valid)
        raws.append((name, raw))
        if rendering is not None and (name == layout.API_FILE or rendering is block):
            renderings.add(name)
    return Folder(docs, raws, frozenset(renderings))


def load_folder_file(
    out_dir: Path,
    name: str,
    report: VerifyReport,
    block: Any = None,
    covered: bool = False,
    pending: Future[bytes] | None = None,
    found: Known | None = None,
) -> tuple[Any | None, bytes, bool, Any]:
    """Read, parse, validate one JSON file of out/ and check its byte layout; also say whether
    its schema holds, and give the value the bytes are the rendering of (None: not one).

    `block` is what a registry copy should hold, the snapshot's block. When the file's bytes are
    exactly the block's rendering, the file holds that very value (`loads_pretty` would read it
    back, equal): the block itself stands for it, unparsed. `covered`: the snapshot passed a
    schema that requires of the block what the copy's schema requires, so that value is valid.
    `found`: what is known already of the snapshot file (and of the copies, against its blocks).
    """
    raw = read_folder_file(out_dir, name, report, pending)
    if raw is None:
        return None, b"", False, None
    snapshot = found is not None and name == layout.API_FILE
    if snapshot:
        doc, same = found.value, True  # type: ignore[union-attr]
    elif block is not None and (
        found.copies[name] if found is not None and name in found.copies else _renders(block, raw)
    ):
        doc, same = block, True
    else:
        parsed = parse_pretty(name, raw, report)
        if parsed is None:
            return None, raw, False, None
        doc, same = parsed
        covered = False
    if covered:
        valid = report.add(name, True, "schema valid", RULE, "schema")
    elif snapshot:
        valid = schema_finding(name, found.schema, report)  # type: ignore[union-attr]
    else:
        valid = schema_valid(name, layout.JSON_FILES[name], doc, report)
    report.add(
        name,
        same,
        "bytes are in the baked layout"
        if same
        else "bytes differ from the baked layout (the file was edited after the bake)",
    )
    # The snapshot goes on to the rules even when its schema fails (each rule fails closed);
    # a registry copy that breaks its schema is only compared.
    return (doc if valid or name == layout.API_FILE else None), raw, valid, doc if same else None


def _renders(block: Any, raw: bytes) -> bool:
    return block is not None and _rendering(block) == raw


def _rendering(value: Any) -> bytes | None:
    try:
        return dumps_pretty(value)
    except TypeError:  # orjson renders no deeper than 254 levels
        return None


@cache
def _schema_holds_copy(copy_name: str) -> bool:
    """Whether a snapshot valid under its schema has a block valid under the copy's schema: the
    copy's schema is only a reference to the snapshot schema's definition of the block, and the
    snapshot schema holds the block to that same definition."""
    block = REGISTRY_BLOCKS[copy_name]
    copy_schema = schemas.schema(layout.JSON_FILES[copy_name])
    snapshot_schema = schemas.schema(layout.JSON_FILES[layout.API_FILE])
    definition = f"#/$defs/{block}"
    return (
        set(copy_schema) <= {"$schema", "$id", "title", "description", "$ref"}
        and copy_schema.get("$ref") == layout.JSON_FILES[layout.API_FILE] + definition
        and snapshot_schema.get("properties", {}).get(block) == {"$ref": definition}
    )


def registry_copies(docs: dict[str, Any], report: VerifyReport) -> None:
    snap = docs.get(layout.API_FILE)
    for copy_name, block in REGISTRY_BLOCKS.items():
        copy = docs.get(copy_name)
        if copy is not None and isinstance(snap, dict):
            original = snap.get(block)
            report.add(
                copy_name,
                copy is original or json_equals(copy, original),
                f"registry copy equals the snapshot's {block}",
            )


def portal_page(
    out_dir: Path,
    snap: dict[str, Any],
    report: VerifyReport,
    previous: Any = None,
    pending: Future[bytes] | None = None,
    totals: Totals | None = None,
) -> bytes:
    """The page is the rendering of the snapshot (and, after `bake --previous`, of the record
    verify/previous.py found and checked: the "since the previous snapshot" section), with the
    facts the page states (report/portal.py: the signer, the audit's detail); the signer it
    names is the attestation's."""
    raw = read_folder_file(out_dir, layout.PORTAL_FILE, report, pending)
    if raw is None:
        return b""
    facts = read_facts(raw)
    try:
        same = raw == render_portal(snap, previous, totals, facts)
    except (KeyError, TypeError, ValueError, AttributeError, RecursionError, TemplateError):
        same = False  # an edited snapshot the page cannot even render from
    what = "the snapshot" + ("" if previous is None else " and its previous-snapshot record")
    report.add(
        layout.PORTAL_FILE,
        same,
        f"portal page renders {what}"
        if same
        else f"portal page differs from the rendering of {what} (edited after the bake)",
    )
    named, signers = None if facts is None else facts.key_id, _attestation_signers(out_dir)
    if (named not in signers) if signers else named is not None:
        report.add(
            layout.PORTAL_FILE,
            False,
            f"portal page names the signer {named or '(none)'}, the attestation's signers are "
            f"{', '.join(sorted(signers)) or '(none: no attestation)'}",
        )
    return raw


def _attestation_signers(out_dir: Path) -> set[str]:
    """The key ids the attestation's signatures name (unchecked here: the attestation check
    proves them); during a key rotation there are several, and the page names the baking one."""
    path = out_dir / ATTESTATION_FILE
    if not path.is_file():
        return set()
    try:
        envelope = loads_strict(
            read_regular_file(path, max_bytes=SNAPSHOT_MAX_BYTES, what="attestation")
        )
        return {s["keyid"] for s in envelope["signatures"] if isinstance(s["keyid"], str)}
    except (InputError, OSError, ValueError, KeyError, IndexError, TypeError):
        return set()
