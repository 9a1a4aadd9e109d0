"""`serve --log DIR`: the transparency log's files under /log/, read-only, as a static server
would publish them (tlog-tiles is static by design). Only the names tlog-tiles defines are
answered; the checkpoint changes with every append, so it is never cached, and tiles never
change once written. The files are read through inputs/files (`inside=` the log), one
component at a time with no link followed, so a symlink planted in the log folder (to the
signing key, say) is answered 404 rather than published."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import Response

from compliance_bake.inputs.files import LeavesFolder, NotRegular, TooLarge, read_bounded
from compliance_bake.log.source import MAX_FILE_BYTES
from compliance_bake.log.tiles import media_type, published_path


def add_log_route(app: FastAPI, log_dir: Path, not_found: Callable[[], Response]) -> None:
    from starlette.concurrency import run_in_threadpool

    async def log_file(request: Request, path: str) -> Response:
        if request.url.query or not published_path(path):
            return not_found()
        try:
            data = await run_in_threadpool(read_bounded, path, MAX_FILE_BYTES, inside=log_dir)
        except (LeavesFolder, NotRegular, TooLarge, OSError):
            return not_found()
        cache = "no-cache" if path == "checkpoint" else "public, max-age=31536000, immutable"
        return Response(data, media_type=media_type(path), headers={"Cache-Control": cache})

    app.add_api_route(
        "/log/{path:path}",
        log_file,
        methods=["GET"],  # HEAD too: `HeadAsGet` answers it on every GET route
        tags=["log"],
        summary="The transparency log's files (C2SP tlog-tiles)",
        response_class=Response,
    )
