"""The live lab: real exporters, real alert rules and real faults on this machine's loopback.

`whytree lab up | status | inject FAULT | clear | down` starts Prometheus, Alertmanager,
the node, process, blackbox and postgres exporters (the distribution's packages), a
PostgreSQL (pgserver's binaries), a small web service instrumented with prometheus_client
that calls it through a delaying TCP proxy, and a bounded load generator; Alertmanager
posts to whytree's receiver. Faults are YAML files (`lab/faults/`, docs/lab.md);
`whytree bench live` injects each one and scores whytree's reports.

One concept per module: `processes` (start, record, check and kill process groups),
`config` (every rendered configuration file and the shipped alert rules), `lab` (the lab's
parts put together: up, status, down), `fault` (the fault file format, inject and clear),
`bench` (the live benchmark); `service`, `load`, `proxy`, `pgfault`, `leak` and `keepalive`
are the small programs the lab runs.
"""
