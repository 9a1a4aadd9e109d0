"""The portal page (out/portal/compliance/index.html): a page for compliance officers.

The page reads top to bottom as an officer asks: the verdict in one sentence; who signed it and
how to check that; what failed, with counts and the first items; the board in plain
words (expected and actual behind a disclosure); the matrix per state; the proofs; the geo
profiles (capped); links and operator notes (collapsed).

Rendered by Jinja2 with autoescaping on; every cell also passes through `escape.escape_html`
(the function the board's `runtime.escapeHTML` feature measures), and control characters (an ESC in
a target's runtime string) are shown as `\\x1b`-style text, never written raw. The page loads
nothing from the network: inline CSS, no scripts, and a Content-Security-Policy that forbids
fetching anything. No path of the baking machine appears: commands, notes and sources show file
names only.

Two facts of the bake are not in the snapshot: the signer's key id and the deep audit's counts
per reason with its first violating plays. They travel in `PortalFacts`, which the page carries
in a `data-facts` attribute, so `verify` re-renders the page from the snapshot and the facts it
states (the attestation, which covers the page's bytes, vouches for them).

Large matrices (more than GRID_LIMIT rows) show per-state totals and the mismatched rows instead
of the full grid. The totals are read from the rows' kinds (report/row_kinds.py), which the bake
and `verify` have counted already; the mismatched rows are found with `compress`: a Python loop
over 500,000 rows costs more than the rest of the page.
"""

from __future__ import annotations

import html
import json
import re
import shlex
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import compress, islice
from operator import attrgetter, not_
from pathlib import PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING, Any

from compliance_bake.findings import FAIL
from compliance_bake.report import disagreements, escape
from compliance_bake.report.deepequal import strict_equals
from compliance_bake.report.models import (
    BoardRow,
    JsonObject,
    JsonValue,
    ShadowRow,
    Snapshot,
)
from compliance_bake.report.portal_verdict import BoardView, StateField, Verdict
from compliance_bake.report.portal_waivers import failing_items, waiver_view, without_waived
from compliance_bake.report.row_kinds import Totals, row_kinds, state_totals
from compliance_bake.resources import templates_dir
from compliance_bake.signing.attestation import ATTESTATION_FILE
from compliance_bake.signing.integrity import ITEMIZED_BY, zip_window_words

if TYPE_CHECKING:
    from compliance_bake.report.portal_previous import PreviousRecord

GRID_LIMIT = 5_000
MISMATCH_LIMIT = 500
GEO_LIMIT = 50
SAMPLE_LIMIT = 10
ATTESTATION_HREF = "../../" + ATTESTATION_FILE
_MATCH = attrgetter("match")
# An absolute path (POSIX, home-relative or Windows drive) inside free text.
_ABSOLUTE = re.compile(r"(?:^|(?<=[\s='\"`(]))(?:~?/(?!/)|[A-Za-z]:\\)[^\s'\"`<>)]*")
_FACTS = re.compile(rb' data-facts="([^"]*)"')

# The board's features in plain words (spec 2.2); an unknown feature shows its notes.
PLAIN_FEATURES: dict[str, str] = {
    "health.states": "The health route lists the regulated states.",
    "check.ma_licensed_nba_totals": "A partner licensed in the state may take a basketball "
    "totals wager there.",
    "check.nj_unlicensed_block": "A partner without a licence in the state is blocked there.",
    "status.ma_licensed_shape": "The status panel shows an active licence with limits.",
    "identity.agent_key_prefix": "Agent keys are found by a fixed 5-character prefix, in "
    "constant time.",
    "runtime.deepEquals.strict_vs_loose": "Strict equality tells apart values that loose "
    "equality takes as equal.",
    "runtime.deepEquals.docs_matrix": "Six cases of strict inequality hold.",
    "runtime.escapeHTML": "Report cells are HTML-escaped (<, & and quotes).",
}


