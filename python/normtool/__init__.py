"""normtool's runs and sweeps as pandas DataFrames, read from their files (stdlib + pandas).

    from normtool import load_runs, load_metrics, load_sweep
    runs = load_runs("runs")                    # one row per run: the columns of `normtool runs --format csv`
    curves = load_sweep("runs/ln-rms")          # every run's metrics.jsonl, the varying keys as columns
"""
from .runs import find_run_dirs, load_metrics, load_runs, load_sweep, read_run

__all__ = ["find_run_dirs", "load_metrics", "load_runs", "load_sweep", "read_run"]
