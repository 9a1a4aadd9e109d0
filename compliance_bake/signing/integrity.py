"""The integrity checks (spec 2.6), computed from the content they describe.

The bake and `verify` use the same functions, so a label or an `ok` that does not follow from the
snapshot's own content is caught on both sides.
"""

from __future__ import annotations

import operator
import re
from typing import Any

from compliance_bake.signing import proofs as signing
from compliance_bake.signing.canon import same_mac

HMAC_LABEL = "Proof HMAC-SHA3-256 keyed by REPORT_SIGNING_SECRET"
SHA3_LABEL = "Board integrity sha3-256"
GEO_LABEL = "Geo profiles discrete (state/age/location/zip)"
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_STATE = re.compile(r"^[A-Z]{2}$")
_ZIP = re.compile(r"^[0-9]{5}$")
_PROFILE_FIELDS = ("stateCode", "age", "location", "zipCode")


def digests_consistent(
    enhancements: dict[str, Any], shadow: dict[str, Any], shadow_digest: str | None = None
) -> bool:
    """`shadow_digest`: signing.shadow_digest(shadow), when the caller has computed it."""
    proof = shadow.get("proof") or {}
    recomputed = signing.shadow_digest(shadow) if shadow_digest is None else shadow_digest
    return (
        enhancements.get("signature") == signing.enhancements_signature(enhancements)
        and shadow.get("signature") == recomputed
        and proof.get("digest") == recomputed
    )


def hmac_present(proof: dict[str, Any]) -> bool:
    value = proof.get("hmac")
    return isinstance(value, str) and bool(_HEX64.match(value))


def proof_hmac_holds(proof: dict[str, Any], secret: str) -> bool:
    """The proof carries an HMAC, and it is M(canon(proof without hmac)) under `secret`."""
    return hmac_present(proof) and same_mac(proof["hmac"], signing.proof_hmac(proof, secret))


def profile_discrete(profile: dict[str, Any]) -> bool:
    state, age, location, zip_code = (
        profile.get("stateCode"),
        profile.get("age"),
        profile.get("location"),
        profile.get("zipCode"),
    )
    return (
        isinstance(state, str)
        and bool(_STATE.match(state))
        and type(age) is int
        and isinstance(location, str)
        and bool(location.strip())
        and isinstance(zip_code, str)
        and bool(_ZIP.match(zip_code))
    )


def profiles_discrete(profiles: Any) -> bool:
    """`all(profile_discrete(p) for p in profiles)`, a field at a time over plain objects of
    plain strings (C-level passes, not a Python loop per profile); anything else is
    walked one by one, raising as that walk does."""
    try:
        state, age, location, zip_code = (
            list(map(operator.methodcaller("get", key), profiles)) for key in _PROFILE_FIELDS
        )
    except (AttributeError, TypeError):
        return all(profile_discrete(p) for p in profiles)
    if not all(set(map(type, column)) <= {str} for column in (state, location, zip_code)):
        return all(profile_discrete(p) for p in profiles)
    return (
        set(map(type, age)) <= {int}
        and all(map(_STATE.match, set(state)))
        and all(map(str.strip, location))
        and all(map(_ZIP.match, set(zip_code)))
    )


def zip_window_label(days: int, in_window: int, total: int) -> str:
    """The deepAudit label and the zip-window check's label (spec 2.5, 2.6)."""
    return f"ZIP {days}d window via enriched_at ({in_window}/{total} plays)"


def integrity_checks(
    enhancements: dict[str, Any],
    shadow: dict[str, Any],
    geo: dict[str, Any],
    hmac_ok: bool,
    zip_window: dict[str, Any] | None = None,
    *,
    shadow_digest: str | None = None,
) -> list[dict[str, Any]]:
    passed, total = enhancements["passed"], enhancements["total"]
    mismatches = shadow["summary"]["mismatches"]
    checks: list[dict[str, Any]] = [
        {"id": "enhancements", "ok": passed == total, "label": f"Enhancements {passed}/{total}"},
        {"id": "shadow", "ok": mismatches == 0, "label": f"Shadow mismatches {mismatches}"},
        {
            "id": "sha3",
            "ok": digests_consistent(enhancements, shadow, shadow_digest),
            "label": SHA3_LABEL,
        },
        {"id": "hmac", "ok": hmac_ok, "label": HMAC_LABEL},
        {
            "id": "geo",
            "ok": bool(geo["partners"]) and profiles_discrete(geo["partners"]),
            "label": GEO_LABEL,
        },
    ]
    if zip_window is not None:
        checks.append({"id": "zip-window", "ok": zip_window["ok"], "label": zip_window["label"]})
    return checks
