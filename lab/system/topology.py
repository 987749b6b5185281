"""The system lab's shop, in Online Boutique's shape, as data: its services, the routes each
answers, the calls each route makes (in order) and the store it reads.

    nginx -> front -> catalog (PostgreSQL)
                   -> recommend -> catalog
                   -> cart (Redis)
                   -> checkout -> cart, stock (PostgreSQL), payment, shipping
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Call:
    service: str
    path: str


@dataclass(frozen=True)
class Service:
    name: str
    #: path -> the calls that route makes, in order
    routes: Mapping[str, tuple[Call, ...]]
    #: "postgres", "redis" or None: what the service's own work reads or writes
    store: str | None = None
    #: its own work on every request, in ms of CPU (payment's and shipping's arithmetic)
    work_ms: float = 0.0
    calls: tuple[str, ...] = field(default=())


def _service(
    name: str, routes: Mapping[str, tuple[Call, ...]], store: str | None = None, work_ms: float = 0
) -> Service:
    callees = tuple(dict.fromkeys(c.service for calls in routes.values() for c in calls))
    return Service(name, routes, store, work_ms, callees)


SHOP: tuple[Service, ...] = (
    _service(
        "front",
        {
            "/items": (Call("catalog", "/products"), Call("recommend", "/")),
            "/cart": (Call("cart", "/"),),
            "/checkout": (Call("checkout", "/"),),
        },
    ),
    _service("catalog", {"/products": ()}, store="postgres"),
    _service("recommend", {"/": (Call("catalog", "/products"),)}),
    _service("cart", {"/": ()}, store="redis"),
    _service(
        "checkout",
        {
            "/": (
                Call("cart", "/"),
                Call("stock", "/reserve"),
                Call("payment", "/charge"),
                Call("shipping", "/quote"),
            )
        },
    ),
    _service("stock", {"/reserve": ()}, store="postgres"),
    _service("payment", {"/charge": ()}, work_ms=2.0),
    _service("shipping", {"/quote": ()}, work_ms=1.0),
)
NAMES = tuple(s.name for s in SHOP)


def by_name(name: str) -> Service:
    for service in SHOP:
        if service.name == name:
            return service
    raise KeyError(name)
