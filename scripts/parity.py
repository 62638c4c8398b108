#!/usr/bin/python3
"""normtool against the PyTorch peer over seeds: the same config, one run per seed on each side
(one math thread each), then both means, their standard errors and a Welch test.

  scripts/parity.py --config configs/parity/post.json --seeds 1-20
  scripts/parity.py --suite                     # the pre and post parity configs, seeds 1-10
  scripts/parity.py --config C --set model.init=xavier --seeds 1,2,3 --curve --out runs/parity

Both sides read the same data: a dataset default that is each implementation's own (gettext-de's
catalog list) is passed to both as normtool resolves it, and the run stops when the two report
different pairs (their counts or their hash).

Exit status: 0 when every compared config agrees (|mean difference| <= 2 standard errors of
the difference), 1 when one does not, 2 on bad usage or a run that failed.
Runs the peer with Debian's /usr/bin/python3 (python3-torch); needs nothing but numpy here.
"""
import argparse, concurrent.futures as cf, json, math, os, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUITE = ["configs/parity/pre.json", "configs/parity/post.json"]


def parse_seeds(text):
    seeds = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        seeds += list(range(int(a), int(b) + 1)) if b else [int(a)]
    return seeds


# ---- Student's t distribution, for the Welch test (regularized incomplete beta, Lentz's method)
def _betacf(a, b, x):
    tiny, qab, qap, qam = 1e-300, a + b, a + 1, a - 1
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def betainc(a, b, x):
    """I_x(a, b)."""
    if x <= 0 or x >= 1:
        return 0.0 if x <= 0 else 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1 - x) / b


def t_two_sided_p(t, df):
    return betainc(df / 2, 0.5, df / (df + t * t))


def describe(values):
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else float("nan")
    return n, mean, sd, sd / math.sqrt(n)


def welch(a, b):
    """(difference of means, its standard error, t, df, two-sided p)."""
    na, ma, sa, _ = describe(a)
    nb, mb, sb, _ = describe(b)
    va, vb = sa * sa / na, sb * sb / nb
    se = math.sqrt(va + vb)
    if se == 0:
        return ma - mb, 0.0, float("inf") if ma != mb else 0.0, float("nan"), 0.0 if ma != mb else 1.0
    df = (va + vb) ** 2 / (va * va / (na - 1) + vb * vb / (nb - 1))
    t = (ma - mb) / se
    return ma - mb, se, t, df, t_two_sided_p(t, df)


# ---- running both implementations
def run_one(impl, config, sets, seed, out, args):
    d = os.path.join(out, f"{impl}-seed{seed}")
    overrides = list(sets) + [f"seed={seed}", "train.threads=1"]
    cmd = ([args.normtool, "run"] if impl == "normtool" else ["/usr/bin/python3", args.peer, "run"]) + ["--config", config]
    for o in overrides:
        cmd += ["--set", o]
    cmd += ["--out", d]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    summary = os.path.join(d, "summary.json")
    if not os.path.exists(summary):
        raise RuntimeError(f"{impl} seed {seed} failed (exit {r.returncode}): {r.stderr.strip()[-500:]}")
    with open(summary) as f:
        s = json.load(f)
    curve = {}
    with open(os.path.join(d, "metrics.jsonl")) as f:
        for line in f:
            m = json.loads(line)
            if m["split"] == "train" and m["loss"] is not None:
                curve[m["step"]] = m["loss"]
    return impl, seed, s, curve


def same_data(config, sets, args):
    """The overrides that make both sides read the same data: a dataset's defaults are each
    implementation's own (gettext-de's catalog list is "the project's documented default"), so
    normtool's resolved data.catalogs is passed to both."""
    cmd = [args.normtool, "run", "--config", config, "--print-config"]
    for o in sets:
        cmd += ["--set", o]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed (exit {r.returncode}): {r.stderr.strip()[-500:]}")
    data = json.loads(r.stdout)["data"]
    if data.get("dataset") == "gettext-de" and not any(o.startswith("data.catalogs=") for o in sets):
        return list(sets) + ["data.catalogs=" + json.dumps(data["catalogs"])]
    return list(sets)


def corpus(summary):
    """(train pairs, validation pairs, FNV-1a hash of the pairs) of a seq2seq run's summary (the hash
    is normtool's corpus_fnv1a64, the peer's hash); None for other data."""
    d = summary.get("data")
    if not isinstance(d, dict) or "train_pairs" not in d:
        return None
    return d["train_pairs"], d["val_pairs"], d.get("corpus_fnv1a64", d.get("hash"))


