"""A server process's `/metrics` (on its `--health` port), read and parsed."""

from __future__ import annotations

from http.client import HTTPConnection

from process_output import BACKSTOP
from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(port: int) -> Samples:
    """`/metrics` on the health port `port`, parsed: each sample by its name and its
    labels (sorted pairs)."""
    conn = HTTPConnection("127.0.0.1", port, timeout=BACKSTOP)
    try:
        conn.request("GET", "/metrics")
        answer = conn.getresponse()
        assert answer.status == 200
        assert answer.getheader("content-type", "").startswith("text/plain")
        text = answer.read().decode()
    finally:
        conn.close()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}
