"""The shared Trainer plumbing: the defaults every Trainer-based engine gets, and overrides."""

from pathlib import Path

from benchsmith.validation.baselines import runtime


def test_training_arguments_defaults_and_overrides():
    with runtime.training_arguments("cpu", 7, learning_rate=1e-3, data_seed=3) as args:
        out = Path(args.output_dir)
        assert out.is_dir()
        assert (args.use_cpu, args.bf16, args.fp16) == (True, False, False)
        assert args.save_strategy == "no" and args.report_to in ("none", [], ["none"])
        assert args.seed == 7 and args.data_seed == 3 and args.learning_rate == 1e-3
    assert not out.exists()  # nothing left on disk
