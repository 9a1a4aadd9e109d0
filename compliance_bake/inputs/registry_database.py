"""The registry read from the operator's database: `--registry sqlite:PATH` or `postgresql://...`.

The four tables (`inputs/registry_map.TABLES`, or where `--registry-map` says they are) are read
in one read-only transaction (PostgreSQL: REPEATABLE READ, READ ONLY, so the four answers are one
snapshot of the database), through the plays sources' connection code (`inputs/database.py`:
the ADBC drivers, libpq's password rules, a login role that can write on the server refused,
every driver message scrubbed of the password). Nothing is written anywhere.

Every value arrives with its storage type (SQLite's `typeof`, PostgreSQL's `pg_typeof`) and its
text, and is turned into the Python value it is: an INTEGER an int, a REAL the float of its
round-trip spelling (0.49 stays 0.49), a NUMERIC the exact Decimal, TEXT a str; the TEXT JSON
columns (`allowed_bet_types`, `special_rules`, `metadata_json`) are decoded by the strict
parser. The policy's one row reader (`policy/rows.py`) then reads each limit row, so a bad row
is refused with the same rule as in `limits.json`, in one line naming the table, the row and the
column (exit 2).

What the tables give (docs/fixtures.md): the regulated states are the map's `states`, else
those of the licence and limit rows; a state's name is its jurisdiction's
(`inputs/jurisdictions.py`); its wager types are the target profile's `[wagers]` types, then its
limit rows' `sport_id.market_id` in the rows' order (by `id` where the table has one), the first
being the one the shadow matrix asks;
the partners are those of `partner_geo_profiles` (each licence's partner needs its profile);
a partner is identity-verified when a binding's `metadata_json` says so
(`rows.identity_verified_from_metadata`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal, InvalidOperation

from compliance_bake.errors import InputError
from compliance_bake.inputs.database import (
    Database,
    Session,
    begin_read_only,
    database_at,
    failing,
    quote_ident,
    relation,
)
from compliance_bake.inputs.jsonio import StrictJSONError, loads_strict
from compliance_bake.inputs.jurisdictions import jurisdiction_name
from compliance_bake.inputs.models import Fixtures, GeoProfile
from compliance_bake.inputs.registry_map import (
    BINDINGS,
    DEFAULT_MAP,
    GEO,
    LICENCES,
    LIMITS,
    MAP_OPTION,
    OPTIONAL,
    TABLES,
    MappedSource,
    RegistryMap,
    TableSource,
    read_map,
)
from compliance_bake.inputs.zipindex import is_jurisdiction, zip_index
from compliance_bake.policy.model import (
    LICENCE_STATUSES,
    LicenceRegistry,
    LimitRow,
    Partner,
    PartnerFacts,
    PolicyRegistry,
    PolicyValueError,
    StateRules,
)
from compliance_bake.policy.rows import identity_verified_from_metadata, limit_row_from_columns

_NODE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")  # licences.schema.json's nodeId
_JSON_COLUMNS = {LIMITS: ("allowed_bet_types", "special_rules"), BINDINGS: ("metadata_json",)}
_INTEGERS = frozenset(("smallint", "integer", "bigint"))
_FLOATS = frozenset(("real", "double precision"))
_FIELD_HEAD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class _Row:
    """One row as read: its values by the default column names, and how messages name it."""

    __slots__ = ("label", "values")

    def __init__(self, label: str, values: dict[str, object]) -> None:
        self.label = label
        self.values = values


def read_database_registry(source: str, shown: str, wager_types: Sequence[str] = ()) -> Fixtures:
    """The registry of a database source (`shown`: its text without the password, as the
    snapshot records it; each state permits `wager_types` too); InputError (exit 2) for a bad
    source, map or registry, SourceError (exit 3) for a server unreached or breaking off."""
    mapping = read_map(source.map_file) if isinstance(source, MappedSource) else DEFAULT_MAP
    database = database_at(str(source), "--registry ")
    rows = _read_all(database, mapping)
    return _registry(database, mapping, rows, str(shown), wager_types)  # shown: the record's str


def _read_all(database: Database, mapping: RegistryMap) -> dict[str, list[_Row]]:
    """The four tables' rows, read in one read-only transaction."""
    session = Session(database)
    try:
        begin_read_only(session)
        return {name: _read(session, database, mapping.tables[name]) for name in TABLES}
    finally:
        session.close()


