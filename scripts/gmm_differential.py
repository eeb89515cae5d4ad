#!/usr/bin/python3
"""Differential check of GroupedMatmul against an oracle build of CANN's own host tiling.

Draws random GroupedMatmul problems of one path (no_quant, quant or weight_quant), each as its ten
tensor lists (origin and storage shapes, dtype, format), its attributes and a chip; sends every
problem to the oracle (its explicit-tensor keys, `"op_type": "GroupedMatmul"`) and to
`tilingctl batch --local --json` (the grouped sub-message) in one stream each, and prints each class
of difference with an example, then one summary line:

  N of N problems identical (key, block dim, every word, workspace, or both refused); D in
  documented classes; U undocumented

  /usr/bin/python3 scripts/gmm_differential.py --oracle ORACLE --tilingctl build/bin/tilingctl \\
      --path no_quant --n 2000 --seed 7

Each path's random problems are drawn by its own function (no_quant_problem(rng),
quant_problem(rng), weight_quant_problem(rng)); a problem is a dict:
  {"tensors": {name: {"dtype": wire dtype name, "format": "ND" | "FRACTAL_NZ",
                      "instances": [[origin, storage], ...]}},   # absent inputs: no entry
   "attrs": {"split_item", "dtype", "transpose_weight", "transpose_x", "group_type",
             "group_list_type", "act_type", "tuning_config"},
   "chip": {"aic_num", "aiv_num", "l1_bytes", "l0a_bytes", "l0b_bytes", "l0c_bytes", "ub_bytes",
            "l2_bytes"}}
which oracle_input() and our_request() turn into the two requests. The chip is both the compile
info and the context's platform (the quant path reads the latter), so both sides tile on one chip.
A difference of a documented class (server/tiling/README.md, "Deviations from CANN") is told by
CANN's status and the engine's message (DOCUMENTED) and counted apart.
"""
import argparse
import collections
import json
import random
import subprocess
import sys

from oracle_differential import differing_parts, ours

TENSORS = ["x", "weight", "bias", "scale", "offset", "antiquant_scale", "antiquant_offset",
           "group_list", "per_token_scale", "y"]
# The wire's dtype names and the oracle's.
ORACLE_DTYPE = {"float16": "float16", "bfloat16": "bf16", "float32": "float32", "int8": "int8",
                "int4": "int4", "float8_e4m3fn": "float8_e4m3fn", "float8_e5m2": "float8_e5m2",
                "hifloat8": "hifloat8", "float4_e2m1": "float4_e2m1",
                "float4_e1m2": "float4_e1m2", "float8_e8m0": "float8_e8m0", "int32": "int32",
                "int64": "int64", "uint64": "uint64"}
# (name, CANN's status or None for any, a piece of the engine's message): the documented classes
# (server/tiling/README.md, "Deviations from CANN"; server/tiling/operators/grouped_matmul.md).
DOCUMENTED = [
    ("CANN divides by zero", "crashed", "divides by zero"),
    ("CANN's loop never ends (the oracle, asked alone, timed out)", "never ends", "never ends"),
    ("wrapped L1 steps: L1 below CANN's 256 KiB part for one operand", "ok", "wraps below zero"),
    ("empty block", "ok", "empty block"),
    ("a dim past a shape's rank", None, "CANN would read an invalid dim"),
    ("a chip without cube or vector cores", None, "_num: must be in"),
    ("a tensor list of more than 1024 instances", None, "at most 1024 instances"),
    # Weight-quant (grouped/weight_quant/gwq_plan.h): words CANN's plan wraps.
    ("weight-quant: cubeNumBlocksN above 255, which CANN's uint8 word wraps", "ok",
     "the limit of its uint8 word"),
    ("weight-quant: M or N above 2147483647, which CANN's int32 words wrap", "ok",
     "the limit of the int32 M / N"),
]
# How long the oracle may take on one problem the engine says CANN never ends (it answers any
# other in well under a second).
NEVER_ENDS_TIMEOUT_S = 10
NPU_CHIP = {"aic_num": 32, "aiv_num": 64, "l1_bytes": 524288, "l0a_bytes": 65536,
            "l0b_bytes": 65536, "l0c_bytes": 262144, "ub_bytes": 262144, "l2_bytes": 134217728}


