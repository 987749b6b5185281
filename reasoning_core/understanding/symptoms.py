"""Symptoms said in any form: error codes, pasted log lines and alert names read as the words
they mean ("ENOSPC" -> "no space left, disk full", "FATAL: sorry, too many clients already"
-> "too many connections", "HostOomKillDetected" -> "host oom kill detected").

An on-call engineer pastes what the tool printed rather than describing it; an error code
is a symptom, never a name (the service "ENOSPC"). `split_alert_names` runs on the text as
typed (it reads letter case), `gloss` on the folded text: each code or phrase gets the
words of incident questions the rules and the runbooks' keywords read beside it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from reasoning_core.understanding.lexicon import words

# fmt: off
#: (what a tool prints, the words it means). Kept to codes and messages of the standard
#: tools (errno names, HTTP gateways, PostgreSQL's FATALs, the kernel's OOM killer).
GLOSSES: tuple[tuple[re.Pattern[str], str], ...] = (
    (words(r"enospc", r"no space left(?: on (?:the )?device)?", r"errno 28", r"edquot",
           r"disk quota exceeded", r"could not extend file", r"write failed"),
     "no space left on disk, disk full"),
    (words(r"df(?: -h)?", r"du(?: -sh)?"), "df (disk space)"),
    (words(r"emfile", r"enfile", r"too many open files", r"errno 24"),
     "too many open files"),
    (words(r"oom-?kill(?:ed|er|s)?", r"out of memory", r"killed process(?: \d+)?", r"enomem",
           r"cannot allocate memory", r"memoryerror", r"oom_kill", r"exit code 137"),
     "oom killed, out of memory"),
    (words(r"econnrefused", r"connection refused", r"errno 111", r"failed to connect"),
     "target down, not answering"),
    (words(r"econnreset", r"connection reset(?: by peer)?", r"broken pipe"),
     "connection reset errors"),
    (words(r"etimedout", r"gateway time-?out", r"504s?", r"context deadline exceeded",
           r"read timed out"),
     "timeouts, latency"),
    (words(r"bad gateway", r"502s?", r"503s?", r"service unavailable"),
     "5xx errors"),
    # an HTTP status's own words: "Internal Server Error" names no server; the status said
    # as Russian on-call slang says it ("пятисотки", "сыпет пятисотыми")
    (words(r"internal server error", r"пятисот\w*", r"пятьсот(?:ые|ых|ая|ой)?"), "5xx errors"),
    (words(r"sorry,? too many clients(?: already)?", r"too many clients",
           r"remaining connection slots are reserved", r"connection slots"),
     "too many connections"),
    (words(r"deadlock detected", r"lock timeout", r"lock wait(?: timeout)?(?: exceeded)?",
           r"canceling statement due to lock timeout", r"lock_timeout"),
     "lock wait"),
    (words(r"integer out of range", r"numeric value out of range", r"value too long"),
     "database error"),
    # a version said for the release it names ("broken since v2 went out")
    (words(r"v\d+(?:\.\d+){0,2}"), "a new release, deploy"),
)
# fmt: on

#: An alert name as Prometheus rules spell it: two capitalised words or more run together
#: ("TargetDown", "HostOomKillDetected", "OOMKilled", "NodeHighCPU": an acronym last after
#: two words, not "PostgreSQL"), letters and digits only.
_CAMEL = re.compile(
    r"(?<![\w.\-/])(?:(?=[A-Za-z0-9]*(?:[a-z][A-Z]|[A-Z][A-Z][a-z]{2}))[A-Z][A-Za-z0-9]*[a-z0-9]"
    r"|(?:[A-Z][a-z0-9]+){2,}[A-Z]{2,})(?![\w.\-/])"
)
_CAMEL_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def split_alert_names(text: str, *, keep: Callable[[str], bool] = lambda _: False) -> str:
    """`text` with alert-shaped names split into their words; a name `keep` says the data
    has (a service "MyShop") stays whole."""

    def split(m: re.Match[str]) -> str:
        name = m.group(0)
        return name if keep(name) else " ".join(_CAMEL_PART.findall(name))

    return _CAMEL.sub(split, text)


def gloss(folded: str) -> str:
    """`folded` with the words each pasted code or message means put after it."""
    for pattern, meaning in GLOSSES:
        folded = pattern.sub(rf"\g<0> ({meaning})", folded)
    return folded


def glossed_codes(folded: str) -> set[str]:
    """The codes and messages of `folded` that are symptoms: never names."""
    return {m.group(0) for pattern, _ in GLOSSES for m in pattern.finditer(folded)}


def symptom_spans(folded: str) -> list[tuple[int, int]]:
    """Where `folded` (glossed) holds a pasted code or message and its gloss: no token in
    one is a name ("killed process 4242": a pid, not the process group 4242)."""
    spans = []
    for pattern, meaning in GLOSSES:
        for m in pattern.finditer(folded):
            glossed = f" ({meaning})"
            end = m.end() + len(glossed) if folded.startswith(glossed, m.end()) else m.end()
            spans.append((m.start(), end))
    return spans
