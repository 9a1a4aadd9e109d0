"""Appending one entry to a log folder: tiles first, the checkpoint last, one append at a time.

An append holds an exclusive lock on the log folder (flock on its descriptor; a second bake
waits for the first), reads the current checkpoint, writes the new rightmost tile of each level
that changes (the level-0 tile and entry bundle always; a level above only when the tile below
it fills), and only then the new signed checkpoint. Every file goes through a temporary file in
its own folder, flushed, renamed into place and its folder synced, so a killed append leaves
the previous checkpoint and every tile it needs as they were: the new tiles have names no
checkpoint uses yet. An append that fails before its checkpoint is in place removes the files it
wrote, so the log is as it was. Partial tiles stay while a checkpoint may name them; once a tile
is full its partial versions are removed, after the checkpoint. The cost is the few tiles on the
right edge of the tree, whatever the log's size.

`bake --log` appends while its new `out/` is staged and before the swap (`log_snapshot`), so
`out/` is published only after the append is durable, and not at all when it fails.

The crash tests need an exact point: with `_COMPLIANCE_BAKE_CRASH_AT=log:N` the process
SIGKILLs itself after the Nth file operation of the append, with `fail:log:N` that step fails
as a disk would (report/publish.py reads the same variable for its own points).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from compliance_bake.clock import parse_instant
from compliance_bake.errors import InputError
from compliance_bake.findings import Finding
from compliance_bake.inputs.atomic_write import remove_inside, write_whole
from compliance_bake.inputs.files import LeavesFolder, read_regular_file
from compliance_bake.inputs.jsonio import dumps_pretty, loads_strict
from compliance_bake.log import check, merkle, note
from compliance_bake.log.check import CHECKPOINT
from compliance_bake.log.entry import entry_bytes
from compliance_bake.log.source import folder_source
from compliance_bake.log.tiles import (
    MAX_ENTRY_BYTES,
    TILE_HEIGHT,
    TILE_WIDTH,
    TileMissing,
    TileReader,
    encode_bundle,
    tile_path,
)
from compliance_bake.report.publish import TEMP_PREFIX, crash_point, make_folders
from compliance_bake.signing.signing_key import SigningKey

OUT_INCLUSION = "log/inclusion.json"
OUT_CHECKPOINT = "log/checkpoint"
OUT_FILES = (OUT_INCLUSION, OUT_CHECKPOINT)
_FIX_ORIGIN = "name the log once with --log-origin (e.g. compliance.example.com/registry)"


class Inclusion(TypedDict):
    """out/log/inclusion.json: the entry, where it sits in the log, and its inclusion proof."""

    origin: str
    logIndex: int
    treeSize: int
    rootHash: str
    leafHash: str
    hashes: list[str]
    entry: Mapping[str, object]


@dataclass(frozen=True, slots=True)
class Appended:
    index: int
    checkpoint: bytes  # the new signed note
    inclusion: Inclusion

    def out_files(self) -> dict[str, bytes]:
        """The self-verifying files the bake writes into out/log/."""
        return {OUT_INCLUSION: dumps_pretty(self.inclusion), OUT_CHECKPOINT: self.checkpoint}


def _current(directory: Path, key: SigningKey) -> note.Checkpoint | None:
    """The log's checkpoint, checked as every reader of a log checks it (log/check.py), against
    the key that will sign the next one."""
    try:
        raw = read_regular_file(
            CHECKPOINT, max_bytes=note.MAX_NOTE_BYTES, what="log's checkpoint", inside=directory
        )
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise InputError(f"--log {directory}: not a folder", "pass a folder for the log") from None
    signed = check.read_signed(raw, str(directory / CHECKPOINT), [key.private.public_key()])
    if isinstance(signed, Finding):
        raise InputError(
            signed.line,
            "point --log at the log bake snapshot keeps and append with its key, or run "
            "`log verify` to see what changed",
        )
    return signed.checkpoint


def prepare(directory: Path, origin: str | None, key: SigningKey) -> str:
    """The origin to append under, checked before the bake writes anything (exit 2 else)."""
    if directory.exists() and not directory.is_dir():
        raise InputError(f"--log {directory}: not a folder", "pass a folder for the log")
    current = _current(directory, key) if directory.is_dir() else None
    if current is None:
        if origin is None:
            raise InputError(f"--log {directory}: a new log needs an origin", _FIX_ORIGIN)
        if not note.valid_name(origin):
            raise InputError(
                f"--log-origin {origin!r}: not printable ASCII without spaces or +", _FIX_ORIGIN
            )
        return origin
    if origin is not None and origin != current.origin:
        raise InputError(
            f"--log-origin {origin}: the log at {directory} has origin {current.origin}",
            "drop --log-origin, or pass the log's own origin",
        )
    return current.origin


@contextlib.contextmanager
def locked(directory: Path) -> Iterator[None]:
    make_folders(directory)
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # serial: a second append waits for the first
        yield
    finally:
        os.close(fd)


class Writer:
    """Temporary file, flush, rename, the folder synced, and the crash points between them.

    Until the checkpoint is renamed into place, every file written has a name no checkpoint
    uses; `undo` removes them, so an append that fails leaves the log as it was."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.steps = 0
        self.written: list[str] = []  # relative to the log folder
        self.done = False  # the new checkpoint is in place: the append cannot be undone

    def step(self) -> None:
        self.steps += 1
        crash_point("log", self.steps)

    def write(self, relative: str, data: bytes) -> None:
        """`relative` written whole inside the log, no link in it followed (inputs/atomic_write);
        a killed writer's leftovers of this one file are removed first, while the temporary
        files of other files in the folder (another witness's state, in flight) are not this
        writer's to remove."""
        try:
            write_whole(
                relative, data, inside=self.directory, prefix=TEMP_PREFIX, before_rename=self.step
            )
        except LeavesFolder:
            raise InputError(
                f"{self.directory / relative}: a symbolic link inside {self.directory}, "
                "not followed",
                "the log is written only inside its folder: replace the link by the folder "
                "itself, or run `compliance-bake log verify` on the log and restore it",
            ) from None
        self.written.append(relative)
        if relative == CHECKPOINT:
            self.done = True
        self.step()

    def undo(self) -> None:
        """Remove what this append wrote, when its checkpoint is not in place."""
        if self.done:
            return
        for relative in self.written:
            with contextlib.suppress(OSError, LeavesFolder):
                remove_inside(self.directory, relative)


