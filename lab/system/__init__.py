"""The system lab of issue 55: whytree measured where the field measures itself.

Two things so far. The field's baselines run beside whytree: RCAEval's own BARO and N-Sigma
(`rcaeval` from PyPI, in an environment of their own, `.venv-peers`), given the lab's
Prometheus data exported in their input format and the true injection time, and scored as
whytree is, by service (AC@1, AC@3, Avg@5): `whytree bench live --peers`. And the shop of
eight services in Online Boutique's shape behind nginx, with Redis and PostgreSQL, each
exporting its requests and calls in Istio's names, with its own alert rules, Alertmanager,
process and blackbox exporters and log sources: `whytree lab up --system`; faults of kind ×
target on any of its services, and `whytree bench live --system`.

One concept per module: `parts` (the lab's parts as services: which labels name a series'
service, which service a fault's component is, how a report names each), `export` (a
Prometheus window as RCAEval's frame: `time` and one column per `<service>_<metric>`),
`peers` (the peers' environment and running them on a frame), `run_peers` (the script
that runs inside that environment: RCAEval's protocol around its own methods), `scoring`
(the ranks of a whytree report by service, and AC@k / Avg@5 over windows), `beside` (the
peers on every window of `bench live --peers`); `topology` (the shop as data), `mesh`
(Istio's request metrics), `service` (the program each service runs), `control` (a
service's fault switch), `rules` (the system lab's alert rules), `system_lab` (the shop's
parts put together: up, its cgroups, down); `kinds` (the fault kinds as data), `chaos` (a
fault's control file held on its target), `fill` (the disk fault's filler), `draw` (which
faults a bench runs), `bench` (`bench live --system`).
"""