def _read(session: Session, database: Database, table: TableSource) -> list[_Row]:
    named = None if table.query is not None else table.table or table.name
    rel = relation(named, table.query, "registry_query")
    fix = (
        f"check the query of [{table.name}] in {MAP_OPTION}"
        if table.query is not None
        else f"create the table {table.name} (`compliance-bake docs fixtures`) or name yours in "
        f"{MAP_OPTION}"
    )
    with failing(database, f"cannot read {table.shown}", fix):
        found = session.columns(f"SELECT * FROM {rel} LIMIT 0")
    columns: list[str] = []
    for column in TABLES[table.name]:
        if table.column(column) in found:
            columns.append(column)
        elif column not in OPTIONAL.get(table.name, ()):
            raise InputError(
                f"{database.shown}: {table.shown} has no column {table.column(column)}",
                f"add the column, or map {table.name}.{column} to yours in {MAP_OPTION} "
                f'(columns = {{{column} = "NAME"}})',
            )
    pairs = ", ".join(
        _typed(database.kind, table.column(column), index) for index, column in enumerate(columns)
    )
    with failing(database, f"cannot read {table.shown}", fix):
        answer = session.rows(f"SELECT {pairs} FROM {rel}")
    read: list[_Row] = []
    for number, raw in enumerate(answer, start=1):
        values: dict[str, object] = {}
        for index, column in enumerate(columns):
            kind, text = raw[2 * index], raw[2 * index + 1]
            value = _value(database.kind, str(kind), text)
            if value is _BLOB:
                raise InputError(
                    f"{database.shown}: {table.shown} row {number}: {table.column(column)}: "
                    f"binary data ({kind}), not a value",
                    "store the value as text or a number",
                )
            values[column] = value
        label = f"row {number}" if values.get("id") is None else f"row id={values['id']}"
        read.append(_Row(label, values))
    return read


def _typed(kind: str, column: str, index: int) -> str:
    """The column's storage type and its text, as two columns of the SELECT. A SQLite REAL is
    spelt with 17 significant digits (its float round-trips); every SQLite answer is text and
    never NULL, since its reader takes a column's type from its first rows."""
    ident = quote_ident(column)
    if kind == "postgresql":
        return f"pg_typeof({ident})::text AS t{index}, CAST({ident} AS TEXT) AS v{index}"
    return (
        f"typeof({ident}) AS t{index}, CASE typeof({ident}) "
        f"WHEN 'real' THEN printf('%!.17g', {ident}) WHEN 'integer' THEN CAST({ident} AS TEXT) "
        f"WHEN 'text' THEN {ident} ELSE '' END AS v{index}"
    )


_BLOB = object()


def _value(kind: str, storage: str, text: str | None) -> object:
    """The Python value of one stored value (module docstring)."""
    if kind == "sqlite":
        if storage == "null":
            return None
        if storage == "integer":
            return int(str(text))
        if storage == "real":
            return float(str(text))
        return text if storage == "text" else _BLOB
    if text is None:
        return None
    if storage in _INTEGERS:
        return int(text)
    if storage in _FLOATS:
        return float(text)
    if storage == "numeric":
        try:
            return Decimal(text)
        except InvalidOperation:  # pragma: no cover - PostgreSQL spells every numeric
            return text
    if storage == "boolean":
        return text == "true"
    return _BLOB if storage == "bytea" else text


_Fail = Callable[[str, "_Row | None", str, str, str], InputError]


