"""Each way an operator holding the signing key could rewrite the history, and who catches it.

The setup: six bakes; a witness that cosigned the log at size 3 and another at size 6. Then one
attack per test, on a copy. Each is caught by `witness` (exit 1, naming the two checkpoints
that cannot both be true, or the file that is wrong) and by `verify --log` or `log verify`.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from compliance_bake.log import append, note
from compliance_bake.log.source import folder_source
from compliance_bake.log.tiles import TileReader
from compliance_bake.signing.signing_key import SigningKey, load_signing_key
from tests.conftest import invoke
from tests.log._log_helpers import (
    ORIGIN,
    bake,
    bake_env,
    failures,
    log_verify,
    mint,
    verify_out,
    witness,
)


@dataclass(frozen=True)
class World:
    root: Path
    log: Path
    private: Path
    public: Path
    witness_key: Path
    outs: list[Path]

    def state(self, size: int) -> Path:
        return self.root / f"state{size}.json"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> World:
    tmp = tmp_path_factory.mktemp("pristine")
    with bake_env():
        private, public = mint(tmp, "operator")
        witness_key, _ = mint(tmp, "regulator", "witness-key")
        outs = []
        for day in range(1, 7):
            outs.append(tmp / f"out{day}")
            assert bake(outs[-1], tmp / "log", private, day).exit_code == 0
            if day in (3, 6):
                run = witness(tmp / "log", public, witness_key, tmp / f"state{day}.json")
                assert run.exit_code == 0, run.output
    return World(tmp, tmp / "log", private, public, witness_key, outs)


@pytest.fixture
def world(pristine: World, tmp_path: Path) -> World:
    """A copy of the pristine world to attack."""
    root = tmp_path / "world"
    shutil.copytree(pristine.root, root)
    return World(
        root, root / "log", root / "operator.pem", root / "operator.pub.pem",
        root / "regulator.pem", [root / o.name for o in pristine.outs],
    )  # fmt: skip


def entries_of(log: Path, size: int) -> list[bytes]:
    return TileReader(folder_source(log), size).entries(0)


def rebuild(world: World, entries: list[bytes], key: SigningKey | None = None) -> None:
    """The operator's rewrite: a fresh log of `entries`, signed, put in the log's place."""
    fresh = world.root / "rebuilt"
    for data in entries:
        append.append_entry(fresh, ORIGIN, json.loads(data), key or operator(world))
    shutil.rmtree(world.log)
    fresh.rename(world.log)


def operator(world: World) -> SigningKey:
    return load_signing_key(world.private, "test")


def caught_by_witness(world: World, size: int, *words: str) -> str:
    state = world.state(size)
    before = state.read_bytes()
    run = witness(world.log, world.public, world.witness_key, state)
    assert run.exit_code == 1, run.output
    assert state.read_bytes() == before  # the last checkpoint that held is kept
    for word in words:
        assert word in run.output, run.output
    return run.output


def caught_by_verify_log(world: World, out: Path, *words: str) -> None:
    result = verify_out(out, world.public, "--log", str(world.log))
    assert result.exit_code == 1, result.output
    lines = failures(result)
    assert any(all(word in line for word in words) for line in lines), lines


def caught_by_log_verify(world: World, *words: str) -> None:
    result = log_verify(world.log, world.public)
    assert result.exit_code == 1, result.output
    problems = json.loads(result.stdout)["problems"]
    assert any(all(word in line for word in words) for line in problems), problems


def test_the_pristine_world_holds(world: World) -> None:
    assert log_verify(world.log, world.public).exit_code == 0
    for out in world.outs:
        assert verify_out(out, world.public, "--log", str(world.log)).exit_code == 0
    assert witness(world.log, world.public, world.witness_key, world.state(6)).exit_code == 0


def test_an_entry_removed_and_the_log_rebuilt(world: World) -> None:
    kept = entries_of(world.log, 6)
    rebuild(world, kept[:2] + kept[3:])  # entry 2 (a failing day, say) is gone; size 5
    assert log_verify(world.log, world.public).exit_code == 0  # it holds together by itself ...
    output = caught_by_witness(world, 6, "rollback", "size 6", "size 5", "cannot both be true")
    assert "cannot both be true" in output
    caught_by_verify_log(world, world.outs[5], "rollback", "size 6", "size 5")
    # ... and once the operator bakes on past the old size, the history still does not fit
    # (on later days: an append dated before the latest entry is refused, log/append.py)
    later = [
        json.dumps({**json.loads(kept[2]), "generatedAt": f"2026-11-{day}T04:06:00.000Z"})
        for day in (7, 8)
    ]
    rebuild(world, kept[:2] + kept[3:] + [e.encode() for e in later])
    caught_by_witness(world, 6, "history rewritten", "size 6", "size 7")
    caught_by_verify_log(world, world.outs[3], "history rewritten", "size 4", "size 7")


def test_an_old_entry_rewritten(world: World) -> None:
    kept = entries_of(world.log, 6)
    doc = json.loads(kept[1])
    doc["verdict"]["ok"] = not doc["verdict"]["ok"]
    rebuild(world, [kept[0], json.dumps(doc).encode(), *kept[2:]])
    caught_by_witness(world, 6, "fork", "size 6", "cannot both be true")
    caught_by_witness(world, 3, "history rewritten", "size 3", "size 6")
    caught_by_verify_log(world, world.outs[2], "history rewritten", "size 3", "size 6")


def test_an_old_entry_rewritten_in_place(world: World) -> None:
    """The bundle edited and nothing else: the tiles no longer hash it."""
    bundle = world.log / "tile" / "entries" / "000.p" / "6"
    data = bundle.read_bytes()
    at = data.index(b'"ok":true')
    bundle.write_bytes(data[:at] + b'"ok":fals' + data[at + 9 :])
    caught_by_log_verify(world, "tile/0/000.p/6", "is not the hash of entry")
    caught_by_witness(world, 3, "tile/0/000.p/6", "is not the hash of entry")


def test_a_fork_at_the_same_size(world: World) -> None:
    kept = entries_of(world.log, 6)
    other = json.loads(kept[5])
    other["target"] = "https://another.example"
    rebuild(world, [*kept[:5], json.dumps(other).encode()])  # the view shown to someone else
    assert log_verify(world.log, world.public).exit_code == 0
    caught_by_witness(world, 6, "fork", "two trees of the same size", "size 6")
    caught_by_verify_log(world, world.outs[5], "fork", "size 6")


def test_a_rollback_to_an_older_checkpoint(world: World) -> None:
    shutil.copy(world.outs[3] / "log" / "checkpoint", world.log / "checkpoint")  # size 4, signed
    caught_by_witness(world, 6, "rollback", "size 6", "size 4", "cannot both be true")
    caught_by_verify_log(world, world.outs[5], "rollback", "size 6", "size 4")


def test_a_checkpoint_signed_by_another_key(world: World) -> None:
    current = note.parse_note((world.log / "checkpoint").read_bytes())
    forger = Ed25519PrivateKey.generate()
    forged = note.Note(current.text, (note.sign_note(current.text, ORIGIN, forger),))
    (world.log / "checkpoint").write_bytes(forged.render())
    caught_by_witness(world, 6, "not signed by the log's key")
    caught_by_log_verify(world, "checkpoint", "not signed by the log's key")
    caught_by_verify_log(world, world.outs[5], "not signed by the log's key")
    out = world.outs[2]
    (out / "log" / "checkpoint").write_bytes(forged.render())
    assert any("not signed" in line for line in failures(verify_out(out, world.public)))


def test_a_tile_edited(world: World) -> None:
    tile = world.log / "tile" / "0" / "000.p" / "6"
    data = bytearray(tile.read_bytes())
    data[4 * 32] ^= 1  # the hash of entry 4
    tile.write_bytes(bytes(data))
    caught_by_log_verify(world, "tile/0/000.p/6", "hash 4 is not the hash of entry 4")
    caught_by_witness(world, 3, "tile/0/000.p/6", "hash 4")
    shown = invoke("log", "show", str(world.log), "5", "--public-key", str(world.public))
    assert shown.exit_code == 1 and "entry 5: not included" in shown.output
    caught_by_verify_log(world, world.outs[2], "size 3", "size 6")


def test_an_out_log_proof_pasted_from_another_snapshot(world: World) -> None:
    """A genuine proof, but of another day's snapshot: the entry does not name this out/."""
    shutil.rmtree(world.outs[2] / "log")
    shutil.copytree(world.outs[1] / "log", world.outs[2] / "log")
    lines = failures(verify_out(world.outs[2], world.public))
    assert any("not this out/'s" in line and "attestationSha256" in line for line in lines), lines