def ceil_div(a, b):
    return -(-a // b)


def nz_storage(origin, four_bit=False):
    """The unit tests' FRACTAL_NZ storage of [.., r, c]: [.., ceil(c/c0), ceil(r/16), 16, c0]."""
    c0 = 64 if four_bit else 32
    *lead, r, c = origin
    return lead + [ceil_div(c, c0), ceil_div(r, 16), 16, c0]


def random_chip(rng):
    """The 950PR's compile info, or one with other cores (AIV != 2 AIC) and buffer sizes."""
    chip = dict(NPU_CHIP)
    if rng.random() < 0.01:  # no cube or no vector cores
        chip[rng.choice(["aic_num", "aiv_num"])] = 0
        return chip
    if rng.random() < 0.35:
        aic = rng.choice([1, 2, 7, 8, 20, 24, 30, 31, 32, 40, 64])
        chip["aic_num"] = aic
        chip["aiv_num"] = rng.choice([2 * aic, 2 * aic, aic, 3 * aic, 2 * aic + 2])
    if rng.random() < 0.25:
        chip["l1_bytes"] = rng.choice([131072, 262144, 263168, 393216, 524288, 1048576])
        chip["l0a_bytes"] = rng.choice([8192, 32768, 65536, 131072])
        chip["l0b_bytes"] = rng.choice([16384, 32768, 65536, 131072])
        chip["l0c_bytes"] = rng.choice([131072, 262144])
        chip["ub_bytes"] = rng.choice([196608, 262144])
        chip["l2_bytes"] = rng.choice([33554432, 134217728])
    return chip


def no_quant_problem(rng):
    """A random no-quant problem: x = weight in float16 / bfloat16 / float32; 1 to 1024 groups;
    split M, split K or none; the forms single, single_multi_single and multi; NZ weights;
    transposes; bias; chips with AIV != 2 AIC and other buffers."""
    dtype = rng.choice(["float16", "bfloat16", "float32"])
    groups = rng.choice([1, 1, 2, 3, 4, 8, 16, 32, 64, 128, 256, 1024, rng.randint(1, 1024)])
    if rng.random() < 0.02:
        groups = rng.choice([0, 1025])
    form = rng.choice(["single", "single", "single_multi_single", "multi"])
    group_type = -1 if form == "multi" else rng.choice([0, 0, 0, 2, -1])
    if form == "multi":
        groups = min(groups, 128)
    dim = lambda: rng.choice([0 if rng.random() < 0.05 else 1, 16, 64, 128, 200, 256, 512, 1024,
                              2048, 4096, 7168, rng.randint(1, 8192)])
    m, n, k = dim(), dim(), dim()
    tx, tw = rng.random() < 0.15, rng.random() < 0.3
    nz = rng.random() < 0.15
    x_dims = [k, m] if tx else [m, k]
    w_dims = [n, k] if tw else [k, n]
    tensors = {"x": {"dtype": dtype, "format": "ND", "instances": []},
               "weight": {"dtype": dtype, "format": "FRACTAL_NZ" if nz else "ND", "instances": []},
               "y": {"dtype": dtype, "format": "ND", "instances": []}}

    def add(name, origin, storage=None):
        tensors[name]["instances"].append([origin, storage or origin])

    lists = groups if form == "multi" else 1
    for _ in range(lists):
        add("x", x_dims)
    if form == "single":
        origin = [groups] + w_dims
        add("weight", origin, nz_storage(origin) if nz else None)
    else:
        for _ in range(groups):
            add("weight", w_dims, nz_storage(w_dims) if nz else None)
    for _ in range(lists):
        add("y", [groups, m, n] if group_type == 2 and form != "multi" else [m, n])
    if group_type != -1 or rng.random() < 0.05:
        tensors["group_list"] = {"dtype": "int64", "format": "ND", "instances": [[[groups],
                                                                                  [groups]]]}
    if rng.random() < 0.25:
        bias = "float32" if dtype == "bfloat16" and rng.random() < 0.7 else dtype
        tensors["bias"] = {"dtype": bias, "format": "ND", "instances": []}
        if form == "single":
            add("bias", [groups, n])
        else:
            for _ in range(groups):
                add("bias", [n])
    if rng.random() < 0.03:  # a 3-D x, as some callers pass [B, S, H]
        for inst in tensors["x"]["instances"]:
            inst[0] = inst[1] = [1] + inst[0]
    single_y = rng.choice([3, 3, 3, 2]) if rng.random() < 0.95 else rng.choice([0, 1])
    attrs = {"split_item": rng.choice([0, 1]) if form == "multi" else single_y,
             "dtype": 0,
             "transpose_weight": tw, "transpose_x": tx, "group_type": group_type,
             "group_list_type": rng.choice([0, 0, 1]), "act_type": 0, "tuning_config": [0]}
    return {"tensors": tensors, "attrs": attrs, "chip": random_chip(rng)}


# The quant path's dtype families: x and weight, the scale modes they take.
QUANT_FP8 = ["float8_e4m3fn", "float8_e5m2", "hifloat8"]
QUANT_FAMILIES = [("int8", 30), ("fp8", 20), ("mxfp8", 30), ("mxfp4", 25), ("fp4", 10),
                  ("mixed", 8), ("int4", 2)]
# Every dtype the wire names: a scale, bias or per-token dtype now and then outside CANN's lists.
QUANT_ANY_DTYPE = ["float16", "bfloat16", "float32", "int8", "int4", "float8_e4m3fn",
                   "float8_e5m2", "hifloat8", "float4_e2m1", "float4_e1m2", "float8_e8m0", "int32",
                   "int64", "uint64"]


def quant_dim(rng):
    """A size of m, k or n: tiny, a model's round size, any up to 8192, or up to 65536."""
    c = rng.random()
    if c < 0.1:
        return rng.randint(1, 16)
    if c < 0.4:
        return rng.choice([16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 7168])
    if c < 0.9:
        return rng.randint(1, 8192)
    return rng.randint(1, 65536)


def quant_chip(rng):
    """random_chip(), and a third of the time the L1 and L0C the quant path reads, from an L1
    that cannot hold one stage of blocks to one of 2 MiB."""
    chip = random_chip(rng)
    if rng.random() < 0.35:
        chip["l1_bytes"] = rng.choice([65536, 100000, 131072, 196608, 262144, 524288, 1048576,
                                       2097152])
        chip["l0c_bytes"] = rng.choice([65536, 131072, 131072, 262144, 524288])
        # L0A and L0B are filled from L1: a chip has no more of them than of L1.
        chip["l0a_bytes"] = min(chip["l0a_bytes"], chip["l1_bytes"])
        chip["l0b_bytes"] = min(chip["l0b_bytes"], chip["l1_bytes"])
    return chip


def quant_problem(rng):
    """A random quant problem: int8 (y float16 / bfloat16 / int8 / int32, scales uint64 / int64 /
    float32 / bfloat16), float8 e4m3 / e5m2 and hifloat8 (per-tensor, per-channel, per-token,
    per-group x with per-block weights), MXFP8 and MXFP4 (E8M0 scales), float4 e2m1 / e1m2, mixed
    and int4 pairs (refused); 1 to 1024 groups; split M, split K and, rarely, none; the forms single,
    single_multi_single and multi; NZ weights (and weight-NZ lists); transposes; bias; per-token
    scales; activations; group_list_type 0 / 1 / 2 (and, rarely, others); a few wrong scale,
    per-token or group-list shapes; chips with AIV != 2 AIC and L1 / L0C from 64 KiB to 2 MiB."""
    fam = rng.choices([f for f, _ in QUANT_FAMILIES], [w for _, w in QUANT_FAMILIES])[0]
    fp4 = ["float4_e2m1"] * 4 + ["float4_e1m2"]
    if fam == "int8":
        a = b = "int8"
    elif fam in ("fp8", "mxfp8"):
        a = rng.choice(QUANT_FP8 if fam == "fp8" else ["float8_e4m3fn", "float8_e5m2"])
        b = a if rng.random() < 0.85 else rng.choice(QUANT_FP8 + ["int8"])
    elif fam in ("mxfp4", "fp4"):
        a, b = rng.choice(fp4), rng.choice(fp4)
    elif fam == "int4":
        a, b = "int4", rng.choice(["int4", "int8"])
    else:
        a = rng.choice(QUANT_FP8 + ["int8", "float4_e2m1"])
        b = rng.choice(QUANT_FP8 + ["int8"] + (["float4_e2m1"] if a.startswith("float4") else []))
    mx = fam in ("mxfp8", "mxfp4") or (fam == "mixed" and rng.random() < 0.4) or (
        fam == "int8" and rng.random() < 0.05)
    group_type = rng.choice([0] * 7 + [2] * 3 + ([-1] if rng.random() < 0.15 else []))
    if a.startswith("float4") and rng.random() < 0.9:
        group_type = 0
    form = rng.choice(["single"] * 6 + ["single_multi_single"] * 2 + ["multi"])
    groups = (rng.choice([1, 2, 4, 8, 16, 64, 128, 256]) if rng.random() < 0.7
              else rng.randint(1, 1024))
    if form != "single":
        groups = min(groups, rng.choice([2, 4, 8, 16, 128, 140]))
    m, k, n = quant_dim(rng), quant_dim(rng), quant_dim(rng)
    m = 0 if rng.random() < 0.02 else m
    n = 0 if rng.random() < 0.02 else n
    k = 0 if rng.random() < 0.02 else k
    if a.startswith("float4") and rng.random() < 0.8:
        k, n = k + k % 2, n + n % 2
    if mx and rng.random() < 0.5:
        k = ceil_div(k, 64) * 64
    tx = group_type == 2 if rng.random() < 0.97 else group_type != 2
    tw = rng.random() < 0.5 if group_type != 2 or rng.random() < 0.05 else False
    # CANN takes NZ weights of int8, float8_e4m3fn (MX) and float4 pairs: mostly those.
    nz_pair = (a == b == "int8" or (mx and a == b == "float8_e4m3fn")
               or (a.startswith("float4") and b.startswith("float4")))
    nz = (rng.random() < (0.4 if nz_pair else 0.05)
          and (group_type != 2 or rng.random() < 0.05))
    if "float4_e1m2" in (a, b) and rng.random() < 0.85:
        nz = True
    if fam == "int8":
        y = rng.choice(["float16", "bfloat16", "int8", "int32", "float16", "bfloat16"]
                       + (["float32"] if rng.random() < 0.1 else []))
    else:
        y = rng.choice(["bfloat16", "float16", "bfloat16"]
                       + (["float32", "int8"] if rng.random() < 0.1 else []))
    if mx:
        scale_dtype, mode = "float8_e8m0", "mx"
    elif fam == "int8":
        scale_dtype = rng.choice(["float32", "bfloat16"] if nz and rng.random() < 0.8
                                 else ["uint64", "int64", "float32", "bfloat16"])
        mode = rng.choice(["perchannel", "pertensor", "pertensor1d", "perchannel"])
    else:
        scale_dtype = rng.choice(["float32", "float32", "bfloat16"])
        mode = rng.choice(["perchannel", "pertensor", "pertensor1d", "perblock", "perblock"])
    if rng.random() < 0.03:
        scale_dtype = rng.choice(QUANT_ANY_DTYPE)
    has_pt = rng.random() < (0.95 if mode in ("mx", "perblock") else 0.5)
    pt_dtype = "float8_e8m0" if mx else "float32"
    if rng.random() < 0.03:
        pt_dtype = rng.choice(QUANT_ANY_DTYPE)
    pt_mode = ("mx" if mx else "pergroup" if mode == "perblock"
               else rng.choice(["pertoken", "pertensor", "pertensor1d"]))
    has_bias = rng.random() < (0.3 if a in ("int8", "float4_e2m1", "float4_e1m2") else 0.03)
    bias_dtype = ({"int8": "int32"}.get(a, "float32") if rng.random() < 0.8
                  else rng.choice(["int32", "float32", "bfloat16", "float16", "int64"]))
    act = (0 if rng.random() < (0.75 if fam == "int8" else 0.97)
           else rng.choice([1, 2, 2, 4, 5, 3, 6, -1]))
    list_type = rng.choice([0, 0, 1, 1, 2]) if rng.random() < 0.97 else rng.choice([3, -1, 258])

    four_bit = b in ("int4", "float4_e2m1", "float4_e1m2")
    x_dims = [[k, m] if tx else [m, k]]
    w_one = [n, k] if tw else [k, n]
    y_dims = [[groups, m, n]] if group_type == 2 else [[m, n]]
    w_dims = [[groups] + w_one] if form == "single" else [w_one] * groups
    if form == "multi":
        rows = [max(0, m + rng.randint(-8, 8)) for _ in range(groups)]
        x_dims = [[k, r] if tx else [r, k] for r in rows]
        y_dims = [[r, n] for r in rows]
    sk, sk_split = ceil_div(k, 64), k // 64 + groups

    def weight_scale():
        if mode == "mx":
            if group_type == 2:
                return [n, sk_split, 2] if tw else [sk_split, n, 2]
            if form != "single" and (nz or rng.random() < 0.3):
                return [n, sk, 2] if tw else [sk, n, 2]
            return [groups, n, sk, 2] if tw else [groups, sk, n, 2]
        if mode == "perchannel":
            return [n] if form != "single" else [groups, n]
        if mode == "pertensor":
            return [1] if form != "single" else [groups, 1]
        if mode == "pertensor1d":
            return [groups]
        if group_type == 2:  # per-block
            return [k // 128 + groups, ceil_div(n, 128)]
        w = w_dims[0]
        return ([w[0]] + [ceil_div(d, 128) for d in w[1:]] if form == "single"
                else [ceil_div(d, 128) for d in w])

    def token_scale():
        if pt_mode == "mx":
            if group_type == 2:
                return [sk_split, m, 2] if tx else [m, sk_split, 2]
            return [sk, m, 2] if tx else [m, sk, 2]
        if pt_mode == "pergroup":
            return [k // 128 + groups, m] if group_type == 2 else [m, ceil_div(k, 128)]
        return {"pertoken": [m], "pertensor": [groups, 1], "pertensor1d": [groups]}[pt_mode]

    scales = [weight_scale()] * (groups if form != "single" and mode != "pertensor1d" else 1)
    tokens = [token_scale()] if has_pt else []
    if rng.random() < 0.05:  # one dim of the first scale off by one
        first = list(scales[0])
        i = rng.randrange(len(first))
        first[i] = max(0, first[i] + rng.choice([-1, 1]))
        scales = [first] + scales[1:]
    if tokens and rng.random() < 0.03:
        tokens = [[d + 1 for d in tokens[0]]]
    if rng.random() < 0.04:
        scales = []
    bias = [[groups, n]] if form == "single" else [[n]] * groups
    if rng.random() < 0.1:
        bias = [[n]]
    group_list = [[groups, 2]] if list_type == 2 else [[groups]]
    if rng.random() < 0.01:
        group_list = []
    elif rng.random() < 0.02:
        group_list = [[groups, 2]] if list_type != 2 else [[groups]]

    def entry(dtype, shapes, storage=None, fmt="ND"):
        return {"dtype": dtype, "format": fmt,
                "instances": [[o, (storage or (lambda d: d))(o)] for o in shapes]}

    tensors = {"x": entry(a, x_dims), "y": entry(y, y_dims),
               "weight": entry(b, w_dims, (lambda d: nz_storage(d, four_bit)) if nz else None,
                               "FRACTAL_NZ" if nz else "ND")}
    if scales:
        tensors["scale"] = entry(scale_dtype, scales)
    if tokens:
        tensors["per_token_scale"] = entry(pt_dtype, tokens)
    if has_bias:
        tensors["bias"] = entry(bias_dtype, bias)
    if group_list:
        tensors["group_list"] = entry("int64", group_list)
    split_item = (rng.choice([0, 1, 2, 3]) if form != "single" or rng.random() < 0.2 else 3)
    if form == "multi":
        split_item = rng.choice([0, 1, 0, 2])
    attrs = {"split_item": split_item, "dtype": 0, "transpose_weight": tw, "transpose_x": tx,
             "group_type": group_type, "group_list_type": list_type, "act_type": act,
             "tuning_config": [0]}
    return {"tensors": tensors, "attrs": attrs, "chip": quant_chip(rng)}


def weight_quant_problem(rng):
    """A random weight-quant problem (x != weight, not both 8-bit, x not 4-bit): the families
    A16W8, A16W4 (int4 / packed int32), A16 float8 weights, A16-MXFP4 (float4 / packed float32),
    A8W4 and MX-A8W4, and odd pairs CANN tiles all the same; the forms single (split M),
    single_multi_single (MX-A8W4, also split K) and multi (no split), 1 to 1024 groups;
    per-channel, per-group and MX antiquant scales; antiquant offsets; NZ weights in the path's
    (N1, K1, K0, N0) / (K1, N1, N0, K0) layouts; transposes; biases; MX-A8W4's per-token scale;
    chips with AIV != 2 AIC, up to 1024 cores, and other buffers. Mostly valid, now and then
    not, so that CANN's checks are compared too."""
    def dim(lo=1, hi=16384, align=1):
        r = rng.random()
        if r < 0.15:
            v = rng.choice([1, 2, 3, 8, 15, 16, 17, 31, 32, 48, 64, 96, 127, 128])
        elif r < 0.6:
            v = rng.choice([256, 384, 512, 640, 768, 1024, 1280, 1536, 2048, 2560, 3072, 4096,
                            4352, 5120, 7168, 8192, 12288, 16384])
        else:
            v = int(2 ** rng.uniform(0, 14))
        v = max(lo, min(hi, v))
        if align > 1 and rng.random() < 0.95:
            v = max(align, v // align * align)
        return v

    family = rng.choice(["a16w8"] * 2 + ["a16w4"] * 5 + ["a16fp8"] + ["a16mxfp4"] * 2 +
                        ["a8w4"] * 4 + ["mxa8w4"] * 5 + ["odd"] * 2)
    x16 = rng.choice(["float16", "bfloat16"])
    trans_w, nz, scale_dtype = rng.random() < 0.5, False, x16
    if family == "a16w8":
        x, w = x16, "int8"
    elif family == "a16w4":
        x, w = x16, rng.choice(["int4"] * 4 + ["int32"])
    elif family == "a16fp8":
        x, w = x16, rng.choice(["float8_e4m3fn", "float8_e5m2", "hifloat8"])
        trans_w = rng.random() < 0.9
    elif family == "a16mxfp4":
        x, w = x16, rng.choice(["float4_e2m1"] * 3 + ["float32", "float4_e1m2"])
        nz, trans_w, scale_dtype = True, rng.random() < 0.04, "float8_e8m0"
    elif family == "a8w4":
        x, w = "int8", "int4"
        nz, trans_w, scale_dtype = True, rng.random() < 0.04, "uint64"
    elif family == "mxa8w4":
        x, w = "float8_e4m3fn", rng.choice(["float4_e2m1"] * 4 + ["float32"])
        nz, trans_w, scale_dtype = True, rng.random() < 0.97, "float8_e8m0"
    else:
        x, w = rng.choice([
            ("float16", "bfloat16"), ("bfloat16", "float16"), ("float32", "float16"),
            ("float16", "float32"), ("int8", "int32"), ("int8", "float16"),
            ("float8_e4m3fn", "int4"), ("float8_e5m2", "float16"), ("hifloat8", "int32"),
            ("float16", "int64"), ("float32", "int8"), ("int64", "float16"),
            ("bfloat16", "uint64"), ("float8_e4m3fn", "float32"), ("uint64", "int8"),
            ("float8_e8m0", "float16"), ("bfloat16", "float8_e8m0")])
        scale_dtype = rng.choice([x, "float16", "uint64", "float8_e8m0", "float32"])
        nz = rng.random() < 0.3
    if rng.random() < 0.02:
        nz = not nz
    if rng.random() < 0.03:
        trans_w = not trans_w
    packed = w in ("int32", "float32") and (family != "odd" or rng.random() < 0.5)

    r = rng.random()
    form = "single"
    if family == "mxa8w4":
        form = "single_multi_single" if r < 0.55 else ("single" if r < 0.93 else "multi")
    elif r < 0.02:
        form = "single_multi_single"
    elif r < 0.32 and (not nz or r < 0.04):
        form = "multi"
    group_type = -1 if form == "multi" else 0
    if rng.random() < 0.06:
        group_type = rng.choice([2, 2, 1, -1, 0])
    split_item = rng.choice([2, 3]) if group_type != -1 else rng.choice([0, 1])
    if rng.random() < 0.04:
        split_item = rng.choice([0, 1, 2, 3])
    many = rng.random() < 0.15
    if form == "multi":
        groups = rng.randint(1, 127) if many else rng.randint(1, 8)
        if rng.random() < 0.02:
            groups = rng.choice([128, 129, 130])
    elif form == "single_multi_single":
        groups = rng.randint(1, 128) if many else rng.randint(1, 8)
    else:
        groups = rng.randint(1, 1024) if many else rng.randint(1, 16)

    mx = scale_dtype == "float8_e8m0"
    mode = "mx" if mx else rng.choice(["channel", "group", "group"])
    if family == "a8w4" and rng.random() < 0.95:
        mode = "group"
    sizes = [32, 64, 128, 256] * 4 + [192, 512, 48, 96, 100]
    if family == "a8w4":
        sizes = [128, 192, 256, 512] * 4 + [64, 100]
    group_size = rng.choice(sizes) if mode == "group" else 0
    tensors = {}

    def tensor(name, dtype, fmt="ND"):
        tensors[name] = {"dtype": dtype, "format": fmt, "instances": []}
        return tensors[name]["instances"]

    def weight_shapes(k, n, lead):
        """[origin, storage] of one weight [.., k, n] ([.., n, k] transposed)."""
        if nz:
            st = lead + ([ceil_div(k, 32), ceil_div(n, 16), 16, 32] if trans_w
                         else [ceil_div(n, 16), ceil_div(k, 32), 32, 16])
            return [st if rng.random() < 0.5 else lead + ([n, k] if trans_w else [k, n]), st]
        origin = lead + ([n, k] if trans_w else [k, n])
        storage = list(origin)
        if packed and rng.random() < 0.97:
            storage[-1] = max(1, storage[-1] // 8)
            if rng.random() < 0.6:
                origin = list(storage)
        return [origin, storage]

    xs, ws, ys = tensor("x", x), tensor("weight", w, "FRACTAL_NZ" if nz else "ND"), None
    scales = tensor("antiquant_scale", scale_dtype)
    bias_list = []
    if form in ("single", "single_multi_single"):
        m = dim(hi=65536) if rng.random() < 0.97 else 0
        n = dim(align=32 if nz else (8 if packed else 2))
        k = dim(lo=64, align=64) if mode == "mx" else dim(align=2)
        if mode == "group" and rng.random() < 0.9:
            k = max(group_size, k // group_size * group_size)
        if rng.random() < 0.02:
            k = 0
        if rng.random() < 0.01:
            n = 0
        xs.append([[m, k], [m, k]])
        y_dims = [m, n]
        if form == "single":
            ws.append(weight_shapes(k, n, [groups]))
            if mode == "channel":
                s = [groups, n]
            elif mode == "group":
                g = max(1, k // group_size)
                s = [groups, n, g] if trans_w and family != "a16w4" else [groups, g, n]
            else:
                s = ([groups, n, ceil_div(k, 64), 2] if trans_w
                     else [groups, ceil_div(k, 64), n, 2])
            scales.append([s, s])
            bias_list = [[groups, n]]
        else:
            s = ([n, ceil_div(k, 64), 2] if mode == "mx"
                 else [n] if mode == "channel" else [max(1, k // group_size), n])
            for _ in range(groups):
                ws.append(weight_shapes(k, n, []))
                scales.append([s, s])
            bias_list = [[n]] * groups
        ys = [[y_dims, y_dims]]
        gl = groups if rng.random() < 0.97 else groups + rng.choice([-1, 1])
        tensor("group_list", "int64").append([[gl], [gl]])
        if mode == "mx":
            pts = [m, k // 64, 2]
            tensor("per_token_scale", "float8_e8m0").append([pts, pts])
    else:
        ys = []
        k_all = dim(lo=64, align=64 if mode == "mx" else 2)
        same_k = rng.random() < 0.5
        for _ in range(groups):
            m = dim(hi=8192) if rng.random() < 0.98 else 0
            k = k_all if same_k else dim(lo=2, align=64 if mode == "mx" else 2)
            if mode == "group" and rng.random() < 0.9:
                k = max(group_size, k // group_size * group_size)
            n = dim(align=32 if nz else (8 if packed else 2))
            batch = [rng.choice([1, 2, 3])] if rng.random() < 0.05 else []
            xs.append([batch + [m, k]] * 2)
            ys.append([batch + [m, n]] * 2)
            ws.append(weight_shapes(k, n, []))
            s = ([n] if mode == "channel" else [max(1, k // max(group_size, 1)), n]
                 if mode == "group" else [n, ceil_div(k, 64), 2])
            scales.append([s, s])
            bias_list.append([n])
        if rng.random() < 0.05:
            tensor("group_list", "int64").append([[groups], [groups]])
        if mode == "mx":
            pts = [xs[0][0][0], xs[0][0][-1] // 64, 2]
            tensor("per_token_scale", "float8_e8m0").append([pts, pts])
    y = tensor("y", x if x in ("float16", "bfloat16") else rng.choice(["bfloat16", "float16"]))
    y.extend(ys)
    if rng.random() < (0.02 if family == "mxa8w4" else 0.25):
        offsets = tensor("antiquant_offset",
                         scale_dtype if rng.random() < 0.95 else "float32")
        offsets.extend(scales)
    if rng.random() < 0.3:
        if family == "a8w4":
            bias_dtype = "float32"
        elif x == "bfloat16":
            bias_dtype = rng.choice(["bfloat16", "float32", "bfloat16", "float16"])
        else:
            bias_dtype = x if rng.random() < 0.95 else "float32"
        tensor("bias", bias_dtype).extend([[b, b] for b in bias_list])
    # Now and then words CANN's plan wraps: a list's x whose batch dims multiply M past 2^31, a
    # packed weight whose N unpacks past it.
    if form == "multi" and rng.random() < 0.01:
        xs[0] = [[65536, 65536] + xs[0][0]] * 2
    if form == "single" and packed and not trans_w and not nz and rng.random() < 0.1:
        ws[0] = [ws[0][0][:-1] + [1 << 28], ws[0][1][:-1] + [1 << 28]]
    # Now and then a broken input: no scale, a per-token scale or scale of another shape, no y,
    # a weight origin off by one.
    r = rng.random()
    if r < 0.015:
        del tensors["antiquant_scale"]
    elif r < 0.03 and "per_token_scale" in tensors:
        pts = [list(d) for d in tensors["per_token_scale"]["instances"][0]]
        pts[1][rng.randrange(len(pts[1]))] += 1
        tensors["per_token_scale"]["instances"][0] = pts
    elif r < 0.045:
        s = [list(d) for d in scales[0]]
        s[1][-1] += rng.choice([1, 16])
        scales[0] = s
    elif r < 0.055:
        del tensors["y"]
    elif r < 0.065:
        origin = list(ws[0][0])
        origin[-1] += 1
        ws[0] = [origin, ws[0][1]]
    chip = random_chip(rng)
    if chip["aiv_num"] != 2 * chip["aic_num"] and rng.random() < 0.75:
        chip["aiv_num"] = 2 * chip["aic_num"]  # the path refuses any other ratio
    if rng.random() < 0.03:  # 255 cores and more: cubeNumBlocksN's byte
        chip["aic_num"] = rng.choice([255, 256, 300, 512, 1024])
        chip["aiv_num"] = 2 * chip["aic_num"]
    attrs = {"split_item": split_item, "dtype": 0, "transpose_weight": trans_w,
             "transpose_x": rng.random() < 0.02, "group_type": group_type,
             "group_list_type": rng.choice([0, 1, 2]) if rng.random() < 0.1 else rng.choice([0, 1]),
             "act_type": 0, "tuning_config": [0]}
    return {"tensors": tensors, "attrs": attrs, "chip": chip}


DRAWS = {"no_quant": no_quant_problem, "quant": quant_problem,
         "weight_quant": weight_quant_problem}


def oracle_input(p):
    """The oracle's keys for problem `p` (its explicit tensors, attributes, compile info and the
    context's platform, the same chip)."""
    out = {"op_type": "GroupedMatmul"}
    for name in TENSORS:
        t = p["tensors"].get(name)
        if not t or not t["instances"]:
            out[name] = ""
            continue
        out[name] = ";".join(",".join(map(str, o)) for o, _ in t["instances"])
        out[name + "_storage"] = ";".join(",".join(map(str, s)) for _, s in t["instances"])
        out[name + "_dtype"] = ORACLE_DTYPE[t["dtype"]]
        out[name + "_format"] = "NZ" if t["format"] == "FRACTAL_NZ" else "ND"
    a = p["attrs"]
    out.update({"split_item": a["split_item"], "dtype_attr": a["dtype"],
                "trans_w": a["transpose_weight"], "trans_x": a["transpose_x"],
                "group_type": a["group_type"], "group_list_type": a["group_list_type"],
                "act_type": a["act_type"], "tuning_config": a["tuning_config"]})
    c = p["chip"]
    out.update(c)
    out.update({"platform_core_num": c["aic_num"], "platform_ub_bytes": c["ub_bytes"],
                "platform_l1_bytes": c["l1_bytes"], "platform_l0a_bytes": c["l0a_bytes"],
                "platform_l0b_bytes": c["l0b_bytes"], "platform_l0c_bytes": c["l0c_bytes"],
                "platform_l2_bytes": c["l2_bytes"]})
    return out


def our_request(p):
    """The TilingRequest (proto JSON mapping) of problem `p`."""
    grouped = {}
    for name, t in p["tensors"].items():
        if not t["instances"]:
            continue
        camel = "".join(w if i == 0 else w.title() for i, w in enumerate(name.split("_")))
        grouped[camel] = {
            "dtype": "DATA_TYPE_" + t["dtype"].upper(),
            "format": "FORMAT_" + t["format"],
            "instances": [{"origin": o, "storage": s} for o, s in t["instances"]]}
    a = p["attrs"]
    grouped.update({"splitItem": a["split_item"], "dtype": a["dtype"],
                    "transposeWeight": a["transpose_weight"], "transposeX": a["transpose_x"],
                    "groupType": a["group_type"], "groupListType": a["group_list_type"],
                    "actType": a["act_type"], "tuningConfig": a["tuning_config"]})
    c = p["chip"]
    overrides = {"aicNum": c["aic_num"], "aivNum": c["aiv_num"], "l1Bytes": c["l1_bytes"],
                 "l0aBytes": c["l0a_bytes"], "l0bBytes": c["l0b_bytes"],
                 "l0cBytes": c["l0c_bytes"], "ubBytes": c["ub_bytes"], "l2Bytes": c["l2_bytes"]}
    return {"problem": {"op": "OPERATOR_GROUPED_MATMUL", "grouped": grouped},
            "platformOverrides": overrides}


def ask_alone(oracle, p):
    """The oracle's answer to `p` alone, or {"status": "never ends"} if it takes longer than
    NEVER_ENDS_TIMEOUT_S."""
    try:
        out = subprocess.run([oracle], input=json.dumps(oracle_input(p)) + "\n",
                             capture_output=True, text=True, check=False,
                             timeout=NEVER_ENDS_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"status": "never ends"}
    lines = [line for line in out.stdout.splitlines() if line.strip()]
    return json.loads(lines[0]) if lines else {"status": "failed", "error": out.stderr[-200:]}


def documented_class(o, u):
    """The documented class a difference belongs to, or None."""
    if u["status"] == "ok":
        return None
    for name, cann_status, message in DOCUMENTED:
        if cann_status in (None, o["status"]) and message in u.get("error", ""):
            return name
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oracle", required=True)
    parser.add_argument("--tilingctl", required=True)
    parser.add_argument("--path", choices=sorted(DRAWS), default="no_quant")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--reasons", action="store_true",
                        help="also count the engine's refusal messages of the both-refused problems")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    problems = [DRAWS[args.path](rng) for _ in range(args.n)]
    mine = ours(args.tilingctl, [our_request(p) for p in problems])
    # A problem on which CANN's tiling never ends would stall the oracle's stream: the ones the
    # engine says so of are asked alone, with a timeout.
    alone = ["never ends" in u.get("error", "") for u in mine]
    text = "".join(json.dumps(oracle_input(p)) + "\n" for p, a in zip(problems, alone) if not a)
    oracle = subprocess.run([args.oracle], input=text, capture_output=True, text=True, check=False)
    streamed = iter([json.loads(line) for line in oracle.stdout.splitlines() if line.strip()])
    theirs = [ask_alone(args.oracle, p) if a else next(streamed, None)
              for p, a in zip(problems, alone)]
    if any(t is None for t in theirs) or next(streamed, None) is not None:
        sys.exit(f"the oracle answered a different count: {oracle.stderr[-400:]}")

    stats = collections.Counter()
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
        stats[kind] += 1
        examples.setdefault(kind, (p, o, u))
    same = stats["identical"] + stats["both refused"]
    if args.reasons:
        reasons = collections.Counter(
            u["error"][:90] for o, u in zip(theirs, mine)
            if o["status"] != "ok" and u["status"] != "ok")
        for reason, count in reasons.most_common(20):
            print(f"{count:5d}  refused: {reason}")
    for kind, count in stats.most_common():
        if kind in ("identical", "both refused"):
            continue
        p, o, u = examples[kind]
        print(f"{count:5d}  {kind}\n       e.g. {json.dumps(oracle_input(p))[:600]}\n"
              f"       cann {json.dumps(o)[:300]}\n       ours {json.dumps(u)[:300]}")
    print(dict(sorted(stats.items())))
    for doc, count in documented.most_common():
        p, o, u = examples["documented: " + doc]
        print(f"{count:5d}  documented class: {doc}\n       e.g. {json.dumps(oracle_input(p))[:300]}\n"
              f"       cann {json.dumps(o)[:160]}\n       ours {json.dumps(u)[:200]}")
    total_doc = sum(documented.values())
    print(f"{same} of {args.n} problems identical (key, block dim, every word, workspace, or both "
          f"refused); {total_doc} in documented classes; {args.n - same - total_doc} undocumented")


if __name__ == "__main__":
    main()