def _registry(
    database: Database,
    mapping: RegistryMap,
    rows: Mapping[str, list[_Row]],
    shown: str,
    wager_types: Sequence[str],
) -> Fixtures:
    def fail(table: str, row: _Row | None, column: str, problem: str, hint: str) -> InputError:
        """One line naming the source, the table, the row and the column (as the source names
        it)."""
        spec = mapping.tables[table]
        where = spec.shown if row is None else f"{spec.shown} {row.label}"
        return InputError(f"{database.shown}: {where}: {_named(spec, column)}: {problem}", hint)

    for table, names in _JSON_COLUMNS.items():
        for row in rows[table]:
            for column in names:
                row.values[column] = _json(table, row, column, fail)
    limit_rows = _limit_rows(rows[LIMITS], fail)
    licences = _licences(rows[LICENCES], fail)
    geo = sorted(_geo(rows[GEO], fail), key=lambda profile: profile.node_id)
    partners = {profile.node_id for profile in geo}
    states = _states(mapping, rows, limit_rows, fail)
    by_partner: dict[str, dict[str, str]] = {profile.node_id: {} for profile in geo}
    for row, (node, state, status) in zip(rows[LICENCES], licences, strict=True):
        if node not in partners:
            raise fail(
                LICENCES, row, "node_id", f"{node!r} has no row in {GEO}",
                f"add the partner's profile to {mapping.tables[GEO].shown}",
            )  # fmt: skip
        if state not in states:
            raise fail(
                LICENCES, row, "state_code", f"{state} is not a regulated state of the map",
                f"add {state} to the map's states, or remove the licence",
            )  # fmt: skip
        if state in by_partner[node]:
            raise fail(
                LICENCES, row, "state_code", f"a second licence of {node!r} in {state}",
                "keep one licence per partner and state",
            )  # fmt: skip
        by_partner[node][state] = status
    for row, limit in zip(rows[LIMITS], limit_rows, strict=True):
        if limit.partner is not None and limit.partner not in partners:
            raise fail(
                LIMITS, row, "node_id", f"{limit.partner!r} is not a partner of the registry",
                f"use a node_id of {mapping.tables[GEO].shown}, or NULL for the state-wide row",
            )  # fmt: skip
    verified = _verified(rows[BINDINGS], fail)
    registry = LicenceRegistry(
        states=tuple(_state(code, limit_rows, wager_types, fail) for code in states),
        partners=tuple(Partner(node, held) for node, held in by_partner.items()),
    )
    facts = tuple(PartnerFacts(p.node_id, p.age, p.zip_code, p.node_id in verified) for p in geo)
    try:
        policy = PolicyRegistry(registry, tuple(limit_rows), facts)
    except PolicyValueError as exc:
        named = None if exc.row is None else rows[LIMITS][exc.row]
        raise fail(LIMITS, named, exc.field, exc.problem, exc.hint) from None
    return Fixtures(policy=policy, geo=tuple(geo), source=shown)


def _named(table: TableSource, field: str) -> str:
    """A field of the policy's messages (`special_rules.min_age`, `allowed_bet_types[1]`) with
    its column as the source names it."""
    head = _FIELD_HEAD.match(field)
    if head is None:
        return field
    return table.column(head.group()) + field[head.end() :]


def _json(table: str, row: _Row, column: str, fail: _Fail) -> object:
    """A TEXT JSON column's value decoded strictly (fractions as exact Decimals); NULL stays
    None, a value that is not text is handed on as it is (the row reader names what it is not)."""
    value = row.values.get(column)
    if not isinstance(value, str):
        return value
    try:
        return loads_strict(value, fractions=True)
    except StrictJSONError as exc:
        raise fail(
            table, row, column, f"malformed JSON at {exc.where}: {exc}", "store strict JSON"
        ) from None


def _limit_rows(rows: list[_Row], fail: _Fail) -> list[LimitRow]:
    """The limit rows in `id` order where the relation has one, else by key (state, sport,
    market, partner, start), so a PostgreSQL table reads in the same order every time."""
    if rows and "id" in rows[0].values:
        rows.sort(key=lambda row: _order(row.values.get("id")))
    else:
        keys = ("state_code", "sport_id", "market_id", "node_id", "effective_from", "policy_key")
        rows.sort(key=lambda row: tuple(_order(row.values.get(key)) for key in keys))
    read: list[LimitRow] = []
    for index, row in enumerate(rows):
        columns = {key: value for key, value in row.values.items() if key != "id"}
        try:
            read.append(limit_row_from_columns(index, columns))
        except PolicyValueError as exc:
            raise fail(LIMITS, row, exc.field, exc.problem, exc.hint) from None
    return read


def _order(value: object) -> tuple[int, int, str]:
    if value is None:
        return (0, 0, "")
    if isinstance(value, int) and not isinstance(value, bool):
        return (1, value, "")
    return (2, 0, str(value))


def _node(table: str, row: _Row, column: str, fail: _Fail) -> str:
    value = row.values.get(column)
    if not isinstance(value, str) or not _NODE_ID.fullmatch(value):
        raise fail(
            table, row, column, f"{value!r} is not a node id",
            "use [A-Za-z0-9][A-Za-z0-9._-]{0,63}, as licences.json's nodeId",
        )  # fmt: skip
    return value


def _state_code(table: str, row: _Row, column: str, fail: _Fail) -> str:
    value = row.values.get(column)
    if not isinstance(value, str) or not is_jurisdiction(value):
        raise fail(table, row, column, f"unknown state {value!r}", "use a two-letter US state code")
    return value


