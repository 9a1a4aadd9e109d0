"""What the integrity checks (spec 2.6) test in a snapshot's content, one function per test.

The checks themselves are typed values (`report.models.integrity_checks` makes the list); the
bake and `verify` both compute what each one reads with the functions here, so a label or an
`ok` that does not follow from the snapshot's own content is caught on both sides. The digest
and HMAC tests take a block's JSON because the digests and HMACs are of its canonical bytes
(the bake's JSON made to sign; `verify`'s as parsed); the geo test has a form for typed
profiles (the bake's) and one for profiles as parsed (`verify`'s), over one rule.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Mapping, Sequence
from typing import Any

from compliance_bake.inputs.models import GeoProfile
from compliance_bake.signing import proofs as signing
from compliance_bake.signing.canon import same_mac

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
# Integrity checks that sum up failures listed one by one elsewhere, by what lists them: the
# self-checks' rows, the states whose decisions differ, the reasons plays break the window. A
# failure is counted once (terminal, reports and portal alike): by its items when they are
# listed, by the check only when nothing lists them.
ITEMIZED_BY = {"enhancements": "self-checks", "shadow": "shadow", "zip-window": "zip-window"}
_STATE = re.compile(r"^[A-Z]{2}$")
_ZIP = re.compile(r"^[0-9]{5}$")
_PROFILE_FIELDS = ("stateCode", "age", "location", "zipCode")


def digests_consistent(
    board: dict[str, Any], shadow: dict[str, Any], shadow_digest: str | None = None
) -> bool:
    """The sha3 check over the blocks' JSON. `shadow_digest`: signing.shadow_digest(shadow),
    when the caller has computed it."""
    proof = shadow.get("proof") or {}
    recomputed = signing.shadow_digest(shadow) if shadow_digest is None else shadow_digest
    return (
        board.get("signature") == signing.board_signature(board)
        and shadow.get("signature") == recomputed
        and proof.get("digest") == recomputed
    )


def hmac_present(proof: Mapping[str, object]) -> bool:
    value = proof.get("hmac")
    return isinstance(value, str) and bool(_HEX64.match(value))


def proof_hmac_holds(proof: Any, secret: str) -> bool:
    """The proof (or a sealed record) is an object carrying an HMAC, and it is
    M(canon(proof without hmac)) under `secret`; not, either, when it cannot be canonicalised
    (a document as read may hold anything: it is not what was sealed)."""
    if not (isinstance(proof, dict) and hmac_present(proof)):
        return False
    try:
        return same_mac(proof["hmac"], signing.proof_hmac(proof, secret))
    except (TypeError, ValueError, RecursionError):
        return False


def _discrete(state: object, age: object, location: object, zip_code: object) -> bool:
    """The rule: a two-letter state, an integer age, a location, a five-digit ZIP code."""
    return (
        isinstance(state, str)
        and bool(_STATE.match(state))
        and type(age) is int
        and isinstance(location, str)
        and bool(location.strip())
        and isinstance(zip_code, str)
        and bool(_ZIP.match(zip_code))
    )


def profile_discrete(profile: Mapping[str, object]) -> bool:
    """One profile as parsed."""
    get = profile.get
    return _discrete(get("stateCode"), get("age"), get("location"), get("zipCode"))


def _columns_discrete(
    state: list[Any], age: list[Any], location: list[Any], zip_code: list[Any]
) -> bool | None:
    """`all(map(_discrete, state, age, location, zip_code))`, a column at a time when the text
    columns hold plain strings (C-level passes, not a Python call per profile); None for any
    other column, which the caller walks one profile at a time."""
    if not all(set(map(type, column)) <= {str} for column in (state, location, zip_code)):
        return None
    return (
        set(map(type, age)) <= {int}
        and all(map(_STATE.match, set(state)))
        and all(map(str.strip, location))
        and all(map(_ZIP.match, set(zip_code)))
    )


def profiles_discrete(profiles: Any) -> bool:
    """`all(profile_discrete(p) for p in profiles)` over profiles as parsed, a field at a time
    over plain objects of plain strings; anything else is walked one by one, raising as that
    walk does."""
    try:
        state, age, location, zip_code = (
            list(map(operator.methodcaller("get", key), profiles)) for key in _PROFILE_FIELDS
        )
    except (AttributeError, TypeError):
        return all(profile_discrete(p) for p in profiles)
    found = _columns_discrete(state, age, location, zip_code)
    return all(profile_discrete(p) for p in profiles) if found is None else found


def geo_discrete(profiles: Sequence[GeoProfile]) -> bool:
    """The geo check over typed profiles: there are some, and each is discrete (the rule of
    `profile_discrete`, a field at a time)."""
    columns = (
        [p.state_code for p in profiles],
        [p.age for p in profiles],
        [p.location for p in profiles],
        [p.zip_code for p in profiles],
    )
    found = _columns_discrete(*columns)
    return bool(profiles) and (all(map(_discrete, *columns)) if found is None else found)


def zip_window_label(days: int, in_window: int, total: int) -> str:
    """The deepAudit label and the zip-window check's label (spec 2.5, 2.6)."""
    return f"ZIP {days}d window via enriched_at ({in_window}/{total} plays)"


def zip_window_words(days: int, in_window: int, total: int) -> str:
    """The label as people read it, where people read it (terminal, portal): "(5/8 plays)"
    reads as 5 of 8 passed, and means 5 of the 8 plays fall in the window."""
    return f"{in_window:,} of {total:,} plays in the {days}-day ZIP window"
