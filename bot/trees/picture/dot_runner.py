"""Running Graphviz's `dot` program: DOT source in, SVG or PNG bytes out.

`dot` runs as an asyncio subprocess (the event loop never waits on it) with a
timeout; a run past it is killed. We call the program directly rather than
through the `graphviz` PyPI package: that package only builds DOT text (we
build ours, with our own escaping) and runs `dot` synchronously without a
kill-on-timeout, which is exactly the part we need to control here.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from typing import Literal

PictureFormat = Literal["svg", "png"]
#: Pixels per inch of PNGs: a bit sharper than Graphviz's 96 for phone screens.
PNG_DPI = 110


class RenderError(Exception):
    """Graphviz is missing, failed, or took too long; the message says which."""


def find_dot(program: str = "dot") -> str | None:
    """The path of the `dot` program, or None when Graphviz is not installed."""
    return shutil.which(program)


async def run_dot(
    source: str,
    fmt: PictureFormat,
    *,
    timeout: float,  # noqa: ASYNC109 - the kill deadline of the subprocess
    program: str = "dot",
    dpi: int = PNG_DPI,
) -> bytes:
    """The picture of `source` in `fmt`; RenderError when it cannot be made in time."""
    path = find_dot(program)
    if path is None:
        raise RenderError(f"Graphviz is not installed ({program!r} not found)")
    args = [path, f"-T{fmt}", "-Gcharset=UTF-8"]
    if fmt == "png":
        args.append(f"-Gdpi={dpi}")
    process = await asyncio.create_subprocess_exec(
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        async with asyncio.timeout(timeout):
            out, err = await process.communicate(source.encode("utf-8"))
    except TimeoutError:
        raise RenderError(f"Graphviz took longer than {timeout:g} s") from None
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
    if process.returncode != 0 or not out:
        message = err.decode("utf-8", "replace").strip().splitlines()
        detail = message[-1] if message else f"exit status {process.returncode}"
        raise RenderError(f"Graphviz failed: {detail[:300]}")
    return out
