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
       "fused_matmul": ("FusedMatMul", "OPERATOR_FUSED_MATMUL"),
       "quant_batch_matmul_v3": ("QuantBatchMatmulV3", "OPERATOR_QUANT_BATCH_MATMUL_V3"),
       "weight_quant_batch_matmul_v2": ("WeightQuantBatchMatmulV2",
                                        "OPERATOR_WEIGHT_QUANT_BATCH_MATMUL_V2"),
       "transpose_batch_matmul": ("TransposeBatchMatMul", "OPERATOR_TRANSPOSE_BATCH_MATMUL"),
       "transpose_quant_batch_matmul": ("TransposeQuantBatchMatMul",
                                        "OPERATOR_TRANSPOSE_QUANT_BATCH_MATMUL")}
# QuantBatchMatmulV3's dtypes: the oracle's names and the wire's.
QUANT_WIRE = {"int8": "DATA_TYPE_INT8", "int4": "DATA_TYPE_INT4",
              "float8_e4m3fn": "DATA_TYPE_FLOAT8_E4M3FN", "float8_e5m2": "DATA_TYPE_FLOAT8_E5M2",
              "hifloat8": "DATA_TYPE_HIFLOAT8", "float4_e2m1": "DATA_TYPE_FLOAT4_E2M1",
              "float8_e8m0": "DATA_TYPE_FLOAT8_E8M0", "float32": "DATA_TYPE_FLOAT32",
              "float16": "DATA_TYPE_FLOAT16", "bf16": "DATA_TYPE_BFLOAT16",
              "int32": "DATA_TYPE_INT32", "int64": "DATA_TYPE_INT64", "uint64": "DATA_TYPE_UINT64"}
FUSED_OPS = {"": "FUSED_OP_NONE", "relu": "FUSED_OP_RELU", "add": "FUSED_OP_ADD",
             "mul": "FUSED_OP_MUL", "gelu_erf": "FUSED_OP_GELU_ERF",
             "gelu_tanh": "FUSED_OP_GELU_TANH", "16cast32": "FUSED_OP_CAST16_TO32"}
# The harness clock of each operator's unit test (the oracle's platform).
CUBE_FREQ_MHZ = {"matmul_v3": 1800, "batch_matmul_v3": 1650, "fused_matmul": 1800,
                 "quant_batch_matmul_v3": 1800, "weight_quant_batch_matmul_v2": 1800}
# The buffers of QuantBatchMatmulV3's test platform (its UB is not the 950PR's).
QUANT_PLATFORM = {"l1_bytes": 524288, "l0a_bytes": 65536, "l0b_bytes": 65536,
                  "l0c_bytes": 262144, "ub_bytes": 245760, "l2_bytes": 134217728,
                  "bt_bytes": 4096}


def known_class(op, p, o, u, word_diffs):
    """The documented class of a difference (server/tiling/README.md, Deviations from CANN), or
    None. Each is named in the plan's detail."""
    if (op == "weight_quant_batch_matmul_v2" and u.get("strategy") == "ANTI_REG"
            and p.get("weight_dtype") in ("float4_e2m1", "float32")
            and p.get("weight_format") != "NZ" and o["tiling_key"] == u["tiling_key"]
            and o["block_dim"] == u["block_dim"] and o.get("workspace") == u["workspace"]
            and set(word_diffs) <= {0, 10, 11, 12, 13}):
        return ("documented: ANTI_REG float4 ND weight, CANN leaves nBubSize / kBubSize "
                "(and so vecCoreParallel) unset")
    return None


