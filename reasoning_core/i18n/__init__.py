"""Translation: one gettext catalogue per language, English as the message ids.

Owns the catalogues (``locales/<lang>/LC_MESSAGES/whytree.po`` and the compiled
``.mo`` beside it) and the small API the core words its texts with. Core functions
already receive the language, so it is passed in explicitly rather than read from a
context: ``gettext("ru", "Evidence")``, ``ngettext("ru", "{n} check", "{n} checks", n)``.
A table keyed by reason marks its texts with ``N_()`` so Babel extracts them, and
translates them where they are shown. The bot's aiogram ``I18n`` reads the same
catalogues through `LOCALES_DIR` and `DOMAIN`. docs/languages.md says how to add a
language.
"""

from reasoning_core.i18n.catalogue import (
    DOMAIN,
    LOCALES_DIR,
    N_,
    gettext,
    ngettext,
    pgettext,
    translator,
)

__all__ = ["DOMAIN", "LOCALES_DIR", "N_", "gettext", "ngettext", "pgettext", "translator"]
