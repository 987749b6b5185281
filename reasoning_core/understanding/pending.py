"""Does a message answer the pending clarifying question, or is it a request of its own?

A message is taken as the answer when it fits the question: it names a thing of
the kind asked for ("10291" when a cell was asked), a period when a period was
asked, or it is a short fragment (not a greeting or thanks alone), or it points
back at what was named ("why is it dropping", "трафик на ней просел") or says the
symptom or period asked for
("traffic dropped a lot since yesterday") without naming anything itself. A complete
question or request of its own drops the pending clarification and is handled as
new; a request to decline, or a message saying it is about something else ("separate
thing", "другой вопрос", "forget that"), never merges into an earlier goal.
"""

from __future__ import annotations

from reasoning_core.understanding.request import Request

#: What a clarifying question may ask for besides an entity kind.
PERIOD, SUBJECT, SYMPTOM = "period", "subject", "symptom"


def answers_pending(request: Request, asks: str | None) -> bool:
    """True when `request` answers a pending question that asks for `asks`."""
    if request.decline is not None or request.new_topic:
        return False  # "separate thing - ...", "forget that, ...": not about what was asked
    if request.about_earlier or _says_what_was_asked(request, asks):
        return True  # "why is it dropping", "трафик на ней просел": about what was asked
    if _only_social(request):
        return False  # "привет", "thanks!": small talk, not the detail asked for
    if request.complete and request.metrics:
        return False  # "why did traffic go up on cell 10081 yesterday": a question of its own
    named = [m for m in request.mentions if m.kind != "name" or asks == SUBJECT]
    fits = (
        (asks is not None and any(m.kind in (asks, "id") for m in named))
        or (asks == PERIOD and request.dates.start is not None)
        or (asks == SUBJECT and bool(named))
    )
    return fits or not request.complete


def _only_social(request: Request) -> bool:
    """A greeting, thanks or small talk that names, measures and dates nothing."""
    return (
        request.signals.social
        and not request.mentions
        and not request.metrics
        and request.direction is None
        and request.dates.start is None
    )


def _says_what_was_asked(request: Request, asks: str | None) -> bool:
    """A whole sentence that names nothing of its own but says the symptom or the period
    asked for ("traffic dropped a lot since yesterday" to "what is wrong?")."""
    if any(m.kind != "name" for m in request.mentions):
        return False
    if asks == SYMPTOM:
        return bool(request.metrics) or request.direction not in (None, "any")
    return asks == PERIOD and request.dates.start is not None
