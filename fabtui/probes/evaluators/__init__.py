"""Evaluators by output kind; importing this package registers them all."""

from fabtui.probes.evaluators import gpu, ib, lldp, logs, nccl, nic, perf, rdma, switch, triage

__all__ = ["gpu", "ib", "lldp", "logs", "nccl", "nic", "perf", "rdma", "switch", "triage"]
