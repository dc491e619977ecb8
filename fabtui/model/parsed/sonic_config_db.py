"""SONiC's running CONFIG_DB as JSON (`show runningconfiguration all`, `sonic-cfggen -d
--print-data`, `/etc/sonic/config_db.json`): table -> key -> field -> value."""

from __future__ import annotations

from typing import Literal

from fabtui.model.parsed import ParsedOutput


class SonicConfigDb(ParsedOutput):
    """Every table as printed; values as strings, as CONFIG_DB stores them."""

    kind: Literal["sonic-config-db"] = "sonic-config-db"
    tables: dict[str, dict[str, dict[str, str]]]
    """`WRED_PROFILE` -> `AZURE_LOSSLESS` -> `green_min_threshold` -> `153600`. A list value
    (a leaf-list, such as `ports@`) is joined with commas."""
