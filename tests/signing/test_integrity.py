"""The integrity checks, made from the bake's models and read from a document, are the same.

The bake makes its checks from typed values (the board's counts, the shadow summary, the typed
geo profiles, the DeepAudit model); `verify` reads the same from the document as parsed. Both
lists come from `models.integrity_checks`; these tests hold that the bake's is what `verify`
reads from the bake's own document, passing or failing, and that the geo test over typed
profiles is the one over profiles as parsed.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from compliance_bake.inputs.fixtures import load_fixtures
from compliance_bake.inputs.models import Fixtures, GeoProfile, LicenceRegistry
from compliance_bake.report.models import DeepAudit, ZipWindow
from compliance_bake.report.snapshot import BakeSettings, build_snapshot
from compliance_bake.resources import demo_fixtures_dir
from compliance_bake.signing.integrity import geo_discrete, profiles_discrete, proof_hmac_holds
from compliance_bake.signing.secret import Secret
from compliance_bake.targets.engine import Engine
from compliance_bake.targets.inprocess import InProcessTarget
from compliance_bake.verify.rules.shadow import content_checks
from tests.conftest import SECRET

NOW = datetime(2026, 11, 22, 4, 6, tzinfo=UTC)
PASSED = DeepAudit(
    ZipWindow(True, 90, "enriched", 3, 2, "ZIP 90d window via enriched_at (2/3 plays)"),
    "compliance-bake audit deep --plays p.csv --days 90",
)
FAILED = msgspec.structs.replace(
    PASSED, zip_window=msgspec.structs.replace(PASSED.zip_window, ok=False)
)


def _unlicensed(registry: LicenceRegistry) -> LicenceRegistry:
    """The registry with every licence of its first licensed partner gone (a drifted service)."""
    partners = list(registry.partners)
    first = next(i for i, p in enumerate(partners) if p.licences)
    partners[first] = replace(partners[first], licences={})
    return LicenceRegistry(registry.states, tuple(partners))


def _non_discrete(fixtures: Fixtures) -> Fixtures:
    first, *rest = fixtures.geo
    return replace(fixtures, geo=(msgspec.structs.replace(first, zip_code="ABCDE"), *rest))


@pytest.mark.parametrize(
    ("case", "deep_audit", "failed"),
    [
        ("plain", None, set()),
        ("deep-audit", PASSED, set()),
        ("audit-failed", FAILED, {"zip-window"}),
        ("geo-broken", None, {"geo"}),
        ("drifted-service", None, {"enhancements", "shadow"}),
    ],
)
def test_the_bakes_checks_are_those_verify_reads_from_its_document(
    case: str, deep_audit: DeepAudit | None, failed: set[str]
) -> None:
    fixtures = load_fixtures(demo_fixtures_dir())
    answering = _unlicensed(fixtures.registry) if case == "drifted-service" else fixtures.registry
    if case == "geo-broken":
        fixtures = _non_discrete(fixtures)
    target = InProcessTarget(Engine(answering))
    settings = BakeSettings(now=NOW, deep_audit=deep_audit)
    snapshot, document, _ = build_snapshot(fixtures, target, Secret(SECRET, "test"), settings)

    doc: dict[str, Any] = document
    read = content_checks(doc, proof_hmac_holds(doc["shadow"]["proof"], SECRET))
    assert snapshot.integrity.checks == read
    assert {check.id for check in snapshot.integrity.failed} == failed
    assert document["integrity"] == snapshot.integrity.to_json()


_state = st.sampled_from(["MA", "NJ", "ma", "M", "", "MA\n", 7, None])
_age = st.sampled_from([30, 0, -1, True, "30", None])
_location = st.sampled_from(["Boston", " ", "", "\t x", 5, None])
_zip = st.sampled_from(["02115", "2115", "02115\n", "0211a", 2115, None])


class _Text(str):
    """A str subclass: the column pass takes plain strings only; the walk takes any."""


def _profile(state: Any, age: Any, location: Any, zip_code: Any) -> GeoProfile:
    # A Struct's constructor does not check types: a profile built in code may hold anything.
    return GeoProfile("node", state, age, location, zip_code)


@given(
    st.lists(
        st.builds(
            _profile,
            _state | st.just(_Text("NJ")),
            _age,
            _location | st.just(_Text("Salem")),
            _zip,
        ),
        max_size=5,
    )
)
def test_the_geo_test_over_typed_profiles_is_the_one_over_parsed_profiles(
    profiles: list[GeoProfile],
) -> None:
    parsed = [
        {"stateCode": p.state_code, "age": p.age, "location": p.location, "zipCode": p.zip_code}
        for p in profiles
    ]
    assert geo_discrete(profiles) == (bool(parsed) and profiles_discrete(parsed))


def test_the_geo_test_holds_for_discrete_profiles_and_fails_for_none() -> None:
    profiles = load_fixtures(demo_fixtures_dir()).geo
    assert geo_discrete(profiles)
    assert not geo_discrete(())
    assert not geo_discrete((*profiles, _profile("MA", 30, "Boston", "2115")))
