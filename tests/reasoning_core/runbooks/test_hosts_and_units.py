"""One host, one name (runbooks/hosts.py) and numbers in units people use (runbooks/units.py)."""

from __future__ import annotations

import pytest

from reasoning_core.runbooks.hosts import host_name, instance_host
from reasoning_core.runbooks.units import duration_text, rate_text, share_text, size_text


@pytest.mark.parametrize(
    ("instance", "host"),
    [
        ("127.0.0.1:9100", "127.0.0.1"),
        ("127.0.0.1:9256", "127.0.0.1"),
        ("web-1:9100", "web-1"),
        ("web-1", "web-1"),
        ("[::1]:9100", "::1"),
        ("fe80::1", "fe80::1"),
        ("http://shop.example:8080/health", "shop.example"),
        ("https://shop.example/health", "shop.example"),
    ],
)
def test_an_instance_names_its_host_without_the_exporter_s_port(instance: str, host: str) -> None:
    assert instance_host(instance) == host


def test_a_naming_label_wins_over_the_instance() -> None:
    assert host_name("10.0.0.5:9100", {"nodename": "db-1", "job": "node"}) == "db-1"
    assert host_name("10.0.0.5:9256", {"hostname": "db-1"}) == "db-1"
    assert host_name("10.0.0.5:9256", {"host": " "}) == "10.0.0.5"


@pytest.mark.parametrize(
    ("count", "en", "ru"),
    [
        (0, "0 B", "0 Б"),
        (512, "512 B", "512 Б"),
        (0.4 * 1024**2, "410 KiB", "410 КиБ"),
        (1.25 * 1024**2, "1.2 MiB", "1.2 МиБ"),
        (32 * 1024**2, "32 MiB", "32 МиБ"),
        (2 * 1024**3, "2 GiB", "2 ГиБ"),
        (-5, "0 B", "0 Б"),
    ],
)
def test_sizes_read_in_binary_units(count: float, en: str, ru: str) -> None:
    assert size_text(count, "en") == en and size_text(count, "ru") == ru


def test_rates_durations_and_shares() -> None:
    assert rate_text(5 * 1024**2, "en") == "5 MiB/s" and rate_text(5 * 1024**2, "ru") == "5 МиБ/с"
    assert duration_text(20, "en") == "under a minute"
    assert duration_text(360, "en") == "about 6 min"
    assert duration_text(360, "ru") == "примерно через 6 мин"
    assert duration_text(5 * 3600, "en") == "about 5 h"
    assert duration_text(3 * 86400, "en") == "about 3 d"
    assert [share_text(s) for s in (-188.0, 0.0, 0.001, 0.9875, 0.999, 1.0, 3.0)] == [
        "0%", "0%", "1%", "99%", "99%", "100%", "100%",
    ]  # fmt: skip
