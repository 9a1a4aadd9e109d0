"""kill -9 during the write phase of a large bake: `out/` is all old or all new, and the next
bake leaves no temporary file or staging folder behind (and removes nothing it does not own).

The first test's kill points are exact: `_COMPLIANCE_BAKE_CRASH_AT` makes the publisher SIGKILL
itself after N files are staged, or after the exchange (compliance_bake/report/publish.py). The
bake is 50 states x 1,000 partners (tests/support/gen_fixtures.py): a 12 MB snapshot.

The second kills a 400,000-row bake (50 states x 8,000 partners, a 94 MB snapshot and an 86 MB
registry file) from outside, at 20 instants spread over the end of its publish step: the bake
stops itself once every file is staged, just before the swap (`pause:swap`), and the test lets
it go on and kills it a chosen moment later. That is where renaming file by file leaves a folder
of old and new files for tens of milliseconds (with the renames forced, this test fails).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from compliance_bake.report import layout
from compliance_bake.report.folder_swap import stage_name
from compliance_bake.report.publish import OWN_TEMP
from tests.conftest import invoke, run_cli
from tests.support.gen_fixtures import generate, write_fixtures

OLD, NEW = "2026-11-22T04:06:00Z", "2026-11-23T09:30:00Z"
KILL_POINTS = ["staged:1", "staged:2", "staged:3", "staged:4", "exchanged"]
FOREIGN = [  # not the tool's: a later bake must leave them where they are
    "api/.compliance.json.notes",
    "api/.other-tool.1234.tmp",
    "registry/compliance-bake-shadow.abc.tmp",
    "portal/compliance/.compliance-bake-keep",
]


def _published(out: Path) -> dict[str, bytes]:
    names = (layout.API_FILE, layout.BOARD_FILE, layout.SHADOW_FILE, layout.PORTAL_FILE)
    return {name: (out / name).read_bytes() for name in names}


def _own_temporaries(out: Path) -> list[Path]:
    """The tool's temporary files inside `out/` and its staging folders beside it."""
    inside = [p for p in out.rglob("*") if OWN_TEMP.fullmatch(p.name)]
    return sorted(
        [*inside, *(p for p in out.parent.iterdir() if stage_name(out).fullmatch(p.name))]
    )


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
        # The crash left one staging folder (its own: the earlier runs' were removed), and the
        # legacy temporary inside out/ went with the first run.
        assert len(_own_temporaries(out)) == 1, (point, _own_temporaries(out))

    final = invoke("bake", "snapshot", "--fixtures", str(fixtures), "--out", str(out), "--now", NEW)
    assert final.exit_code in (0, 1), final.output
    new = _published(out)
    assert new != old
    for point, state in killed_states.items():
        assert state in (old, new), f"out/ torn after kill -9 at {point}"
    assert killed_states["staged:4"] == old and killed_states["exchanged"] == new
    assert _own_temporaries(out) == [] and not legacy.exists()
    assert all((out / name).read_bytes() == b"not the tool's" for name in FOREIGN)


BIG_STATES, BIG_PARTNERS = 50, 8000  # 400,000 shadow rows
KILLS = 20


def _bake(fixtures: Path, out: Path, now: str, pause: bool) -> subprocess.Popen[bytes]:
    args = ["bake", "snapshot", "--fixtures", str(fixtures), "--out", str(out), "--now", now]
    env = {**os.environ, "NO_COLOR": "1"}
    if pause:
        env["_COMPLIANCE_BAKE_CRASH_AT"] = "pause:swap"
    return subprocess.Popen(
        [sys.executable, "-m", "compliance_bake", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _stopped_before_the_swap(bake: subprocess.Popen[bytes]) -> None:
    _, status = os.waitpid(bake.pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status), f"the bake ended before its swap ({status})"


def test_kill_9_at_20_instants_of_the_swap_of_a_400000_row_bake(
    tmp_path: Path,
) -> None:
    fixtures = tmp_path / "fixtures"
    write_fixtures(fixtures, *generate(BIG_STATES, BIG_PARTNERS, seed=0))
    out = tmp_path / "out"
    assert _bake(fixtures, out, OLD, pause=False).wait(timeout=600) in (0, 1)
    old = _published(out)

    # How long the swap (and the little after it) takes here, to spread the kills over.
    bake = _bake(fixtures, tmp_path / "measured" / "out", NEW, pause=True)
    _stopped_before_the_swap(bake)
    began = time.monotonic()
    os.kill(bake.pid, signal.SIGCONT)
    assert bake.wait(timeout=600) in (0, 1)
    window = time.monotonic() - began
    new = _published(tmp_path / "measured" / "out")
    assert new != old

    seen: list[str] = []
    for i in range(KILLS):
        # Denser at the start, where the swap itself is: at once, then 0.25 %, 1 %, 2.25 %...
        delay = window * (i / KILLS) ** 2
        for _ in range(8):  # a kill that came after the bake ended is tried again, earlier
            bake = _bake(fixtures, out, NEW, pause=True)
            _stopped_before_the_swap(bake)
            os.kill(bake.pid, signal.SIGCONT)
            time.sleep(delay)
            bake.kill()
            code = bake.wait(timeout=600)
            state = _published(out)
            assert state in (old, new), f"out/ torn by a kill {delay:.3f} s into the swap"
            if code == -signal.SIGKILL:
                seen.append("new" if state == new else "old")
                if state == new:  # start the next kill from the old folder again
                    for name, data in old.items():
                        (out / name).write_bytes(data)
                break
            for name, data in old.items():
                (out / name).write_bytes(data)
            delay /= 2
    assert len(seen) == KILLS, seen
    assert _published(out) in (old, new)
