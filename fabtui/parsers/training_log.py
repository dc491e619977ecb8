"""Training logs: the step lines of Megatron-LM, TorchTitan, DeepSpeed, the Hugging Face Trainer
and tqdm progress bars, read into steps with their step times (issue 39's step-time input).

    [2024-04-06 03:02:12] iteration  71/ 100 | consumed samples: 9088 | elapsed time per
        iteration (ms): 5361.6 | throughput per GPU (TFLOP/s/GPU): 243.6 | ... lm loss: ... |
    [rank0]:[titan] 2025-06-16 22:30:50,322 - root - INFO - step: 200  loss:  6.1384  memory:
        49.66GiB(52.28%)  tps: 5,856  tflops: 339.16  mfu: 34.29%
    [2022-03-11 02:06:58,985] [INFO] [logging.py:69:log_dist] [Rank 0] step=40, skipped=2, ...
    [2022-03-11 02:06:58,985] [INFO] [timer.py:189:stop] 0/40, SamplesPerSec=83.48609168106144
    [2021-10-08 20:03:15,649] [INFO] [logging.py:68:log_dist] [Rank 0] rank=0 time (ms) |
        forward: 435.67 | backward: 744.11 | backward_inner: 513.92 | ... | step: 0.98
    {'loss': 6.2645, 'learning_rate': 0.001, 'epoch': 0.02}
      8%|████      | 1999/24128 [1:52:09<20:27:23,  3.33s/it]

Where the framework prints a step time (Megatron's `elapsed time per iteration (ms)`, the
average over its log interval) it is taken as printed; DeepSpeed's wall-clock breakdown gives
forward + backward + step; TorchTitan, DeepSpeed's step and throughput lines and HF dicts that
carry `step` get theirs from the timestamps of consecutive lines of the same rank, divided by the
steps between them; a tqdm bar gives its displayed rate. Launcher prefixes (srun `-l`, mpirun
`--tag-output`, torchrun `--tee`, `stdout: `), ANSI colours, carriage-return progress redraws
and noise between the step lines are handled; a step line cut short keeps what it printed before
the cut and says so in `warnings`. Lines every rank printed without a rank prefix are read once.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, get_args

from fabtui.model.parsed.training_log import (
    StepFormat,
    TrainingLog,
    TrainingRunSummary,
    TrainingStep,
)
from fabtui.model.table import Table, left, right
from fabtui.parsers.errors import ParseError
from fabtui.parsers.text import split_lines

KIND = "training-log"
MODEL = TrainingLog
DESCRIPTION = ("training job log (Megatron-LM, TorchTitan, DeepSpeed, Hugging Face Trainer, "
               "tqdm): step lines and step times")

_MEGATRON = re.compile(r"\biteration\s+(\d+)\s*/\s*(\d+)\s*\|")
_TITAN = re.compile(r"\bstep:\s*(\d+)\s+loss:")
_DS_STEP = re.compile(r"\[Rank (\d+)\] step=(\d+), skipped=(\d+)(?:, lr=\[([^\],\]]+))?")
_DS_TPUT = re.compile(r"\] (?:epoch=\d+/micro_step=\d+/global_step=(\d+)|\d+/(\d+)), "
                      r"(?:RunningAvgSamplesPerSec=([\d.eE+-]+)(?:, CurrSamplesPerSec="
                      r"([\d.eE+-]+))?|SamplesPerSec=([\d.eE+-]+))")
_DS_WALL = re.compile(r"\brank=(\d+) time \(ms\) \|\s*(forward:.*)")
_HF_DICT = re.compile(r"\{'(?:loss|train_runtime)':[^{}]*\}")
_TQDM = re.compile(r"(\d+)/(\d+) \[(\d+(?::\d+){1,2})<[\d:?]+,\s*([\d.]+)(s/it|it/s)")
_DETECTORS: tuple[tuple[re.Pattern[str], float], ...] = (
    (_MEGATRON, 0.9), (_TITAN, 0.9), (_DS_STEP, 0.85), (_DS_TPUT, 0.8), (_DS_WALL, 0.8),
    (_HF_DICT, 0.7), (_TQDM, 0.4))
SIGNATURE = (r"iteration\s+\d+\s*/\s*\d+\s*\||step:\s*\d+\s+loss:|\[Rank \d+\] step=\d+, "
             r"skipped=|SamplesPerSec=|rank=\d+ time \(ms\) \|\s*forward:|"
             r"\{'(?:loss|train_runtime)':|\d+/\d+ \[\d+(?::\d+){1,2}<[\d:?]+,\s*[\d.]+"
             r"(?:s/it|it/s)")
"""What `detect` needs in the input (fabtui/parsers/signatures.py carries the same text)."""

_TIMESTAMP = re.compile(r"(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(?:[.,](\d{1,6}))?")
_MPIRUN = re.compile(r"^\[\d+,(\d+)\]<(?:stdout|stderr)>:\s?")
_SRUN = re.compile(r"^\s*(\d+): ")
_TORCHRUN = re.compile(r"^\[([A-Za-z_]+?)(\d+)\]:")
_STREAM = re.compile(r"^(?:stdout|stderr): ")
_MEGATRON_FIELD = re.compile(r"^\s*([^:|]+?)\s*:\s*(\S+)\s*$")
_TITAN_FIELD = re.compile(r"(\w+):\s*([-+\d.,eE]+)")
_DICT_ITEM = re.compile(r"'([\w/]+)':\s*([-+\w.]+)")
_WALL_ITEM = re.compile(r"(\w+):\s*([\d.]+)")
_MEM = re.compile(r"MemAllocated=([\d.]+)GB")
_FORMATS: tuple[StepFormat, ...] = get_args(StepFormat)
_FROM_TIMESTAMPS = frozenset({"torchtitan", "deepspeed-step", "deepspeed-throughput",
                              "hf-trainer"})


def detect(text: str) -> float:
    """Confidence that `text` is a training log: the best score of a step line shape found in
    its first 64 KiB (tqdm alone scores low: other programs draw bars too)."""
    head = text[:65536]
    return max((score for pattern, score in _DETECTORS if pattern.search(head)), default=0.0)


@dataclass
class _Prefix:
    text: str | None = None
    rank: int | None = None
    local_rank: int | None = None


def _strip_prefixes(line: str) -> tuple[_Prefix, str]:
    """Launcher prefixes off the front of a line (at most three, as `3: [rank0]:`)."""
    found = _Prefix()
    parts: list[str] = []
    for _ in range(3):
        match = _MPIRUN.match(line) or _SRUN.match(line)
        if match:
            found.rank = int(match.group(1))
        elif (match := _TORCHRUN.match(line)) is not None:
            found.local_rank = int(match.group(2))
        elif (match := _STREAM.match(line)) is None:
            break
        parts.append(match.group(0).strip().rstrip(":"))
        line = line[match.end():]
    found.text = " ".join(parts) or None
    return found, line


def _timestamp(head: str) -> tuple[str | None, datetime | None]:
    """The last wall-clock time printed before a step's payload, ISO form and parsed."""
    found = list(_TIMESTAMP.finditer(head))
    if not found:
        return None, None
    day, clock, frac = found[-1].groups()
    iso = f"{day}T{clock}" + (f".{frac}" if frac else "")
    try:
        return iso, datetime.fromisoformat(f"{day}T{clock}" + (f".{frac}{'0' * (6 - len(frac))}"
                                                               if frac else ""))
    except ValueError:
        return None, None


