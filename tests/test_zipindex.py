"""The ZIP index loaded one state at a time gives what the whole index gives."""

from __future__ import annotations

import subprocess
import sys

from compliance_bake.inputs.zipindex import is_jurisdiction, state_places, zip_index

# In a fresh process, so that the per-state path runs before anything loads the whole index.
PER_STATE = """
import json
from compliance_bake.inputs import zipindex
codes = ["MA", "NJ", "AA", "ZZ"]
out = {c: [zipindex.is_jurisdiction(c), sorted(zipindex.state_places(c))] for c in codes}
out["whole-loaded"] = zipindex.zip_index.cache_info().currsize
print(json.dumps(out))
"""


def test_one_state_at_a_time_equals_the_whole_index() -> None:
    import json

    done = subprocess.run(
        [sys.executable, "-c", PER_STATE], capture_output=True, text=True, check=True, timeout=120
    )
    per_state = json.loads(done.stdout)
    assert per_state.pop("whole-loaded") == 0  # the per-state path really ran
    index = zip_index()
    for code, (jurisdiction, zips) in per_state.items():
        assert jurisdiction == (code in index.jurisdictions) == is_jurisdiction(code)
        assert zips == sorted(z for z, p in index.places.items() if p.state == code)
        assert sorted(state_places(code)) == zips
    assert per_state["MA"][0] and len(per_state["MA"][1]) > 100
    assert per_state["AA"] == [False, per_state["AA"][1]] and per_state["AA"][1]
    assert per_state["ZZ"] == [False, []]
