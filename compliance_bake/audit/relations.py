"""The audit's small relations: `zips(zip, state)`, `states(state, regulated)` and
`licences(partner, state)` (active licences only), from the ZIP database and licences.json, as
columns any engine loads (engines/interface.py `Relations`)."""

from __future__ import annotations

from compliance_bake.audit.engines.interface import Relations
from compliance_bake.inputs.models import LICENCE_ACTIVE, LicenceRegistry


def reference_relations(registry: LicenceRegistry, prefix: bool = False) -> Relations:
    """The ZIP database, the jurisdictions (regulated or not) and the active licences. With
    `prefix`, `zips` holds each 3-digit prefix of a real ZIP once, with every state that has a
    real ZIP beginning with it listed as `|MA|NH|` (sql.py's `_zip_check` reads that form)."""
    from compliance_bake.inputs.zipindex import zip_index

    index = zip_index()
    zips, zip_states = index.zip_states()
    if prefix:
        zips, zip_states = zip_prefixes(zips, zip_states)
    regulated = set(registry.regulated_states)
    jurisdictions = sorted(index.jurisdictions | regulated)
    pairs = [
        (p.node_id, state)
        for p in registry.partners
        for state, status in p.licences.items()
        if status == LICENCE_ACTIVE
    ]
    return Relations(
        zips=zips,
        zip_states=zip_states,
        states=jurisdictions,
        regulated=[c in regulated for c in jurisdictions],
        licence_partners=[p for p, _ in pairs],
        licence_states=[s for _, s in pairs],
    )


def zip_prefixes(zips: list[str], states: list[str]) -> tuple[list[str], list[str]]:
    """Each 3-digit prefix of the ZIPs, and the states of its ZIPs as `|MA|NH|`."""
    by_prefix: dict[str, set[str]] = {}
    for zip_code, state in zip(zips, states, strict=True):
        by_prefix.setdefault(zip_code[:3], set()).add(state)
    prefixes = sorted(by_prefix)
    return prefixes, ["|" + "|".join(sorted(by_prefix[p])) + "|" for p in prefixes]
