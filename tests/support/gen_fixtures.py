"""Generate large, valid fixtures (licences.json + geo.json) for benchmarks and tests.

    python -m tests.support.gen_fixtures --states 50 --partners 10000 --out bench/.data/fixtures

States are real US state codes; MA and NJ are always among them, because the board
needs a partner with an active licence in MA (checked with `basketball.totals`) and a partner
without an active licence in NJ (checked with `soccer.moneyline`). Every state permits the same
wager types. Partner 0 always holds an active MA licence and the last partner never holds an NJ
licence; the others get random licences. Each partner has one geo profile with a real ZIP of the
profile's state and that ZIP's own city, taken from `inputs.zipindex.zip_index()`, the
index the fixture loader checks against. The output depends only on the arguments and the seed.

`generate(states, partners, seed)` returns the two documents for tests; `write_fixtures` writes
them.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

from compliance_bake.inputs.jurisdictions import NAMES
from compliance_bake.inputs.zipindex import ZipPlace, zip_index

# The fifty states, in the order of their names (the order decides the fixtures' bytes): the ZIP
# index's jurisdictions without DC and the territories.
_NOT_STATES = frozenset({"AS", "DC", "GU", "MP", "PR", "VI"})
US_STATES: dict[str, str] = {
    code: name
    for code, name in sorted(NAMES.items(), key=lambda item: item[1])
    if code not in _NOT_STATES
}
REQUIRED_STATES = ("MA", "NJ")
LICENSED_STATE = "MA"  # partner 0 holds an active licence here
UNLICENSED_STATE = "NJ"  # the last partner holds no licence here
# The same list for every state; the first is the one the shadow matrix checks. It contains the
# board's `basketball.totals` (checked in MA) and `soccer.moneyline` (checked in NJ).
WAGER_TYPES = (
    "basketball.totals",
    "basketball.spread",
    "basketball.moneyline",
    "football.spread",
    "soccer.moneyline",
    "soccer.totals",
)
STATUSES = ("active", "suspended", "revoked", "expired")
STATUS_WEIGHTS = (70, 10, 10, 10)
MAX_LICENCES = 12
MIN_AGE, MAX_AGE = 21, 80
LICENCES_FILE = "licences.json"
GEO_FILE = "geo.json"


def pick_states(count: int, rng: random.Random) -> list[str]:
    """`count` state codes, MA and NJ always included, in alphabetical order."""
    if not len(REQUIRED_STATES) <= count <= len(US_STATES):
        raise ValueError(f"--states must be between {len(REQUIRED_STATES)} and {len(US_STATES)}")
    others = sorted(set(US_STATES) - set(REQUIRED_STATES))
    chosen = [*REQUIRED_STATES, *rng.sample(others, count - len(REQUIRED_STATES))]
    return sorted(chosen)


def _state_doc(code: str, rng: random.Random) -> dict[str, Any]:
    stake = rng.choice((5_000, 10_000, 15_000, 25_000))
    return {
        "code": code,
        "name": US_STATES[code],
        "wagerTypes": list(WAGER_TYPES),
        "limits": {
            "maxStakeUsd": stake,
            "maxDailyStakeUsd": stake * rng.choice((2, 3, 5)),
            "minAge": rng.choice((18, 21)),
        },
    }


def _licences(index: int, count: int, states: list[str], rng: random.Random) -> dict[str, str]:
    """State -> status for partner `index` of `count`, with the board's guarantees applied."""
    held = rng.sample(states, rng.randint(0, min(MAX_LICENCES, len(states))))
    licences = {s: rng.choices(STATUSES, STATUS_WEIGHTS)[0] for s in held}
    if index == 0:
        licences[LICENSED_STATE] = "active"
    if index == count - 1:
        licences.pop(UNLICENSED_STATE, None)
    return licences


def _places_by_state(states: list[str]) -> dict[str, list[ZipPlace]]:
    wanted = set(states)
    out: dict[str, list[ZipPlace]] = {s: [] for s in states}
    for place in zip_index().places.values():
        if place.state in wanted:
            out[place.state].append(place)
    for code, places in out.items():
        if not places:
            raise ValueError(f"the ZIP index has no ZIP code in {code}")
        places.sort(key=lambda p: p.zip_code)
    return out


def generate(states: int, partners: int, seed: int = 0) -> tuple[dict[str, Any], dict[str, Any]]:
    """The licences document and the geo document, deterministic for the arguments."""
    if partners < 1:
        raise ValueError("--partners must be at least 1")
    rng = random.Random(seed)
    codes = pick_states(states, rng)
    places = _places_by_state(codes)
    width = max(5, len(str(partners - 1)))
    licence_docs: list[dict[str, Any]] = []
    geo_docs: list[dict[str, Any]] = []
    for i in range(partners):
        node_id = f"node-{i:0{width}d}"
        licences = _licences(i, partners, codes, rng)
        licence_docs.append(
            {
                "nodeId": node_id,
                "licences": [
                    {"state": s, "status": licences[s], "licenceNumber": f"{s}-LIC-2026-{i:06d}"}
                    for s in codes
                    if s in licences
                ],
            }
        )
        active = [s for s in codes if licences.get(s) == "active"]
        home = rng.choice(active or codes)
        place = rng.choice(places[home])
        geo_docs.append(
            {
                "nodeId": node_id,
                "stateCode": home,
                "age": rng.randint(MIN_AGE, MAX_AGE),
                "location": place.city,
                "zipCode": place.zip_code,
            }
        )
    licences_doc = {
        "schemaVersion": 1,
        "states": [_state_doc(code, rng) for code in codes],
        "partners": licence_docs,
    }
    geo_doc = {"schemaVersion": 1, "partners": geo_docs}
    return licences_doc, geo_doc


def _dump(document: dict[str, Any]) -> bytes:
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def write_fixtures(
    out_dir: Path, licences_doc: dict[str, Any], geo_doc: dict[str, Any]
) -> tuple[Path, Path]:
    """Write licences.json and geo.json into out_dir (created if missing); return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    licences_path, geo_path = out_dir / LICENCES_FILE, out_dir / GEO_FILE
    licences_path.write_bytes(_dump(licences_doc))
    geo_path.write_bytes(_dump(geo_doc))
    return licences_path, geo_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--states", type=int, required=True, help="number of states, 2 to 50")
    parser.add_argument("--partners", type=int, required=True, help="number of partners, 1+")
    parser.add_argument("--out", type=Path, required=True, help="folder to write the files into")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    args = parser.parse_args(argv)
    try:
        licences_doc, geo_doc = generate(args.states, args.partners, args.seed)
    except ValueError as exc:
        parser.error(str(exc))
    paths = write_fixtures(args.out, licences_doc, geo_doc)
    print(f"wrote {paths[0]} and {paths[1]}: {args.states} states, {args.partners} partners")
    return 0


if __name__ == "__main__":
    sys.exit(main())