def _licences(rows: Sequence[_Row], fail: _Fail) -> list[tuple[str, str, str]]:
    """(partner, state, status) of each licence row."""
    read = []
    for row in rows:
        node = _node(LICENCES, row, "node_id", fail)
        state = _state_code(LICENCES, row, "state_code", fail)
        status = row.values.get("status")
        if not isinstance(status, str) or status not in LICENCE_STATUSES:
            raise fail(
                LICENCES, row, "status", f"{status!r} is not a licence status",
                f"use one of {', '.join(LICENCE_STATUSES)}",
            )  # fmt: skip
        read.append((node, state, status))
    return read


def _geo(rows: Sequence[_Row], fail: _Fail) -> list[GeoProfile]:
    """Each partner's profile, held to the checks of geo.json: a real ZIP of its state whose
    city is its location, an age of 18 to 130, one profile per partner."""
    profiles: dict[str, GeoProfile] = {}
    for row in rows:
        node = _node(GEO, row, "node_id", fail)
        if node in profiles:
            raise fail(GEO, row, "node_id", f"a second profile for {node!r}", "keep one profile")
        state = _state_code(GEO, row, "state_code", fail)
        age = row.values.get("age")
        if isinstance(age, bool) or not isinstance(age, int) or not 18 <= age <= 130:
            raise fail(GEO, row, "age", f"{age!r} is not an age", "use an integer from 18 to 130")
        zip_code, city = row.values.get("zip_code"), row.values.get("location")
        place = zip_index().lookup(zip_code) if isinstance(zip_code, str) else None
        if place is None:
            raise fail(
                GEO, row, "zip_code", f"{zip_code!r} is not a US ZIP code",
                "store a real 5-digit ZIP as text, leading zeros kept",
            )  # fmt: skip
        if place.state != state:
            raise fail(
                GEO, row, "zip_code", f"{zip_code} is in {place.state}, not in {state}",
                f"use a ZIP of {state} or set state_code to {place.state}",
            )  # fmt: skip
        if not isinstance(city, str) or not place.names_city(city):
            raise fail(
                GEO, row, "location", f"{city!r} is not the city of ZIP {zip_code}",
                f"set location to {place.city!r}",
            )  # fmt: skip
        profiles[node] = GeoProfile(node, state, age, city, place.zip_code)
    return list(profiles.values())


def _verified(rows: Sequence[_Row], fail: _Fail) -> frozenset[str]:
    """The node ids whose binding metadata says the identity is verified (any binding of the
    node; bindings of nodes that are not partners are other parts of the tree)."""
    found = set()
    for row in rows:
        node = row.values.get("tree_node_id")
        if not isinstance(node, str):
            raise fail(
                BINDINGS, row, "tree_node_id", f"{node!r} is not a node id", "store it as text"
            )
        if identity_verified_from_metadata(row.values.get("metadata_json")):
            found.add(node)
    return frozenset(found)


def _states(
    mapping: RegistryMap, rows: Mapping[str, list[_Row]], limits: Sequence[LimitRow], fail: _Fail
) -> tuple[str, ...]:
    """The map's states, else those of the licence and limit rows, in code order."""
    if mapping.states is not None:
        for code in mapping.states:
            if not is_jurisdiction(code):
                raise InputError(
                    f"{mapping.file}: states: unknown state {code!r}",
                    "use a two-letter US state code",
                )
        return mapping.states
    codes = {str(row.values["state_code"]) for row in rows[LICENCES]}
    return tuple(sorted(codes | {row.state for row in limits}))


def _state(code: str, limits: Sequence[LimitRow], extra: Sequence[str], fail: _Fail) -> StateRules:
    """A regulated state: its jurisdiction's name, its wager types (`extra`, a profile's, first, so
    the matrix asks the profile's headline; then its rows', in order), and `limits` (the status
    panel's hasLimits) its rows' count."""
    own = [row for row in limits if row.state == code]
    wager_types = tuple(dict.fromkeys([*extra, *(row.wager_type for row in own)]))
    if not wager_types:
        raise fail(
            LIMITS, None, "state_code", f"no row of {code}, so {code} permits no wager type",
            f"add a row per wager type {code} permits (the first is the one the matrix asks)",
        )  # fmt: skip
    return StateRules(
        code=code,
        name=jurisdiction_name(code) or code,
        wager_types=wager_types,
        limits={"limitRows": len(own)},
    )
