#!/usr/bin/python3
"""Differential check of the engine against an oracle build of CANN's own host tiling.

The oracle is a program outside this project (one JSON problem per line on stdin, one answer per line
on stdout: {"status": "ok", "tiling_key", "block_dim", "workspace", "words"} or a failure). This
script draws random problems of one operator, asks the oracle and the engine (`tilingctl batch
--local --json`, one process for all problems), and prints each class of difference with an
example, then one summary line:

  N of N problems identical (key, block dim, every word, workspace, or both refused); D differ

  /usr/bin/python3 scripts/oracle_differential.py --oracle ORACLE --tilingctl build/bin/tilingctl \\
      --op batch_matmul_v3 --n 2000 --seed 7

Kept differences are listed in KNOWN below, each with its reason; they are counted apart and not
reported as differences.
"""
import argparse
import collections
import json
import os
import random
import subprocess
import sys
import tempfile

DTYPES = ["float16", "bfloat16", "float32"]
WIRE_DTYPE = {"float16": "DATA_TYPE_FLOAT16", "bfloat16": "DATA_TYPE_BFLOAT16",
              "float32": "DATA_TYPE_FLOAT32"}
OPS = {"matmul_v3": ("MatMulV3", "OPERATOR_MATMUL_V3"),
       "batch_matmul_v3": ("BatchMatMulV3", "OPERATOR_BATCH_MATMUL_V3"),
       "fused_matmul": ("FusedMatMul", "OPERATOR_FUSED_MATMUL")}
FUSED_OPS = {"": "FUSED_OP_NONE", "relu": "FUSED_OP_RELU", "add": "FUSED_OP_ADD",
             "mul": "FUSED_OP_MUL", "gelu_erf": "FUSED_OP_GELU_ERF",
             "gelu_tanh": "FUSED_OP_GELU_TANH", "16cast32": "FUSED_OP_CAST16_TO32"}
# The harness clock of each operator's unit test (the oracle's platform).
CUBE_FREQ_MHZ = {"matmul_v3": 1800, "batch_matmul_v3": 1650, "fused_matmul": 1800}


class Draw:
    def __init__(self, seed, op):
        self.rng = random.Random(seed)
        self.op = op

    def dim(self):
        r = self.rng.random()
        if r < 0.2:
            return self.rng.choice([1, 2, 3, 7, 15, 16, 17, 31, 32, 33])
        if r < 0.55:
            return self.rng.choice([64, 128, 256, 384, 512, 768, 1024, 1536, 2048, 4096, 8192])
        return int(2 ** self.rng.uniform(0, 13))

    def batch(self):
        dims = []
        for i in range(self.rng.choice([1, 1, 2, 3])):
            dims.append(self.rng.choice([1, 2, 3, 4, 8, 16, 30, 64] if i == 0 else [1, 2, 3, 4]))
        return dims

    def problem(self):
        rng = self.rng
        dt = rng.choice(DTYPES)
        p = {"op_type": OPS[self.op][0], "m": self.dim(), "n": self.dim(), "k": self.dim(),
             "dtype_a": dt, "dtype_b": dt, "dtype_c": dt,
             "trans_a": rng.random() < 0.3, "trans_b": rng.random() < 0.5,
             "format_b": "ND", "bias": rng.random() < 0.25}
        if self.op == "matmul_v3":
            p["format_b"] = "FRACTAL_NZ" if dt != "float32" and rng.random() < 0.15 else "ND"
            p["hf32"] = dt == "float32" and rng.random() < 0.2
        else:
            p["batch_a"] = self.batch()
            shape = rng.random()
            if shape < 0.25:
                p["batch_b"] = []
            elif shape < 0.4:
                p["batch_b"] = [1] * len(p["batch_a"])
            else:
                p["batch_b"] = list(p["batch_a"])
            p["enable_hf32"] = dt == "float32" and rng.random() < 0.2
        if self.op == "fused_matmul":
            # FusedMatMul on DAV_3510: A's and B's batch dims equal, none for the GELUs, x3 of
            # rank <= 3 for add / mul (so one batch dim); a third of the draws stay 2-D.
            op = rng.choice(["", "relu", "add", "mul", "gelu_erf", "gelu_tanh"])
            p["fused_op_type"] = op
            if op.startswith("gelu") or rng.random() < 0.33:
                p["batch_a"] = []
            elif op in ("add", "mul"):
                p["batch_a"] = p["batch_a"][:1]
            p["batch_b"] = list(p["batch_a"])
        if rng.random() < 0.03:
            p["k"] = 0
        if p["bias"]:
            p["bias_dtype"] = "float32" if dt == "float32" or rng.random() < 0.5 else dt
        aic = rng.choice([32, 32, 32, 24, 20, 8, 1])
        p["aic_num"] = aic
        p["aiv_num"] = 2 * aic
        return p


def broadcast(a, b):
    rank = max(len(a), len(b))
    a = [1] * (rank - len(a)) + list(a)
    b = [1] * (rank - len(b)) + list(b)
    return [max(x, y) for x, y in zip(a, b)]


