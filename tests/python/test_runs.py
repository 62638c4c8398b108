"""python/normtool against runs the built normtool makes: a sweep of 2 norms x 2 seeds (run by CTest,
python.NormtoolModule; NORMTOOL_BINARY names the binary, NORMTOOL_SOURCE_DIR the repository)."""
import io
import json
import os
import subprocess
import tempfile
import unittest

import pandas as pd

import normtool

BINARY = os.environ["NORMTOOL_BINARY"]
CONFIG = os.path.join(os.environ["NORMTOOL_SOURCE_DIR"], "configs", "smoke", "mlp-layernorm.json")


class SweepAsDataFrames(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="normtool-py-")
        cls.root = cls.tmp.name
        cls.sweep = os.path.join(cls.root, "ln-rms")
        subprocess.run([BINARY, "sweep", "--config", CONFIG, "model.norm.type=layernorm,rmsnorm", "seed=1,2",
                        "--set", "train.steps=12", "--set", "train.log_every=4", "--set", "train.eval_every=6",
                        "--jobs", "2", "--out", cls.sweep], check=True, capture_output=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_load_runs_has_a_row_per_run_with_the_summaries_losses(self):
        runs = normtool.load_runs(self.root)
        self.assertEqual(len(runs), 4)
        self.assertEqual(sorted(set(runs["model.norm.type"])), ["layernorm", "rmsnorm"])
        self.assertEqual(sorted(runs["seed"]), [1, 1, 2, 2])
        self.assertEqual(list(runs["path"]), [f"ln-rms/{i}" for i in range(4)])
        for _, row in runs.iterrows():
            with open(os.path.join(self.root, row["path"], "summary.json")) as f:
                s = json.load(f)
            self.assertEqual(row["final_train_loss"], s["final_train_loss"])
            self.assertEqual(row["final_val_loss"], s["final_val_loss"])
            self.assertEqual(row["steps_done"], 12)
            self.assertEqual(row["status"], "completed")

    def test_the_clis_csv_equals_load_runs(self):
        out = subprocess.run([BINARY, "runs", self.root, "--format", "csv"], check=True, capture_output=True,
                             text=True).stdout
        cli = pd.read_csv(io.StringIO(out), float_precision="round_trip")
        mine = normtool.load_runs(self.root)
        self.assertEqual(list(cli.columns), list(mine.columns))
        pd.testing.assert_frame_equal(cli, mine, check_dtype=False, check_exact=True)

    def test_load_sweep_holds_every_metrics_line_with_the_varying_keys(self):
        long = normtool.load_sweep(self.sweep)
        lines = 0
        for i in range(4):
            with open(os.path.join(self.sweep, str(i), "metrics.jsonl")) as f:
                lines += sum(1 for line in f if line.strip())
        self.assertEqual(len(long), lines)
        self.assertGreater(lines, 4 * 4)  # train lines at 0, 4, 8, 11 and validation lines per run
        self.assertIn("model.norm.type", long.columns)
        self.assertIn("seed", long.columns)
        val = long[(long["split"] == "val") & (long["model.norm.type"] == "rmsnorm")]
        self.assertEqual(sorted(set(val["seed"])), [1, 2])

    def test_load_metrics_is_the_runs_metrics_file(self):
        m = normtool.load_metrics(os.path.join(self.sweep, "0"))
        last_val = m[m["split"] == "val"].iloc[-1]
        with open(os.path.join(self.sweep, "0", "summary.json")) as f:
            self.assertEqual(last_val["loss"], json.load(f)["final_val_loss"])

    def test_a_missing_directory_is_an_error(self):
        with self.assertRaises(FileNotFoundError):
            normtool.load_runs(os.path.join(self.root, "nowhere"))


if __name__ == "__main__":
    unittest.main()
