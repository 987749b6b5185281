"""A fake OpenAI-compatible server (`server`) and the replies a script queues (`replies`)."""
