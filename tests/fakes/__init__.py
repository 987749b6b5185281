"""Test-only doubles (an in-memory tree store, a scripted chat model, a stoppable proxy in
front of PostgreSQL, a scripted Prometheus API). The fake servers `whytree bench` also
drives are product code: `fake_servers/`, and the harness in `benchmarks/harness/`."""
