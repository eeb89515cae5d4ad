#!/usr/bin/env python3
"""The engine's cold decision time beside CANN's own host tiling of the same problems.

Both run the 24 MatMulV3 golden shapes (tests/data/cann950/cases.json) pinned to one core:

  * ours: tiling_bench's BM_MedianOverGoldenShapes (the median over the shapes of the per-shape
    time of one Decide(), trace on and off);
  * CANN's: a build of CANN's mat_mul_v3 host tiling made outside this repository (a test oracle
    that reads one JSON problem a line and, with ORACLE_BENCH_REPS=R, tiles each problem R more
    times and prints `bench_ns N`, the median CPU time of one tiling, on stderr). Build it with
    -O2 for a fair comparison.

    bench/cann_decision_speed.py --oracle PATH [--tiling-bench build/bin/tiling_bench]
                                 [--reps 2000] [--cpu 1] [--rounds 3]

Prints each median and the ratio. Nothing here asserts a time: bench/RESULTS.md records them.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "..", "tests", "data", "cann950", "cases.json")


def oracle_line(case_input):
    """The oracle's JSON problem for one golden case's input."""
    p = {k: case_input[k] for k in ("m", "n", "k", "dtype_a", "dtype_b", "dtype_c", "trans_a",
                                     "trans_b", "format_b", "bias", "hf32",
                                     "force_grp_acc_fp32")}
    if case_input.get("bias_dtype"):
        p["bias_dtype"] = case_input["bias_dtype"]
    p.update(case_input["platform"])
    return json.dumps(p)


def cann_median_ns(oracle, cpu, reps):
    cases = json.load(open(CASES))["cases"]
    lines = "".join(oracle_line(c["input"]) + "\n" for c in cases)
    env = dict(os.environ, ORACLE_BENCH_REPS=str(reps))
    run = subprocess.run(["taskset", "-c", str(cpu), oracle], input=lines, env=env,
                         capture_output=True, text=True, check=True)
    per_shape = [int(v) for v in re.findall(r"bench_ns (\d+)", run.stderr)]
    if len(per_shape) != len(cases):
        sys.exit(f"cann_decision_speed: the oracle timed {len(per_shape)} of {len(cases)} shapes")
    return statistics.median(per_shape)


def our_medians_ns(tiling_bench, cpu):
    run = subprocess.run(["taskset", "-c", str(cpu), tiling_bench,
                          "--benchmark_filter=BM_MedianOverGoldenShapes",
                          "--benchmark_format=json"], capture_output=True, text=True, check=True)
    out = {}
    for bench in json.loads(run.stdout)["benchmarks"]:
        explain = bench["name"].split("explain:")[1].split("/")[0]
        out[explain] = bench["median_ns"]  # the counter: median over shapes, in ns
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oracle", required=True)
    parser.add_argument("--tiling-bench", default=os.path.join(HERE, "..", "build", "bin",
                                                               "tiling_bench"))
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--cpu", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for round_index in range(args.rounds):
        cann = cann_median_ns(args.oracle, args.cpu, args.reps)
        ours = our_medians_ns(args.tiling_bench, args.cpu)
        print(f"round {round_index + 1}: CANN {cann / 1000:.2f} us; ours trace on "
              f"{ours['1'] / 1000:.2f} us ({cann / ours['1']:.1f}x), trace off "
              f"{ours['0'] / 1000:.2f} us ({cann / ours['0']:.1f}x)")


if __name__ == "__main__":
    main()
