#!/usr/bin/env python3
"""The timing model against published msprof measurements of real chips.

Runs `tilingctl calibrate FILE --local --json` on an npu-measured-matmul/1 or
/2 file (tests/data/calibration/ascend_measured.json and
ascend_measured_quant.json) and checks the accuracy targets of the emulated
time:

  * every row ran (a row that cannot be read or run is a failure);
  * the median |error| of the task duration over the rows is at most 10%
    (--median-limit: the figure the model reaches today, so that a change
    that worsens it fails), and the largest at most 25%;
  * every per-pipe time a row publishes (aic_mac / mte1 / mte2 / fixpipe,
    aiv_vec / mte2 / mte3) is predicted within 20%;
  * except the figures --deviations lists (known_deviations.json beside the
    data): each stays within the larger limit given there, for the reason
    given there. A listed figure that comes back within the target is
    reported, so the list only ever shrinks.

Prints every figure outside its limit, the deviations used, then the
report's summary line. Exit 0 when every limit holds, 1 otherwise.
"""
import argparse
import json
import subprocess
import sys

MEDIAN_LIMIT_PCT = 10.0
MAX_LIMIT_PCT = 25.0
PIPE_LIMIT_PCT = 20.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ctl", required=True, help="the tilingctl binary")
    parser.add_argument("--file", required=True, help="an npu-measured-matmul/1 or /2 file")
    parser.add_argument("--deviations", help="an npu-calibration-deviations/1 file")
    parser.add_argument("--median-limit", type=float, default=MEDIAN_LIMIT_PCT,
                        help="the largest median |error| of the task duration accepted, in %%")
    args = parser.parse_args()

    allowed = {}
    if args.deviations:
        with open(args.deviations, encoding="utf-8") as f:
            document = json.load(f)
        if document.get("schema") != "npu-calibration-deviations/1":
            print(f"{args.deviations}: schema is not npu-calibration-deviations/1")
            return 1
        for entry in document["deviations"]:
            allowed[(entry["row"], entry["figure"])] = entry

    with open(args.file, encoding="utf-8") as f:
        expected_rows = [row.get("id") for row in json.load(f)["rows"]]

    run = subprocess.run([args.ctl, "calibrate", args.file, "--local", "--json"],
                         capture_output=True, text=True, check=False)
    sys.stderr.write(run.stderr)
    try:
        report = json.loads(run.stdout)
    except json.JSONDecodeError:
        print(f"tilingctl calibrate exited {run.returncode} without a JSON report:\n{run.stdout}")
        return 1

    failures = []
    used = []

    def check(row_id, figure, error_pct, target, text):
        entry = allowed.get((row_id, figure))
        limit = entry["limit_pct"] if entry else target
        if abs(error_pct) > limit:
            failures.append(f"{text} ({error_pct:+.1f}%, limit {limit:.0f}%)")
        elif entry and abs(error_pct) > target:
            used.append(f"{row_id} {figure} {error_pct:+.1f}% (target {target:.0f}%, "
                        f"allowed {limit:.0f}%): {entry['reason']}")
        elif entry:
            failures.append(f"{row_id} {figure} is within its target now ({error_pct:+.1f}%): "
                            f"drop it from the deviations")

    rows = report["rows"]
    if [row["id"] for row in rows] != expected_rows:
        failures.append(f"the report has rows {[row['id'] for row in rows]}, "
                        f"the file {expected_rows}")
    for row in rows:
        if "error" in row:
            failures.append(f"{row['id']}: did not run: {row['error']}")
            continue
        check(row["id"], "task_duration_us", row["error_pct"], MAX_LIMIT_PCT,
              f"{row['id']}: task duration measured {row['measured_us']:.3f} us, predicted "
              f"{row['predicted_us']:.3f} us")
        for pipe, figures in row["pipes"].items():
            check(row["id"], pipe, figures["error_pct"], PIPE_LIMIT_PCT,
                  f"{row['id']}: {pipe} measured {figures['measured_us']:.3f} us, predicted "
                  f"{figures['predicted_us']:.3f} us")
    summary = report["summary"]
    median_limit = min(MEDIAN_LIMIT_PCT, args.median_limit)
    if summary["median_abs_error_pct"] > median_limit:
        failures.append(f"median |error| {summary['median_abs_error_pct']:.2f}% of the task "
                        f"duration, limit {median_limit:.2f}%")
    if run.returncode != 0 and not any("did not run" in f for f in failures):
        failures.append(f"tilingctl calibrate exited {run.returncode}")

    for deviation in used:
        print(f"known deviation: {deviation}")
    for failure in failures:
        print(f"FAIL {failure}")
    print(summary["line"])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
