"""Untyped JSON (`dict[str, Any]`, `Dict[str, Any]`, `Mapping[str, Any]`) stays at the edges.

The core passes typed models (report/models.py, and the small dataclasses and TypedDicts beside
the code that builds them); a JSON object whose shape nothing has checked yet is
`dict[str, Any]` only where JSON comes in (a file or an answer, as parsed) or goes out (a
document written for a reader or a library). UNTYPED lists every module where such a type
remains, with at most how many uses and why; the third kind, "core, not converted", names the
places that still carry JSON through the core, so the list is also the work left. A new use
outside the list, or more uses than listed, fails; so does an entry with none left (the list
and docs/development.md's "Where untyped JSON remains" then say what the code no longer does).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "compliance_bake"
DOC = ROOT / "docs" / "development.md"
UNTYPED_JSON = re.compile(
    r"\b(?:typing\.)?(?:dict|Dict|Mapping|MutableMapping)\[\s*str\s*,\s*(?:typing\.)?Any\s*\]"
)
JSON_IN, JSON_OUT, CORE = "JSON in", "JSON out", "core, not converted"


@dataclass(frozen=True)
class Use:
    kind: str
    at_most: int
    why: str


UNTYPED: dict[str, Use] = {
    # JSON in: a document or an answer as parsed, before its shape is trusted.
    "inputs/jsonio.py": Use(JSON_IN, 2, "the strict parser's object hook: any JSON object"),
    "inputs/schemas.py": Use(JSON_IN, 4, "the JSON Schema documents, handed to the validator"),
    "inputs/fixtures.py": Use(
        JSON_IN, 3, "licences.json, geo.json and limits.json as parsed, then modelled"
    ),
    "inputs/models.py": Use(JSON_IN, 1, "GeoProfile.from_json: a geo profile as parsed"),
    "report/models.py": Use(JSON_IN, 10, "each model's from_json: a document past its schema"),
    "report/disagreements.py": Use(JSON_IN, 1, "a snapshot's shadow row as parsed, named"),
    "report/layout.py": Use(JSON_IN, 1, "render_files of a snapshot read from a file"),
    "report/portal.py": Use(
        JSON_IN,
        5,
        "a snapshot, a --previous record, the policy file, the page's facts, as verify reads them",
    ),
    "report/portal_previous.py": Use(
        JSON_IN, 2, "the --previous record read from an attestation, before its HMAC holds"
    ),
    "targets/answers.py": Use(JSON_IN, 5, "a service's answer as parsed, before its contract"),
    "targets/profile.py": Use(JSON_IN, 2, "the JMESPath context: an answer as parsed"),
    "targets/explain.py": Use(JSON_IN, 1, "an answer's fields as the profile maps them"),
    "targets/profile_file.py": Use(JSON_IN, 2, "a profile file's TOML tables, before their keys"),
    "targets/draft.py": Use(JSON_IN, 13, "a service's OpenAPI document, read to draft a profile"),
    "log/audit.py": Use(JSON_IN, 3, "log entries as read from the tiles (any JSON object)"),
    "log/proof.py": Use(JSON_IN, 2, "out/log/inclusion.json and its entry, as read"),
    "log/entry.py": Use(JSON_IN, 3, "an entry and a predicate as read, compared; a logged verdict"),
    "audit/play_lines.py": Use(JSON_IN, 2, "a JSON Lines play as parsed, to match a violating one"),
    "verify/rules/__init__.py": Use(
        JSON_IN, 1, "the document as parsed, before the rules' verdict"
    ),
    "verify/rules/book.py": Use(JSON_IN, 2, "the document as parsed, before the rules' verdict"),
    "verify/rules/board.py": Use(JSON_IN, 8, "the document as parsed, before the rules' verdict"),
    "verify/rules/shadow.py": Use(JSON_IN, 16, "the document as parsed, before the rules' verdict"),
    "verify/columns.py": Use(JSON_IN, 1, "the document's shadow rows as parsed"),
    "verify/files.py": Use(
        JSON_IN, 5, "each file of out/ as parsed, before its schema holds (the policy file too)"
    ),
    "verify/source.py": Use(JSON_IN, 2, "a snapshot as parsed, before it is authenticated"),
    "verify/verifier.py": Use(JSON_IN, 1, "the --previous record read from the attestation"),
    "verify/policy_file.py": Use(JSON_IN, 5, "the policy file as parsed, before it is re-decided"),
    "verify/waivers.py": Use(
        JSON_IN, 3, "the recorded waivers as parsed, before they are re-derived"
    ),
    "diff/waivers.py": Use(JSON_IN, 4, "the two snapshots' recorded waivers, compared"),
    "waivers/read.py": Use(JSON_IN, 4, "the waiver file's TOML tables as parsed, then modelled"),
    "waivers/apply.py": Use(
        JSON_OUT, 9, "the recorded waivers field and the policy record's questions it matches"
    ),
    "report/portal_waivers.py": Use(
        JSON_IN, 6, "the snapshot's recorded waivers and policy record, as the page reads them"
    ),
    "diff/policy.py": Use(JSON_IN, 2, "the two policy files as read, compared field by field"),
    "diff/sides.py": Use(JSON_IN, 2, "a folder side's policy file as read"),
    "diff/compare.py": Use(JSON_IN, 2, "the two policy files as read, handed to diff/policy.py"),
    "policy/recorded.py": Use(
        JSON_IN, 10, "the registry rows a policy file holds, to JSON and back (verify re-decides)"
    ),
    # JSON out: a document written for a reader, or a library's own untyped shape.
    "service/openapi.py": Use(JSON_OUT, 2, "the OpenAPI document the service serves"),
    "report/policy.py": Use(
        JSON_OUT, 5, "the policy file's JSON, and its questions' words read from it"
    ),
    "service/app.py": Use(JSON_OUT, 2, "OpenAPI fragments: a route's parameters, its refusals"),
    "service/runner.py": Use(JSON_OUT, 1, "uvicorn's logging dictConfig"),
    "audit/run.py": Use(JSON_OUT, 1, "`audit deep --json`'s summary"),
    "audit/violations.py": Use(JSON_OUT, 2, "a violating play as reports and the page show it"),
    "signing/attestation.py": Use(
        JSON_OUT, 3, "the snapshot's JSON the predicate summarises (the bake's, or verify's file)"
    ),
    "signing/proofs.py": Use(
        JSON_OUT, 14, "digests and HMACs are of a JSON value's RFC 8785 bytes (bake and verify)"
    ),
    "signing/integrity.py": Use(
        JSON_OUT, 2, "the sha3 and hmac checks recompute a block's digest or HMAC from its JSON"
    ),
}


def untyped_uses(package: Path) -> dict[str, list[str]]:
    """Every line of the package that names an untyped JSON object type, by module."""
    found: dict[str, list[str]] = {}
    for path in sorted(package.rglob("*.py")):
        module = path.relative_to(package).as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if UNTYPED_JSON.search(line):
                found.setdefault(module, []).append(f"{module}:{number}: {line.strip()}")
    return found


def problems(found: dict[str, list[str]], allowed: dict[str, Use]) -> list[str]:
    out = []
    for module, lines in found.items():
        use = allowed.get(module)
        if use is None:
            out += [f"{line}  <- not an edge in the list" for line in lines]
        elif len(lines) > use.at_most:
            out.append(f"{module}: {len(lines)} uses, at most {use.at_most} ({use.why})")
            out += [f"  {line}" for line in lines]
    out += [
        f"{module}: listed, but no use remains: remove it from the list and the docs"
        for module in allowed
        if module not in found
    ]
    return out


def doc_section(allowed: dict[str, Use]) -> str:
    """The table docs/development.md holds under "Where untyped JSON remains"."""
    rows = ["| module | kind | uses at most | why |", "|---|---|---|---|"]
    rows += [
        f"| `{module}` | {use.kind} | {use.at_most} | {use.why} |"
        for module, use in sorted(allowed.items(), key=lambda item: (item[1].kind, item[0]))
    ]
    return "\n".join(rows) + "\n"


def test_untyped_json_stays_at_the_listed_edges() -> None:
    assert problems(untyped_uses(PACKAGE), UNTYPED) == []


def test_the_list_has_a_reason_for_each_edge() -> None:
    for module, use in UNTYPED.items():
        assert (PACKAGE / module).is_file(), module
        assert use.kind in (JSON_IN, JSON_OUT, CORE), module
        assert use.why and use.at_most > 0, module


def test_a_new_use_outside_the_list_fails(tmp_path: Path) -> None:
    """The scan sees each spelling, in a module off the list and past a module's count."""
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "new.py").write_text(
        "def f(doc: dict[str, Any]) -> Mapping[str,Any]: ...\n"
        "x: typing.Dict[ str, typing.Any ] = {}\n"
        "y: dict[str, int] = {}\n",
        encoding="utf-8",
    )
    (tmp_path / "edge.py").write_text("a: dict[str, Any]\nb: dict[str, Any]\n", "utf-8")
    found = untyped_uses(tmp_path)
    assert [len(lines) for lines in found.values()] == [2, 2]  # core/new.py: line 3 is typed
    edge = {"edge.py": Use(JSON_IN, 1, "a test"), "gone.py": Use(JSON_IN, 1, "a test")}
    lines = problems(found, edge)
    assert any(line.startswith("core/new.py:1:") for line in lines)
    assert any(line.startswith("core/new.py:2:") for line in lines)
    assert "edge.py: 2 uses, at most 1 (a test)" in lines
    assert any(line.startswith("gone.py: listed, but no use remains") for line in lines)
    listed = {**edge, "core/new.py": Use(CORE, 2, "a test"), "edge.py": Use(JSON_IN, 2, "a test")}
    assert problems(found, listed) == [
        "gone.py: listed, but no use remains: remove it from the list and the docs"
    ]


def test_the_development_doc_shows_the_list() -> None:
    text = DOC.read_text(encoding="utf-8")
    heading = "## Where untyped JSON remains\n"
    assert heading in text
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    table = doc_section(UNTYPED)
    assert table in section, "docs/development.md should hold this table:\n" + table