def ceil_div(a, b):
    return -(-a // b)


class QuantDraw:
    """Random QuantBatchMatmulV3 problems with explicit tensor shapes: every dtype family and
    quant mode, mostly valid and now and then not, so that CANN's checks are compared too."""

    def __init__(self, seed):
        self.rng = random.Random(seed)

    def dim(self):
        r = self.rng.random()
        if r < 0.15:
            return self.rng.choice([1, 2, 16, 17, 31, 32, 33, 64])
        if r < 0.6:
            return self.rng.choice([128, 256, 384, 512, 1024, 1536, 2048, 4096, 7168, 8192])
        return int(2 ** self.rng.uniform(4, 14))

    def problem(self):
        rng = self.rng
        m, n, k = self.dim(), self.dim(), self.dim()
        ta, tb = rng.random() < 0.25, rng.random() < 0.5
        family = rng.choice(["int8", "int8", "int4", "fp8", "fp8", "hif8", "mxfp8", "mxfp4"])
        mode = {"int8": ["pertensor", "perchannel", "pertoken", "pertoken"],
                "int4": ["perchannel", "pertoken"],
                "fp8": ["pertensor", "double", "perblock", "pertile", "perchannel", "pertoken"],
                "hif8": ["pertensor", "double", "perblock", "perchannel", "pertoken"],
                "mxfp8": ["mx"], "mxfp4": ["mx"]}[family]
        mode = rng.choice(mode)
        x1 = {"int8": "int8", "int4": "int4", "hif8": "hifloat8", "mxfp4": "float4_e2m1"}.get(
            family, rng.choice(["float8_e4m3fn", "float8_e5m2"]))
        x2 = x1
        if family in ("fp8", "mxfp8"):
            x2 = rng.choice(["float8_e4m3fn", "float8_e5m2"])
        if family == "mxfp4":
            k = max(4, k - k % 2)
            n = max(2, n - n % 2)
            m = max(2, m - m % 2)
        if family == "int4" and rng.random() < 0.9:
            ta = False  # int4 x1 cannot be transposed (CANN refuses it)
        batch_a = rng.choice([[], [], [2], [3], [1], [2, 2]])
        batch_b = rng.choice([[], list(batch_a), [1] * len(batch_a)])
        if mode == "pertoken" and batch_a and rng.random() < 0.5:
            batch_b = list(batch_a)
        if family == "int4" and mode != "pertoken" and rng.random() < 0.9:
            batch_b = []  # without a pertoken scale int4 x2 is 2-D
        nz = rng.random() < 0.2 and (family in ("int8", "hif8", "mxfp4", "mxfp8") or
                                     (family == "fp8" and x1 == x2 == "float8_e4m3fn"))
        integer = family in ("int8", "int4")
        pertoken = mode in ("pertoken", "double", "perblock", "pertile", "mx")
        if integer:
            y = rng.choice(["float16", "bf16"] if pertoken or family == "int4" else
                           ["float16", "bf16", "int8", "int32"])
        else:
            y = rng.choice(["float16", "bf16", "float32"])
        valid = rng.random() < 0.85
        if not valid:
            y = rng.choice(["float16", "bf16", "float32", "int8", "int32"])
        if family == "int4":
            k, n = k + k % 2, n + n % 2  # both inner axes even
        p = {"op_type": "QuantBatchMatmulV3", "m": m, "n": n, "k": k, "trans_a": ta,
             "trans_b": tb, "x1_dtype": x1, "x2_dtype": x2, "y_dtype": y,
             "x1_shape": batch_a + ([k, m] if ta else [m, k]),
             "x2_shape": batch_b + ([n, k] if tb else [k, n]),
             "y_shape": broadcast(batch_a, batch_b) + [m, n], "pertoken": False}
        if nz:
            p["x2_format"] = "NZ"
            rows, cols = (n, k) if tb else (k, n)
            p["x2_storage"] = batch_b + [ceil_div(cols, 32), ceil_div(rows, 16), 16, 32]
        gm = gn = gk = 0
        # The scale dtypes CANN accepts for the family, output and pertoken (and now and then
        # one it refuses).
        if not pertoken:
            scales = ["uint64", "int64"]
            if integer and y == "bf16":
                scales += ["float32", "bf16"]
        elif integer:
            scales = ["float32"] + (["bf16"] if y == "bf16" else [])
        else:
            scales = ["float32"]
        if not valid:
            scales = ["uint64", "int64", "float32", "bf16"]
        if mode == "pertensor":
            p["scale_dtype"] = rng.choice(scales)
            p["scale_shape"] = [1]
        elif mode == "perchannel":
            p["scale_dtype"] = rng.choice(scales)
            p["scale_shape"] = [n]
        elif mode == "pertoken":
            p["scale_dtype"] = rng.choice(scales)
            p["scale_shape"] = rng.choice([[n], [1]])
            p["pertoken"], p["pertoken_shape"] = True, [m]
            p["pertoken_dtype"] = "float32" if integer or family == "hif8" else p["scale_dtype"]
        elif mode == "double":
            p["scale_dtype"] = "float32"
            p["scale_shape"] = [1]
            p["pertoken"], p["pertoken_dtype"], p["pertoken_shape"] = True, "float32", [1]
        elif mode in ("perblock", "pertile"):
            gm = 128 if mode == "perblock" else 1
            gn = gk = 128
            p["scale_dtype"] = "float32"
            kb, nb = ceil_div(k, 128), ceil_div(n, 128)
            p["scale_shape"] = batch_b + ([nb, kb] if tb else [kb, nb])
            mb = ceil_div(m, gm)
            p["pertoken"], p["pertoken_dtype"] = True, "float32"
            p["pertoken_shape"] = batch_a + ([kb, mb] if ta else [mb, kb])
            if len(batch_b) != len(batch_a):
                p["x2_shape"] = batch_a + p["x2_shape"][len(batch_b):]
                p["scale_shape"] = batch_a + p["scale_shape"][len(batch_b):]
                p["y_shape"] = batch_a + [m, n]
        else:  # mx
            gm, gn, gk = 1, 1, 32
            sk = ceil_div(k, 64)
            p["scale_dtype"] = p["pertoken_dtype"] = "float8_e8m0"
            p["scale_shape"] = batch_b + ([n, sk, 2] if tb else [sk, n, 2])
            p["pertoken"] = True
            p["pertoken_shape"] = batch_a + ([sk, m, 2] if ta else [m, sk, 2])
        if gm or gn or gk:
            p["group_size"] = gk | (gn << 16) | (gm << 32)
        if rng.random() < 0.3 and mode not in ("perblock", "pertile"):
            p["bias"] = True
            if not valid:
                p["bias_dtype"] = rng.choice(["int32", "float32", "bf16", "float16"])
            elif not integer:
                p["bias_dtype"] = "float32"
            elif p["scale_dtype"] in ("uint64", "int64"):
                p["bias_dtype"] = "int32"
            else:
                p["bias_dtype"] = rng.choice(["int32", "float32", "bf16" if y == "bf16" else
                                              "float16"])
            p["bias_shape"] = [n]
            if len(p["y_shape"]) == 3 and rng.random() < 0.3:
                p["bias_shape"] = [p["y_shape"][0], 1, n]
        if y == "int8" and rng.random() < 0.5:
            p["offset"], p["offset_dtype"] = True, "float32"
            p["offset_shape"] = rng.choice([[1], [n]])
        p["deterministic_level"] = rng.choice([0, 0, 0, 1, 2])
        aic = rng.choice([32, 32, 32, 24, 20, 8, 1])
        p["aic_num"] = aic
        p["aiv_num"] = 2 * aic if rng.random() < 0.9 else rng.choice([aic, 60])
        if rng.random() < 0.1:
            p["tensor_api"] = False
        for key, value in QUANT_PLATFORM.items():
            p[key] = value
        return p


# The buffers of the transposed batch matmuls' test platform (their tests' Ascend950 JSON).
TRANSPOSE_PLATFORM = {"l1_bytes": 524288, "l0a_bytes": 65536, "l0b_bytes": 65536,
                      "l0c_bytes": 262144, "ub_bytes": 253952, "l2_bytes": 134217728,
                      "bt_bytes": 4096}
# The engine's answer to a problem on which CANN's host tiling never ends (the oracle is not asked:
# it would hang): TransposeQuantBatchMatMul's MXFP8 / HIFP8 depth search on an L1 smaller than one
# stage of base blocks (server/tiling/README.md, Deviations from CANN).
NEVER_ENDS = "never ends"


class TransposeDraw:
    """Random TransposeBatchMatMul / TransposeQuantBatchMatMul problems: every accepted perm, batch
    split and dtype set, hf32, the INT8 output's scale, NZ x2, the decode shape of the load balance
    (also with a batch of 0), MXFP8's K alignment and group size, custom platforms and core counts;
    now and then an input CANN refuses, so that its checks are compared too."""

    def __init__(self, seed, quant):
        self.rng = random.Random(seed)
        self.quant = quant

    def dim(self):
        r = self.rng.random()
        if r < 0.2:
            return self.rng.choice([1, 2, 7, 15, 16, 17, 31, 32, 33, 64])
        if r < 0.6:
            return self.rng.choice([128, 256, 512, 576, 1024, 1536, 2048, 4096, 7168])
        return int(2 ** self.rng.uniform(0, 13))

    def perm(self, accepted, bad):
        return list(self.rng.choice(accepted)) if self.rng.random() < 0.97 else list(
            self.rng.choice(bad))

    def platform(self, p):
        rng = self.rng
        aic = rng.choice([32, 32, 32, 24, 20, 8, 1, 2, 7])
        p["aic_num"] = aic
        p["aiv_num"] = 2 * aic if rng.random() < 0.85 else rng.choice([aic, 3 * aic])
        plat = dict(TRANSPOSE_PLATFORM)
        if rng.random() < 0.25:
            plat["l1_bytes"] = rng.choice([16384, 32768, 65536, 131072, 262144, 1048576, 786432])
            plat["l0a_bytes"] = rng.choice([16384, 32768, 65536, 65536, 131072])
            plat["l0b_bytes"] = rng.choice([16384, 32768, 65536, 65536, 131072])
            plat["l0c_bytes"] = rng.choice([65536, 131072, 262144, 262144, 524288])
            plat["ub_bytes"] = rng.choice([196608, 253952, 262144])
            plat["l2_bytes"] = rng.choice([1 << 20, 33554432, 134217728])
            plat["bt_bytes"] = rng.choice([1024, 4096])
            # The service refuses a chip whose L0A or L0B exceeds its L1 (they are filled
            # from L1).
            plat["l0a_bytes"] = min(plat["l0a_bytes"], plat["l1_bytes"])
            plat["l0b_bytes"] = min(plat["l0b_bytes"], plat["l1_bytes"])
        p.update(plat)

    def batch_and_split(self, p, split_ok):
        rng = self.rng
        b = rng.choice([1, 2, 3, 4, 8, 16, 21, 32, 64, 128, 1, 16])
        if rng.random() < 0.05:
            b = 0
        f = 1
        if split_ok and rng.random() < 0.3:
            f = rng.choice([2, 4, 8, 3])
            if rng.random() < 0.85:
                b = max(f, b - b % f)
        if rng.random() < 0.03:
            f = rng.choice([0, -1])
        p["batch"], p["batch_split_factor"] = b, f

    def problem(self):
        return self.quant_problem() if self.quant else self.float_problem()

    def float_problem(self):
        rng = self.rng
        a, b, c = rng.choice([("float16",) * 3, ("float16",) * 3, ("float16", "float16", "int8"),
                              ("float32",) * 3, ("bfloat16",) * 3])
        if rng.random() < 0.04:
            a, b, c = rng.choice([("float16", "float16", "float32"), ("bfloat16", "bfloat16",
                                  "float32"), ("float16", "bfloat16", "float16")])
        p = {"op_type": "TransposeBatchMatMul", "m": self.dim(), "n": self.dim(), "k": self.dim(),
             "dtype_a": a, "dtype_b": b, "dtype_c": c,
             "perm_x1": self.perm([[0, 1, 2], [1, 0, 2]], [[2, 1, 0], [0, 2, 1], [1, 2, 0]]),
             "perm_x2": self.perm([[0, 1, 2], [0, 2, 1]], [[1, 0, 2], [2, 0, 1]]),
             "perm_y": self.perm([[1, 0, 2]], [[0, 1, 2], [2, 1, 0]]),
             "enable_hf32": rng.random() < 0.2}
        self.batch_and_split(p, True)
        if rng.random() < 0.1:  # the decode shape CANN rebalances
            p["m"], p["n"], p["k"] = rng.randint(1, 16), 1024, 4096
            p["batch"] = rng.choice([0, 1, 2, 4, 8, 16, 31, 32, 64])
        if rng.random() < 0.15:
            p["format_b"] = "NZ"
        if c == "int8" or rng.random() < 0.03:
            if rng.random() < 0.8:
                p["scale"] = True
                p["scale_dtype"] = rng.choice(["int64", "uint64"])
                p["scale_shape"] = [p["batch"] * p["n"]]
                if rng.random() < 0.05:
                    p["scale_shape"] = [p["n"]]
                if rng.random() < 0.9:
                    p["batch_split_factor"] = 1
        if rng.random() < 0.02:
            p["bias"] = True
        self.platform(p)
        return p

    def quant_problem(self):
        rng = self.rng
        mode = rng.choice(["fp8", "fp8", "mxfp8", "mxfp8", "hifp8"])
        m, n, k = self.dim(), self.dim(), self.dim()
        p = {"op_type": "TransposeQuantBatchMatMul", "m": m,
             "perm_x1": self.perm([[1, 0, 2]], [[0, 1, 2], [2, 0, 1]]),
             "perm_y": self.perm([[1, 0, 2]], [[0, 1, 2]])}
        valid = rng.random() < 0.9
        if mode == "fp8":
            x1, x2 = rng.choice(["float8_e4m3fn", "float8_e5m2"]), rng.choice(
                ["float8_e4m3fn", "float8_e5m2"])
            if valid or rng.random() < 0.5:
                n, k = 128, 512
            p["perm_x2"] = self.perm([[0, 1, 2]], [[0, 2, 1]])
            s1, s2 = "float32", "float32"
            y = rng.choice(["float16", "bf16"])
        elif mode == "mxfp8":
            x1 = x2 = "float8_e4m3fn"
            if valid or rng.random() < 0.5:
                k = max(64, k - k % 64)
            p["perm_x2"] = self.perm([[0, 1, 2], [0, 2, 1]], [[1, 0, 2]])
            s1 = s2 = "float8_e8m0"
            y = rng.choice(["float16", "bf16"])
            if rng.random() < 0.3:
                p["x2_format"] = "NZ"
        else:
            x1 = x2 = "hifloat8"
            p["perm_x2"] = self.perm([[0, 1, 2], [0, 2, 1]], [[1, 0, 2]])
            s1, s2 = "uint64", "uint64"
            y = rng.choice(["float16", "bf16", "hifloat8"])
        if not valid:
            y = rng.choice([y, "float32"])
            if rng.random() < 0.3:
                x2 = rng.choice(["float8_e4m3fn", "float8_e5m2", "hifloat8"])
        p.update({"n": n, "k": k, "x1_dtype": x1, "x2_dtype": x2, "y_dtype": y,
                  "x1_scale_dtype": s1, "x2_scale_dtype": s2})
        self.batch_and_split(p, False)
        if not valid and rng.random() < 0.3:
            p["batch_split_factor"] = rng.choice([2, 0])
        b = p["batch"]
        if mode == "mxfp8":
            g = ceil_div(ceil_div(k, 32), 2)
            p["x1_scale_shape"] = [m, b, g, 2]
            p["x2_scale_shape"] = [b, n, g, 2] if p["perm_x2"] == [0, 2, 1] else [b, g, n, 2]
            p["group_size"] = 32 | (rng.choice([0, 1]) << 16) | (rng.choice([0, 1]) << 32)
            if not valid and rng.random() < 0.3:
                p["group_size"] = rng.choice([0, 64, 35])
            if not valid and rng.random() < 0.3:
                p["x1_scale_shape"] = [m]
        else:
            p["x1_scale_shape"] = [m] if mode == "fp8" else rng.choice([[1], [m]])
            p["x2_scale_shape"] = [n]
            p["group_size"] = 0
            if mode == "hifp8" and rng.random() < 0.3:
                p["x1_scale"] = False
            if not valid and rng.random() < 0.3:
                p["x2_scale_shape"] = [n + 1]
        if not valid and rng.random() < 0.2 and mode != "mxfp8":
            p["x2_format"] = "NZ"
        self.platform(p)
        return p

    @staticmethod
    def never_ends(p):
        """CANN's MXFP8 / HIFP8 depth search on an L1 smaller than one stage: 256 x 256 x 128-byte
        blocks of A and B (and, MXFP8, their scales)."""
        if p["op_type"] != "TransposeQuantBatchMatMul":
            return False
        mx = p["x1_scale_dtype"] == p["x2_scale_dtype"] == "float8_e8m0" and p.get(
            "x1_scale", True)
        hifp8 = p["x1_dtype"] == p["x2_dtype"] == "hifloat8"
        stage = 2 * 256 * 128 + (2 * 256 * 4 if mx else 0)
        return (mx or hifp8) and p["l1_bytes"] < stage


def transpose_request(p):
    quant = p["op_type"] == "TransposeQuantBatchMatMul"
    wire = QUANT_WIRE
    dt = {**WIRE_DTYPE, "int8": "DATA_TYPE_INT8", "bf16": "DATA_TYPE_BFLOAT16",
          "hifloat8": "DATA_TYPE_HIFLOAT8"}
    transpose = {"permX1": p["perm_x1"], "permX2": p["perm_x2"], "permY": p["perm_y"],
                 "batch": p["batch"]}
    if p["batch_split_factor"] != 1:
        transpose["batchSplitFactor"] = p["batch_split_factor"]
    if quant:
        problem = {"m": p["m"], "n": p["n"], "k": p["k"], "dtypeA": wire[p["x1_dtype"]],
                   "dtypeB": wire[p["x2_dtype"]], "dtypeC": dt.get(p["y_dtype"], wire.get(
                       p["y_dtype"])), "op": OPS["transpose_quant_batch_matmul"][1]}
        quant_in = {"scale": {"dtype": wire[p["x2_scale_dtype"]], "shape": p["x2_scale_shape"]}}
        if p.get("x1_scale", True):
            quant_in["pertokenScale"] = {"dtype": wire[p["x1_scale_dtype"]],
                                         "shape": p["x1_scale_shape"]}
        group = p["group_size"]
        quant_in["groupSizeK"], quant_in["groupSizeN"] = group & 0xFFFF, (group >> 16) & 0xFFFF
        quant_in["groupSizeM"] = (group >> 32) & 0xFFFF
        problem["quant"] = quant_in
        if p.get("x2_format") == "NZ":
            problem["formatB"] = "FORMAT_FRACTAL_NZ"
    else:
        problem = {"m": p["m"], "n": p["n"], "k": p["k"], "dtypeA": dt[p["dtype_a"]],
                   "dtypeB": dt[p["dtype_b"]], "dtypeC": dt[p["dtype_c"]],
                   "op": OPS["transpose_batch_matmul"][1]}
        if p.get("enable_hf32"):
            problem["hf32"] = True
        if p.get("format_b") == "NZ":
            problem["formatB"] = "FORMAT_FRACTAL_NZ"
        if p.get("scale"):
            transpose["scale"] = {"dtype": wire[p["scale_dtype"]], "shape": p["scale_shape"]}
        if p.get("bias"):
            problem["hasBias"] = True
            problem["dtypeBias"] = dt[p["dtype_c"]] if p["dtype_c"] != "int8" else "DATA_TYPE_FLOAT16"
    problem["transpose"] = transpose
    overrides = {"aicNum": p["aic_num"], "aivNum": p["aiv_num"], "cubeFreqMhz": 1800}
    for key in TRANSPOSE_PLATFORM:
        overrides[{"l1_bytes": "l1Bytes", "l0a_bytes": "l0aBytes", "l0b_bytes": "l0bBytes",
                   "l0c_bytes": "l0cBytes", "ub_bytes": "ubBytes", "l2_bytes": "l2Bytes",
                   "bt_bytes": "btBytes"}[key]] = p[key]
    return {"problem": problem, "platformOverrides": overrides}


def quant_request(p):
    def tensor(dtype_key, shape_key):
        return {"dtype": QUANT_WIRE[p[dtype_key]], "shape": p[shape_key]}

    problem = {"m": p["m"], "n": p["n"], "k": p["k"], "op": OPS["quant_batch_matmul_v3"][1],
               "dtypeA": QUANT_WIRE[p["x1_dtype"]], "dtypeB": QUANT_WIRE[p["x2_dtype"]],
               "dtypeC": QUANT_WIRE[p["y_dtype"]], "transA": p["trans_a"],
               "transB": p["trans_b"], "deterministicLevel": p["deterministic_level"]}
    for key, wire in (("x1_shape", "batchA"), ("x2_shape", "batchB"), ("y_shape", "batchC")):
        if len(p[key]) > 2:
            problem[wire] = p[key][:-2]
    if p.get("x2_format") == "NZ":
        problem["formatB"] = "FORMAT_FRACTAL_NZ"
        problem["storageShapeB"] = p["x2_storage"]
    quant = {"scale": tensor("scale_dtype", "scale_shape")}
    if p.get("pertoken"):
        quant["pertokenScale"] = tensor("pertoken_dtype", "pertoken_shape")
    if p.get("offset"):
        quant["offset"] = tensor("offset_dtype", "offset_shape")
    if p.get("bias"):
        problem["hasBias"] = True
        problem["dtypeBias"] = QUANT_WIRE[p["bias_dtype"]]
        quant["biasShape"] = p["bias_shape"]
    group = p.get("group_size", 0)
    quant["groupSizeK"], quant["groupSizeN"] = group & 0xFFFF, (group >> 16) & 0xFFFF
    quant["groupSizeM"] = (group >> 32) & 0xFFFF
    if p.get("tensor_api") is False:
        quant["withoutTensorApi"] = True
    problem["quant"] = quant
    overrides = {"aicNum": p["aic_num"], "aivNum": p["aiv_num"], "cubeFreqMhz": 1800}
    for key, value in QUANT_PLATFORM.items():
        overrides[{"l1_bytes": "l1Bytes", "l0a_bytes": "l0aBytes", "l0b_bytes": "l0bBytes",
                   "l0c_bytes": "l0cBytes", "ub_bytes": "ubBytes", "l2_bytes": "l2Bytes",
                   "bt_bytes": "btBytes"}[key]] = value
    return {"problem": problem, "platformOverrides": overrides}


# WeightQuantBatchMatmulV2's test platform (a 910B-sized one with NpuArch 3510).
WQ_PLATFORM = {"l1_bytes": 524032, "l0a_bytes": 65536, "l0b_bytes": 65536, "l0c_bytes": 131072,
               "ub_bytes": 196352, "l2_bytes": 33554432, "bt_bytes": 1024}
WQ_WIRE = dict(QUANT_WIRE, float8_e5m2="DATA_TYPE_FLOAT8_E5M2")


class WeightQuantDraw:
    """Random WeightQuantBatchMatmulV2 problems with explicit tensor shapes: every weight dtype
    (packed INT32 / FLOAT32 too) and antiquant mode, group sizes at and off CANN's values, NZ
    weights with C0 16 and 32, transposes, bias dtypes, offsets, the int8 output, core counts with
    AIV != 2 AIC and other buffer sizes; mostly valid and now and then not."""

    def __init__(self, seed):
        self.rng = random.Random(seed)

    def dim(self, lo=1, hi=16384):
        r = self.rng.random()
        if r < 0.15:
            return self.rng.choice([1, 2, 3, 8, 15, 16, 17, 31, 32, 60, 64, 96, 127, 128])
        if r < 0.55:
            return self.rng.choice([256, 512, 640, 704, 960, 1024, 1088, 1280, 1536, 2048, 2560,
                                    2688, 3136, 4096, 5120, 8192, 12288, 16384])
        return max(lo, min(hi, int(2 ** self.rng.uniform(0, 14))))

    def problem(self):
        rng = self.rng
        x = "float32" if rng.random() < 0.02 else rng.choice(["float16", "bf16"])
        weight = "float8_e5m2" if rng.random() < 0.02 else rng.choice(
            ["int8"] * 4 + ["int4"] * 5 + ["float8_e4m3fn", "hifloat8"] + ["float4_e2m1"] * 3 +
            ["int32", "float32"])
        packed = weight in ("int32", "float32")
        four_bit = weight in ("int4", "float4_e2m1") or packed
        fp4 = weight in ("float4_e2m1", "float32")
        mode = rng.choice(["tensor", "channel", "channel", "group", "group", "group", "mx"])
        if fp4 and rng.random() < 0.85:
            mode = rng.choice(["group", "mx"])
        if weight in ("float8_e4m3fn", "hifloat8") and rng.random() < 0.85:
            mode = "channel"
        nz = weight in ("int8", "int4", "float4_e2m1", "int32", "float32") and rng.random() < 0.35
        if nz and mode == "tensor" and rng.random() < 0.9:
            mode = "group" if fp4 else "channel"
        trans_b = rng.random() < 0.5
        if nz and rng.random() < 0.85 and (weight != "int8" or mode == "group"):
            trans_b = False  # an NZ weight is transposed only for int8 per-channel
        m = self.dim()
        k = self.dim(hi=65536) if rng.random() < 0.93 else rng.choice([65535, 65536, 70000])
        n = self.dim(hi=65536) if rng.random() < 0.93 else rng.choice([65472, 65540, 70016])
        if four_bit and rng.random() < 0.95:  # the inner dim even (a multiple of 8 when packed)
            align = 8 if packed else 2
            if trans_b:
                k = max(align, k // align * align)
            else:
                n = max(align, n // align * align)
        if packed:  # the engine states whole packed words only
            if trans_b:
                k = max(8, k // 8 * 8)
            else:
                n = max(8, n // 8 * 8)
        group = 0
        if mode == "group":
            group = rng.choice([32, 64, 128, 256, 32, 64, 128, 256, 96, 160, 224, 608, 48, 512])
            if group >= k and rng.random() < 0.8:
                group, mode = 0, "channel"
        elif mode == "mx":
            group = 32 if rng.random() < 0.95 else 64
        groups = ceil_div(k, group) if group else 1
        p = {"op_type": "WeightQuantBatchMatmulV2", "m": m, "k": k, "n": n,
             "trans_a": rng.random() < 0.02, "trans_b": trans_b, "x_dtype": x,
             "weight_dtype": weight, "y_dtype": x, "group_size": group}
        scale_dtype = "float8_e8m0" if mode == "mx" else (x if x != "float32" else "float16")
        if rng.random() < 0.03:
            scale_dtype = rng.choice(["float32", "uint64", "bf16", "float16"])
        if mode == "tensor":
            scale_shape = [1]
        elif mode == "channel":
            scale_shape = rng.choice([[n], [n], [n, 1] if trans_b else [1, n]])
        else:
            scale_shape = [n, groups] if trans_b else [groups, n]
        if rng.random() < 0.02:
            scale_shape = [n + 1]
        p["antiquant_scale_dtype"] = scale_dtype
        p["antiquant_scale_shape"] = scale_shape
        offset_ok = weight in ("int8", "int4", "int32")
        if rng.random() < (0.3 if offset_ok else 0.03):
            p["antiquant_offset"] = True
            p["antiquant_offset_dtype"] = scale_dtype if scale_dtype != "float8_e8m0" else x
            if rng.random() < 0.05:
                p["antiquant_offset_dtype"] = "int32"
            p["antiquant_offset_shape"] = list(scale_shape)
        if rng.random() < 0.03:
            p["quant_scale"] = True
            p["quant_scale_dtype"] = "uint64"
            p["quant_scale_shape"] = rng.choice([[1], [n], [1, n]])
            p["y_dtype"] = "int8" if rng.random() < 0.8 else x
            if rng.random() < 0.3:
                p["quant_offset"] = True
                p["quant_offset_dtype"] = "float32"
                p["quant_offset_shape"] = list(p["quant_scale_shape"])
        if rng.random() < 0.3:
            p["bias"] = True
            if x == "bf16" and weight in ("float4_e2m1", "float32", "float8_e4m3fn", "hifloat8"):
                p["bias_dtype"] = "bf16" if rng.random() < 0.9 else "float32"
            elif x == "bf16":
                p["bias_dtype"] = rng.choice(["float32", "bf16", "float32", "bf16", "float16"])
            else:
                p["bias_dtype"] = x if rng.random() < 0.9 else "float32"
            p["bias_shape"] = rng.choice([[n], [n], [1, n], [0]])
        if nz:
            p["weight_format"] = "NZ"
            c0 = rng.choice([16, 16, 32]) if weight != "int8" else rng.choice([32, 32, 16])
            p["nz_c0"] = c0
            rows, cols = (n, k) if trans_b else (k, n)
            if packed:
                cols //= 8
                c0 //= 8
            p["weight_storage"] = [(cols + c0) // c0, (rows + 16) // 16, 16, c0]
        if rng.random() < 0.03:  # a batched x: CANN takes 2-D x and weights only
            p["batch"] = [rng.choice([2, 3, 8])]
            p["x_shape"] = p["batch"] + ([k, m] if p["trans_a"] else [m, k])
            p["y_shape"] = p["batch"] + [m, n]
        aic = rng.choice([32, 32, 32, 24, 20, 8, 1])
        p["aic_num"] = aic
        p["aiv_num"] = 2 * aic if rng.random() < 0.97 else aic
        for key, value in WQ_PLATFORM.items():
            p[key] = value
        if rng.random() < 0.15:
            p["l1_bytes"] = rng.choice([262144, 524288, 1048576])
            p["l0c_bytes"] = rng.choice([131072, 262144])
            p["ub_bytes"] = rng.choice([196352, 253952])
            p["l0a_bytes"] = p["l0b_bytes"] = rng.choice([32768, 65536, 131072])
        return p


def weight_quant_request(p):
    def tensor(dtype_key, shape_key):
        return {"dtype": WQ_WIRE[p[dtype_key]], "shape": p[shape_key]}

    problem = {"m": p["m"], "n": p["n"], "k": p["k"], "op": OPS["weight_quant_batch_matmul_v2"][1],
               "dtypeA": WQ_WIRE[p["x_dtype"]], "dtypeB": WQ_WIRE[p["weight_dtype"]],
               "dtypeC": WQ_WIRE[p["y_dtype"]], "transA": p["trans_a"], "transB": p["trans_b"]}
    if p.get("batch"):
        problem["batchA"] = p["batch"]
    if p.get("weight_format") == "NZ":
        problem["formatB"] = "FORMAT_FRACTAL_NZ"
        problem["storageShapeB"] = p["weight_storage"]
    quant = {"antiquantScale": tensor("antiquant_scale_dtype", "antiquant_scale_shape"),
             "groupSize": p["group_size"]}
    for flag, wire in (("antiquant_offset", "antiquantOffset"), ("quant_scale", "quantScale"),
                       ("quant_offset", "quantOffset")):
        if p.get(flag):
            quant[wire] = tensor(flag + "_dtype", flag + "_shape")
    if p.get("bias"):
        problem["hasBias"] = True
        problem["dtypeBias"] = WQ_WIRE[p["bias_dtype"]]
        quant["biasShape"] = p["bias_shape"]
    problem["quant"] = quant
    overrides = {"aicNum": p["aic_num"], "aivNum": p["aiv_num"], "cubeFreqMhz": 1800}
    for key in WQ_PLATFORM:
        overrides[{"l1_bytes": "l1Bytes", "l0a_bytes": "l0aBytes", "l0b_bytes": "l0bBytes",
                   "l0c_bytes": "l0cBytes", "ub_bytes": "ubBytes", "l2_bytes": "l2Bytes",
                   "bt_bytes": "btBytes"}[key]] = p[key]
    return {"problem": problem, "platformOverrides": overrides}


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


# The classes of difference server/tiling/README.md documents ("Deviations from CANN"), each told
# by what CANN did and the engine's message naming it.
DOCUMENTED = [
    ("CANN's plan has an empty block (FAILED_PRECONDITION)", "ok", "empty block"),
    ("CANN's host tiling divides by zero (FAILED_PRECONDITION)", "crashed", "divides by zero"),
    ("CANN's host tiling never ends (FAILED_PRECONDITION; not sent to the oracle)", NEVER_ENDS,
     "never ends"),
]


def documented_class(o, u):
    """The documented class a difference belongs to, or None."""
    if u["status"] == "ok":
        return None
    for name, cann_status, message in DOCUMENTED:
        if o["status"] == cann_status and message in u.get("error", ""):
            return name
    return None


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
            result.append({"status": "failed", "error": a["status"].get("message", "")[:300]})
            continue
        result.append({"status": "ok", "tiling_key": int(a.get("tilingKey", 0)),
                       "block_dim": a.get("blockDim", 0),
                       "words": [int(w) for w in a.get("rawWords", [])],
                       "workspace": int(a.get("workspaceBytes", 0)),
                       "strategy": a.get("strategy", "")})
    return result


def differing_parts(o, u):
    """What differs between two successful answers: "key", "block_dim", "words i,j,..." (the
    first six word positions) and "workspace" (when the oracle reports one); empty when none."""
    what = []
    if o["tiling_key"] != u["tiling_key"]:
        what.append("key")
    if o["block_dim"] != u["block_dim"]:
        what.append("block_dim")
    ow, uw = o["words"], u["words"]
    if ow != uw:
        idx = [i for i in range(max(len(ow), len(uw)))
               if i >= len(ow) or i >= len(uw) or ow[i] != uw[i]]
        what.append("words " + ",".join(map(str, idx[:6])))
    if o.get("workspace") is not None and o["workspace"] != u["workspace"]:
        what.append("workspace")
    return what


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

    quant = args.op == "quant_batch_matmul_v3"
    weight_quant = args.op == "weight_quant_batch_matmul_v2"
    transposed = args.op.startswith("transpose_")
    if weight_quant:
        draw = WeightQuantDraw(args.seed)
    elif transposed:
        draw = TransposeDraw(args.seed, args.op == "transpose_quant_batch_matmul")
    else:
        draw = QuantDraw(args.seed) if quant else Draw(args.seed, args.op)
    problems = [draw.problem() for _ in range(args.n)]
    # Problems on which CANN's tiling never ends are not sent to the oracle.
    hangs = [transposed and TransposeDraw.never_ends(p) for p in problems]
    text = "".join(json.dumps(p) + "\n" for p, h in zip(problems, hangs) if not h)
    oracle = subprocess.run([args.oracle], input=text, capture_output=True, text=True, check=False)
    answered = iter([json.loads(line) for line in oracle.stdout.splitlines() if line.strip()])
    theirs = [{"status": "never ends"} if h else next(answered, None) for h in hangs]
    if any(t is None for t in theirs) or next(answered, None) is not None:
        sys.exit(f"the oracle answered a different count: {oracle.stderr[-400:]}")
    if weight_quant:
        requests = [weight_quant_request(p) for p in problems]
    elif transposed:
        requests = [transpose_request(p) for p in problems]
    else:
        requests = [quant_request(p) if quant else request(p, args.op) for p in problems]
    mine = ours(args.tilingctl, requests)

    stats = collections.Counter()
    by_strategy = collections.Counter()
    examples = {}
    documented = collections.Counter()
    for p, o, u in zip(problems, theirs, mine):
        doc = documented_class(o, u)
        if doc:
            documented[doc] += 1
            examples.setdefault("documented: " + doc, (p, o, u))
            continue
        if o["status"] != "ok" or u["status"] != "ok":
            kind = ("both refused" if o["status"] != "ok" and u["status"] != "ok"
                    else f"cann {o['status']} / ours {u['status']}")
        else:
            what = differing_parts(o, u)
            kind = f"{u['strategy']}: " + " ".join(what) if what else "identical"
            if what:
                ow, uw = o["words"], u["words"]
                diffs = [i for i in range(max(len(ow), len(uw)))
                         if i >= len(ow) or i >= len(uw) or ow[i] != uw[i]]
                kind = known_class(args.op, p, o, u, diffs) or kind
            if not what:
                by_strategy[u["strategy"]] += 1
        stats[kind] += 1
        examples.setdefault(kind, (p, o, u))
    same = stats["identical"] + stats["both refused"]
    # Two kinds of documented class: told from the answers alone
    # (documented_class) or from the words that differ (known_class).
    documented_total = sum(documented.values()) + sum(
        count for kind, count in stats.items() if kind.startswith("documented:"))
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
    print("identical by strategy:", dict(sorted(by_strategy.items())))
    for doc, count in documented.most_common():
        p, o, u = examples["documented: " + doc]
        print(f"{count:5d}  documented class: {doc}\n       e.g. {json.dumps(p)[:300]}\n"
              f"       cann {json.dumps(o)[:160]}\n       ours {json.dumps(u)[:200]}")
    print(f"{same} of {args.n} problems identical (key, block dim, every word, workspace, or both "
          f"refused); {documented_total} in documented classes; "
          f"{args.n - same - documented_total} undocumented")


if __name__ == "__main__":
    main()
