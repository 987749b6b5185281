"""The catalogues against the code: every text the code says is translated, every
catalogue compiles and matches its committed .mo, plural forms follow the language's
rules, and a language without a catalogue gets English.

The texts are extracted with Babel's own API and the keywords of `make i18n` (read from
the Makefile, so the test and the target cannot disagree on what a text is).
"""

from __future__ import annotations

import gettext as stdlib_gettext
import io
import re
from pathlib import Path
from typing import Any

import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_keywords
from babel.messages.mofile import read_mo, write_mo
from babel.messages.pofile import read_po

from reasoning_core.i18n import DOMAIN, LOCALES_DIR, gettext, ngettext, translator

REPO = Path(__file__).resolve().parents[3]
SOURCES = ("bot", "reasoning_core", "demo", "benchmarks")
LANGUAGES = sorted(p.name for p in LOCALES_DIR.iterdir() if (p / "LC_MESSAGES").is_dir())
#: A message of a catalogue: (context, msgid), the msgid a tuple for plural messages.
Key = tuple[str | None, str | tuple[str, ...]]


def _keywords() -> dict[str, Any]:
    match = re.search(r"^I18N_KEYWORDS\s*:=(.*)$", (REPO / "Makefile").read_text(), re.M)
    assert match, "the Makefile's I18N_KEYWORDS"
    return dict(parse_keywords(re.findall(r"-k\s+(\S+)", match.group(1))))


def _used() -> dict[Key, str]:
    """Every message the sources use -> where (the first place it is used)."""
    found: dict[Key, str] = {}
    keywords = _keywords()
    for source in SOURCES:
        for filename, lineno, message, _comments, context in extract_from_dir(
            REPO / source,
            keywords=keywords,
        ):
            key: Key = (context, message if isinstance(message, str) else tuple(message))
            found.setdefault(key, f"{source}/{filename}:{lineno}")
    return found


def _po(language: str) -> Catalog:
    with (LOCALES_DIR / language / "LC_MESSAGES" / f"{DOMAIN}.po").open("rb") as f:
        return read_po(f, locale=language)


def _translations(catalog: Catalog) -> dict[Key, object]:
    return {
        (m.context, m.id if isinstance(m.id, str) else tuple(m.id)): m.string
        for m in catalog
        if m.id
    }


def test_there_is_a_russian_catalogue() -> None:
    assert "ru" in LANGUAGES


def test_the_sources_use_texts() -> None:
    used = _used()
    assert len(used) > 200
    assert (None, "Evidence") in used


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_text_the_code_uses_is_translated(language: str) -> None:
    catalog = _po(language)
    problems = []
    for key, where in sorted(_used().items(), key=lambda item: item[1]):
        context, msgid = key
        singular = msgid if isinstance(msgid, str) else msgid[0]
        message = catalog.get(singular, context=context)
        if message is None:
            problems.append(f"{where}: no entry for {singular!r}")
        elif message.fuzzy:
            problems.append(f"{where}: the translation of {singular!r} is fuzzy")
        elif isinstance(message.string, str):
            if not message.string.strip():
                problems.append(f"{where}: no translation of {singular!r}")
        elif len(forms := message.string or ()) != catalog.num_plurals or not all(
            form.strip() for form in forms
        ):
            problems.append(f"{where}: a plural form of {singular!r} is missing")
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_catalogue_compiles_and_matches_its_mo(language: str) -> None:
    catalog = _po(language)
    errors = [(m.id, e) for m, errs in catalog.check() for e in errs]
    assert errors == []
    compiled = io.BytesIO()
    write_mo(compiled, catalog)
    compiled.seek(0)
    committed = LOCALES_DIR / language / "LC_MESSAGES" / f"{DOMAIN}.mo"
    with committed.open("rb") as f:
        assert _translations(read_mo(f)) == _translations(read_mo(compiled)), (
            f"{committed.name} is out of date: run `make i18n`"
        )


def test_russian_has_three_plural_forms() -> None:
    catalog = _po("ru")
    assert catalog.num_plurals == 3
    plural = stdlib_gettext.c2py(catalog.plural_expr)
    assert [plural(n) for n in (1, 2, 5, 11, 12, 21, 22, 25, 101)] == [0, 1, 2, 2, 2, 0, 1, 2, 0]


def test_russian_plural_forms_are_picked_by_number() -> None:
    singular = (
        "⏳ You already have {limit} deep analysis running (the limit per user). "
        "You can start another one as soon as it finishes."
    )
    plural = singular.replace("deep analysis running", "deep analyses running")
    one, few, many = (ngettext("ru", singular, plural, n) for n in (1, 2, 5))
    assert "идёт глубокий анализ" in one
    assert "идут глубокие анализы" in few
    assert ngettext("ru", singular, plural, 21) == one
    assert many == few  # this message says "several" alike for 2-4 and 5+
    assert ngettext("en", singular, plural, 1) == singular
    assert ngettext("en", singular, plural, 2) == plural


def test_an_unknown_language_falls_back_to_english() -> None:
    assert gettext("ru", "Evidence") == "Данные"
    assert gettext("de", "Evidence") == "Evidence"
    assert gettext("", "Evidence") == "Evidence"
    assert gettext("ru", "a text no catalogue has") == "a text no catalogue has"
    assert ngettext("de", "{n} check", "{n} checks", 1) == "{n} check"
    assert ngettext("de", "{n} check", "{n} checks", 5) == "{n} checks"
    assert type(translator("de")) is stdlib_gettext.NullTranslations
