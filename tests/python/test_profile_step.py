"""scripts/profile_step.py's parts that need no perf and no binary: which part a symbol goes to, reading
`perf report`'s output, the difference of two runs, and its roofline counts against bench_vs_torch.work()
(run by CTest, python.NormtoolModule)."""
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.environ.get("NORMTOOL_SOURCE_DIR",
                                               os.path.dirname(os.path.dirname(os.path.dirname(
                                                   os.path.abspath(__file__))))), "scripts"))
import bench_vs_torch  # noqa: E402
import profile_step  # noqa: E402

LM_SMALL = {"data": {"seq_len": 128}, "model": {"arch": "transformer", "d_model": 128, "n_layers": 4, "n_heads": 4,
                                                 "d_ff": 512}, "train": {"batch_size": 16, "optimizer": "adamw"}}
LM_DEEP18 = {"data": {"seq_len": 64}, "model": {"arch": "transformer", "d_model": 64, "n_layers": 18, "n_heads": 2,
                                                 "d_ff": 128}, "train": {"batch_size": 16, "optimizer": "adam"}}


class Classification(unittest.TestCase):
    def test_each_family_of_symbols_goes_to_its_part(self):
        cases = {
            "[.] nt::(anonymous namespace)::block<12, 2> (normtool)": "products",
            "[.] nt::(anonymous namespace)::pack (normtool)": "products",
            "[.] nt::transpose_floats (normtool)": "products",
            "[.] sgemm_kernel_SKYLAKEX (libopenblas.so.0)": "products",
            "[.] nt::(anonymous namespace)::softmax_row<float> (normtool)": "attention",
            "[.] nt::(anonymous namespace)::attention_backward<float> (normtool)": "attention",
            "[.] nt::layernorm_backward<float>(float*, int)::{lambda(int, int, int)#1}::operator() (normtool)":
                "norms",
            "[.] nt::OptimizerState::step (normtool)": "optimizer",
            "[.] nt::(anonymous namespace)::bias_activation_backward_node<float>(void const*, unsigned int)"
            "::{lambda(int, int, int)#1}::operator() (normtool)": "elementwise",
            # the op a generic helper runs decides, not the helper
            "[.] nt::for_row_blocks<nt::(anonymous namespace)::residual_backward_node<float>(void const*, "
            "unsigned int)::{lambda(int, int, int)#1}> (normtool)": "elementwise",
            "[.] __memset_avx512_unaligned_erms (libc.so.6)": "overhead",
            "[k] exc_page_fault ([kernel.kallsyms])": "overhead",
            "[.] do_lookup_x (ld-linux-x86-64.so.2)": "unclassified",
        }
        for symbol, part in cases.items():
            self.assertEqual(profile_step.part_of(symbol), part, symbol)

    def test_report_lines_are_summed_by_symbol_and_the_short_run_subtracted(self):
        report = ("# header\n\n"
                  "    50.00%\t100\tnormtool\t[.] nt::(anonymous namespace)::block<12, 2>\n"
                  "    10.00%\t20\tlibc.so.6\t[.] __memset_avx512_unaligned_erms\n"
                  "     5.00%\t10\tnormtool\t[.] nt::(anonymous namespace)::softmax_row<float>\n")
        long = profile_step.parse_report(report)
        self.assertEqual(long["[.] nt::(anonymous namespace)::block<12, 2> (normtool)"], 100)
        short = {"[.] __memset_avx512_unaligned_erms (libc.so.6)": 15, "[.] start_up_only (normtool)": 7}
        parts, diff = profile_step.split(short, long)
        self.assertEqual(parts["products"], 100)
        self.assertEqual(parts["overhead"], 5)
        self.assertEqual(parts["attention"], 10)
        self.assertEqual(parts["unclassified"], -7)  # start-up that only the short run sampled shows, not hides
        self.assertEqual(diff["[.] start_up_only (normtool)"], -7)


