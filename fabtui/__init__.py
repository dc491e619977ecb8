"""fabtui: a terminal tool for on-call engineers of AI fabrics (RoCE / InfiniBand, NCCL).

The package root stays import-light on purpose: `fabtui --help` and headless runs should not pay for
loading the whole product.
"""

__version__ = "0.1.0"
