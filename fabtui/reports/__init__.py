"""Reports a customer can read, built from journaled sessions (and cases): acceptance, RDMA,
NCCL, fault-injection and incident reports as markdown or self-contained HTML."""
