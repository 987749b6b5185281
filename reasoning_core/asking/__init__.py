"""Asking: a question or an alert turned into an answer, one unit per concept.

- ``asker``          `Asker`: a question -> a decision -> an answer (clarifications
                     included), the question parsed once and the parse passed along;
- ``investigation``  `AlertInvestigator`: an alert's `Investigation` (goal, parameters,
                     runbook, onset as data) on the deep path, or a scan around it;
- ``condition``      `ConditionReader`: the alert's own condition re-read (holding since
                     when, or resolved), the report's symptom line;
- ``enrichment``     `AnswerEnricher`: what changed and what the logs say, added to a report;
- ``details``        which details to ask for (a runbook's missing parameters);
- ``outcome``        how every path ends (the decision's label, usage, uncertainty);
- ``names``          the data's known names and those a question links.

`reasoning_core.service.ReasoningService` composes them; nothing here imports it.
"""

from reasoning_core.asking.asker import Asker
from reasoning_core.asking.enrichment import AnswerEnricher
from reasoning_core.asking.investigation import AlertInvestigator, Investigation

__all__ = ["AlertInvestigator", "AnswerEnricher", "Asker", "Investigation"]
