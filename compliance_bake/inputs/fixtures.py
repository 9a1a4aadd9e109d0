"""Load and check the fixture folder: `licences.json`, `geo.json` and the optional `limits.json`
(formats in docs/fixtures.md).

Each file is read as a regular file of at most FIXTURE_MAX_BYTES (64 MiB), checked before a byte
is read (`inputs/files.py`). Every problem becomes one FixtureError naming the file, the place
(a JSON path) and the fix.
Order of checks: strict JSON, then the file's JSON Schema, then what a schema cannot say (known
jurisdictions, unique ids, a real ZIP of the profile's state and city).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compliance_bake.errors import FixtureError, InputError
from compliance_bake.gc_pause import gc_paused
from compliance_bake.inputs import schemas
from compliance_bake.inputs.files import FIXTURE_MAX_BYTES, read_regular_file
from compliance_bake.inputs.jsonio import StrictJSONError, loads_strict
from compliance_bake.inputs.models import (
    Fixtures,
    GeoProfile,
    LicenceRegistry,
    Partner,
    StateRules,
)
from compliance_bake.inputs.zipindex import is_jurisdiction, zip_index
from compliance_bake.policy.model import LimitRow, PartnerFacts, PolicyRegistry, PolicyValueError
from compliance_bake.policy.rows import limit_row_from_columns

LICENCES_FILE = "licences.json"
GEO_FILE = "geo.json"
LIMITS_FILE = "limits.json"  # optional: a folder without it has no limit rows
SERVICE_OPTION = "--service-fixtures"

_HINTS = {
    "type": "give the value the type the schema names",
    "required": "add the missing field",
    "additionalProperties": "remove the field or check its spelling",
    "pattern": "match the documented format",
    "enum": "use one of the listed values",
    "const": "use the documented value",
    "minItems": "add at least one entry",
    "minimum": "use a larger value",
    "maximum": "use a smaller value",
    "uniqueItems": "remove the duplicate entry",
    "minLength": "use a non-empty value",
}


def _read(folder: Path, name: str, option: str = "--fixtures", *, fractions: bool = False) -> Any:
    path = folder / name
    missing = FixtureError(f"{path}: not found", _folder_hint(option))
    raw = read_regular_file(
        path, max_bytes=FIXTURE_MAX_BYTES, what="fixture file", error=FixtureError, missing=missing
    )
    if not raw.strip():
        raise FixtureError(
            f"{path}: the file is empty",
            f"write the {name} document (`compliance-bake docs fixtures`)",
        )
    try:
        return loads_strict(raw, fractions=fractions)
    except StrictJSONError as exc:
        raise FixtureError(f"{path}: {exc.where}: {exc}", "write strict JSON (RFC 8259)") from None


def _validate(path: Path, schema_name: str, document: Any) -> None:
    # jsonschema-rs answers "valid" in milliseconds where jsonschema takes seconds on 10,000
    # partners. When it finds a problem, jsonschema words the message (its best match reads
    # better); where only jsonschema-rs objects (Python's `$` also matches before a final
    # newline, so "02108\n" passes jsonschema's pattern check), its own message is used.
    fast = schemas.first_violation(schema_name, document)
    if fast is None:
        return
    problem = schemas.first_violation_reference(schema_name, document) or fast
    hint = _HINTS.get(problem.keyword, f"see {schemas.schema_path(schema_name)}")
    if problem.path.endswith(".zipCode") and problem.keyword == "type":
        hint = 'write the ZIP as a 5-character string in quotes, e.g. "02108" (leading zeros kept)'
    raise FixtureError(f"{path}: {problem.path}: {problem.message}", hint)


def _registry(path: Path, doc: dict[str, Any]) -> LicenceRegistry:
    states: list[StateRules] = []
    seen_states: set[str] = set()
    for i, raw in enumerate(doc["states"]):
        code = raw["code"]
        where = f"{path}: $.states[{i}].code"
        if not is_jurisdiction(code):
            raise FixtureError(f"{where}: unknown state {code!r}", "use a two-letter US state code")
        if code in seen_states:
            raise FixtureError(f"{where}: state {code} is listed twice", "list each state once")
        seen_states.add(code)
        states.append(
            StateRules(
                code=code,
                name=raw["name"],
                wager_types=tuple(raw["wagerTypes"]),
                limits=dict(raw["limits"]),
            )
        )
    partners: list[Partner] = []
    seen_partners: set[str] = set()
    for i, raw in enumerate(doc["partners"]):
        node_id = raw["nodeId"]
        if node_id in seen_partners:
            raise FixtureError(
                f"{path}: $.partners[{i}].nodeId: partner {node_id!r} is listed twice",
                "list each partner once",
            )
        seen_partners.add(node_id)
        licences: dict[str, str] = {}
        for j, licence in enumerate(raw["licences"]):
            state = licence["state"]
            if state in licences or state not in seen_states:  # the place, only when it is named
                where = f"{path}: $.partners[{i}].licences[{j}].state"
                raise _licence_refusal(where, state, licences)
            licences[state] = licence["status"]
        partners.append(Partner(node_id=node_id, licences=licences))
    return LicenceRegistry(states=tuple(states), partners=tuple(partners))


def _licence_refusal(where: str, state: str, licences: dict[str, str]) -> FixtureError:
    """The licence's state is not a regulated state of the fixture, or its second licence."""
    if not is_jurisdiction(state):
        return FixtureError(f"{where}: unknown state {state!r}", "use a two-letter US state code")
    if state in licences:
        return FixtureError(f"{where}: a second licence in {state}", "keep one licence per state")
    return FixtureError(
        f"{where}: {state} is not a regulated state of this fixture",
        "add the state to $.states or remove the licence",
    )


