"""The audit's small relations: `zips(zip, state)`, `states(state, regulated)` and
`licences(partner, state)` (active licences only), from the ZIP database and licences.json, as
columns any engine loads (engines/interface.py `Relations`)."""

from __future__ import annotations

from compliance_bake.audit.engines.interface import Relations
from compliance_bake.inputs.models import LICENCE_ACTIVE, LicenceRegistry


def reference_relations(registry: LicenceRegistry) -> Relations:
    """The ZIP database, the jurisdictions (regulated or not) and the active licences."""
    from compliance_bake.inputs.zipindex import zip_index

    index = zip_index()
    zips, zip_states = index.zip_states()
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
