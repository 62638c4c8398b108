#!/usr/bin/python3
"""Where a training step's time goes, per family, at one thread: products, attention, norms, elementwise,
optimizer and framework overhead, each against its roofline bound.

  scripts/profile_step.py                                  lm-small lm-deep18 encdec-deep12 rnnsearch-tiny
  scripts/profile_step.py --configs lm-deep18 --symbols    also print every symbol with its part
  scripts/profile_step.py --update docs/performance.md     rewrite the table between its markers
  scripts/profile_step.py --runs 4                         four rounds: medians, and each ratio's range

Each config runs twice under `perf record -e cpu-clock` (train.threads=1, evaluation and statistics off), with
SHORT and LONG steps; the samples of the short run are subtracted from the long one's symbol by symbol, so
start-up (data, model build, the last evaluation) cancels and what is left is LONG - SHORT training steps.
Every symbol is given a part by the first pattern of PARTS its name matches; the share of samples no pattern
matches is printed beside the table. The step time is the median step_ms of the long run's metrics.jsonl; a
part's ms = its share x that time. Percentages are usable on a busy machine, absolute times are not.

With --runs N the machine's limits and every config are measured N times, round by round (a round: the
limits, then each config once). Each cell is then the median over the rounds, and the two FLOP-share columns
give the median of each round's share (step and peak from the same round) with the lowest and highest.
"""
import argparse, json, os, re, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_vs_torch import ROOT, machine_limits, resolved  # noqa: E402

CONFIGS = ["lm-small", "lm-deep18", "encdec-deep12", "rnnsearch-tiny"]
STEPS = {"lm-small": (5, 25), "lm-deep18": (10, 50), "encdec-deep12": (5, 30), "rnnsearch-tiny": (5, 30)}
# A symbol's part: the first pattern its demangled name (or library) matches. Order matters: a lambda inside
# an op's backward names the op, so op names come before the generic helpers.
PARTS = [
    ("products", r"\bblock<\d+, ?\d+>|product_rows|\(anonymous namespace\)::pack\b|transpose_floats|gemm|"
                 r"openblas|sgemm_|Eigen::internal::gebp|gemm_pack|general_matrix_matrix|\blinear<|linear_backward|"
                 r"linear_forward"),
    ("attention", r"attention|softmax|merge_heads|split_heads|permute_heads|causal_mask|nt::heads::"),
    ("norms", r"layernorm|rmsnorm|prmsnorm|scalenorm|batchnorm|deepnorm|dyt|weightnorm|RowNorm|norm_site"),
    ("optimizer", r"OptimizerState|global_norm|clip_to_norm|adam|schedule"),
    ("elementwise", r"bias|activation|gelu|relu|tanh|residual|gru|lstm|cross_entropy|embedding|expf|logf|"
                    r"\bput<|axpby|\badd\b|add_backward|\bmul\b|mul_backward|scale|keep_rows|take_rows|put_rows|"
                    r"concat_cols|masked_mean|cast|pointwise|gate|mean_rows|reduce"),
    ("overhead", r"Graph|Arena|arena|malloc|free|memset|memmove|memcpy|operator new|operator delete|\[k\]|"
                 r"for_row_blocks|parallel|_M_invoke|std::|Session|gomp|GOMP|\brows\b|Tensor|Params"),
]
ORDER = ["products", "attention", "norms", "elementwise", "optimizer", "overhead", "unclassified"]
HZ = 1999


def part_of(symbol):
    for name, pattern in PARTS:
        if re.search(pattern, symbol):
            return name
    return "unclassified"


def parse_report(text):
    """{symbol: samples} from `perf report --stdio -n --sort dso,symbol -t '\\t'` output."""
    counts = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        f = [x.strip() for x in line.split("\t")]
        if len(f) < 4 or not f[1].isdigit():
            continue
        key = f"{f[3]} ({f[2]})"
        counts[key] = counts.get(key, 0) + int(f[1])
    return counts


