"""Finding what a question names to look at: cells, services, hosts, metrics, URLs, IPs.

A diagnostic question with such an entity can be investigated at once (`deep`);
without one the bot has to ask (`clarify`). Patterns describe the shapes of names
(``db-01``, ``web-3.prod``, ``cs_traffic``, ``cell 12345``), not particular names,
plus a short list of well-known infrastructure components.
"""

from __future__ import annotations

import re


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_URL = re.compile(r"https?://[^\s\"'<>)]+")
_IP = re.compile(r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?(?![\w.])")
#: A labelled id: "cell 12345", "сота №40211", "бс 3021", "cells 12345 and ...".
_LABELLED_ID = re.compile(
    r"(?<![\w-])(?:cells?|cell ?id|cellname|сот\w*|бс|bs|base stations?|sites?|сайт\w*"
    r"|e?nodeb|gnodeb|станци\w*|ids?)\s*(?:№|#|id|номер|no\.?)?\s*[a-zа-я]{0,4}[-_]?\d{3,}"
)
#: A bare long number that is not a year: "traffic on 40211 dropped".
_BARE_ID = re.compile(r"(?<![\w.:/%-])(?!(?:19|20)\d\d(?![\d]))\d{4,}(?![\w.:%-])")
#: Shapes of machine names: payments-api, db-01, web-3.prod, cs_traffic, node14.
_IDENTIFIER = re.compile(
    r"(?<![\w-])(?:[a-z][a-z0-9]*(?:[-_.][a-z0-9]+)+|[a-z]{2,}\d+[a-z0-9]*)(?![\w-])"
)
_NOT_NAMES = _word_set(
    "e-mail log-in sign-in sign-up set-up follow-up real-time built-in up-to-date "
    "time-out x-ray wi-fi t-shirt step-by-step end-to-end how-to i.e e.g e2e ipv4 "
    "ipv6 utf8 http2 mp3 top10 a-z etc re-run one-off on-call ad-hoc so-so"
)
#: Metrics that identify what to look at on their own ("p95", "cpu", "rtwp").
_METRIC = re.compile(
    r"(?<![\w-])(?:p\d{2,3}(?:\.\d)?|cpu|rtwp|iops|heap|rps|qps|swap|inodes?|ram)(?![\w-])"
)
#: Well-known components and typical service names.
_KNOWN = re.compile(
    r"(?<![\w-])(?:postgres(?:ql)?|mysql|redis|kafka|rabbitmq|nginx|haproxy|envoy|clickhouse"
    r"|elasticsearch|opensearch|mongo(?:db)?|cassandra|memcached|etcd|consul|zookeeper"
    r"|kubernetes|k8s|prometheus|grafana|s3|cdn|dns|ldap|vpn|sso|jenkins|gitlab|celery"
    r"|airflow|spark|vault|traefik|istio|cloudflare|checkout|payments?|billing|auth"
    r"|authentication|authorization|login|signup|search|cart|catalog|inventory|shipping"
    r"|notifications?|gateway)(?![\w-])"
)
#: "<name> service", "<name> cluster": a qualifier that is a name, not "the" or "prod".
_NAMED_COMPONENT = re.compile(
    r"(?<![\w-])([a-z][a-z0-9]+) (?:service|api|microservice|cluster|database|db|queue|app"
    r"|server|job|pipeline|endpoint|topic|bucket|worker|pod)s?(?![\w-])"
)
_GENERIC_QUALIFIERS = _word_set(
    "the a an our my your their this that these those whole entire main production "
    "prod staging same other new old web every each any some its his her backend "
    "frontend internal external public private primary local remote which what all "
    "one two is was why and or of on in at to for from with no mobile"
)
#: Russian: "сервис авторизации", "кластер биллинга", "сервере web-3".
_RU_NAMED_COMPONENT = re.compile(
    r"(?<![\w-])(?:(?:сервис|кластер|очеред|баз[аеыу]|приложени|модул|хост|сервер)\w*"
    r"|под(?:а|ы|ов|ом|е|у)?)\s+([a-z][\w.-]*|[а-я]+(?:ии|ия|ки|ти|ты|ов|ей|ы|а|и))(?![\w-])"
)
_RU_STOP = _word_set(
    "снова опять сейчас тоже вообще совсем почему уже когда она они оно его ее их "
    "была были сегодня вчера утра вечера ночи данных тормози лежи вроде как там тут и "
    "а или да ли бы все всё нашей нашего наши нормально долго плохо медленно "
    "перестали перестала перестал"
)
_QUOTED = re.compile(r"[\"«“']([^\"»”'\s][^\"»”']{0,40})[\"»”']")


def find_entities(folded: str) -> list[str]:
    """Names of things to look at in a folded question, in order of appearance, unique."""
    found: list[tuple[int, str]] = []
    for pattern in (_URL, _IP, _LABELLED_ID, _BARE_ID, _METRIC, _KNOWN, _QUOTED):
        found.extend((m.start(), m.group(0).strip("\"«»“”'")) for m in pattern.finditer(folded))
    for m in _IDENTIFIER.finditer(folded):
        if m.group(0) not in _NOT_NAMES:
            found.append((m.start(), m.group(0)))
    for m in _NAMED_COMPONENT.finditer(folded):
        if m.group(1) not in _GENERIC_QUALIFIERS:
            found.append((m.start(), m.group(0)))
    for m in _RU_NAMED_COMPONENT.finditer(folded):
        if m.group(1) not in _RU_STOP:
            found.append((m.start(), m.group(0)))
    return _unique_outer(found)


def _unique_outer(found: list[tuple[int, str]]) -> list[str]:
    """Drop duplicates and names contained in a longer name found at the same place."""
    result: list[str] = []
    for _, name in sorted(found, key=lambda item: (item[0], -len(item[1]))):
        if not any(name in kept for kept in result):
            result.append(name)
    return result


def is_other_system(name: str) -> bool:
    """Is a shape-found name another system (Kafka, Redis, a URL, an address): a question
    about it is about that, not about the whole system the data has?"""
    return any(p.fullmatch(name) for p in (_KNOWN, _URL, _IP))
