"""Run directories read as `normtool runs` reads them (src/io/run_index.h): found under a folder
without following links, a run's status, steps and final losses from summary.json, its config
flattened to dotted keys, and the keys in which runs differ."""
import fcntl
import json
import os
import re

import pandas as pd

BASE_COLUMNS = ["path", "status", "steps_done", "steps_total", "final_train_loss", "final_val_loss"]


def _is_file(path):
    return os.path.isfile(path) and not os.path.islink(path)


def is_run_dir(path):
    """A directory holding config.json and summary.json or metrics.jsonl."""
    return _is_file(os.path.join(path, "config.json")) and (
        _is_file(os.path.join(path, "summary.json")) or _is_file(os.path.join(path, "metrics.jsonl")))


def _natural_key(text):
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text) if part]


def find_run_dirs(root):
    """The run directories under root (root itself when it is one), in natural order ("2" before "10")."""
    if not os.path.isdir(root):
        raise FileNotFoundError(f"{root}: no such directory")
    if is_run_dir(root):
        return [root]
    found = []
    for here, dirs, _ in os.walk(root, followlinks=False):
        for d in list(dirs):
            path = os.path.join(here, d)
            if os.path.islink(path):
                dirs.remove(d)
            elif is_run_dir(path):
                found.append(path)
                dirs.remove(d)  # a run directory is not searched further
    return sorted(found, key=lambda p: _natural_key(os.path.relpath(p, root)))


def _flatten(value, prefix, out):
    if isinstance(value, dict) and value:
        for k, v in value.items():
            _flatten(v, f"{prefix}.{k}" if prefix else k, out)
    else:
        out[prefix] = json.dumps(value) if isinstance(value, (list, dict)) else value
    return out


def _lock_held(run_dir):
    try:
        fd = os.open(os.path.join(run_dir, ".lock"), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def read_run(run_dir):
    """One run: {"status", "steps_done", "steps_total", "final_train_loss", "final_val_loss", "config": {...}}."""
    with open(os.path.join(run_dir, "config.json")) as f:
        config = _flatten(json.load(f), "", {})
    summary = None
    try:
        with open(os.path.join(run_dir, "summary.json")) as f:
            summary = json.load(f)
    except (OSError, ValueError):
        pass
    live = _lock_held(run_dir)
    status = summary.get("status") if isinstance(summary, dict) else None
    if status is None or (status == "running" and not live):
        status = "running" if live else "stopped"
    s = summary if isinstance(summary, dict) else {}
    steps = config.get("train.steps")
    return {"status": status, "steps_done": s.get("steps_completed"),
            "steps_total": steps if isinstance(steps, int) and not isinstance(steps, bool) else None,
            "final_train_loss": s.get("final_train_loss"), "final_val_loss": s.get("final_val_loss"),
            "config": config}


def differing_keys(configs):
    """The dotted keys whose values differ among the flattened configs ("name" left out), sorted."""
    keys = sorted(set().union(*configs)) if configs else []
    missing = object()
    return [k for k in keys if k != "name"
            and len({json.dumps(c.get(k, missing), sort_keys=True, default=str) for c in configs}) > 1]


def load_runs(path="runs"):
    """One row per run under path: the columns of `normtool runs PATH --format csv`."""
    dirs = find_run_dirs(path)
    runs = [read_run(d) for d in dirs]
    keys = differing_keys([r["config"] for r in runs])
    rows = []
    for d, r in zip(dirs, runs):
        row = {"path": os.path.normpath(os.path.relpath(d, path))}
        row.update({c: r[c] for c in BASE_COLUMNS[1:]})
        row.update({k: r["config"].get(k) for k in keys})
        rows.append(row)
    return pd.DataFrame(rows, columns=BASE_COLUMNS + keys)


def load_metrics(run_dir):
    """The run's metrics.jsonl: one row per line (step, split, loss, lr, grad_norm, ...)."""
    with open(os.path.join(run_dir, "metrics.jsonl")) as f:
        return pd.DataFrame([json.loads(line) for line in f if line.strip()])


def load_sweep(sweep_dir):
    """Every run's metrics under sweep_dir in one long table, with "path" and the varying config keys as columns."""
    dirs = find_run_dirs(sweep_dir)
    configs = [read_run(d)["config"] for d in dirs]
    keys = differing_keys(configs)
    frames = []
    for d, config in zip(dirs, configs):
        m = load_metrics(d)
        m.insert(0, "path", os.path.normpath(os.path.relpath(d, sweep_dir)))
        for i, k in enumerate(keys):
            m.insert(1 + i, k, config.get(k))
        frames.append(m)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["path"] + keys)