def profile(name, steps, tmp):
    """({symbol: samples} of one run, median step_ms of its metrics.jsonl after step 0)."""
    out, data = os.path.join(tmp, f"{name}-{steps}"), os.path.join(tmp, f"{name}-{steps}.data")
    cmd = ["perf", "record", "-q", "-e", "cpu-clock", "-F", str(HZ), "-o", data, "--",
           os.path.join(ROOT, "build", "normtool"), "run", "--config", f"configs/{name}.json", "--out", out]
    for s in ("train.threads=1", f"train.steps={steps}", "train.stats_every=0", "train.eval_every=1000000",
              "train.eval_batches=1", "train.log_every=1"):
        cmd += ["--set", s]
    subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
    rep = subprocess.run(["perf", "report", "-i", data, "--no-children", "--stdio", "-n", "--sort", "dso,symbol",
                          "-t", "\t", "--percent-limit", "0"], capture_output=True, text=True, check=True).stdout
    with open(os.path.join(out, "metrics.jsonl")) as f:
        rows = [json.loads(x) for x in f]
    ms = [r["step_ms"] for r in rows if r.get("split") == "train" and r.get("step_ms") and r["step"] > 0]
    return parse_report(rep), statistics.median(ms)


def split(short, long):
    """{part: samples} of long - short, and {symbol: samples} of the same difference."""
    diff = {k: long.get(k, 0) - short.get(k, 0) for k in set(long) | set(short)}
    parts = dict.fromkeys(ORDER, 0)
    for k, v in diff.items():
        parts[part_of(k)] += v
    return parts, diff


def transformer_parts(c):
    """GFLOP of the products and MB of each memory-bound part, as bench_vs_torch.work() counts (their sum is
    work()'s): norms 5 floats an element (forward 2, backward 3), residual adds 6, activation 7, softmax 5 an
    attention entry, embeddings 3, cross-entropy 2 a logit, the optimizer's streams over the parameters."""
    m, tr = c["model"], c["train"]
    B, T, C, L, F, V = tr["batch_size"], c["data"]["seq_len"], m["d_model"], m["n_layers"], m["d_ff"], 256
    N, opt = B * T, (7 if tr["optimizer"] in ("adam", "adamw") else 5) + 2
    lin = L * (4 * C * C + 2 * C * F) + C * V
    E = B * m["n_heads"] * T * (T + 1) // 2
    params = lin + L * (4 * C + F + 4 * C) + (V + T) * C + V
    return {"products": (6 * N * lin + L * 6 * B * C * T * (T + 1)) / 1e9, "attention": L * 5 * E * 4e-6,
            "norms": L * 2 * 5 * N * C * 4e-6,
            "elementwise": (L * (12 * N * C + 7 * N * F) + 3 * N * C + 2 * N * V) * 4e-6,
            "optimizer": opt * params * 4e-6}


