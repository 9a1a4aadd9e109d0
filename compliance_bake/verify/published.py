"""`verify URL --public-key`: a published snapshot checked with its attestation, as a folder.

A publication of `out/` (by `serve`, or any static host) has the attestation beside the snapshot:
for `https://host/api/compliance.json` (or `/api/compliance`, as `serve` answers too) it is
`https://host/attestation/compliance.intoto.json`, and every file the attestation names is at its
name under `https://host/`. `published_copy` fetches the snapshot, then the attestation; the
files every bake writes, and, once the attestation's signature verifies with a given key, every
file it names; and with `with_log` the snapshot's log proof (`log/inclusion.json`,
`log/checkpoint`). Each through targets/fetch.py, with the same limits as the snapshot's fetch:
one deadline per file, no redirect followed, the size cap (the attestation's own, smaller cap
for the envelope). A file the server does not have
(404) is left out, so the folder check names it missing; any other failure is a failed fetch
(TargetError, exit 3).

The files are written into a private temporary folder laid out as `out/` and removed after the
check, which is the folder check (verify/verifier.py) itself: one way to check a bake, wherever it
was read from. A URL lists no folder, so files published beyond those named are not seen.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

from compliance_bake.errors import InputError
from compliance_bake.log.append import OUT_FILES
from compliance_bake.report import layout
from compliance_bake.signing.attestation import ATTESTATION_FILE, MAX_ENVELOPE_BYTES
from compliance_bake.targets.fetch import fetch_document, fetch_if_published, shown_url
from compliance_bake.verify.attestation import signed_subjects
from compliance_bake.verify.files import UNEXPECTED_FILES
from compliance_bake.verify.findings import VerifyReport

SNAPSHOT_PATHS = ("/" + layout.API_FILE, "/" + layout.API_FILE.removesuffix(".json"))
# The files every bake writes beside the snapshot, fetched even when no attestation names them,
# so that a missing attestation is the one failure named.
BAKED = (layout.BOARD_FILE, layout.SHADOW_FILE, layout.PORTAL_FILE)


def publication_base(url: str) -> str:
    """The URL `out/` is published at (ending in '/'), from the snapshot's URL; InputError
    (exit 2) when the URL is not that of a published snapshot."""
    parts = urlsplit(url)
    for suffix in SNAPSHOT_PATHS:
        if parts.path.endswith(suffix):
            path = parts.path.removesuffix(suffix) + "/"
            return urlunsplit((parts.scheme, parts.netloc, path, "", ""))
    raise InputError(
        f"{shown_url(url)}: "
        "the attestation is found beside a published snapshot, and this URL does not end in "
        f"{' or '.join(SNAPSHOT_PATHS)}",
        "pass the URL of the published out/api/compliance.json (or serve's /api/compliance)",
    )


def _save(folder: Path, name: str, data: bytes) -> None:
    """`data` as `folder/name`; names are the attestation's (verify/attestation.py refuses an
    absolute name, `..` and backslashes), so they stay inside `folder`. A name that cannot be
    written (a file where a folder is needed) is left out, and the folder check names it."""
    path = folder / name
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    except OSError:
        return


@contextmanager
def published_copy(
    url: str,
    public_keys: Sequence[bytes],
    *,
    timeout: float,
    max_bytes: int,
    with_log: bool,
) -> Iterator[Path]:
    """A temporary folder holding what is published beside the snapshot at `url` (see above),
    removed on exit."""
    base = publication_base(url)
    with tempfile.TemporaryDirectory(prefix="compliance-bake-verify-") as temporary:
        folder = Path(temporary)
        _save(folder, layout.API_FILE, fetch_document(url, timeout=timeout, max_bytes=max_bytes))
        envelope = fetch_if_published(
            base + ATTESTATION_FILE, timeout=timeout, max_bytes=MAX_ENVELOPE_BYTES
        )
        names = set(BAKED)
        if envelope is not None:
            _save(folder, ATTESTATION_FILE, envelope)
            names.update(signed_subjects(folder, public_keys))
        for name in sorted(names - {layout.API_FILE}):  # the snapshot: from the URL given
            data = fetch_if_published(base + quote(name), timeout=timeout, max_bytes=max_bytes)
            if data is not None:
                _save(folder, name, data)
        if with_log:
            for name in OUT_FILES:
                proof = fetch_if_published(base + name, timeout=timeout, max_bytes=max_bytes)
                if proof is not None:
                    _save(folder, name, proof)
        yield folder


def published(report: VerifyReport, url: str, with_log: bool) -> None:
    """The folder check of a `published_copy`, as a check of `url`: the source shown is the URL,
    what a URL cannot show (the files published beyond those named) is not applied, and a log
    proof not fetched (no --log) is named."""
    report.source, report.source_kind = shown_url(url), "url"
    if UNEXPECTED_FILES in report.applied:
        report.applied.remove(UNEXPECTED_FILES)
        report.not_applied.append(UNEXPECTED_FILES)
    report.notes.append(
        f"fetched from {shown_url(publication_base(url))}: the snapshot, the files a bake writes "
        "beside it, the attestation and every file it names; a URL lists no folder, so files "
        "published beyond them are not seen"
    )
    if not with_log:
        report.notes.append(
            "a log proof published beside the snapshot (log/) is not fetched or checked "
            "without --log DIR|URL"
        )
