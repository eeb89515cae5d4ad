#!/usr/bin/env python3
"""Times each row of an npu-measured-matmul/1 file the way a user could before
kernel schedules existed: CANN's own tiling for the row's shape, timing only,
with `tilingctl execute --local` (any build), on the row's core count and clock.
Prints one line per row (id, measured us, predicted us, signed error) and the
median / max |error|, for bench/CALIBRATION.md's "before" column.

  bench/calibration_baseline.py TILINGCTL tests/data/calibration/ascend_measured.json
"""
import json
import statistics
import subprocess
import sys


def main():
    tilingctl, path = sys.argv[1], sys.argv[2]
    rows = json.load(open(path))["rows"]
    errors = []
    for row in rows:
        args = [tilingctl, "execute", "--local", "--timing-only", "--json",
                "--m", str(row["m"]), "--n", str(row["n"]), "--k", str(row["k"]),
                "--dtype_a", row["dtype_in"], "--dtype_b", row["dtype_in"],
                "--dtype_c", row["dtype_out"], "--aic_num", str(row["aic"]),
                "--aiv_num", str(2 * row["aic"])]
        if row.get("trans_a"):
            args.append("--trans_a")
        if row.get("trans_b"):
            args.append("--trans_b")
        if row.get("freq_mhz"):
            args += ["--cube_freq_mhz", str(row["freq_mhz"])]
        out = subprocess.run(args, capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{row['id']:<24} failed: {out.stderr.strip()}")
            continue
        answer = json.loads(out.stdout)
        predicted = answer["timing"]["predictedTimeUs"]
        measured = row["measured"]["task_duration_us"]
        error = (predicted - measured) / measured * 100
        errors.append(abs(error))
        print(f"{row['id']:<24} {measured:12.3f} {predicted:12.3f} {error:+7.1f}%  "
              f"{answer['tiling']['strategy']}")
    print(f"{len(errors)} rows: median |error| {statistics.median(errors):.1f}%, "
          f"max |error| {max(errors):.1f}%")


if __name__ == "__main__":
    main()
