"""The reasoning core: one question in, a confidence-tagged `Answer` out.

Read it in the order a question travels (docs/architecture.md has the whole map):

- ``service.py``     `ReasoningService`, the entry point: one question -> events -> `Answer`;
- ``asking/``        asking, an alert's investigation, a report's enrichment (the service's units);
- ``models.py``      the contracts every layer shares (`Question`, `StrategyDecision`,
                     `Tree`, `Synthesis`, `Answer`); ``errors.py`` their errors;
- ``events.py``      what the core says while it works: one typed model per event kind;
- ``strategy/``      quick, deep, clarify or decline, and the clarifying questions;
- ``answers/``       how each strategy produces its `Answer` (quick call, deep job, fixed);
- ``explore/``       the explorer growing a hypothesis tree under budgets;
- ``reflection/``    checkpoints that retry checks or revise the plan;
- ``planners/``      the two brains behind the `Planner` port: LLM and runbooks;
- ``runbooks/``      known incident types as YAML, verdict rules, investigation windows;
- ``tree/``          the hypothesis tree: edits, aggregation, synthesis, report;
- ``memory/``        session context, long-term memory, the token budget of a call;
- ``tools/``         read-only data-source tools (HTTP, Prometheus; SQL via a port);
- ``llm/``           the OpenAI-compatible adapter, structured output, prompt texts;
- ``ports/``         the Protocols through which the core reaches the world, and the
                     planning contract.

The core imports neither aiogram nor asyncpg; only the OpenAI adapter
(``llm/openai_model.py``, ``llm/openai_errors.py``) imports openai
(tests/test_import_rules.py enforces both, and that there are no import cycles).
"""
