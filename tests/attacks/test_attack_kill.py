"""kill -9 during the write phase of a large bake (issue 15): `out/` is all old or all new, and
the next bake leaves no temporary file behind (and removes nothing it does not own).

The kill points are exact, not timed: `_COMPLIANCE_BAKE_CRASH_AT` makes the publisher SIGKILL
itself after N files are staged or renamed (compliance_bake/report/publish.py). The bake is
50 states x 1,000 partners (bench/gen_fixtures.py): a 12 MB snapshot, a real write phase.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from bench.gen_fixtures import generate, write_fixtures
from compliance_bake.report import layout
from compliance_bake.report.publish import OWN_TEMP
from tests.conftest import invoke, run_cli

OLD, NEW = "2026-11-22T04:06:00Z", "2026-11-23T09:30:00Z"
KILL_POINTS = ["staged:1", "staged:2", "staged:3", "staged:4", "renamed:4"]
FOREIGN = [  # not the tool's: a later bake must leave them where they are
    "api/.compliance.json.notes",
    "api/.other-tool.1234.tmp",
    "registry/compliance-bake-shadow.abc.tmp",
    "portal/compliance/.compliance-bake-keep",
]


def _published(out: Path) -> dict[str, bytes]:
    names = (layout.API_FILE, layout.ENHANCEMENTS_FILE, layout.SHADOW_FILE, layout.PORTAL_FILE)
    return {name: (out / name).read_bytes() for name in names}


def _own_temporaries(out: Path) -> list[Path]:
    return sorted(p for p in out.rglob("*") if OWN_TEMP.fullmatch(p.name))


def test_kill_9_at_five_points_leaves_out_all_old_or_all_new_and_nothing_after(
    tmp_path: Path,
) -> None:
    fixtures = tmp_path / "fixtures"
    write_fixtures(fixtures, *generate(50, 1000, seed=0))
    out = tmp_path / "out"
    first = invoke("bake", "snapshot", "--fixtures", str(fixtures), "--out", str(out), "--now", OLD)
    assert first.exit_code in (0, 1), first.output
    old = _published(out)
    for name in FOREIGN:
        (out / name).write_bytes(b"not the tool's")
    legacy = out / "api" / ".compliance.json.k2x9_q7a.tmp"  # staged by an earlier version
    legacy.write_bytes(b"{")

    killed_states: dict[str, dict[str, bytes]] = {}
    for point in KILL_POINTS:
        result = run_cli(
            "bake",
            "snapshot",
            "--fixtures",
            str(fixtures),
            "--out",
            str(out),
            "--now",
            NEW,
            env={**os.environ, "_COMPLIANCE_BAKE_CRASH_AT": point},
        )
        assert result.returncode == -signal.SIGKILL, (point, result.stderr)
        killed_states[point] = _published(out)
        stage, count = point.split(":")
        # The crash left its staged files (and only its own: the earlier runs' were removed).
        assert len(_own_temporaries(out)) == (int(count) if stage == "staged" else 0), point

    final = invoke("bake", "snapshot", "--fixtures", str(fixtures), "--out", str(out), "--now", NEW)
    assert final.exit_code in (0, 1), final.output
    new = _published(out)
    assert new != old
    for point, state in killed_states.items():
        assert state in (old, new), f"out/ torn after kill -9 at {point}"
    assert killed_states["staged:4"] == old and killed_states["renamed:4"] == new
    assert _own_temporaries(out) == [] and not legacy.exists()
    assert all((out / name).read_bytes() == b"not the tool's" for name in FOREIGN)