def _number(value: str) -> float | None:
    cleaned = value.replace(",", "").rstrip("%")
    try:
        result = float(cleaned)
    except ValueError:
        return None
    return result if result == result and abs(result) != float("inf") else None


def _integer(value: str) -> int | None:
    number = _number(value)
    return int(number) if number is not None and number == int(number) else None


def _seconds(clock: str) -> int:
    total = 0
    for part in clock.split(":"):
        total = total * 60 + int(part)
    return total


@dataclass
class _Read:
    step: TrainingStep
    when: datetime | None
    start: int


class _Reader:
    """Reads the lines one by one into steps, noting what it could not use."""

    def __init__(self) -> None:
        self.steps: list[_Read] = []
        self.warnings: list[str] = []
        self.summary: TrainingRunSummary | None = None
        self.last_tqdm: tuple[str | None, int] | None = None

    def add(self, number: int, prefix: _Prefix, body: str, fmt: StepFormat, start: int,
            **fields: Any) -> TrainingStep:
        iso, when = _timestamp(body[:start])
        step = TrainingStep(line=number, format=fmt, rank=prefix.rank,
                            local_rank=prefix.local_rank, prefix=prefix.text, timestamp=iso,
                            **fields)
        self.steps.append(_Read(step, when, start))
        return step

    def line(self, number: int, raw: str) -> None:
        prefix, body = _strip_prefixes(raw)
        if (match := _MEGATRON.search(body)) is not None:
            self.megatron(number, prefix, body, match)
        elif (match := _TITAN.search(body)) is not None:
            self.titan(number, prefix, body, match)
        if (match := _TQDM.search(body)) is not None:
            self.tqdm(number, prefix, body, match)
        if (match := _DS_STEP.search(body)) is not None:
            lr = _number(match.group(4)) if match.group(4) else None
            if prefix.rank is None:  # `[Rank N]`: the rank log_dist printed from
                prefix = _Prefix(prefix.text, int(match.group(1)), prefix.local_rank)
            self.add(number, prefix, body, "deepspeed-step", match.start(),
                     step=int(match.group(2)), skipped_iterations=int(match.group(3)),
                     learning_rate=lr)
        elif (match := _DS_TPUT.search(body)) is not None:
            self.throughput(number, prefix, body, match)
        elif (match := _DS_WALL.search(body)) is not None:
            self.wallclock(number, prefix, body, match)
        for match in _HF_DICT.finditer(body):
            self.hf_dict(number, prefix, body, match)

    def megatron(self, number: int, prefix: _Prefix, body: str, match: re.Match[str]) -> None:
        rest = body[match.end():]
        fields = rest.split("|")
        cut = not rest.rstrip().endswith("|")
        if cut:
            # The last field may be cut inside its value: only the complete ones are read.
            fields = fields[:-1]
        values: dict[str, str] = {}
        for field in fields:
            item = _MEGATRON_FIELD.match(field)
            if item:
                values[item.group(1).lower()] = item.group(2)
        elapsed = values.get("elapsed time per iteration (ms)")
        step_time = _number(elapsed) if elapsed is not None else None
        if cut:
            self.warnings.append(f"line {number}: Megatron iteration line cut short: its last "
                                 "field is not read" + ("" if step_time is not None else
                                                        ", and it has no step time"))
        elif elapsed is None:
            self.warnings.append(f"line {number}: Megatron iteration line without "
                                 "`elapsed time per iteration (ms)`")
        elif step_time is None:
            self.warnings.append(f"line {number}: elapsed time per iteration {elapsed!r} is "
                                 "not a number")

        def num(*names: str) -> float | None:
            for name in names:
                if name in values:
                    return _number(values[name])
            return None

        skipped = num("number of skipped iterations")
        nans = num("number of nan iterations")
        self.add(number, prefix, body, "megatron", match.start(),
                 step=int(match.group(1)), total_steps=int(match.group(2)),
                 step_time_ms=step_time,
                 step_time_basis="printed-average" if step_time is not None else None,
                 loss=num("lm loss"), grad_norm=num("grad norm"),
                 learning_rate=num("learning rate"),
                 tokens_per_second=num("tokens/sec/gpu", "tokens per gpu per second (tgs)"),
                 tflops_per_gpu=num("throughput per gpu (tflop/s/gpu)", "tflops"),
                 samples_per_second=num("samples per second"),
                 skipped_iterations=int(skipped) if skipped is not None else None,
                 nan_iterations=int(nans) if nans is not None else None)

    def titan(self, number: int, prefix: _Prefix, body: str, match: re.Match[str]) -> None:
        rest = body[match.start():]
        complete = bool(re.search(r"\bmfu:\s*[\d.]+%\s*$", rest))
        items = _TITAN_FIELD.findall(rest)
        if not complete:
            items = items[:-1]
            self.warnings.append(f"line {number}: TorchTitan step line cut short: its last "
                                 "field is not read")
        values = {name: value for name, value in items}
        memory = re.search(r"\bmemory:\s*([\d.]+)GiB", rest)
        self.add(number, prefix, body, "torchtitan", match.start(),
                 step=int(match.group(1)), loss=_value(values, "loss"),
                 grad_norm=_value(values, "grad_norm"),
                 tokens_per_second=_value(values, "tps", "wps"),
                 tflops_per_gpu=_value(values, "tflops"), mfu_pct=_value(values, "mfu"),
                 memory_gib=float(memory.group(1)) if memory else None)

    def tqdm(self, number: int, prefix: _Prefix, body: str, match: re.Match[str]) -> None:
        done = int(match.group(1))
        key = (prefix.text, done)
        if self.last_tqdm == key:
            return  # the bar redrawn at the same count (a logged dict printed above it)
        self.last_tqdm = key
        rate = float(match.group(4))
        if rate <= 0:
            return
        step_ms = rate * 1000.0 if match.group(5) == "s/it" else 1000.0 / rate
        self.add(number, prefix, body, "tqdm", match.start(), step=done,
                 total_steps=int(match.group(2)), step_time_ms=round(step_ms, 3),
                 step_time_basis="progress-bar-rate")

    def throughput(self, number: int, prefix: _Prefix, body: str, match: re.Match[str]) -> None:
        step = int(match.group(1) or match.group(2))
        current = match.group(4) or match.group(5) or match.group(3)
        memory = _MEM.search(body, match.end())
        self.add(number, prefix, body, "deepspeed-throughput", match.start(), step=step,
                 samples_per_second=_number(current),
                 memory_gib=float(memory.group(1)) if memory else None)

    def wallclock(self, number: int, prefix: _Prefix, body: str, match: re.Match[str]) -> None:
        timers = {name: float(value) for name, value in _WALL_ITEM.findall(match.group(2))}
        parts = [timers.get(name) for name in ("forward", "backward", "step")]
        total = sum(p for p in parts if p is not None) if None not in parts else None
        if total is None:
            self.warnings.append(f"line {number}: DeepSpeed wall-clock line without forward, "
                                 "backward and step timers: no step time")
        rank = int(match.group(1))
        self.add(number, _Prefix(prefix.text, rank if prefix.rank is None else prefix.rank,
                                 prefix.local_rank),
                 body, "deepspeed-wallclock", match.start(), step=None,
                 step_time_ms=round(total, 3) if total is not None else None,
                 step_time_basis="printed-breakdown" if total is not None else None,
                 breakdown_ms=timers)

    def hf_dict(self, number: int, prefix: _Prefix, body: str, match: re.Match[str]) -> None:
        values = dict(_DICT_ITEM.findall(match.group(0)))
        if "train_runtime" in values:
            self.summary = TrainingRunSummary(
                line=number, train_runtime_s=_value(values, "train_runtime"),
                train_steps_per_second=_value(values, "train_steps_per_second"),
                train_samples_per_second=_value(values, "train_samples_per_second"),
                train_loss=_value(values, "train_loss"))
            return
        step = _value(values, "step")
        if step is None and _value(values, "loss") is None:
            self.warnings.append(f"line {number}: HF Trainer dict without a readable loss or "
                                 "step, skipped")
            return
        self.add(number, prefix, body, "hf-trainer", match.start(),
                 step=int(step) if step is not None else None, loss=_value(values, "loss"),
                 grad_norm=_value(values, "grad_norm"),
                 learning_rate=_value(values, "learning_rate"))