def encdec_parts(c, params):
    """The same counts for the encoder-decoder (Post-LN or Pre-LN, 2 norms an encoder layer, 3 a decoder
    layer), every source and target row max_len long: an upper count, since a batch is as long as its rows."""
    m, tr = c["model"], c["train"]
    B, S, C, F, V, H = tr["batch_size"], c["data"]["max_len"], m["d_model"], m["d_ff"], 256, m["n_heads"]
    Le, Ld, T = m["n_layers"], m.get("n_dec_layers") or m["n_layers"], S + 1
    Ns, Nt, opt = B * S, B * T, (7 if tr["optimizer"] in ("adam", "adamw") else 5) + 2
    lin_rows = Ns * Le * (4 * C * C + 2 * C * F) + Nt * Ld * (6 * C * C + 2 * C * F) + Ns * Ld * 2 * C * C + Nt * C * V
    att = Le * 12 * B * S * S * C + Ld * (6 * B * C * T * (T + 1) + 12 * B * T * S * C)
    E = Le * B * H * S * S + Ld * B * H * (T * (T + 1) // 2 + T * S)
    return {"products": (6 * lin_rows + att) / 1e9, "attention": 5 * E * 4e-6,
            "norms": (Le * 2 * Ns + Ld * 3 * Nt) * 5 * C * 4e-6,
            "elementwise": (Le * (12 * Ns * C + 7 * Ns * F) + Ld * (18 * Nt * C + 7 * Nt * F) + 3 * (Ns + Nt) * C
                            + 2 * Nt * V) * 4e-6,
            "optimizer": opt * params * 4e-6}


def rnnsearch_parts(c, params):
    """RNNSearch (model/rnnsearch.h): the GRUs' input and recurrent products, attention's keys, query and
    context products, the readout and output layer; memory: each GRU's pointwise pass 24 floats a state
    element (forward 10, backward 14), its norm sites 30 (6H wide, 5 a value), additive attention 8 floats a
    (target, source, D) entry (keys read forward, read and their gradient added backward: an upper count, the
    keys of a batch fit in the caches), embeddings, readout tanh, cross-entropy. Rows at max_len: upper count."""
    m, tr = c["model"], c["train"]
    B, S, E, Hs, V = tr["batch_size"], c["data"]["max_len"], m["d_emb"], m["d_model"], 256
    T, D = S + 1, 2 * Hs
    Ns, Nt, opt = B * S, B * T, (7 if tr["optimizer"] in ("adam", "adamw") else 5) + 2
    lin_rows = (2 * Ns * 3 * Hs * (E + Hs) + Nt * 3 * Hs * (E + Hs) + Nt * 3 * Hs * (D + Hs) + Ns * D * D
                + Nt * D * Hs + B * Hs * D + Nt * E * (Hs + E + D) + Nt * V * E)
    context = 3 * 2 * B * T * S * D
    rows = 2 * Ns + 2 * Nt
    return {"products": (6 * lin_rows + context) / 1e9, "attention": 8 * B * T * S * D * 4e-6,
            "norms": (rows * 30 * Hs + (Ns + Nt) * 5 * D + Nt * 5 * E) * 4e-6,
            "elementwise": (rows * 24 * Hs + 3 * (Ns + Nt) * E + 7 * Nt * E + 2 * Nt * V) * 4e-6,
            "optimizer": opt * params * 4e-6}


def parts_bound(c, params):
    arch = c["model"]["arch"]
    if arch == "transformer":
        return transformer_parts(c)
    return encdec_parts(c, params) if arch == "encoder-decoder" else rnnsearch_parts(c, params)


def measure(name, peak, bw, tmp, symbols):
    """One table row: the step time, each part's share and ms, its bound, and the unclassified share."""
    short, long = STEPS[name]
    s, _ = profile(name, short, tmp)
    l, step_ms = profile(name, long, tmp)
    parts, diff = split(s, l)
    total = sum(parts.values())
    if symbols:
        for k, v in sorted(diff.items(), key=lambda kv: -kv[1])[:60]:
            print(f"{name}\t{100 * v / total:6.2f}%\t{part_of(k)}\t{k[:150]}")
    with open(os.path.join(tmp, f"{name}-{long}", "summary.json")) as f:
        params = json.load(f)["params"]
    w = parts_bound(resolved(f"configs/{name}.json"), params)
    bound = {p: (w[p] / peak * 1e3 if p == "products" else w[p] / bw) for p in w}
    cpu_ms = total / HZ * 1e3 / (long - short)
    return {"step_ms": step_ms, "cpu_ms": cpu_ms, "share": {p: parts[p] / total for p in ORDER}, "bound": bound,
            "gflop": w["products"], "mb": sum(v for p, v in w.items() if p != "products")}


def median_rows(rounds):
    """One row a config from the rounds' rows: the median of each figure; "ratios" keeps each round's two
    FLOP shares (of normtool's peak and of OpenBLAS's, None without one), for their ranges."""
    out = {}
    for name in rounds[0]["rows"]:
        rs = [r["rows"][name] for r in rounds]
        med = lambda f: statistics.median(f(x) for x in rs)  # noqa: E731
        out[name] = {"step_ms": med(lambda x: x["step_ms"]), "cpu_ms": med(lambda x: x["cpu_ms"]),
                     "share": {p: med(lambda x: x["share"][p]) for p in ORDER},
                     "bound": {p: med(lambda x: x["bound"][p]) for p in rs[0]["bound"]},
                     "gflop": rs[0]["gflop"],
                     "ratios": [(x["gflop"] / (x["step_ms"] * 1e-3) / r["peak"],
                                 x["gflop"] / (x["step_ms"] * 1e-3) / r["blas_peak"] if r["blas_peak"] else None)
                                for x, r in zip(rs, rounds)]}
    return out


def share_cell(values):
    """The median of the rounds' shares, and with more than one round their lowest and highest."""
    if values[0] is None:
        return "-"
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def table(rounds, kernels, blas_kernels):
    """rounds: each {"peak", "bw", "blas_peak" (None when NORMTOOL_GEMM=openblas found no OpenBLAS to load:
    its column is then "-"), "rows"}."""
    n = len(rounds)
    peak, bw = statistics.median(r["peak"] for r in rounds), statistics.median(r["bw"] for r in rounds)
    blas_peak = statistics.median(r["blas_peak"] for r in rounds) if rounds[0]["blas_peak"] else None
    rows = median_rows(rounds)
    blas_text = (f"{blas_peak:.1f} in OpenBLAS's `{blas_kernels}` kernels" if blas_peak else
                 f"OpenBLAS's not measured (not loaded: `NORMTOOL_GEMM=openblas` ran `{blas_kernels}`)")
    over = (f"Medians over {n} rounds (`scripts/profile_step.py --runs {n}`: the limits, then each config, "
            "round by round); the share columns give each round's share, step and peak from that round, as median "
            "(lowest-highest). " if n > 1 else "")
    lines = [f"One thread, products in `{kernels}` kernels; one core's SGEMM peak {peak:.1f} GFLOP/s in them, "
             f"{blas_text}, and triad bandwidth {bw:.1f} GB/s "
             "(`build/bench/normtool_bench --benchmark_filter=MachineLimits`, the second with `NORMTOOL_GEMM=openblas`, "
             f"same run). {over}Each cell: ms per step (share of the step's samples) / its bound in ms.", "",
             "| config | step ms | CPU ms (perf) | " + " | ".join(ORDER[:-1]) + " | unclassified | "
             "model GFLOP | FLOPs / (step x peak) | FLOPs / (step x OpenBLAS peak) | bound ms | % of bound |",
             "|---" * (len(ORDER) + 8) + "|"]
    for name, r in rows.items():
        t, cells = r["step_ms"], []
        for p in ORDER[:-1]:
            b = r["bound"].get(p)
            cells.append(f"{r['share'][p] * t:.1f} ({100 * r['share'][p]:.0f}%)" + (f" / {b:.1f}" if b else ""))
        total_bound = sum(r["bound"].values())
        lines.append(f"| {name} | {t:.1f} | {r['cpu_ms']:.1f} | " + " | ".join(cells) +
                     f" | {100 * r['share']['unclassified']:.1f}% | {r['gflop']:.2f} | "
                     f"{share_cell([a for a, _ in r['ratios']])} | {share_cell([b for _, b in r['ratios']])} | "
                     f"{total_bound:.1f} | {100 * total_bound / t:.0f}% |")
    busy = [n for n, r in rows.items() if r["step_ms"] > 1.2 * r["cpu_ms"]]
    if busy:
        lines += ["", f"The machine was busy during this run: the step time of {', '.join(busy)} exceeds the CPU time "
                  "perf sampled by more than a fifth (the process waited for a core), so their ms are not the "
                  "engine's; the shares are."]
    return "\n".join(lines) + "\n"


def update(path, text):
    begin, end = ("<!-- generated by scripts/profile_step.py: begin -->",
                  "<!-- generated by scripts/profile_step.py: end -->")
    with open(path) as f:
        doc = f.read()
    i, j = doc.find(begin), doc.find(end)
    if i < 0 or j < i:
        sys.exit(f"error: {path} has no markers {begin!r} ... {end!r}")
    with open(path, "w") as f:
        f.write(doc[:i + len(begin)] + "\n" + text + doc[j:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--configs", nargs="+", default=CONFIGS, choices=CONFIGS)
    ap.add_argument("--symbols", action="store_true", help="print each config's top symbols with their part")
    ap.add_argument("--update", nargs="+", default=[], help="rewrite the generated part of these markdown files")
    ap.add_argument("--runs", type=int, default=1, help="rounds of measurement (default 1): medians and ranges")
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs takes a count of 1 or more")
    rounds = []
    for _ in range(args.runs):
        peak, bw, kernels = machine_limits()
        blas_peak, _, blas_kernels = machine_limits("openblas")
        if blas_kernels.startswith(("eigen", "normtool")):  # no OpenBLAS to load: its products ran elsewhere
            blas_peak = None
        with tempfile.TemporaryDirectory(prefix="normtool-profile-") as tmp:
            rows = {name: measure(name, peak, bw, tmp, args.symbols) for name in args.configs}
        rounds.append({"peak": peak, "bw": bw, "blas_peak": blas_peak, "rows": rows})
    text = table(rounds, kernels, blas_kernels)
    print(text)
    for path in args.update:
        update(path, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