def _facts(doc: dict[str, Any], geo: tuple[GeoProfile, ...]) -> tuple[PartnerFacts, ...]:
    """What the rules read of each partner: its profile's age and ZIP, and `identityVerified`
    (absent: not verified)."""
    return tuple(
        PartnerFacts(p.node_id, p.age, p.zip_code, raw.get("identityVerified", False))
        for p, raw in zip(geo, doc["partners"], strict=True)
    )


def _limits(folder: Path, registry: LicenceRegistry) -> tuple[LimitRow, ...]:
    """The rows of `limits.json`, none when the folder has no such file. Each row is read by
    the policy's one reader (policy/rows.py); here it is also held to the folder: its partner is
    one of licences.json's and its wager type one its state lists."""
    path = folder / LIMITS_FILE
    if not path.exists() and not path.is_symlink():
        return ()
    doc = _read(folder, LIMITS_FILE, fractions=True)
    _validate(path, schemas.LIMITS, doc)
    rows: list[LimitRow] = []
    for index, raw in enumerate(doc["limits"]):
        try:
            row = limit_row_from_columns(index, raw)
        except PolicyValueError as exc:
            raise _row_error(path, exc) from None
        where = f"{path}: $.limits[{index}]"
        if row.partner is not None and registry.partner(row.partner) is None:
            raise FixtureError(
                f"{where}.node_id: {row.partner!r} is not a partner in {LICENCES_FILE}",
                "use a nodeId from licences.json, or null for the state-wide row",
            )
        rules = registry.state(row.state)
        if rules is not None and row.wager_type not in rules.wager_types:
            raise FixtureError(
                f"{where}.market_id: {row.wager_type} is not a wager type of {row.state} in "
                f"{LICENCES_FILE}",
                f"add {row.wager_type} to the state's wagerTypes or fix sport_id and market_id",
            )
        rows.append(row)
    return tuple(rows)


def _row_error(path: Path, exc: PolicyValueError) -> FixtureError:
    place = "$.limits" if exc.row is None else f"$.limits[{exc.row}]"
    return FixtureError(f"{path}: {place}.{exc.field}: {exc.problem}", exc.hint)


def _geo(path: Path, doc: dict[str, Any], registry: LicenceRegistry) -> tuple[GeoProfile, ...]:
    profiles: list[GeoProfile] = []
    seen: set[str] = set()
    for i, raw in enumerate(doc["partners"]):
        where = f"{path}: $.partners[{i}]"
        node_id, state, zip_code, city = (
            raw["nodeId"],
            raw["stateCode"],
            raw["zipCode"],
            raw["location"],
        )
        if registry.partner(node_id) is None:
            raise FixtureError(
                f"{where}.nodeId: {node_id!r} is not a partner in {LICENCES_FILE}",
                "use a nodeId from licences.json",
            )
        if node_id in seen:
            raise FixtureError(
                f"{where}.nodeId: a second profile for {node_id!r}", "keep one profile per partner"
            )
        seen.add(node_id)
        if not is_jurisdiction(state):
            raise FixtureError(
                f"{where}.stateCode: unknown state {state!r}", "use a two-letter US state code"
            )
        place = zip_index().lookup(zip_code)
        if place is None:
            raise FixtureError(
                f"{where}.zipCode: {zip_code} is not a US ZIP code",
                "use a real 5-digit ZIP of the profile's city, leading zeros kept",
            )
        if place.state != state:
            raise FixtureError(
                f"{where}.zipCode: {zip_code} is in {place.state}, not in {state}",
                f"use a ZIP of {state} or set stateCode to {place.state}",
            )
        if not place.names_city(city):
            raise FixtureError(
                f"{where}.location: {city!r} is not the city of ZIP {zip_code} ({place.city})",
                f"set location to {place.city!r} or use a ZIP of {city}",
            )
        profiles.append(GeoProfile(node_id, state, raw["age"], city, zip_code))
    missing = [p.node_id for p in registry.partners if p.node_id not in seen]
    if missing:
        raise FixtureError(
            f"{path}: $.partners: no profile for partner {missing[0]!r}",
            "add one geo profile per partner of licences.json",
        )
    return tuple(profiles)