def append_entry(
    directory: Path, origin: str, entry: Mapping[str, object], key: SigningKey
) -> Appended:
    data = entry_bytes(entry)
    if len(data) > MAX_ENTRY_BYTES:
        raise InputError(
            f"the log entry is {len(data)} bytes, over {MAX_ENTRY_BYTES}",
            "shorten the target's base URL",
        )
    try:
        with locked(directory):
            writer = Writer(directory)
            try:
                return _append(writer, origin, data, entry, key)
            except BaseException:
                writer.undo()  # the log as it was: no entry file that no checkpoint names
                raise
    except OSError as exc:
        raise InputError(
            f"cannot write the log at {exc.filename or directory}: {exc.strerror}",
            "pass --log DIR pointing at a writable folder with free space",
        ) from None


def _append(
    writer: Writer, origin: str, data: bytes, entry: Mapping[str, object], key: SigningKey
) -> Appended:
    directory = writer.directory
    current = _current(directory, key)  # again, under the lock: another bake may have appended
    if current is not None and current.origin != origin:
        raise InputError(
            f"{directory}: the log's origin is {current.origin}, not {origin}",
            "pass the log's own origin",
        )
    size = 0 if current is None else current.size
    source = folder_source(directory)
    old = TileReader(source, size)
    filled: list[str] = []
    try:
        bundle = old.entries(size >> TILE_HEIGHT) if size % TILE_WIDTH else []
        if size:
            latest = bundle[-1] if bundle else old.entries((size - 1) >> TILE_HEIGHT)[-1]
            _refuse_backdated(directory, latest, entry)
        writer.write(
            tile_path("entries", size >> TILE_HEIGHT, len(bundle) + 1),
            encode_bundle([*bundle, data]),
        )
        if len(bundle) + 1 == TILE_WIDTH:
            filled.append(tile_path("entries", size >> TILE_HEIGHT, TILE_WIDTH) + ".p")
        value, level = merkle.leaf_hash(data), 0
        while True:
            count = size >> (TILE_HEIGHT * level)  # hashes at this tile level before the append
            n, width = divmod(count, TILE_WIDTH)
            hashes = [*(old.tile(level, n) if width else []), value]
            writer.write(tile_path(level, n, len(hashes)), b"".join(hashes))
            if len(hashes) < TILE_WIDTH:
                break
            filled.append(tile_path(level, n, TILE_WIDTH) + ".p")
            value, level = merkle.root_of(hashes), level + 1
    except TileMissing as exc:
        raise InputError(
            f"{directory}/{exc.path}: {exc.what}",
            "run `compliance-bake log verify` on the log and restore it",
        ) from None
    new = TileReader(source, size + 1)
    root = merkle.tree_root(new, size + 1)
    checkpoint = note.Checkpoint(origin, size + 1, root)
    signed = note.Note(checkpoint.text(), (note.sign_note(checkpoint.text(), origin, key.private),))
    rendered = signed.render()
    writer.write(CHECKPOINT, rendered)
    for partial in filled:  # full now: the partial versions are no longer needed
        with contextlib.suppress(OSError, LeavesFolder):
            remove_inside(directory, partial)
    writer.step()
    proof = merkle.inclusion_proof(new, size, size + 1)
    inclusion: Inclusion = {
        "origin": origin,
        "logIndex": size,
        "treeSize": size + 1,
        "rootHash": root.hex(),
        "leafHash": merkle.leaf_hash(data).hex(),
        "hashes": [h.hex() for h in proof],
        "entry": entry,
    }
    return Appended(size, rendered, inclusion)