def compare(config, args, out):
    jobs = [(impl, seed) for seed in args.seeds for impl in ("normtool", "peer")]
    results = {"normtool": {}, "peer": {}}
    sets = same_data(config, args.set, args)
    with cf.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(run_one, impl, config, sets, seed, out, args) for impl, seed in jobs]
        for fut in cf.as_completed(futures):
            impl, seed, s, curve = fut.result()
            results[impl][seed] = (s, curve)
    pairs = {impl: corpus(results[impl][args.seeds[0]][0]) for impl in results}
    if pairs["normtool"] != pairs["peer"]:
        raise RuntimeError(f"the two sides read different data: (train pairs, validation pairs, hash) {pairs}")
    values = {impl: [results[impl][s][0][args.metric] for s in args.seeds] for impl in results}
    for impl, v in values.items():
        if any(x is None for x in v):
            raise RuntimeError(f"{impl}: {args.metric} missing in some runs (diverged?): {v}")
    diff, se, t, df, p = welch(values["normtool"], values["peer"])
    agree = abs(diff) <= 2 * se
    print(f"{config} {' '.join(sets)}: {args.metric} over seeds {args.seeds[0]}..{args.seeds[-1]} "
          f"(n = {len(args.seeds)} a side), one thread")
    print(f"  {'':9} {'mean':>8} {'sd':>8} {'se':>8}")
    for impl in ("normtool", "peer"):
        n, mean, sd, sem = describe(values[impl])
        print(f"  {impl:9} {mean:8.4f} {sd:8.4f} {sem:8.4f}")
    print(f"  difference {diff:+.4f} (se {se:.4f}, {abs(diff) / se if se else 0:.2f} se); Welch t = {t:.2f}, "
          f"df = {df:.1f}, p = {p:.3g}: {'AGREE' if agree else 'DIFFER'} (criterion |diff| <= 2 se)")
    if args.per_seed:
        print("  seed  normtool  peer")
        for s, a, b in zip(args.seeds, values["normtool"], values["peer"]):
            print(f"  {s:4}  {a:8.4f}  {b:8.4f}")
    if args.curve:
        steps = sorted(set.intersection(*(set(results[i][s][1]) for i in results for s in args.seeds)))
        print("  mean train loss  step: " + " ".join(f"{st:6}" for st in steps))
        for impl in ("normtool", "peer"):
            means = [sum(results[impl][s][1][st] for s in args.seeds) / len(args.seeds) for st in steps]
            print(f"  {impl:>21}: " + " ".join(f"{m:6.3f}" for m in means))
        ts = [welch([results["normtool"][s][1][st] for s in args.seeds], [results["peer"][s][1][st] for s in args.seeds])[2]
              for st in steps]
        print(f"  {'Welch t':>21}: " + " ".join(f"{t:6.2f}" for t in ts))
    return {"config": config, "overrides": sets, "metric": args.metric, "seeds": args.seeds,
            "normtool": values["normtool"], "peer": values["peer"], "difference": diff, "se": se, "t": t, "df": df,
            "p": p, "agree": agree}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", action="append", default=[], help="a config (repeatable)")
    ap.add_argument("--suite", action="store_true", help="the parity configs: " + ", ".join(SUITE))
    ap.add_argument("--set", action="append", default=[], help="an override for both implementations")
    ap.add_argument("--seeds", type=parse_seeds, default=parse_seeds("1-10"), help="e.g. 1-20 or 1,2,5 (default 1-10)")
    ap.add_argument("--metric", default="final_val_loss", help="a summary.json field (default final_val_loss)")
    ap.add_argument("--jobs", type=int, default=2, help="runs at a time (default 2)")
    ap.add_argument("--out", help="keep the run directories here (default: a temporary folder)")
    ap.add_argument("--per-seed", action="store_true", help="print each seed's values")
    ap.add_argument("--curve", action="store_true", help="print the mean train loss at every logged step")
    ap.add_argument("--json", help="write the comparison here")
    ap.add_argument("--normtool", default=os.path.join(ROOT, "build", "normtool"))
    ap.add_argument("--peer", default=os.path.join(ROOT, "scripts", "torch_twin.py"),
                    help="a PyTorch implementation of normtool's config format (default: scripts/torch_twin.py)")
    args = ap.parse_args()
    configs = args.config + (SUITE if args.suite else [])
    if not configs:
        ap.error("give --config FILE or --suite")
    if len(args.seeds) < 2:
        ap.error("at least two seeds: a standard error needs them")
    for path, what in ((args.normtool, "normtool binary (scripts/setup.sh builds it)"), (args.peer, "peer")):
        if not os.path.exists(path):
            print(f"error: no {what} at {path}", file=sys.stderr)
            return 2
    out = args.out or tempfile.mkdtemp(prefix="normtool-parity-")
    comparisons = []
    try:
        for i, config in enumerate(configs):
            comparisons.append(compare(config, args, os.path.join(out, str(i))))
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    finally:
        if not args.out:
            subprocess.run(["rm", "-rf", out])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(comparisons, f, indent=2)
    return 0 if all(c["agree"] for c in comparisons) else 1


if __name__ == "__main__":
    sys.exit(main())
