"""A registry written three ways: a fixtures folder, a SQLite file and a PostgreSQL database.

`folder_rows` gives the four tables' rows of any fixtures folder with a limits.json (the
regulatory Bun service's tests/targets/policy_registry); `statements`, `write_sqlite` and
`postgres_sql` write them, by default the tables of this one registry:

The registry is the bundled fixtures' (fixtures/licences.json and geo.json: their states,
partners, licences and profiles) with limit rows for every wager type of its states, in the
states' order of wagerTypes (so the database's wager types, the rows' pairs in `id` order, are
the folder's): a fractional minimum stored as REAL 0.49, a partner's own row, an expired row, a
suspended row, bet types, ZIP prefixes, identity and an age above the default. The partners'
identity is in `partner_profile_bindings.metadata_json` (each of the three keys once) and in
geo.json's `identityVerified`.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from compliance_bake.resources import demo_fixtures_dir

# (id, policy_key, status, state, sport, market, node, max, min, bet types, special, from, to)
LIMITS: list[tuple[Any, ...]] = [
    (1, "ma-nba-totals", "active", "MA", "basketball", "totals", None, 5000, 0.49,
     ["straight", "parlay"], {"min_age": 21, "allowed_zip_prefixes": ["01", "02"]},
     1767225600, None),
    (2, "ma-nba-spread", "active", "MA", "basketball", "spread", None, 2500, 1, None, None,
     1767225600, None),
    (3, "ma-nba-moneyline-corridor", "active", "MA", "basketball", "moneyline",
     "node-corridor-03", 1000, 2.5, ["straight"], {"require_identity_verification": True},
     1767225600, None),
    (4, "ma-nba-moneyline", "active", "MA", "basketball", "moneyline", None, 3000, 5, None,
     {"min_age": 25}, 1767225600, None),
    (5, "ma-football-spread-2025", "active", "MA", "football", "spread", None, 800, 1, None,
     None, 1735689600, 1767225600),
    (6, "ma-soccer-moneyline", "active", "MA", "soccer", "moneyline", None, 10000, 0, None,
     {"require_identity_verification": True, "max_daily_total": 25000.5}, 1767225600, None),
    (7, "nj-nba-totals", "active", "NJ", "basketball", "totals", None, 15000, 0.5,
     ["straight", "parlay", "teaser"], {"allowed_zip_prefixes": ["07", "08"]}, 1767225600,
     None),
    (8, "nj-nba-spread-paused", "suspended", "NJ", "basketball", "spread", None, 100, 1, None,
     None, 1767225600, None),
    (9, "nj-football-spread", "active", "NJ", "football", "spread", None, 4000, 10, None,
     {"max_weekly_total": 90000}, 1767225600, None),
    (10, "nj-soccer-moneyline", "active", "NJ", "soccer", "moneyline", None, None, None,
     None, None, 1767225600, None),
    (11, "nj-soccer-totals", "active", "NJ", "soccer", "totals", None, 2000, 0.01, ["straight"],
     None, 1767225600, 1893456000),
]  # fmt: skip
LIMIT_COLUMNS = (
    "id", "policy_key", "status", "state_code", "sport_id", "market_id", "node_id",
    "max_wager", "min_wager", "allowed_bet_types", "special_rules", "effective_from",
    "effective_to",
)  # fmt: skip
BINDINGS: list[tuple[str, str | None]] = [
    ("node-shore-02", json.dumps({"identity_verified": True, "tier": "gold"})),
    ("node-corridor-03", json.dumps({"identityVerified": True})),
    ("node-bay-01", json.dumps({"kyc_verified": False})),
    ("node-offshore-04", None),
    ("tree-root", json.dumps({})),
]
VERIFIED = ("node-shore-02", "node-corridor-03")


def bundled() -> tuple[dict[str, Any], dict[str, Any]]:
    folder = demo_fixtures_dir()
    return (
        json.loads((folder / "licences.json").read_text()),
        json.loads((folder / "geo.json").read_text()),
    )


def licence_rows(licences: dict[str, Any] | None = None) -> list[tuple[str, str, str, str, int]]:
    licences = licences or bundled()[0]
    return [
        (p["nodeId"], lic["state"], lic["licenceNumber"], lic["status"], 1767225600)
        for p in licences["partners"]
        for lic in p["licences"]
    ]


def geo_rows(geo: dict[str, Any] | None = None) -> list[tuple[str, str, int, str, str, int]]:
    geo = geo or bundled()[1]
    return [
        (p["nodeId"], p["stateCode"], p["age"], p["location"], p["zipCode"], 1767225600)
        for p in geo["partners"]
    ]


def write_folder(folder: Path) -> Path:
    """The registry as a fixtures folder: the bundled licences.json, geo.json with
    identityVerified, and limits.json of LIMITS."""
    licences, geo = bundled()
    folder.mkdir(parents=True)
    (folder / "licences.json").write_text(json.dumps(licences))
    for partner in geo["partners"]:
        partner["identityVerified"] = partner["nodeId"] in VERIFIED
    (folder / "geo.json").write_text(json.dumps(geo))
    rows = [dict(zip(LIMIT_COLUMNS[1:], row[1:], strict=True)) for row in LIMITS]
    (folder / "limits.json").write_text(json.dumps({"schemaVersion": 1, "limits": rows}))
    return folder


def _text(value: object) -> object:
    return json.dumps(value) if isinstance(value, (list, dict)) else value


def limit_values(rows: Sequence[tuple[Any, ...]] = LIMITS) -> list[tuple[Any, ...]]:
    """The rows as the table stores them: the JSON columns as TEXT."""
    return [tuple(_text(v) for v in row) for row in rows]


# The tables' DDL (the issue's columns), with {name} for each table's name and a column map.
DDL = {
    "partner_state_licenses": "CREATE TABLE {t} ({node_id} TEXT, {state_code} TEXT, "
    "license_number TEXT, {status} TEXT, granted_at BIGINT)",
    "regulatory_limits": "CREATE TABLE {t} ({id} INTEGER PRIMARY KEY, {policy_key} TEXT, "
    "{status} TEXT, {state_code} TEXT, {sport_id} TEXT, {market_id} TEXT, {node_id} TEXT, "
    "{max_wager} REAL, {min_wager} REAL, {allowed_bet_types} TEXT, {special_rules} TEXT, "
    "{effective_from} BIGINT, {effective_to} BIGINT)",
    "partner_geo_profiles": "CREATE TABLE {t} ({node_id} TEXT, {state_code} TEXT, {age} INTEGER, "
    "{location} TEXT, {zip_code} TEXT, updated_at BIGINT)",
    "partner_profile_bindings": "CREATE TABLE {t} ({tree_node_id} TEXT, {metadata_json} TEXT, "
    "bound_at BIGINT)",
}
COLUMN_NAMES = {
    "partner_state_licenses": ("node_id", "state_code", "status"),
    "regulatory_limits": LIMIT_COLUMNS,
    "partner_geo_profiles": ("node_id", "state_code", "age", "location", "zip_code"),
    "partner_profile_bindings": ("tree_node_id", "metadata_json"),
}


def table_rows() -> dict[str, list[tuple[Any, ...]]]:
    return {
        "partner_state_licenses": list(licence_rows()),
        "regulatory_limits": limit_values(),
        "partner_geo_profiles": list(geo_rows()),
        "partner_profile_bindings": [(node, meta, 1767225600) for node, meta in BINDINGS],
    }


def folder_rows(folder: Path) -> dict[str, list[tuple[Any, ...]]]:
    """The four tables' rows of a fixtures folder's registry: its licences, its geo profiles,
    its limit rows in file order (ids from 1) and a binding per partner whose metadata says
    geo.json's identityVerified."""
    licences, geo, limits = (
        json.loads((folder / name).read_text())
        for name in ("licences.json", "geo.json", "limits.json")
    )
    rows = [
        (number, *(row[column] for column in LIMIT_COLUMNS[1:]))
        for number, row in enumerate(limits["limits"], start=1)
    ]
    bindings = [
        (p["nodeId"], json.dumps({"identity_verified": p.get("identityVerified", False)}), 0)
        for p in geo["partners"]
    ]
    return {
        "partner_state_licenses": list(licence_rows(licences)),
        "regulatory_limits": limit_values(rows),
        "partner_geo_profiles": list(geo_rows(geo)),
        "partner_profile_bindings": bindings,
    }


