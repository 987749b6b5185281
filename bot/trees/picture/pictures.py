"""TreePictures: a tree's picture in SVG or PNG, rendered off the event loop and cached.

The DOT source is built in a worker thread (a 500-node tree takes a moment of
pure Python) and drawn by the `dot` subprocess; at most `max_concurrent` renders
run at once, and the whole render — queueing included — must finish within
`timeout` seconds, or `RenderError` says so and the caller shows the text view.
Pictures are cached per tree version: the key is a digest of the whole tree,
so any change to a node, the status or the synthesis draws a new picture.
"""

from __future__ import annotations

import asyncio
import hashlib
import struct

from bot.trees.picture.cache import RenderCache
from bot.trees.picture.dot_runner import PNG_DPI, PictureFormat, RenderError, find_dot, run_dot
from bot.trees.picture.dot_source import tree_to_dot
from reasoning_core import Tree, TreeError

__all__ = ["PictureFormat", "RenderError", "TreePictures", "fits_telegram_photo", "png_size"]

#: Telegram's limits for sendPhoto: 10 MB, width + height <= 10000, aspect ratio <= 20.
PHOTO_MAX_BYTES = 10 * 1024 * 1024
PHOTO_MAX_SIDES = 10_000
PHOTO_MAX_RATIO = 20
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def tree_version(tree: Tree) -> str:
    """A digest of everything the picture shows: changes whenever the tree does."""
    return hashlib.sha256(tree.model_dump_json().encode("utf-8")).hexdigest()


def png_size(png: bytes) -> tuple[int, int]:
    """(width, height) from the PNG header; ValueError if `png` is not a PNG."""
    if len(png) < 24 or not png.startswith(_PNG_SIGNATURE) or png[12:16] != b"IHDR":  # noqa: PLR2004
        raise ValueError("not a PNG image")
    width, height = struct.unpack(">II", png[16:24])
    return int(width), int(height)


def fits_telegram_photo(png: bytes) -> bool:
    """Would Telegram take this PNG as a photo (else it goes as a document)?"""
    width, height = png_size(png)
    small, large = sorted((width, height))
    return (
        len(png) <= PHOTO_MAX_BYTES
        and width + height <= PHOTO_MAX_SIDES
        and small > 0
        and large / small <= PHOTO_MAX_RATIO
    )


class TreePictures:
    """Renders and caches tree pictures; `available` says whether Graphviz is installed."""

    def __init__(
        self,
        *,
        timeout: float = 4.0,
        max_concurrent: int = 2,
        cache_size: int = 64,
        program: str = "dot",
        png_dpi: int = PNG_DPI,
    ) -> None:
        self.timeout = timeout
        self._program = program
        self._png_dpi = png_dpi
        self._slots = asyncio.Semaphore(max_concurrent)
        self._cache = RenderCache(cache_size)
        #: Renders actually run (not served from the cache): tests and benchmarks read it.
        self.renders = 0

    @property
    def available(self) -> bool:
        return find_dot(self._program) is not None

    async def render(
        self, tree: Tree, fmt: PictureFormat, *, language: str = "en", links: bool = False
    ) -> bytes:
        """The picture of `tree`; RenderError if Graphviz is missing, fails or is too slow."""
        key = (tree.id, tree_version(tree), fmt, language, links)
        try:
            async with asyncio.timeout(self.timeout):
                return await self._cache.get_or_make(
                    key, lambda: self._draw(tree, fmt, language=language, links=links)
                )
        except TimeoutError:
            raise RenderError(f"the picture took longer than {self.timeout:g} s") from None

    async def _draw(self, tree: Tree, fmt: PictureFormat, *, language: str, links: bool) -> bytes:
        try:
            source = await asyncio.to_thread(tree_to_dot, tree, language=language, links=links)
        except TreeError as e:  # e.g. a stored tree without its root
            raise RenderError(f"the tree cannot be drawn: {e}") from e
        async with self._slots:
            self.renders += 1
            return await run_dot(
                source, fmt, timeout=self.timeout, program=self._program, dpi=self._png_dpi
            )