# The integrity checks (spec 2.6) in plain words, beside their ids on the page.
CHECK_LABELS: dict[str, str] = {
    "enhancements": "the self-checks",
    "shadow": "the service's decisions against the registry's",
    "sha3": "the self-checks' integrity digest",
    "hmac": "the proofs' HMAC with the report signing secret",
    "geo": "the geo profiles",
    "zip-window": "the ZIP-window audit",
}
# The proof blocks, the snapshot's links and its operator notes, as an officer names them; a key
# not listed shows in words (`someKey` -> "some key"), never in camelCase.
BLOCK_LABELS = {
    "shadow": "the decisions",
    "integrity": "the integrity checks",
    "enhancements": "the self-checks",
}
LINK_LABELS = {
    "portal": "this page",
    "registryEnhancements": "the self-checks file",
    "registryShadow": "the decisions file",
    "api": "the snapshot",
    "deepAudit": "the audit command",
}
NOTE_LABELS = {
    "note": "offline bake",
    "inject": "the signing secret in production",
    "bakeVault": "baking in CI",
    "reportSigning": "report signing",
    "vaultMap": "where the secret lives",
}
# The page's verify command: where the page is published, which no bake knows (and which its
# bytes must not depend on), so a placeholder that the page explains.
SNAPSHOT_URL = "https://HOST/api/compliance.json"
_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def words(name: str) -> str:
    """A JSON key in words: `licenseStatus` -> "license status"."""
    return _CAMEL.sub(lambda m: " " + m.group(1).lower(), name)


@dataclass(frozen=True, slots=True)
class PortalFacts:
    """What the bake knows beyond the snapshot: the signer's key id (None: no public-key
    attestation), and with a deep audit its violations by reason and the first violating plays
    (each `ViolatingPlay.as_json()` without `raw`)."""

    key_id: str | None = None
    by_reason: Mapping[str, int] | None = None
    sample: tuple[Mapping[str, JsonValue], ...] = ()

    def to_json(self) -> JsonObject:
        out: JsonObject = {"keyId": self.key_id}
        if self.by_reason is not None:
            out["byReason"] = dict(self.by_reason)
            out["sample"] = [dict(play) for play in self.sample]
        return out

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> PortalFacts:
        key_id = doc["keyId"]
        by_reason = doc.get("byReason")
        sample = doc.get("sample", [])
        if key_id is not None and not isinstance(key_id, str):
            raise ValueError("keyId is not a string")
        if by_reason is not None and not (
            isinstance(by_reason, dict)
            and all(isinstance(v, int) and not isinstance(v, bool) for v in by_reason.values())
        ):
            raise ValueError("byReason is not an object of counts")
        if not (isinstance(sample, list) and all(isinstance(p, dict) for p in sample)):
            raise ValueError("sample is not a list of objects")
        return cls(key_id, by_reason, tuple(sample))


def bake_facts(
    key_id: str | None,
    by_reason: Mapping[str, int] | None,
    violations: Sequence[Mapping[str, JsonValue]] = (),
) -> PortalFacts:
    """The facts of a bake: its first SAMPLE_LIMIT violating plays, without their raw text.
    Never the folder it writes: a published page is the same bytes whatever `--out` is called
    (its verify command names the page's own address, SNAPSHOT_URL)."""
    sample = tuple(
        {key: value for key, value in play.items() if key != "raw"}
        for play in violations[:SAMPLE_LIMIT]
    )
    reasons = None if by_reason is None else dict(by_reason)
    return PortalFacts(key_id, reasons, sample)


def read_facts(page: bytes) -> PortalFacts | None:
    """The facts a page states (None: a page without them, or not readable as such)."""
    found = _FACTS.search(page)
    if found is None:
        return None
    try:
        doc = json.loads(html.unescape(found.group(1).decode("utf-8")))
        return PortalFacts.from_json(doc) if isinstance(doc, dict) else None
    except (ValueError, KeyError, UnicodeDecodeError):
        return None


def file_names(text: str) -> str:
    """Free text with each absolute path reduced to its file name."""
    return _ABSOLUTE.sub(lambda m: _name(m.group()), text)


def _name(path: str) -> str:
    pure = PureWindowsPath(path) if re.match(r"[A-Za-z]:\\", path) else PurePosixPath(path)
    return pure.name or path


