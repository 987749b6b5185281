"""Running whytree against the fake servers, for benchmarks and the tests.

`polling_bot`: the real bot in this process, polling a fake Telegram server;
`bot_process`: `whytree run` as a subprocess (kill -9 and restart);
`llm_routes`: scripts for the fake OpenAI server that tell whytree's prompts apart;
`adversaries`: scripted models that answer in perfect form and wrong substance.
"""
