"""The growth line the scale benchmarks print: a figure at three sizes, its fitted exponents.

Two exponents a figure: from the smallest size to the largest (fixed costs pull it under 1 at
small sizes), and of what each step adds over what the step before added (fixed costs cancel
out: what a smoke's small sizes need to show a quadratic term as ~2).
"""

from __future__ import annotations

import math


def step_exponent(sizes: list[int], values: list[float]) -> float:
    """k such that c * n**k fits what the second step adds over what the first added (three
    sizes; 2**k is that ratio where each size doubles the last). NaN when a step added
    nothing (fixed costs or noise); 0.05 at least, 4 at most."""
    first, second = values[1] - values[0], values[2] - values[1]
    if first <= 0 or second <= 0:
        return float("nan")

    def ratio(k: float) -> float:
        return (sizes[2] ** k - sizes[1] ** k) / (sizes[1] ** k - sizes[0] ** k)

    wanted, low, high = second / first, 0.05, 4.0
    if wanted <= ratio(low):
        return low
    if wanted >= ratio(high):
        return high
    for _ in range(60):
        k = (low + high) / 2
        low, high = (k, high) if ratio(k) < wanted else (low, k)
    return (low + high) / 2


def print_growth(figures: dict[int, dict[str, float]], unit: str, linear: str) -> None:
    """One line a figure: its values at the three sizes of `figures` (size -> name -> value),
    the exponent from the smallest to the largest and of what each step adds. `unit` names
    the sizes (`cases`, `nodes`), `linear` what an exponent of 1 means."""
    sizes = sorted(figures)
    print(f"growth, {' / '.join(f'{n:,}' for n in sizes)} {unit} (1 = {linear}, "
          "2 = quadratic):")
    for name in figures[sizes[0]]:
        values = [figures[n][name] for n in sizes]
        whole = math.log(max(values[-1], 1e-9) / max(values[0], 1e-9)) / \
            math.log(sizes[-1] / sizes[0])
        steps = step_exponent(sizes, values)
        print(f"  {name:<22} {' / '.join(f'{v:.3g}' for v in values):<28} exponent "
              f"{whole:.2f}, of what each step adds "
              + (f"{steps:.2f}" if steps == steps else "- (a step added nothing: fixed costs)"))