def command_file_names(command: str) -> str:
    """A command line with every path argument reduced to its file name, as `./NAME` when the
    name starts with `-` (so a file called `--help.csv` is never read as an option)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return file_names(command)
    return shlex.join(
        escape.not_an_option(_name(w)) if not w.startswith("-") and ("/" in w or "\\" in w) else w
        for w in words
    )


def _window_words(snapshot: Snapshot) -> str | None:
    if snapshot.deep_audit is None:
        return None
    w = snapshot.deep_audit.zip_window
    return zip_window_words(w.days, w.in_window_plays, w.total_plays)


@lru_cache(maxsize=1)
def _environment() -> Any:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    env = Environment(
        loader=FileSystemLoader(str(templates_dir())),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["cell"] = escape.html_cell
    env.filters["json"] = escape.json_line
    env.filters["names"] = file_names
    env.filters["command"] = command_file_names
    env.filters["words"] = words
    return env


@dataclass(frozen=True, slots=True)
class Grid:
    """The matrix as the page shows it: the full grid up to GRID_LIMIT rows, totals per state,
    and the first mismatched rows when there are."""

    full: bool
    states: list[str]
    partners: list[str]
    cells: dict[tuple[str, str], ShadowRow]
    per_state: Totals
    mismatched: list[ShadowRow]
    limit: int = GRID_LIMIT


def _grid(snapshot: Snapshot, per_state: Totals | None = None) -> Grid:
    rows = snapshot.shadow.rows
    full = len(rows) <= GRID_LIMIT
    if per_state is None:
        per_state = state_totals(row_kinds(rows))
    return Grid(
        full=full,
        states=list(per_state),
        partners=list(dict.fromkeys(r.partner for r in rows)) if full else [],
        cells={(r.state, r.partner): r for r in rows} if full else {},
        per_state=per_state,
        mismatched=_mismatched(rows) if any(t["mismatches"] for t in per_state.values()) else [],
    )


def _mismatched(rows: Sequence[ShadowRow]) -> list[ShadowRow]:
    """The first MISMATCH_LIMIT mismatched rows (a pass over every row: only when there are)."""
    return list(islice(compress(rows, map(not_, map(_MATCH, rows))), MISMATCH_LIMIT))


def _board_row(row: BoardRow) -> BoardView:
    names = list(dict.fromkeys([*row.expected_state, *row.actual_state]))
    missing = object()
    fields = []
    for name in names:
        expected = row.expected_state.get(name, missing)
        actual = row.actual_state.get(name, missing)
        fields.append(
            StateField(
                name=name,
                expected="(missing)" if expected is missing else escape.json_line(expected),
                actual="(missing)" if actual is missing else escape.json_line(actual),
                differs=expected is missing
                or actual is missing
                or not strict_equals(expected, actual),
            )
        )
    return BoardView(
        row=row,
        plain=PLAIN_FEATURES.get(row.feature, row.notes),
        fields=fields,
        differing=[f.name for f in fields if f.differs],
    )


@dataclass(frozen=True, slots=True)
class PolicyView:
    """The policy section (report/policy.py's record, as the file holds it): whether the
    questions were asked, their one line, the failing ones by kind, how many were reported."""

    asked: bool
    label: str
    questions: int
    failing: list[tuple[str, int, str]]
    reported: int


def policy_view(doc: Mapping[str, Any] | None) -> PolicyView | None:
    """The section of a policy record, None when there is nothing to show: no question was
    asked and the registry has no limit row the target could not be asked."""
    from compliance_bake.report import policy

    if doc is None:
        return None
    questions = doc["questions"]
    if not questions and (doc["asked"] or not doc["registry"]["limits"]):
        return None
    reported = sum(1 for q in questions if policy.OTHER_REASON in q["disagreements"])
    return PolicyView(
        doc["asked"], doc["summary"]["label"], len(questions), policy.failing_groups(doc), reported
    )


def _verdict(
    snapshot: Snapshot,
    board: list[BoardView],
    per_state: Totals,
    audit: AuditView | None,
    policy: PolicyView | None = None,
) -> Verdict:
    states = _failing_states(snapshot, per_state)
    reasons = [] if audit is None else audit.reasons
    failing_board = [b for b in board if not b.row.match]
    listed = {"self-checks": failing_board, "shadow": states, "zip-window": reasons}
    # Each failure once (signing/integrity.py ITEMIZED_BY): a check whose items are listed
    # is counted by them, as the terminal's short summary counts it.
    failed = tuple(
        c for c in snapshot.integrity.failed if not listed.get(ITEMIZED_BY.get(c.id, ""))
    )
    counts = dict(snapshot.shadow.disagreements or {})
    kinds = [
        (disagreements.KINDS[kind], n, disagreements.SEVERITY[kind] == FAIL)
        for kind, n in counts.items()
        if n and kind in disagreements.KINDS
    ]
    found = disagreements.failing(counts)
    failing_policy = [] if policy is None else policy.failing
    return Verdict(
        ok=not snapshot.integrity.failed and not found and not failing_policy,
        failed=failed,
        ids=[c.id for c in failed],
        board=failing_board,
        states=states,
        reasons=reasons,
        disagreements=found,
        kinds=kinds,
        policy=failing_policy,
    )


def _failing_states(snapshot: Snapshot, per_state: Totals) -> list[tuple[str, int]]:
    """Per state, the pairs the terminal's short summary lists: rows whose decisions differ or
    that hold a failing disagreement kind. A row whose decisions differ always holds one, so a
    snapshot with no failing kind lists none and its rows are not walked; one that predates the
    recorded kinds is counted by its mismatches."""
    shadow = snapshot.shadow
    if shadow.disagreements is None:
        return [(state, t["mismatches"]) for state, t in per_state.items() if t["mismatches"]]
    if not disagreements.failing(shadow.disagreements):
        return []
    from_target = shadow.shadow_from_target
    found = Counter(
        row.state
        for row in shadow.rows
        if not row.match or disagreements.fails(disagreements.classify_row(row, from_target))
    )
    return sorted(found.items())


@dataclass(frozen=True, slots=True)
class AuditView:
    """The deep audit's section: the plays file's name, the violations by reason (known only
    from the bake's facts) and the first violating plays."""

    plays: str | None
    reasons: list[tuple[str, int]]
    violations: int
    known: bool
    sample: tuple[Mapping[str, JsonValue], ...]
    lined: bool


def _audit(snapshot: Snapshot, facts: PortalFacts) -> AuditView | None:
    if snapshot.deep_audit is None:
        return None
    plays = None
    try:
        words = shlex.split(snapshot.deep_audit.command)
        if "--plays" in words[:-1]:
            plays = _name(words[words.index("--plays") + 1])
    except ValueError:
        plays = None
    reasons = (
        []
        if facts.by_reason is None
        else [(reason, count) for reason, count in facts.by_reason.items() if count]
    )
    return AuditView(
        plays=plays,
        reasons=reasons,
        violations=sum(count for _, count in reasons),
        known=facts.by_reason is not None,
        sample=facts.sample,
        # the Line column, when a play of the sample has one (a Parquet file has none)
        lined=any(play.get("line") is not None for play in facts.sample),
    )


def render_portal(
    snapshot: Snapshot | Mapping[str, Any],
    previous: PreviousRecord | Mapping[str, Any] | None = None,
    totals: Totals | None = None,
    facts: PortalFacts | None = None,
    policy: Mapping[str, Any] | None = None,
) -> bytes:
    """The page; with `previous` (a record of report/portal_previous.py) it also shows the
    "since the previous snapshot" section rendered from that record alone. `snapshot` may be a
    JSON document that has passed the schema (as read from a file), and `previous` the record's
    JSON as an attestation carries it (checked by `portal_previous.view`). `totals`:
    `state_totals` of the rows' kinds, when the caller has counted them (report/row_kinds.py).
    `facts`: the signer and the audit's detail (none: an unsigned page without them).
    `policy`: the policy record as registry/compliance-policy.json holds it (None: no section)."""
    from compliance_bake.report import portal_previous

    if not isinstance(snapshot, Snapshot):
        snapshot = Snapshot.from_json(snapshot)
    facts = facts or PortalFacts()
    template = _environment().get_template("portal.html.j2")
    partners = snapshot.geo.partners
    board = [_board_row(row) for row in snapshot.board.rows]
    grid = _grid(snapshot, totals)
    audit = _audit(snapshot, facts)
    shown_policy = policy_view(policy)
    verdict = _verdict(snapshot, board, grid.per_state, audit, shown_policy)
    waived = waiver_view(
        snapshot.waivers,
        snapshot.shadow.rows,
        policy,
        failing_items(snapshot.shadow.disagreements, policy),
    )
    if waived is not None and waived.covers and not verdict.failed:
        verdict = replace(verdict, ok=True)  # every failing item is waived; integrity holds
    elif waived is not None and snapshot.waivers is not None:
        shadow = snapshot.shadow
        verdict = without_waived(
            verdict, snapshot.waivers, shadow.rows, shadow.shadow_from_target, policy
        )
    page: str = template.render(
        s=snapshot,
        grid=grid,
        verdict=verdict,
        waived=waived,
        policy=shown_policy,
        board=board,
        failed_board=[b for b in board if not b.row.match],
        audit=audit,
        facts=facts,
        snapshot_url=SNAPSHOT_URL,
        window_words=_window_words(snapshot),
        check_labels=CHECK_LABELS,
        block_labels=BLOCK_LABELS,
        link_labels=LINK_LABELS,
        note_labels=NOTE_LABELS,
        facts_attr=json.dumps(facts.to_json(), ensure_ascii=True, separators=(",", ":")),
        attestation_href=ATTESTATION_HREF,
        geo=partners[:GEO_LIMIT],
        geo_limit=GEO_LIMIT,
        sample_limit=SAMPLE_LIMIT,
        previous=None if previous is None else portal_previous.view(previous),
    )
    return page.encode("utf-8")