def _folder_hint(option: str) -> str:
    needs = LICENCES_FILE if option == SERVICE_OPTION else f"{LICENCES_FILE} and {GEO_FILE}"
    return f"pass {option} DIR, a folder with {needs}"


def _require_folder(folder: Path, option: str) -> None:
    if not folder.is_dir():
        raise FixtureError(f"{folder}: no such fixture folder", _folder_hint(option))


def _licences(folder: Path, option: str) -> LicenceRegistry:
    path = folder / LICENCES_FILE
    doc = _read(folder, LICENCES_FILE, option)
    _validate(path, schemas.LICENCES, doc)
    return _registry(path, doc)


def load_service_policy(folder: Path, registry: PolicyRegistry) -> PolicyRegistry:
    """The policy a service under test believes: `folder/licences.json`, and its own
    `limits.json` (without one, the registry's limit rows), with the registry's partner facts.

    The in-process engine answers from it while the shadow keeps reading the registry of
    `--fixtures`, so a licence or a limit that differs between the two shows as a disagreement,
    as drift between a live service's database and the regulator's registry would. The files
    meet every check a fixture folder's meet, with the same messages.
    """
    _require_folder(folder, SERVICE_OPTION)
    with gc_paused(keep=True):
        licences = _licences(folder, SERVICE_OPTION)
        own = (folder / LIMITS_FILE).exists() or (folder / LIMITS_FILE).is_symlink()
        limits = _limits(folder, licences) if own else registry.limits
        known = {partner.node_id for partner in licences.partners}
        facts = tuple(f for f in registry.facts if f.node_id in known)
        try:
            return PolicyRegistry(licences, limits, facts)
        except PolicyValueError as exc:
            raise _row_error(folder / LIMITS_FILE, exc) from None


def load_fixtures(folder: Path) -> Fixtures:
    _require_folder(folder, "--fixtures")
    geo_path = folder / GEO_FILE
    with gc_paused(keep=True):  # everything parsed and built here is kept
        registry = _licences(folder, "--fixtures")
        geo_doc = _read(folder, GEO_FILE)
        _validate(geo_path, schemas.GEO, geo_doc)
        geo = _geo(geo_path, geo_doc, registry)
        limits = _limits(folder, registry)
        try:
            policy = PolicyRegistry(registry, limits, _facts(geo_doc, geo))
        except PolicyValueError as exc:
            raise _row_error(folder / LIMITS_FILE, exc) from None
    return Fixtures(policy=policy, geo=geo, source=str(folder))


@dataclass(frozen=True, slots=True)
class PartnerLines:
    """Where licences.json holds each partner: the file, and the line of each `nodeId`."""

    file: Path
    lines: dict[str, int]


def partner_lines(folder: Path) -> PartnerLines:
    """The line of each partner's `nodeId` in the folder's licences.json, so a mismatch points
    at the entry that says what the registry holds. A file that cannot be read gives no lines."""
    path = folder / LICENCES_FILE
    found: dict[str, int] = {}
    try:
        raw = read_regular_file(path, max_bytes=FIXTURE_MAX_BYTES, what="licences file")
        text = raw.decode("utf-8")
    except (InputError, OSError, UnicodeDecodeError):
        return PartnerLines(path, found)
    for number, line in enumerate(text.splitlines(), start=1):
        key = line.find('"nodeId"')
        if key < 0:
            continue
        value = line[key + len('"nodeId"') :].lstrip(" \t:")
        try:
            partner, _ = json.JSONDecoder().raw_decode(value)
        except ValueError:
            continue
        if isinstance(partner, str):
            found.setdefault(partner, number)
    return PartnerLines(path, found)
