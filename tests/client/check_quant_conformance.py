#!/usr/bin/python3
"""QuantBatchMatmulV3's golden cases through `tilingctl conform --local`.

Every case must pass, or be one CANN tiles with a strategy the engine does not
have yet, which the engine answers UNIMPLEMENTED naming it: a wrong plan, a
wrong refusal or any other failure fails the test. At least --min-passed cases
must pass (the count only goes up as strategies land; with all seven it is
every case).

  check_quant_conformance.py --ctl build/bin/tilingctl --file tests/data/cann950_quant/cases.json \\
      --min-passed 63
"""
import argparse
import re
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ctl", required=True)
    parser.add_argument("--file", required=True)
    parser.add_argument("--min-passed", type=int, required=True)
    args = parser.parse_args()
    run = subprocess.run([args.ctl, "conform", args.file, "--local"], capture_output=True,
                         text=True, timeout=600)
    lines = run.stdout.splitlines()
    summary = re.fullmatch(r"(\d+) passed, (\d+) failed", lines[-1] if lines else "")
    if summary is None:
        print(run.stdout[-2000:], run.stderr[-2000:])
        print("no summary line")
        return 1
    passed, failed = int(summary.group(1)), int(summary.group(2))
    not_ported = re.compile(r"FAIL \S+: status expected GRAPH_\w+ (\(a refusal\) )?got error "
                            r"UNIMPLEMENTED: "
                            r"(\w+): CANN may tile this QuantBatchMatmulV3 problem with \2")
    wrong = [line for line in lines if line.startswith("FAIL") and not not_ported.match(line)]
    pending = {}
    for line in lines:
        match = not_ported.match(line)
        if match:
            pending[match.group(2)] = pending.get(match.group(2), 0) + 1
    print(f"{passed} passed, {failed} failed; not ported yet: {pending or 'none'}")
    for line in wrong:
        print(line)
    if wrong:
        print(f"{len(wrong)} cases answered wrongly")
        return 1
    if passed < args.min_passed:
        print(f"only {passed} cases passed, expected at least {args.min_passed}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
