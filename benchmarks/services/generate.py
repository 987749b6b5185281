"""Write services benchmark cases: the shop graph, one planted fault, one question.

Kinds are taken in turn (`KINDS`); every case depends only on (seed, index).
Services' rates and latencies vary by ±25 % per case, onsets by 25-95 minutes
before the data's end, strengths by 0.8-1.6. A `dependency` case plants a slow
backend in a callee and asks about a caller one or two hops up (where the
callee's latency shows); a `none` case asks about a healthy service, sometimes
while a fault runs elsewhere in the graph (never below it). Harmless deploys
days before the window are scattered over the graph.

Times are relative to the data's end, which is the minute the case runs.

Usage: ``python -m benchmarks.services.generate --out DIR [--seed 1] [--count 28]``
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from benchmarks.services.case import (
    DeploySpec,
    Expected,
    FaultSpec,
    ServicesCase,
    ServiceSpec,
    write_case,
)
from demo.services.graph import FaultKind, ServiceGraph, default_graph

KINDS: tuple[Expected, ...] = (
    "deploy",
    "dependency",
    "surge",
    "cpu",
    "memory",
    "crash_loop",
    "none",
)
DEFAULT_COUNT = 28
DAYS = 8  # a week of baseline, compared a week back, and a margin
#: Caller -> callee pairs (and two-hop chains) where a slow callee shows at the caller.
PROPAGATION = (
    ("frontend", "search"),
    ("frontend", "checkout"),
    ("search", "catalog"),
    ("checkout", "payments"),
    ("checkout", "shipping"),
    ("cart", "inventory"),
    ("shipping", "notifications"),
    ("frontend", "payments"),
    ("frontend", "catalog"),
)

#: Question templates by (symptom, language): what users ask, not translations of each other.
_QUESTIONS: dict[tuple[str, str], list[str]] = {
    ("errors", "en"): [
        "why is {s} returning 5xx?",
        "why are {s} errors up?",
        "{s} is throwing 500s, why?",
        "why does {s} fail requests?",
    ],
    ("errors", "ru"): [
        "почему {s} отдаёт 5xx?",
        "почему выросли ошибки {s}?",
        "почему у сервиса {s} ошибки 500?",
        "почему {s} возвращает 503?",
    ],
    ("latency", "en"): [
        "why is {s} slow?",
        "why is the latency of {s} up?",
        "why is the API of {s} slow?",
        "why are {s} response times up?",
    ],
    ("latency", "ru"): [
        "почему растёт задержка у сервиса {s}?",
        "почему тормозит {s}?",
        "почему медленно отвечает {s}?",
        "почему выросла задержка {s}?",
    ],
}
_SYMPTOM: dict[str, str] = {
    "deploy": "errors",
    "dependency": "latency",
    "surge": "latency",
    "cpu": "latency",
    "memory": "errors",
    "crash_loop": "errors",
}


def generate_cases(out_dir: Path, *, seed: int, count: int = DEFAULT_COUNT) -> list[Path]:
    """Write `count` case directories under `out_dir`; returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range(count):
        kind = KINDS[index % len(KINDS)]
        rng = random.Random(f"services-case:{seed}:{index}")
        case = make_case(kind, rng)
        paths.append(write_case(out_dir / f"{index:03d}-{kind}", case))
    return paths


def make_case(kind: Expected, rng: random.Random) -> ServicesCase:
    graph = default_graph()
    services = [
        ServiceSpec(
            name=s.name,
            rps=round(s.rps * rng.uniform(0.75, 1.25), 2),
            latency=round(s.latency * rng.uniform(0.85, 1.15), 4),
        )
        for s in graph.services
    ]
    onset = rng.randint(25, 95)  # minutes before the data's end
    strength = round(rng.uniform(0.8, 1.6), 2)
    root: str | None = None
    faults: list[FaultSpec] = []
    if kind == "dependency":
        asked, root = rng.choice(PROPAGATION)
        faults.append(
            FaultSpec(kind="dependency", service=root, minutes_before_end=onset, strength=strength)
        )
    elif kind == "none":
        asked = rng.choice(graph.names)
        if rng.random() < 0.5:  # noqa: PLR2004 - trouble elsewhere, not below the asked one
            below = _below(graph, asked)
            elsewhere = [n for n in graph.names if n != asked and n not in below]
            if elsewhere:
                fault: FaultKind = rng.choice(("deploy", "cpu", "crash_loop", "surge"))
                faults.append(
                    FaultSpec(kind=fault, service=rng.choice(elsewhere), minutes_before_end=onset)
                )
    else:
        asked = rng.choice(graph.names)
        faults.append(
            FaultSpec(kind=kind, service=asked, minutes_before_end=onset, strength=strength)
        )
    deploys = [
        DeploySpec(
            service=rng.choice(graph.names),
            hours_before_end=round(rng.uniform(6, 24 * (DAYS - 1)), 2),
            version=f"1.{rng.randint(5, 9)}.{rng.randint(0, 9)}",
        )
        for _ in range(rng.randint(0, 3))
    ]
    symptom = _SYMPTOM.get(kind) or rng.choice(("errors", "latency"))
    language = rng.choice(("en", "ru"))
    question = rng.choice(_QUESTIONS[symptom, language]).format(s=asked)
    return ServicesCase(
        question=question,
        language=language,
        service=asked,
        expected=kind,
        expected_root=root,
        seed=rng.randrange(1, 1_000_000),
        days=DAYS,
        services=services,
        edges=list(graph.edges),
        faults=faults,
        deploys=deploys,
    )


def _below(graph: ServiceGraph, name: str) -> set[str]:
    """Every service `name` calls, directly or further down."""
    found: set[str] = set()
    frontier = [name]
    while frontier:
        callees = [c for n in frontier for c in graph.callees(n) if c not in found]
        found.update(callees)
        frontier = callees
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT)
    args = parser.parse_args()
    for path in generate_cases(args.out, seed=args.seed, count=args.count):
        print(path)


if __name__ == "__main__":
    main()