def statements(
    names: Mapping[str, str] | None = None,
    columns: Mapping[str, Mapping[str, str]] | None = None,
    rows: Mapping[str, list[tuple[Any, ...]]] | None = None,
) -> list[tuple[str, list[tuple[Any, ...]]]]:
    """(CREATE, []) and (INSERT with ? marks, rows) per table, under `names` and `columns`."""
    out: list[tuple[str, list[tuple[Any, ...]]]] = []
    data = rows or table_rows()
    for table, ddl in DDL.items():
        name = (names or {}).get(table, table)
        cols = {c: (columns or {}).get(table, {}).get(c, c) for c in COLUMN_NAMES[table]}
        out.append((ddl.format(t=name, **cols), []))
        width = len(data[table][0]) if data[table] else 0
        out.append((f"INSERT INTO {name} VALUES ({', '.join('?' * width)})", data[table]))
    return out


def write_sqlite(path: Path, **kwargs: Any) -> Path:
    connection = sqlite3.connect(path)
    for sql, rows in statements(**kwargs):
        if rows:
            connection.executemany(sql, rows)
        elif not sql.startswith("INSERT"):
            connection.execute(sql)
    connection.commit()
    connection.close()
    return path


def _literal(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def postgres_sql(**kwargs: Any) -> str:
    """The same tables as one SQL script for psql (REAL is PostgreSQL's float4 there: the
    issue's REAL as `double precision`, which 0.49 round-trips through)."""
    parts = []
    for sql, rows in statements(**kwargs):
        if not sql.startswith("INSERT"):
            parts.append(sql.replace(" REAL", " DOUBLE PRECISION") + ";")
        elif rows:
            values = ", ".join("(" + ", ".join(map(_literal, row)) + ")" for row in rows)
            parts.append(sql.split(" VALUES ")[0] + " VALUES " + values + ";")
    return "\n".join(parts)


def postgres_database(cluster: Any, sql: str) -> str:
    """A new database of the cluster (tests/_pg_helpers.Cluster) set up by `sql` as the
    superuser; its name."""
    name = "registry_" + os.urandom(6).hex()
    cluster.psql(f"CREATE DATABASE {name}", database="postgres")
    cluster.psql(sql, database=name)
    return name


# Other names for every table and a few columns, for the map.
OTHER_NAMES = {
    "partner_state_licenses": "op_licences",
    "regulatory_limits": "op_limits",
    "partner_geo_profiles": "op_profiles",
    "partner_profile_bindings": "op_bindings",
}
OTHER_COLUMNS = {
    "partner_state_licenses": {"node_id": "partner", "status": "licence_state"},
    "regulatory_limits": {"state_code": "jurisdiction", "max_wager": "stake_cap"},
    "partner_geo_profiles": {"zip_code": "postal"},
    "partner_profile_bindings": {"metadata_json": "meta"},
}
MAP_TOML = """
states = ["MA", "NJ"]

[partner_state_licenses]
table = "op_licences"
columns = { node_id = "partner", status = "licence_state" }

[regulatory_limits]
table = "op_limits"
[regulatory_limits.columns]
state_code = "jurisdiction"
max_wager = "stake_cap"

[partner_geo_profiles]
query = "SELECT node_id, state_code, age, location, postal FROM op_profiles"
columns = { zip_code = "postal" }

[partner_profile_bindings]
table = "op_bindings"
columns = { metadata_json = "meta" }
"""
