"""The waivers of two snapshots compared (`bake --waivers`' `waivers` field): each waiver,
known by its state, partner, kind and question fields, added, removed, expired (applied before,
expired now), renewed (a later expiry) or changed (its justification, approver or matches).
A waiver changes what passes, so every change is a self-check change."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compliance_bake.diff.model import Change, ChangeClass
from compliance_bake.report.models import JsonValue

_SHOWN = ("kind", "question", "justification", "expires", "approvedBy", "status")


def _key(waiver: Mapping[str, Any]) -> str:
    """`NJ node-x identityNotEnforced [amount=5000.01]`, as the bake names a waiver."""
    narrow = "" if waiver["kind"] is None else f" {waiver['kind']}"
    fields = ", ".join(f"{k}={v}" for k, v in waiver["question"].items())
    return f"{waiver['state']} {waiver['partner']}{narrow}" + (f" [{fields}]" if fields else "")


def _view(waiver: Mapping[str, Any]) -> JsonValue:
    return {**{k: waiver[k] for k in _SHOWN}, "matched": len(waiver["matched"])}


def _of(field: Mapping[str, Any] | None) -> dict[str, Mapping[str, Any]]:
    return {} if field is None else {_key(w): w for w in field["waivers"]}


def waiver_changes(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> list[Change]:
    before, after = _of(old), _of(new)
    changes: list[Change] = []
    for key in dict.fromkeys([*before, *after]):
        was, now = before.get(key), after.get(key)
        shown = now if now is not None else was
        assert shown is not None  # the key is on one side at least
        concerns = {"waiver": key, "state": shown["state"], "partner": shown["partner"]}
        if was is None or now is None:
            kind = "waiver-added" if was is None else "waiver-removed"
            views = (None if was is None else _view(was), None if now is None else _view(now))
            changes.append(Change(ChangeClass.SELF_CHECK, kind, concerns, *views))
            continue
        if _view(was) == _view(now):
            continue
        if was["status"] != "expired" and now["status"] == "expired":
            kind = "waiver-expired"
        elif now["expires"] > was["expires"]:
            kind = "waiver-renewed"
        else:
            kind = "waiver-changed"
        changes.append(Change(ChangeClass.SELF_CHECK, kind, concerns, _view(was), _view(now)))
    return changes
