"""`read_registry` (compliance_bake/inputs/registry_source.py): one entry for every form of
registry source, told apart by the source's text."""

from __future__ import annotations

from pathlib import Path

import pytest

from compliance_bake.errors import SourceError
from compliance_bake.inputs.registry_source import RegistryForm, read_registry, registry_form
from compliance_bake.resources import demo_fixtures_dir
from tests.conftest import NOW, invoke, snapshot_tree


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
    assert "node-bay-01" in {facts.node_id for facts in read.policy.facts}
    assert read.source == str(demo_fixtures_dir())


def test_a_database_that_cannot_be_reached_is_one_line_without_its_password() -> None:
    with pytest.raises(SourceError) as caught:  # nobody listens on port 1: the source failed
        read_registry("postgresql://operator:hunter2@127.0.0.1:1/registry")
    line = caught.value.one_line()
    assert "hunter2" not in line and "postgresql://operator@127.0.0.1:1/registry" in line


def test_registry_and_its_alias_fixtures_bake_the_same_bytes(tmp_path: Path) -> None:
    baked = {}
    for option in ("--registry", "--fixtures"):
        out = tmp_path / option.strip("-") / "out"
        run = invoke(
            "bake", "snapshot", option, str(demo_fixtures_dir()), "--out", str(out), "--now", NOW
        )
        assert run.exit_code == 0, run.output
        baked[option] = snapshot_tree(out)
    assert baked["--registry"] == baked["--fixtures"]


@pytest.mark.parametrize(
    "command",
    [
        ("bake", "snapshot"),
        ("check", "--partner", "p", "--state", "MA", "--wager-type", "basketball.totals"),
    ],
)
def test_an_unreachable_database_registry_is_one_line_exit_3_and_writes_nothing(
    command: tuple[str, ...], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    run = (
        invoke(*command, "--registry", "postgresql://op:hunter2@127.0.0.1:1/reg", "--out", str(out))
        if command[0] == "bake"
        else invoke(*command, "--registry", "postgresql://op:hunter2@127.0.0.1:1/reg")
    )
    assert run.exit_code == 3
    assert "hunter2" not in run.output
    assert len(run.output.strip().splitlines()) == 1
    assert not out.exists()
