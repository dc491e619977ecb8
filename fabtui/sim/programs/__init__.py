"""What a simulated node prints, one module per kind, named by the kind's stem (the kind with
`-` as `_`, as its parser, model and evaluator are): `ethtool_stats.py` prints `ethtool -S`,
`nvidia_smi_topo.py` `nvidia-smi topo -m`, `scontrol_job.py` `scontrol show job`, ... The
function `fabtui.sim.node_commands` dispatches to is named after the command (`ethtool`,
`rdma`, `show_counters`, `dcgmi`, `scontrol`, ...); where one command prints several kinds, the
module of its plain form holds the command and calls the others' renderers (`nvidia_smi.py`).

What several programs share is in the private modules: `_common.py` (a command's result, a NIC
by name, a port's state and GUID, options), `_nic_counters.py` (the NIC counters as values, the
Prometheus exporter's too), `_slurm_job.py` (the demo's Slurm job) and `_shell.py` (commands
whose output no parser reads: `lsmod`, `echo`, fixed answers).
"""