def test_witness_cosignatures_are_required_when_asked(world: World, tmp_path: Path) -> None:
    out = world.outs[5]
    public_w = world.root / "regulator.pub.pem"
    lines = failures(verify_out(out, world.public, "--witness-key", str(public_w)))
    assert any("0 of the 1 given witnesses" in line for line in lines), lines
    cosigned = json.loads(world.state(6).read_text())["checkpoint"]
    (out / "log" / "checkpoint").write_text(cosigned)  # the cosigned checkpoint, same size
    passed = verify_out(out, world.public, "--witness-key", str(public_w))
    assert passed.exit_code == 0, passed.output
    said = (
        "witnessed: 1 of the 1 given witness keys cosigned a checkpoint that holds this "
        "snapshot (threshold 1)"
    )
    assert said in json.loads(passed.stdout)["applied"][-1], passed.stdout
    human = invoke("verify", str(out), "--public-key", str(world.public), "--witness-key",
                   str(public_w))  # fmt: skip
    applied = next(line for line in human.stdout.splitlines() if line.startswith("applied"))
    assert human.exit_code == 0 and applied.endswith(said), human.output
    _, stranger = mint(tmp_path, "stranger", "witness-key")
    result = verify_out(out, world.public, "--witness-key", str(public_w), "--witness-key",
                        str(stranger))  # fmt: skip
    assert any("1 of the 2 given witnesses" in line for line in failures(result))
    result = verify_out(out, world.public, "--witness-key", str(public_w), "--witness-key",
                        str(stranger), "--witness-threshold", "1")  # fmt: skip
    assert result.exit_code == 0, result.output
