"""The phase lines a run prints on stderr without a terminal, and stderr without them."""

from __future__ import annotations

import re

# A phase's end, the run's total, and the heartbeat of a phase still running (cli/phases.py),
# which a loaded machine prints during a slow start (a JVM's).
PHASE_LINE = re.compile(
    r"compliance-bake: [a-z]+: ([a-z]+ [\d,.]+ s|[a-z]+ still running, [\d,.]+ s|done in [\d,.]+ s)"
)


def diagnostics(stderr: str) -> str:
    """stderr without the phase lines a run prints as its phases end (cli/phases.py): what is
    left is the diagnostic, one line on an error."""
    return "".join(
        line for line in stderr.splitlines(keepends=True) if not PHASE_LINE.fullmatch(line.strip())
    )