def request(p, op):
    problem = {"m": p["m"], "n": p["n"], "k": p["k"], "dtypeA": WIRE_DTYPE[p["dtype_a"]],
               "dtypeB": WIRE_DTYPE[p["dtype_b"]], "dtypeC": WIRE_DTYPE[p["dtype_c"]],
               "transA": p["trans_a"], "transB": p["trans_b"], "op": OPS[op][1]}
    if p["format_b"] == "FRACTAL_NZ":
        problem["formatB"] = "FORMAT_FRACTAL_NZ"
    if p["bias"]:
        problem["hasBias"] = True
        problem["dtypeBias"] = WIRE_DTYPE[p["bias_dtype"]]
    if p.get("hf32") or p.get("enable_hf32"):
        problem["hf32"] = True
    for key, wire in (("batch_a", "batchA"), ("batch_b", "batchB")):
        if p.get(key):
            problem[wire] = p[key]
    if p.get("fused_op_type"):
        problem["fusedOp"] = FUSED_OPS[p["fused_op_type"]]
    if p.get("fused_op_type") in ("add", "mul"):
        # The harness wires x3 with y's shape: C's batch dims, then [m, n].
        problem["x3Shape"] = broadcast(p.get("batch_a", []), p.get("batch_b", [])) + [p["m"], p["n"]]
    return {"problem": problem,
            "platformOverrides": {"aicNum": p["aic_num"], "aivNum": p["aiv_num"],
                                  "cubeFreqMhz": CUBE_FREQ_MHZ[op]}}


def ours(ctl, requests):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(requests, f)
        path = f.name
    try:
        out = subprocess.run([ctl, "batch", path, "--local", "--json"], capture_output=True,
                             text=True, check=False)
    finally:
        os.unlink(path)
    answers = []
    for line in out.stdout.splitlines():
        line = line.strip()
        if line:
            answers.append(json.loads(line))
    if len(answers) != len(requests):
        sys.exit(f"tilingctl answered {len(answers)} of {len(requests)}: {out.stderr[-400:]}")
    result = []
    for a in answers:
        if "status" in a:  # an item's error; answers carry none
            result.append({"status": "failed", "error": a["status"].get("message", "")[:200]})
            continue
        result.append({"status": "ok", "tiling_key": int(a.get("tilingKey", 0)),
                       "block_dim": a.get("blockDim", 0),
                       "words": [int(w) for w in a.get("rawWords", [])],
                       "workspace": int(a.get("workspaceBytes", 0)),
                       "strategy": a.get("strategy", "")})
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oracle", required=True)
    parser.add_argument("--tilingctl", required=True)
    parser.add_argument("--op", choices=sorted(OPS), default="matmul_v3")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--reasons", action="store_true",
                        help="also count the engine's refusal messages of the both-refused problems")
    args = parser.parse_args()

    draw = Draw(args.seed, args.op)
    problems = [draw.problem() for _ in range(args.n)]
    text = "".join(json.dumps(p) + "\n" for p in problems)
    oracle = subprocess.run([args.oracle], input=text, capture_output=True, text=True, check=False)
    theirs = [json.loads(line) for line in oracle.stdout.splitlines() if line.strip()]
    if len(theirs) != args.n:
        sys.exit(f"the oracle answered {len(theirs)} of {args.n}: {oracle.stderr[-400:]}")
    mine = ours(args.tilingctl, [request(p, args.op) for p in problems])

    stats = collections.Counter()
    examples = {}
    for p, o, u in zip(problems, theirs, mine):
        if o["status"] != "ok" or u["status"] != "ok":
            kind = ("both refused" if o["status"] != "ok" and u["status"] != "ok"
                    else f"cann {o['status']} / ours {u['status']}")
        else:
            what = []
            if o["tiling_key"] != u["tiling_key"]:
                what.append("key")
            if o["block_dim"] != u["block_dim"]:
                what.append("block_dim")
            if o["words"] != u["words"]:
                ow, uw = o["words"], u["words"]
                idx = [i for i in range(max(len(ow), len(uw)))
                       if i >= len(ow) or i >= len(uw) or ow[i] != uw[i]]
                what.append("words " + ",".join(map(str, idx[:6])))
            if o.get("workspace") is not None and o["workspace"] != u["workspace"]:
                what.append("workspace")
            kind = f"{u['strategy']}: " + " ".join(what) if what else "identical"
        stats[kind] += 1
        examples.setdefault(kind, (p, o, u))
    same = stats["identical"] + stats["both refused"]
    if args.reasons:
        reasons = collections.Counter(
            u["error"].split(":")[0] + ": " + u["error"].split(":", 1)[-1][:60]
            for o, u in zip(theirs, mine) if o["status"] != "ok" and u["status"] != "ok")
        for reason, count in reasons.most_common(12):
            print(f"{count:5d}  refused: {reason}")
    for kind, count in stats.most_common():
        if kind in ("identical", "both refused"):
            continue
        p, o, u = examples[kind]
        print(f"{count:5d}  {kind}\n       e.g. {json.dumps(p)}\n"
              f"       cann {json.dumps(o)[:300]}\n       ours {json.dumps(u)[:300]}")
    print(dict(sorted(stats.items())))
    print(f"{same} of {args.n} problems identical (key, block dim, every word, workspace, or both "
          f"refused); {args.n - same} differ")


if __name__ == "__main__":
    main()
