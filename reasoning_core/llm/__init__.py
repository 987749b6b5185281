"""The language model: the `ChatModel` adapter, structured output, and every prompt.

``openai_model`` is the adapter (any OpenAI-compatible server) and, with
``openai_errors`` (what a server's error says), the only code that imports openai;
``structured`` asks for JSON validated by pydantic, with one repair; ``streaming``
hands out a completion's text as it is written; ``observed`` wraps a model so that
each call's usage and failure reach hooks (metrics, billing, benchmarks); ``prompts``
holds every text the core sends to a model. Import the adapter from its module, so
code that needs only prompts or JSON does not load the SDK.
"""
