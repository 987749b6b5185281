"""The system lab of issue 55: whytree measured where the field measures itself.

What this package owns today is the field's baselines run beside whytree: RCAEval's own
BARO and N-Sigma (`rcaeval` from PyPI, in an environment of their own, `.venv-peers`),
given the lab's Prometheus data exported in their input format and the true injection time,
and scored as whytree is, by service (AC@1, AC@3, Avg@5). `whytree bench live --peers`
runs them on every fault window of the live lab.

One concept per module: `parts` (the lab's parts as services: which labels name a series'
service, which service a fault's component is, how a report names each), `export` (a
Prometheus window as RCAEval's frame: `time` and one column per `<service>_<metric>`),
`peers` (the peers' environment and running them on a frame), `run_peers` (the script
that runs inside that environment: RCAEval's protocol around its own methods), `scoring`
(the ranks of a whytree report by service, and AC@k / Avg@5 over windows).

The shop of eight services in Online Boutique's shape (`whytree lab up --system`) and its
faults are not built yet (issue 55, items 1-3).
"""
