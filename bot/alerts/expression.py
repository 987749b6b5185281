"""What an alert's rule reads: its PromQL expression, parsed, as metric names and matchers.

The expression comes from the alert's ``generatorURL`` (Prometheus writes the rule's
expression into it as ``g0.expr=``) or, when that is missing, cut or another tool's, from
Prometheus's rules (bot/alerts/rules.py). It is parsed with promql-parser (the Rust
parser Prometheus-compatible tools share), never with regular expressions: the names
are those of the vector selectors of the syntax tree, whatever functions, aggregations
or binary operators surround them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

import promql_parser

#: The longest expression read (a rule's expression is a few hundred characters).
MAX_EXPRESSION = 16_384


class ExpressionError(ValueError):
    """The text is not a PromQL expression; the message says why."""


@dataclass(frozen=True, slots=True)
class Matcher:
    """One label matcher of a selector: ``name op "value"`` (op: ``=``, ``!=``, ``=~``, ``!~``)."""

    label: str
    op: str
    value: str


@dataclass(frozen=True, slots=True)
class Reads:
    """What an expression reads: the metric names of its selectors and their label matchers."""

    expression: str
    metrics: frozenset[str]
    matchers: tuple[Matcher, ...] = field(default=())
    #: The labels the expression's result keeps (an aggregation's ``by``), None when its
    #: series' own labels pass through (whatever labels they carry).
    kept: frozenset[str] | None = None
    #: Its vector selectors as the parser renders them (label values escaped), each once:
    #: what a look-up of the alert's own series reads (bot/alerts/lookup.py).
    selectors: tuple[str, ...] = ()


_OPS = (
    (promql_parser.MatchOp.Equal, "="),
    (promql_parser.MatchOp.NotEqual, "!="),
    (promql_parser.MatchOp.Re, "=~"),
    (promql_parser.MatchOp.NotRe, "!~"),
)


def _op(op: promql_parser.MatchOp) -> str:
    return next((text for known, text in _OPS if op == known), "=")


def from_generator_url(url: str) -> str | None:
    """The expression Prometheus put in an alert's ``generatorURL`` (``g0.expr``), or None
    when the URL is empty, not a URL, or carries none (another tool's link)."""
    if not url:
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    values = parse_qs(parts.query).get("g0.expr")
    if not values or not values[0].strip():
        return None
    return values[0]


def parse_expression(text: str) -> Reads:
    """The metrics and matchers `text` reads; `ExpressionError` when it does not parse."""
    if len(text) > MAX_EXPRESSION:
        raise ExpressionError(f"longer than {MAX_EXPRESSION} characters")
    try:
        tree = promql_parser.parse(text)
    except ValueError as e:
        raise ExpressionError(str(e) or "not PromQL") from e
    metrics: set[str] = set()
    matchers: list[Matcher] = []
    selectors: dict[str, None] = {}

    def visit(node: promql_parser.Expr) -> None:
        if not isinstance(node, promql_parser.VectorSelector):
            return
        selectors[node.prettify()] = None
        for m in node.matchers.matchers:
            if m.name == "__name__" and m.op == promql_parser.MatchOp.Equal:
                metrics.add(m.value)
                continue
            matchers.append(Matcher(label=m.name, op=_op(m.op), value=m.value))
        if node.name:
            metrics.add(node.name)

    promql_parser.walk(tree, visit)
    return Reads(
        expression=text,
        metrics=frozenset(metrics),
        matchers=tuple(matchers),
        kept=_kept(tree),
        selectors=tuple(selectors),
    )


#: Aggregations whose result keeps the labels of the series they pick.
_PICKING = {"topk", "bottomk", "limitk", "limit_ratio"}
#: Functions whose result has no labels.
_LABELLESS = {"vector", "time", "scalar", "pi"}


def _kept(node: object) -> frozenset[str] | None:
    """The labels of the expression's result: None = its series' own labels (all of them)."""
    p = promql_parser
    if isinstance(node, (p.NumberLiteral, p.StringLiteral)):
        return frozenset()
    if isinstance(node, (p.ParenExpr, p.UnaryExpr, p.SubqueryExpr)):
        return _kept(node.expr)
    if isinstance(node, p.AggregateExpr):
        return _kept_aggregate(node)
    if isinstance(node, p.BinaryExpr):
        return _kept_binary(node)
    if isinstance(node, p.Call):
        return _kept_call(node)
    return None  # a selector: its series' labels


def _kept_aggregate(node: promql_parser.AggregateExpr) -> frozenset[str] | None:
    inner = _kept(node.expr)
    if str(node.op) in _PICKING:
        return inner
    if node.modifier is None:
        return frozenset()
    labels = frozenset(node.modifier.labels)
    if node.modifier.type == promql_parser.AggModifierType.By:
        return labels
    return None if inner is None else inner - labels


def _kept_binary(node: promql_parser.BinaryExpr) -> frozenset[str] | None:
    p = promql_parser
    lhs, rhs = _kept(node.lhs), _kept(node.rhs)
    side = rhs if isinstance(node.lhs, p.NumberLiteral) else lhs
    modifier = node.modifier
    if modifier is None:
        return side
    if modifier.card == p.VectorMatchCardinality.OneToMany:
        side = rhs
    extra = frozenset(modifier.group_labels or ())
    return None if side is None else side | extra


def _kept_call(node: promql_parser.Call) -> frozenset[str] | None:
    name = node.func.name
    if name in _LABELLESS:
        return frozenset()
    literals = (promql_parser.NumberLiteral, promql_parser.StringLiteral)
    vectors = [
        a for a in node.args if isinstance(a, promql_parser.Expr) and not isinstance(a, literals)
    ]
    inner = _kept(vectors[0]) if vectors else frozenset()
    if name == "histogram_quantile" and inner is not None:
        return inner - {"le"}
    if name in ("label_replace", "label_join") and len(node.args) > 1 and inner is not None:
        target = node.args[1]
        if isinstance(target, promql_parser.StringLiteral):
            return inner | {target.val}
    if name == "absent" and vectors and isinstance(vectors[0], promql_parser.VectorSelector):
        return frozenset(
            m.name
            for m in vectors[0].matchers.matchers
            if m.op == promql_parser.MatchOp.Equal and m.name != "__name__"
        )
    return inner
