"""SONiC CONFIG_DB as JSON: what `show runningconfiguration all` prints (sonic-utilities runs
`sonic-cfggen -d --print-data`), the saved `/etc/sonic/config_db.json`, or a table subset such
as sonic-buildimage's rendered `qos_config.j2`.

    {
        "WRED_PROFILE": {
            "AZURE_LOSSLESS": {"ecn": "ecn_all", "green_min_threshold": "1048576", ...}
        },
        ...
    }

Tables whose entries are not objects (a few hold a bare list or value) are skipped with a
warning; numbers and booleans are kept as the strings CONFIG_DB stores.
"""

from __future__ import annotations

import json
import re
from typing import Any

from fabtui.model.parsed.sonic_config_db import SonicConfigDb
from fabtui.parsers.errors import ParseError

KIND = "sonic-config-db"
MODEL = SonicConfigDb
DESCRIPTION = "SONiC CONFIG_DB JSON (show runningconfiguration all, config_db.json): tables"

_TABLE = re.compile(r'"[A-Z][A-Z0-9_]+"\s*:\s*\{')


def detect(text: str) -> float:
    """How sure we are that `text` is CONFIG_DB JSON (0..1)."""
    head = text[:20000].lstrip()
    if not head.startswith("{"):
        return 0.0
    tables = len(_TABLE.findall(head))
    if any(name in head for name in ('"PORT"', '"DEVICE_METADATA"', '"PORT_QOS_MAP"',
                                      '"BUFFER_PROFILE"', '"WRED_PROFILE"')):
        return 0.9
    return 0.5 if tables >= 2 else 0.0


def _text(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(_text(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def parse(text: str) -> SonicConfigDb:
    """Parse the JSON; raises `ParseError` at the line JSON stops, or when the top level is
    not an object of tables."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(KIND, exc.lineno, f"not JSON: {exc.msg}") from None
    if not isinstance(data, dict) or not data:
        raise ParseError(KIND, None, "not a CONFIG_DB dump: expected an object of tables")
    tables: dict[str, dict[str, dict[str, str]]] = {}
    warnings = []
    for table, entries in data.items():
        if not isinstance(entries, dict):
            warnings.append(f"table {table}: not an object of keys, skipped")
            continue
        rows: dict[str, dict[str, str]] = {}
        for key, fields in entries.items():
            if isinstance(fields, dict):
                rows[str(key)] = {str(f): _text(v) for f, v in fields.items()}
            else:
                rows[str(key)] = {"": _text(fields)}
        tables[str(table)] = rows
    return SonicConfigDb(tables=tables, warnings=warnings)
