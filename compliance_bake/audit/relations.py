"""The audit's small relations in DuckDB: `zips(zip, state)`, `states(state, regulated)` and
`licences(partner, state)` (active licences only), from the ZIP database and licences.json."""

from __future__ import annotations

from typing import Any

from compliance_bake.inputs.models import LICENCE_ACTIVE, LicenceRegistry


def load_relations(con: Any, registry: LicenceRegistry) -> None:
    from compliance_bake.inputs.zipindex import zip_index

    index = zip_index()
    con.execute(
        "CREATE TEMP TABLE zips AS SELECT unnest($zips::VARCHAR[]) AS zip, "
        "unnest($states::VARCHAR[]) AS state",
        {"zips": list(index.places), "states": [p.state for p in index.places.values()]},
    )
    regulated = set(registry.regulated_states)
    jurisdictions = sorted(index.jurisdictions | regulated)
    con.execute(
        "CREATE TEMP TABLE states AS SELECT unnest($codes::VARCHAR[]) AS state, "
        "unnest($flags::BOOLEAN[]) AS regulated",
        {"codes": jurisdictions, "flags": [c in regulated for c in jurisdictions]},
    )
    pairs = [
        (p.node_id, state)
        for p in registry.partners
        for state, status in p.licences.items()
        if status == LICENCE_ACTIVE
    ]
    con.execute(
        "CREATE TEMP TABLE licences AS SELECT unnest($partners::VARCHAR[]) AS partner, "
        "unnest($states::VARCHAR[]) AS state",
        {"partners": [p for p, _ in pairs], "states": [s for _, s in pairs]},
    )
