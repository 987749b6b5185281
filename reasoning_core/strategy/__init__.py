"""Strategy: how hard to think about a question — quick, deep, clarify or decline.

`StrategySelector` (``selector``) asks the model (``llm_selector``; for a likely quick
question one call that routes and answers, ``route_and_answer``) and falls back
to bilingual rules (``heuristic``, ``heuristic_rules``, ``lexicon``,
``entities``), with a decision cache (``cache``); requests for secrets or the
system prompt (``exfiltration``) are declined by the rules before any model. `Clarifier`
(``clarification``) asks the clarifying questions one at a time and stores them.
"""

from reasoning_core.strategy.clarification import Clarifier
from reasoning_core.strategy.selector import StrategySelector

__all__ = ["Clarifier", "StrategySelector"]
