"""The analysis page: `/t/{token}` on the ops server, with the report, the tree and its evidence.

`TreeLinks` makes, opens and revokes the capability links (token hashes in
PostgreSQL through the `TreeLinkStore` port); `page` renders the HTML;
`AnalysisPages` serves it.
"""

from bot.trees.page.links import TreeLinks
from bot.trees.page.server import AnalysisPages

__all__ = ["AnalysisPages", "TreeLinks"]
