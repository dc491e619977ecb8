"""Reading the fabric from Prometheus: the HTTP API client, the exporters' metric names and the
labels that name topology elements (see docs/prometheus.md)."""