def _value(values: dict[str, str], *names: str) -> float | None:
    for name in names:
        if name in values:
            return _number(values[name])
    return None


def _drop_unnamed_repeats(reads: list[_Read]) -> tuple[list[_Read], int]:
    """Lines that repeat a (format, step) already read with no prefix naming the rank: every
    rank printed. The first is kept."""
    seen: set[tuple[str, int, str | None]] = set()
    kept: list[_Read] = []
    repeats = 0
    for read in reads:
        step = read.step
        named = step.rank is not None or step.local_rank is not None
        key = (step.format, step.step if step.step is not None else -1, step.prefix)
        if step.step is not None and not named and step.format != "tqdm" and key in seen:
            repeats += 1
            continue
        seen.add(key)
        kept.append(read)
    return kept, repeats


def _derive_from_timestamps(reads: list[_Read], warnings: list[str]) -> None:
    """Step times of the timestamped formats: the time between two consecutive lines of one
    rank divided by the steps between them."""
    last: dict[tuple[str, str | None, int | None, int | None], _Read] = {}
    for read in reads:
        step = read.step
        if step.format not in _FROM_TIMESTAMPS or step.step is None:
            continue
        key = (step.format, step.prefix, step.rank, step.local_rank)
        before = last.get(key)
        last[key] = read
        if before is None or before.when is None or read.when is None or \
                before.step.step is None:
            continue
        steps = step.step - before.step.step
        if steps <= 0:
            warnings.append(f"line {step.line}: step {step.step} after step "
                            f"{before.step.step}: the job restarted or the log was joined; "
                            "no step time across it")
            continue
        elapsed = (read.when - before.when).total_seconds()
        if elapsed < 0:
            warnings.append(f"line {step.line}: its time is before the previous step line's: "
                            "no step time")
            continue
        step.step_time_ms = round(elapsed * 1000.0 / steps, 3)
        step.step_time_basis = "timestamps"


