"""How much disk the README's first command installs: fabtui's runtime dependencies (the
closure of `Requires-Dist` without extras) beside Textual's alone, measured from the files
the installed distributions list (their RECORD), in this environment.

Issue 42 measured 277 MB against 49 MB for Textual alone, most of it matplotlib and what it
pulls in (Pillow, fontTools, kiwisolver, contourpy) for three report plots; the plots are SVG
written by fabtui now. Prints figures and the ratio; never fails on size.

    python benchmarks/install_weight.py
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

MB = 1024 * 1024


def _name(requirement: str) -> str:
    return re.split(r"[ ;<>=!~\[(]", requirement, maxsplit=1)[0].strip().lower().replace("_", "-")


def closure(root: str) -> set[str]:
    """The distributions `root` needs at run time (no extras), itself included."""
    seen: set[str] = set()
    todo = [root]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        seen.add(name)
        for requirement in dist.requires or []:
            if "extra ==" in requirement or "extra==" in requirement:
                continue
            todo.append(_name(requirement))
    return seen


def size(names: set[str]) -> int:
    """Bytes on disk of the files the distributions `names` installed."""
    total = 0
    for name in names:
        for file in metadata.distribution(name).files or []:
            path = Path(str(file.locate()))
            if path.is_file():
                total += path.stat().st_size
    return total


def main() -> None:
    ours = closure("fabtui")
    textual = closure("textual")
    ours_size, textual_size = size(ours - {"fabtui"}), size(textual)
    heaviest = sorted(((size({n}), n) for n in ours - {"fabtui"}), reverse=True)[:6]
    print(f"fabtui's runtime dependencies: {len(ours) - 1} distributions, "
          f"{ours_size / MB:.0f} MB")
    print(f"Textual alone (reference):     {len(textual)} distributions, "
          f"{textual_size / MB:.0f} MB   ratio {ours_size / max(textual_size, 1):.1f}x")
    print("heaviest: " + ", ".join(f"{n} {b / MB:.0f} MB" for b, n in heaviest))


if __name__ == "__main__":
    main()