class Roofline(unittest.TestCase):
    def test_transformer_parts_add_up_to_work(self):
        for c, gflop in ((LM_SMALL, 10.88), (LM_DEEP18, 4.18)):
            p = profile_step.transformer_parts(c)
            flops, mb = bench_vs_torch.work(c)
            self.assertAlmostEqual(p["products"], flops, places=9)
            self.assertAlmostEqual(p["products"], gflop, delta=0.005)  # docs/performance.md's figures
            self.assertAlmostEqual(sum(v for k, v in p.items() if k != "products"), mb, delta=1e-6 * mb)

    def test_encoder_decoder_and_rnnsearch_counts(self):
        ed = {"data": {"max_len": 2}, "model": {"arch": "encoder-decoder", "d_model": 4, "n_layers": 1,
                                                 "n_dec_layers": 1, "n_heads": 1, "d_ff": 8},
              "train": {"batch_size": 1, "optimizer": "sgd"}}
        p = profile_step.encdec_parts(ed, params=100)
        # rows: 2 source, 3 target; Linears 2*1*(64+64) + 3*(96+64) + 2*32 + 3*4*256; attention
        # 12*4*4 + (6*4*3*4 + 12*3*2*4)
        lin = 2 * 128 + 3 * 160 + 2 * 32 + 3 * 1024
        self.assertAlmostEqual(p["products"] * 1e9, 6 * lin + 192 + 288 + 288)
        self.assertAlmostEqual(p["optimizer"], 7 * 100 * 4e-6)
        rs = {"data": {"max_len": 2}, "model": {"arch": "rnnsearch", "d_emb": 2, "d_model": 4},
              "train": {"batch_size": 1, "optimizer": "adam"}}
        q = profile_step.rnnsearch_parts(rs, params=10)
        self.assertAlmostEqual(q["attention"], 8 * 3 * 2 * 8 * 4e-6)
        self.assertAlmostEqual(q["optimizer"], 9 * 10 * 4e-6)
        self.assertGreater(q["products"], 0)

    def test_table_gives_the_share_of_both_peaks(self):
        # 10 GFLOP in a 100 ms step is 100 GFLOP/s: 0.50 of a 200 GFLOP/s kernel, 0.40 of OpenBLAS's 250
        share = dict.fromkeys(profile_step.ORDER, 0.0)
        share["products"] = 1.0
        row = {"step_ms": 100.0, "cpu_ms": 100.0, "share": share, "bound": {"products": 50.0}, "gflop": 10.0}
        one = {"peak": 200.0, "bw": 50.0, "blas_peak": 250.0, "rows": {"lm-x": row}}
        text = profile_step.table([one], "normtool-avx512", "SkylakeX")
        line = next(x for x in text.splitlines() if x.startswith("| lm-x |"))
        cells = [c.strip() for c in line.strip("|").split("|")]
        header = next(x for x in text.splitlines() if x.startswith("| config |"))
        names = [c.strip() for c in header.strip("|").split("|")]
        self.assertEqual(len(cells), len(names))
        self.assertEqual(cells[names.index("FLOPs / (step x peak)")], "0.50")
        self.assertEqual(cells[names.index("FLOPs / (step x OpenBLAS peak)")], "0.40")
        self.assertIn("250.0 in OpenBLAS's `SkylakeX` kernels", text)
        self.assertNotIn("rounds", text)
        # without OpenBLAS: no share of its peak, and the line says why
        text = profile_step.table([dict(one, blas_peak=None)], "normtool-avx512", "eigen-avx512")
        line = next(x for x in text.splitlines() if x.startswith("| lm-x |"))
        self.assertEqual([c.strip() for c in line.strip("|").split("|")][names.index("FLOPs / (step x OpenBLAS peak)")],
                         "-")
        self.assertIn("not loaded: `NORMTOOL_GEMM=openblas` ran `eigen-avx512`", text)

    def test_rounds_give_medians_and_each_rounds_share(self):
        # three rounds: steps 100, 125, 80 ms against peaks 200, 160, 250 (OpenBLAS 250, 200, 250): the
        # shares pair each step with its own round's peak; the step is the median step, 100 ms
        share = dict.fromkeys(profile_step.ORDER, 0.0)
        share["products"] = 1.0
        rounds = [{"peak": p, "bw": 50.0, "blas_peak": b,
                   "rows": {"lm-x": {"step_ms": t, "cpu_ms": t, "share": share, "bound": {"products": 50.0},
                                     "gflop": 10.0}}}
                  for t, p, b in [(100.0, 200.0, 250.0), (125.0, 160.0, 200.0), (80.0, 250.0, 250.0)]]
        text = profile_step.table(rounds, "normtool-avx512", "SkylakeX")
        header = next(x for x in text.splitlines() if x.startswith("| config |"))
        names = [c.strip() for c in header.strip("|").split("|")]
        cells = [c.strip() for c in next(x for x in text.splitlines() if x.startswith("| lm-x |")).strip("|").split("|")]
        self.assertEqual(cells[names.index("step ms")], "100.0")
        self.assertEqual(cells[names.index("FLOPs / (step x peak)")], "0.50 (0.50-0.50)")
        self.assertEqual(cells[names.index("FLOPs / (step x OpenBLAS peak)")], "0.40 (0.40-0.50)")
        self.assertIn("Medians over 3 rounds", text)
        self.assertIn("SGEMM peak 200.0 GFLOP/s", text)

if __name__ == "__main__":
    unittest.main()


class BenchVsTorch(unittest.TestCase):
    def test_the_cpu_is_named_by_its_first_processor_with_family_and_model(self):
        with tempfile.NamedTemporaryFile("w", suffix=".cpuinfo") as f:
            f.write("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n"
                    "model name\t: AMD EPYC\n\nprocessor\t: 1\ncpu family\t: 26\nmodel name\t: other\n")
            f.flush()
            self.assertEqual(bench_vs_torch.cpu_name(f.name), "AMD EPYC (family 25, model 17)")
        self.assertEqual(bench_vs_torch.cpu_name("/nonexistent/cpuinfo"), "an unnamed CPU")

    def test_a_variant_is_never_written_into_the_tables(self):
        with tempfile.TemporaryDirectory() as tmp:
            doc = os.path.join(tmp, "doc.md")
            p = subprocess.run([sys.executable, bench_vs_torch.__file__, "--set", "model.norm.type=dyt", "--update", doc],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 2)
            self.assertIn("--set", p.stderr)
            self.assertFalse(os.path.exists(doc))
