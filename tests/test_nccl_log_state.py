"""The NCCL log parser keeps its state per parse (issue 42): no parse sees what another
filled, whether they run one after the other or at once in threads (the workspace parses
several logs in workers). Caches of pure functions (`functools.lru_cache`: the same answer
for the same text, whoever asks) are allowed; a module-level pool that parses fill is not.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from pathlib import Path

from fabtui.parsers import nccl_log

FIXTURES = Path(__file__).parent / "fixtures" / "nccl-log"

FIXED = {("fabtui.parsers.nccl_log._records", "_DUMPERS")}
"""Module-level tables built once at import from the record classes, never written after."""


def test_no_module_of_the_parser_holds_a_container_that_parses_fill() -> None:
    found = []
    for info in pkgutil.iter_modules(nccl_log.__path__, nccl_log.__name__ + "."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, (dict, list, set, bytearray)) and not name.startswith("__") \
                    and (info.name, name) not in FIXED:
                found.append(f"{info.name}.{name}")
    assert found == []


def test_parses_at_once_in_threads_read_as_each_alone() -> None:
    texts = [path.read_text() for path in sorted(FIXTURES.glob("*.txt"))][:6]
    assert len(texts) >= 2
    alone = [nccl_log.parse(text).model_dump(mode="json") for text in texts]
    together: dict[int, object] = {}
    start = threading.Barrier(len(texts))

    def parse(i: int) -> None:
        start.wait()
        together[i] = nccl_log.parse(texts[i]).model_dump(mode="json")

    threads = [threading.Thread(target=parse, args=(i,)) for i in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [together[i] for i in range(len(texts))] == alone
