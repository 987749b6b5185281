"""The reasoning tree as a picture: Graphviz DOT source, SVG and PNG, cached per tree version.

Presentation only: it reads a `Tree` and never changes it. `TreePictures` is the
entry point (render with a timeout, cache, fall back when Graphviz is missing or
fails); `dot_source` builds the DOT text, `dot_runner` runs the `dot` program.
"""

from bot.trees.picture.dot_runner import RenderError
from bot.trees.picture.pictures import PictureFormat, TreePictures, fits_telegram_photo

__all__ = ["PictureFormat", "RenderError", "TreePictures", "fits_telegram_photo"]