def _choose(steps: list[TrainingStep]) -> StepFormat | None:
    timed = Counter(step.format for step in steps if step.step_time_ms is not None)
    if not timed:
        return None
    return max(timed, key=lambda fmt: (timed[fmt], -_FORMATS.index(fmt)))


def parse(text: str) -> TrainingLog:
    """Read the step lines of a training log. Raises `ParseError` when it has none."""
    reader = _Reader()
    for number, line in enumerate(split_lines(text), start=1):
        if line.strip():
            reader.line(number, line)
    reads, repeats = _drop_unnamed_repeats(reader.steps)
    if not reads:
        raise ParseError(KIND, None, "no training step line: none of Megatron's `iteration N/ "
                                     "M |`, TorchTitan's `step: N  loss:`, DeepSpeed's `[Rank "
                                     "0] step=N` or throughput timer, an HF Trainer `{'loss': "
                                     "...}` dict or a tqdm `s/it` bar (a log at WARNING level "
                                     "prints none)")
    _derive_from_timestamps(reads, reader.warnings)
    if repeats:
        reader.warnings.append(f"{repeats} step lines repeat a step with no prefix naming the "
                               "rank: every rank printed them and the log does not say whose "
                               "each is; the first of each step is read")
    steps = [read.step for read in reads]
    chosen = _choose(steps)
    ranks = sorted({r for s in steps if s.format == chosen
                    for r in (s.rank if s.rank is not None else s.local_rank,)
                    if r is not None})
    formats = list(dict.fromkeys(step.format for step in steps))
    return TrainingLog(formats=formats, step_time_format=chosen, steps=steps, ranks=ranks,
                       per_rank=len(ranks) > 1, repeated_unnamed=repeats,
                       summary=reader.summary, warnings=reader.warnings)


def tables(result: TrainingLog) -> Iterable[Table]:
    """The step lines, then what the log can say about ranks."""
    columns = [right("line"), left("format"), right("rank"), right("step"), left("time"),
               right("step_ms", "step ms"), left("basis"), right("loss"),
               right("tflops", "TFLOP/s"), right("tps")]
    rows = [(s.line, s.format, s.rank if s.rank is not None else s.local_rank, s.step,
             s.timestamp, s.step_time_ms, s.step_time_basis, s.loss, s.tflops_per_gpu,
             s.tokens_per_second) for s in result.steps]
    notes = [f"step times from: {result.step_time_format or 'none'}",
             "per-rank series: " + (f"ranks {result.ranks}" if result.per_rank else
                                    "no (one rank's lines: the job's step time only)")]
    if result.summary is not None and result.summary.train_steps_per_second:
        notes.append(f"run mean: {1000.0 / result.summary.train_steps_per_second:.1f} ms/step "
                     "(HF train_steps_per_second)")
    return [Table.build(columns, rows, notes=notes)]
