"""A reasoning tree for people to look at, apart from Telegram: `picture/` (Graphviz DOT,
SVG, PNG, cached), `page/` (the analysis page and its capability links) and `export`
(any rendering as bytes, for `whytree tree`). Telegram's picture reply is
bot/telegram/replies/tree_photo.py.
"""
