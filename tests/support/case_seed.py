"""A case library built once per test process, copied into a test's data folder.

Opening the library the first time imports every shipped case and builds its search index
(0.7 s of CPU, most of it whoosh writing postings); dozens of app and triage tests paid it
again each, for the same files. What a library holds depends only on the case folders, the
redaction patterns (cases are stored masked) and the fabric (placements by rail), so one built
from the same three is the library the test would have built itself: the library a user has on
every start after the first. The first build is tested where it is the subject: the case
library's own tests, the first app journey (`cold_cases=True`) and the case CLI.
"""

from __future__ import annotations

import atexit
import dataclasses
import shutil
import tempfile
from pathlib import Path
from typing import Any

from fabtui.cases.store import store_path
from fabtui.workspace import Workspace

_CASE_TEMPLATES: dict[tuple[object, ...], Path] = {}
"""Built case libraries by what they depend on, one folder each, for this process."""


def seed_case_library(settings: Any) -> None:
    """Copy the library built for `settings` (once in this process) into
    `settings.data_dir`, unless that folder already has a case store or index."""
    if store_path(settings.data_dir).exists() or (settings.data_dir / "case-index").exists():
        return
    key = (settings.case_dirs, settings.redact, settings.topology)
    template = _CASE_TEMPLATES.get(key)
    if template is None:
        folder = tempfile.mkdtemp(prefix="fabtui-cases-")
        atexit.register(shutil.rmtree, folder, True)
        template = Path(folder) / "data"
        with Workspace(dataclasses.replace(settings, data_dir=template)) as built:
            built.cases.search("warm")  # builds the index; closing closes the store
        _CASE_TEMPLATES[key] = template
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    for path in template.iterdir():  # the store (SQLite, closed) and the index
        if path.is_dir():
            shutil.copytree(path, settings.data_dir / path.name)
        else:
            shutil.copy2(path, settings.data_dir / path.name)
