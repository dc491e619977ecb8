"""A training job's log (Megatron-LM, TorchTitan, DeepSpeed, Hugging Face Trainer, tqdm): the
steps it reports and how long they took, issue 39's step-time input.

What a log can say about ranks: these frameworks print their step lines from one rank only
(Megatron's `training_log` from the last rank, TorchTitan, DeepSpeed's `log_dist` and the HF
Trainer from rank 0), and Megatron's step time is the average over its `--log-interval`
iterations. Such a log gives the *job's* step time: when the job was slow and by how much, never
which rank was late. A per-rank series exists only when every rank's lines are in the log with a
prefix that names the rank (srun `-l`, `mpirun --tag-output`, torchrun `--tee` without
`--local-ranks-filter`) or one log per rank is read.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from fabtui.model.parsed import ParsedOutput

StepFormat = Literal["megatron", "torchtitan", "deepspeed-step", "deepspeed-throughput",
                     "deepspeed-wallclock", "hf-trainer", "tqdm"]
"""Which line shape reported a step: Megatron's ` iteration N/ M | ... |`, TorchTitan's
`step: N  loss: ...`, DeepSpeed's `[Rank 0] step=N, skipped=...`, its throughput timer
(`0/40, SamplesPerSec=...` or `epoch=0/micro_step=.../global_step=N, RunningAvgSamplesPerSec=`),
its `wall_clock_breakdown` line (`time (ms) | forward: ... | backward: ... | step: ...`), the
HF Trainer's logged dict (`{'loss': ..., 'learning_rate': ..., 'epoch': ...}`) and a tqdm
progress bar (`N/M [elapsed<left, X s/it]`)."""

StepTimeBasis = Literal["printed-average", "printed-breakdown", "timestamps", "progress-bar-rate"]
"""How a step time was obtained: printed by the framework as the average over its log interval
(Megatron), the sum of DeepSpeed's forward, backward and step timers (data loading left out),
the difference of two consecutive step lines' timestamps divided by the steps between them, or
tqdm's displayed rate (an exponential moving average, smoothing 0.3 by default)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TrainingStep(_Strict):
    """One step line, with what it printed."""

    line: int
    """1-based line of the input it was read from."""
    format: StepFormat
    """Which framework's line shape it is."""
    step: int | None
    """The iteration or step number as printed; null where the line has none (an HF Trainer
    dict without `step`, a DeepSpeed wall-clock line)."""
    total_steps: int | None = None
    """The planned number of steps when the line prints it (Megatron `N/ M`, tqdm `N/M`)."""
    rank: int | None = None
    """The global rank the line's launcher prefix names (srun `-l` task `N: `, mpirun
    `[job,rank]<stdout>:`, DeepSpeed's `rank=N` in its wall-clock line); null when no prefix
    names one."""
    local_rank: int | None = None
    """The torchrun `--tee` prefix `[<role><N>]:` (`[rank0]:`, `[default7]:`): N is the
    worker's local rank on its node unless `--log-line-prefix-template` said otherwise."""
    prefix: str | None = None
    """The launcher prefix as printed, without its trailing `:` and blanks."""
    timestamp: str | None = None
    """Wall-clock time of the line as printed by the framework's logger, in ISO 8601 form
    (`2024-04-06T03:02:12` or with milliseconds), no time zone: the log does not say one."""
    step_time_ms: float | None = None
    """Milliseconds per step; how it was obtained is `step_time_basis`. Null where neither the
    line nor its neighbours tell (the first line of a timestamped series)."""
    step_time_basis: StepTimeBasis | None = None
    """How `step_time_ms` was obtained."""
    loss: float | None = None
    """Training loss printed on the line (Megatron `lm loss`)."""
    grad_norm: float | None = None
    """Gradient norm printed on the line."""
    learning_rate: float | None = None
    """Learning rate (DeepSpeed prints a list per parameter group: the first)."""
    tokens_per_second: float | None = None
    """Tokens per second per GPU (TorchTitan `tps`, older `wps`; Megatron `tokens/sec/gpu`)."""
    tflops_per_gpu: float | None = None
    """Achieved TFLOP/s per GPU (Megatron `throughput per GPU (TFLOP/s/GPU)` or `TFLOPs`,
    TorchTitan `tflops`)."""
    mfu_pct: float | None = None
    """Model FLOPs utilisation in percent (TorchTitan `mfu`)."""
    samples_per_second: float | None = None
    """Samples per second (DeepSpeed's throughput timer: the current value when printed, else
    its running average; Megatron `samples per second`)."""
    memory_gib: float | None = None
    """Device memory in GiB as printed (TorchTitan `memory`, DeepSpeed `MemAllocated`)."""
    skipped_iterations: int | None = None
    """Iterations skipped (loss-scale overflow) as printed: Megatron per interval, DeepSpeed
    `skipped=` cumulative."""
    nan_iterations: int | None = None
    """Megatron `number of nan iterations`."""
    breakdown_ms: dict[str, float] = {}
    """DeepSpeed `wall_clock_breakdown` timers in milliseconds, by name as printed."""


class TrainingRunSummary(_Strict):
    """The Hugging Face Trainer's end-of-training metrics dict."""

    line: int
    """1-based line it was read from."""
    train_runtime_s: float | None
    """`train_runtime`: seconds the whole training took."""
    train_steps_per_second: float | None
    """`train_steps_per_second`: the run's average (its inverse is the mean step time)."""
    train_samples_per_second: float | None
    """`train_samples_per_second`."""
    train_loss: float | None
    """`train_loss`: mean training loss of the run."""


class TrainingLog(ParsedOutput):
    """The step lines of one training log."""

    kind: Literal["training-log"] = "training-log"
    formats: list[StepFormat]
    """The step line shapes found, in order of first appearance (one log can hold several: an
    HF Trainer run under DeepSpeed prints both, with a tqdm bar between)."""
    step_time_format: StepFormat | None
    """The format whose step times make the job's step-time series: the one with the most
    step times; null when no line gives one."""
    steps: list[TrainingStep]
    """Every step line, in input order."""
    ranks: list[int]
    """Global or local ranks that the prefixes of `step_time_format`'s lines name."""
    per_rank: bool
    """True when those lines come from more than one named rank: a per-rank step-time series
    exists. False: only the job's step time (see the module docstring)."""
    repeated_unnamed: int
    """Step lines that repeat a step already printed, with no prefix naming the rank: every
    rank printed, and the log does not say which line is whose."""
    summary: TrainingRunSummary | None = None
    """The HF Trainer's end-of-training metrics, when printed."""
