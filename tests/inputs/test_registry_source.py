"""`read_registry` (compliance_bake/inputs/registry_source.py): one entry for every form of
registry source, told apart by the source's text."""

from __future__ import annotations

import pytest

from compliance_bake.errors import InputError
from compliance_bake.inputs.registry_source import RegistryForm, read_registry, registry_form
from compliance_bake.resources import demo_fixtures_dir


@pytest.mark.parametrize(
    ("text", "form"),
    [
        ("fixtures", RegistryForm.FOLDER),
        ("/abs/dir", RegistryForm.FOLDER),
        ("sqlite:/tmp/reg.db", RegistryForm.SQLITE),
        ("postgresql://u:p@localhost/db", RegistryForm.POSTGRESQL),
        ("postgres://localhost/db", RegistryForm.POSTGRESQL),
    ],
)
def test_the_form_comes_from_the_text(text: str, form: RegistryForm) -> None:
    assert registry_form(text) is form


def test_a_folder_is_read_as_fixtures_with_its_policy() -> None:
    read = read_registry(str(demo_fixtures_dir()))
    assert read.registry is read.policy.licences
    assert read.policy.facts_of("node-bay-01") is not None
    assert read.source == str(demo_fixtures_dir())


def test_a_database_form_this_build_does_not_read_is_one_line_without_its_password() -> None:
    with pytest.raises(InputError) as caught:
        read_registry("postgresql://operator:hunter2@localhost/registry")
    line = caught.value.one_line()
    assert "hunter2" not in line and "postgresql://localhost/registry" in line