def _refuse_backdated(directory: Path, latest: bytes, entry: Mapping[str, object]) -> None:
    """InputError (exit 2, nothing appended) for an entry dated before the log's latest: a
    transparency log records history in the order it happened, so an entry that claims an
    earlier time than the one before it is a wrong clock (`--now`, SOURCE_DATE_EPOCH) or a
    backdated snapshot, refused rather than appended with a warning nobody reads in CI. An
    entry of the same instant (a rebake) is appended. A latest entry that cannot be read is
    left to `log verify`, which names it."""
    try:
        before = loads_strict(latest)["generatedAt"]
        then = parse_instant(str(before), source="the log's latest entry")
        now = parse_instant(str(entry["generatedAt"]), source="the snapshot")
    except (InputError, ValueError, KeyError, TypeError):  # StrictJSONError is a ValueError
        return
    if now < then:
        raise InputError(
            f"--log {directory}: the snapshot's generatedAt {entry['generatedAt']} is earlier "
            f"than the log's latest entry ({before}); a log's entries go forward in time",
            f"bake with a clock at or after {before} (--now, SOURCE_DATE_EPOCH), or append to "
            "a new log",
        )


@dataclass(frozen=True, slots=True)
class LogTarget:
    """Where `bake snapshot --log` appends, and the origin a new log is named with."""

    directory: Path
    origin: str | None = None


def log_snapshot(
    target: LogTarget,
    origin: str,
    document: Mapping[str, object],
    files: dict[str, bytes],
    key: SigningKey,
    out_dir: Path,
) -> tuple[Appended, list[Path]]:
    """Publish `files` (the signed snapshot, its attestation last) in `out/` with the entry's
    proof in out/log/, appending the entry once every file is staged and before the swap: a
    failed append publishes nothing, and `out/` never holds a snapshot that is in no log."""
    from compliance_bake.log.entry import entry_of
    from compliance_bake.report.publish import publish
    from compliance_bake.signing.attestation import ATTESTATION_FILE, sha256_hex

    appended: list[Appended] = []

    def append_then_proof() -> dict[str, bytes]:
        entry = entry_of(document, sha256_hex(files[ATTESTATION_FILE]), key.key_id)
        appended.append(append_entry(target.directory, origin, entry, key))
        return appended[0].out_files()

    written = publish(out_dir, files, before_swap=append_then_proof)
    return appended[0], written


def prepare_log(target: LogTarget, key: SigningKey | None) -> str:
    """The origin to append under, checked with the bake's inputs (nothing written yet)."""
    if key is None:
        raise InputError(
            f"--log {target.directory}: the log's checkpoints are signed with the Ed25519 "
            "signing key, and none is configured",
            "pass --signing-key (or run `compliance-bake signing-key mint`)",
        )
    return prepare(target.directory, target.origin, key)
