"""One host, one name: how a report or a chart names the machine behind an `instance`.

Every exporter on a machine has its own `instance` ("127.0.0.1:9100" for node_exporter,
"127.0.0.1:9256" for process-exporter), so the instance names the scrape target, not the
host. `host_name` gives the same name to all of them: a `nodename`, `hostname` or `host`
label when the data carries one (node_exporter's `node_uname_info`), else the instance's
host part without the port (`host:port`, `[ipv6]:port`, `http://host:port/path`).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

#: Labels that name the machine itself, in order of preference.
NAME_LABELS = ("nodename", "hostname", "host")


def host_name(instance: str, labels: Mapping[str, object] | None = None) -> str:
    """The host's one name: a naming label when `labels` carry one, else the instance's host."""
    for key in NAME_LABELS:
        value = (labels or {}).get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return instance_host(instance)


def instance_host(instance: str) -> str:
    """ "web-1:9100" -> "web-1", "[::1]:9100" -> "::1", "http://a.b:8080/x" -> "a.b"."""
    text = instance.strip()
    if not text:
        return text
    if "://" not in text:
        if text.count(":") > 1 and not text.startswith("["):
            return text  # a bare IPv6 address: it has no port to drop
        text = f"//{text}"
    try:
        host = urlsplit(text).hostname
    except ValueError:
        return instance.strip()
    return host or instance.strip()
