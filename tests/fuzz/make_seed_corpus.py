#!/usr/bin/python3
"""Writes the seed corpus of the fuzz targets into tests/fuzz/corpus/<target>/.

  tests/fuzz/make_seed_corpus.py --tilingctl build/bin/tilingctl

  tiling_request   TilingRequests: every golden case of tests/data/cann950/cases.json with its
                   platform as overrides, plus requests that reach each validation branch (NZ
                   storage shapes, slice views, bias, overrides at their limits, forced strategies,
                   ADVISE mode, bad values).
  explicit_tiling  ExecuteRequests carrying an explicit tiling: the engine's own answer for small
                   problems (`tilingctl tile --local --json`), as is and with fields edited the
                   way a user would (baseM, baseK, usedCoreNum, block_dim, the key).
  npy              .npy files: float16 / float32 / uint16, versions 1.0 to 3.0, scalars, empty and
                   3-d shapes, and the refused kinds (fortran_order, big-endian, object, truncated).

Seeds are only a starting point; libFuzzer mutates them. Files that ever crashed a target are
added next to them (see scripts/fuzz.sh) and are kept when this script runs again: it only
(re)writes files named seed-*. Needs protoc and Debian's python3-protobuf (/usr/bin/python3).
"""

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")


def load_proto_module():
    out = tempfile.mkdtemp(prefix="npu_fuzz_seeds_")
    subprocess.run(["protoc", "-I", os.path.join(ROOT, "proto"), "--python_out=" + out,
                    "npu/tiling/v1/tiling_service.proto"], check=True)
    sys.path.insert(0, out)
    from npu.tiling.v1 import tiling_service_pb2  # noqa: E402
    return tiling_service_pb2


def write(target, name, data):
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "seed-" + name), "wb") as f:
        f.write(data)


def clear_seeds(target):
    folder = os.path.join(CORPUS, target)
    if os.path.isdir(folder):
        for name in os.listdir(folder):
            if name.startswith("seed-"):
                os.remove(os.path.join(folder, name))


DTYPES = {"float16": 1, "bfloat16": 2, "float32": 3}
FORMATS = {"ND": 1, "FRACTAL_NZ": 2}


def tiling_request_seeds(pb):
    clear_seeds("tiling_request")
    with open(os.path.join(ROOT, "tests", "data", "cann950", "cases.json")) as f:
        cases = json.load(f)["cases"]
    for case in cases:
        i = case["input"]
        r = pb.TilingRequest(id=case["name"], include_trace=True)
        p = r.problem
        p.m, p.n, p.k = i["m"], i["n"], i["k"]
        p.dtype_a, p.dtype_b, p.dtype_c = (DTYPES[i["dtype_a"]], DTYPES[i["dtype_b"]],
                                           DTYPES[i["dtype_c"]])
        p.trans_a, p.trans_b = i["trans_a"], i["trans_b"]
        p.format_a, p.format_b, p.format_c = (FORMATS[i["format_a"]], FORMATS[i["format_b"]],
                                              FORMATS[i["format_c"]])
        if i.get("bias"):
            p.has_bias = True
            p.dtype_bias = DTYPES[i["bias_dtype"] or i["dtype_c"]]
        p.hf32 = bool(i.get("hf32"))
        p.force_grp_acc_fp32 = bool(i.get("force_grp_acc_fp32"))
        for key, value in (i.get("platform") or {}).items():
            if hasattr(r.platform_overrides, key):
                setattr(r.platform_overrides, key, value)
        write("tiling_request", "golden-" + case["name"], r.SerializeToString())

    def base(m=1024, n=1024, k=1024, dtype="float16"):
        r = pb.TilingRequest(id="seed")
        p = r.problem
        p.m, p.n, p.k = m, n, k
        p.dtype_a = p.dtype_b = p.dtype_c = DTYPES[dtype]
        return r

    variants = {}
    r = base(); r.problem.format_b = 2; r.problem.storage_shape_b.extend([64, 64, 16, 16])
    variants["nz-storage"] = r
    r = base(); r.problem.format_b = 2; r.problem.trans_b = True
    r.problem.storage_shape_b.extend([1, 1, 64, 64, 16, 16]); variants["nz-storage-batch"] = r
    r = base(); s = r.problem.a_slice; s.enabled, s.rank, s.batch = True, 3, 4
    s.row_stride, s.batch_stride = 1024, 256 * 1024; variants["slice-rank3"] = r
    r = base(); s = r.problem.a_slice; s.enabled, s.rank, s.row_stride = True, 2, 2048
    variants["slice-rank2"] = r
    r = base(dtype="bfloat16"); r.problem.dtype_c = 3; r.problem.has_bias = True
    r.problem.dtype_bias = 3; variants["bias-bf16-fp32"] = r
    r = base(dtype="float32"); r.problem.hf32 = True; variants["hf32"] = r
    r = base(dtype="float32"); r.problem.force_grp_acc_fp32 = True; variants["grp-acc"] = r
    r = base(k=0); variants["k-zero"] = r
    r = base(m=1, n=1, k=1); variants["tiny"] = r
    r = base(m=2147483647, n=16, k=16); variants["m-at-limit"] = r
    r = base(m=65536, n=65536, k=64); r.problem.deterministic_level = 2
    variants["deterministic"] = r
    r = base(); r.problem.avoid_tensor_api = True; variants["avoid-tensor-api"] = r
    r = base(m=4096, n=1280, k=8192); r.forced_strategy = "BASIC_STREAM_K"; r.include_trace = True
    variants["forced-streamk"] = r
    r = base(); r.forced_strategy = "NO_SUCH"; variants["forced-unknown"] = r
    r = base(); r.platform = "ascend950pr"; o = r.platform_overrides
    o.aic_num, o.aiv_num, o.l1_bytes, o.l0a_bytes, o.l0b_bytes = 1024, 2048, 16384, 4096, 4096
    o.l0c_bytes, o.ub_bytes, o.l2_bytes, o.bt_bytes = 4096, 4096, 1, 1024
    o.cube_freq_mhz, o.ddr_bytes_per_cycle, o.l2_bytes_per_cycle = 1, 1, 1
    variants["overrides-extreme"] = r
    r = base(); r.platform_overrides.aic_num = 0; variants["override-zero"] = r
    r = base(); r.platform = "unknown"; variants["platform-unknown"] = r
    r = base(); r.mode = 2; r.advise.max_candidates = 4; variants["advise"] = r
    r = base(); r.problem.dtype_b = 2; variants["dtype-mix"] = r
    r = base(); r.problem.m = -1; variants["m-negative"] = r
    r = base(); r.client_id = "graph-compiler@host"; r.include_trace = True; variants["trace"] = r
    # BatchMatMulV3 and FusedMatMul: broadcast, merge into M, views, a batched bias, epilogues.
    r = base(m=320, n=32, k=32); r.problem.op = 2
    r.problem.batch_a.extend([10, 10]); r.problem.batch_b.extend([10, 10]); variants["bmm"] = r
    r = base(m=64, n=96, k=128); r.problem.op = 2; r.problem.trans_a = True
    r.problem.batch_a.extend([4, 1]); r.problem.batch_b.extend([1, 8]); variants["bmm-broadcast"] = r
    r = base(m=64, n=96, k=128); r.problem.op = 2; r.problem.batch_a.extend([30])
    variants["bmm-merge-into-m"] = r
    r = base(m=150, n=32, k=150); r.problem.op = 2; r.problem.batch_a.extend([512])
    r.problem.batch_b.extend([512]); r.problem.b_batch_interleaved = True; variants["bmm-view"] = r
    r = base(m=16, n=16, k=16); r.problem.op = 2; r.problem.batch_a.extend([2048])
    r.problem.batch_b.extend([2048]); r.problem.has_bias = True; r.problem.dtype_bias = 1
    r.problem.batch_bias.extend([2048]); variants["bmm-batch-bias"] = r
    r = base(m=1, n=8, k=1); r.problem.op = 2; r.problem.batch_a.extend([2400])
    r.problem.batch_b.extend([2400]); variants["bmm-to-mul"] = r
    r = base(m=4096, n=1280, k=8192); r.problem.op = 3; r.problem.fused_op = 1
    r.problem.trans_b = True; r.problem.x3_shape.extend([4096, 1280]); variants["fused-add"] = r
    r = base(m=128, n=256, k=64); r.problem.op = 3; r.problem.fused_op = 2
    r.problem.batch_a.extend([8]); r.problem.batch_b.extend([8]); r.problem.inner_precise = 1
    r.problem.x3_shape.extend([1, 128, 256]); variants["fused-mul-batched"] = r
    r = base(m=2048, n=8, k=1024); r.problem.op = 3; r.problem.fused_op = 3
    r.problem.trans_b = True; variants["fused-gelu-small-n"] = r
    r = base(m=512, n=512, k=0); r.problem.op = 3; r.problem.fused_op = 6; r.problem.dtype_c = 3
    variants["fused-16cast32-k0"] = r
    # Edges: K at and around the 32-bit wrap of CANN's K byte counts (the
    # request that once killed the server with SIGFPE is the first), views of
    # A with every rank of B, batch products past 2^31, an NZ B with k = 0.
    r = base(m=512, n=128, k=4194304, dtype="bfloat16"); r.problem.op = 2; r.problem.trans_a = True
    r.problem.batch_a.extend([24, 1]); variants["bmm-long-k-sigfpe"] = r
    for k in (1 << 20, (1 << 22) + 16, 12582912, 1 << 24, 2147483647):
        for dtype in ("float16", "float32"):
            r = base(m=512, n=128, k=k, dtype=dtype); r.problem.op = 2
            r.problem.batch_a.extend([3]); r.problem.batch_b.extend([3])
            variants["bmm-long-k-%d-%s" % (k, dtype)] = r
    for rank_b in range(5):
        r = base(m=58, n=256, k=64, dtype="bfloat16"); r.problem.op = 2
        r.problem.batch_a.extend([7]); r.problem.a_batch_interleaved = True
        r.problem.batch_b.extend([7] * min(rank_b, 1) + [1] * max(rank_b - 1, 0))
        variants["bmm-a-view-b-rank-%d" % rank_b] = r
    r = base(m=16, n=16, k=16); r.problem.op = 2
    r.problem.batch_a.extend([65536, 65536]); r.problem.batch_b.extend([1]); variants["bmm-batch-2^32"] = r
    r = base(m=64, n=64, k=0); r.problem.op = 3; r.problem.format_b = 2
    r.problem.batch_a.extend([2]); r.problem.batch_b.extend([2]); variants["fused-nz-k0"] = r
    r = base(m=1, n=200, k=64, dtype="float32"); r.problem.op = 2; r.problem.trans_b = True
    r.problem.batch_a.extend([5, 256, 8]); r.problem.batch_b.extend([5, 1, 8])
    variants["bmm-l0b-overflow-warning"] = r
    for name, r in variants.items():
        write("tiling_request", name, r.SerializeToString())
    write("tiling_request", "empty", b"")
    return len(cases) + len(variants) + 1


def explicit_tiling_seeds(pb, tilingctl):
    from google.protobuf import json_format
    clear_seeds("explicit_tiling")
    count = 0
    shapes = [(64, 64, 64, "float16", []), (32, 48, 64, "bfloat16", []),
              (16, 16, 0, "float16", []), (64, 32, 16, "float32", []),
              (48, 64, 64, "float16", ["--trans-b"]), (64, 64, 32, "float16", ["--bias"]),
              (16, 64, 64, "float32", ["--force-grp-acc-fp32"])]
    for m, n, k, dtype, flags in shapes:
        out = subprocess.run([tilingctl, "tile", "--local", "--json", "--notrace", "--m", str(m),
                              "--n", str(n), "--k", str(k), "--dtype", dtype] + flags,
                             check=True, stdout=subprocess.PIPE).stdout.decode()
        tiling = json_format.Parse(out, pb.TilingResponse())
        request = pb.ExecuteRequest(id="seed", seed=7)
        p = request.problem
        p.m, p.n, p.k = m, n, k
        p.dtype_a = p.dtype_b = p.dtype_c = DTYPES[dtype]
        p.trans_b = "--trans-b" in flags
        if "--bias" in flags:
            p.has_bias, p.dtype_bias = True, DTYPES[dtype]
        p.force_grp_acc_fp32 = "--force-grp-acc-fp32" in flags
        name = "%dx%dx%d-%s%s" % (m, n, k, dtype, "".join(flags))
        # The engine's tiling, without an explicit tiling, and explicitly.
        write("explicit_tiling", name + "-engine", request.SerializeToString())
        request.tiling.CopyFrom(tiling)
        write("explicit_tiling", name, request.SerializeToString())
        timing = pb.ExecuteRequest(); timing.CopyFrom(request); timing.timing_only = True
        write("explicit_tiling", name + "-timing", timing.SerializeToString())
        count += 3
        # Hand edits: each field a user would try.
        for field, value in (("baseM", 16), ("baseM", 17), ("baseN", 32), ("baseK", 16),
                             ("kL1", 0), ("usedCoreNum", 1), ("mTailCnt", 3),
                             ("l0cDB", 2), ("skSingleCoreK", 32)):
            edited = pb.ExecuteRequest(); edited.CopyFrom(request)
            hit = [f for f in edited.tiling.fields if f.name == field]
            if not hit:
                continue
            hit[0].value = value
            write("explicit_tiling", "%s-%s-%d" % (name, field, value), edited.SerializeToString())
            count += 1
        edited = pb.ExecuteRequest(); edited.CopyFrom(request)
        edited.tiling.block_dim = 1
        write("explicit_tiling", name + "-blockdim1", edited.SerializeToString())
        edited = pb.ExecuteRequest(); edited.CopyFrom(request)
        edited.tiling.ClearField("key")
        write("explicit_tiling", name + "-raw-key", edited.SerializeToString())
        count += 2
    # BatchMatMulV3 / FusedMatMul plans of the engine (batch structs, fused keys, x3).
    op_shapes = [("batch_matmul_v3", 47, 77, 8, ["--batch-a", "10,9", "--batch-b", "10,9"]),
                 ("batch_matmul_v3", 16, 64, 64, ["--batch-a", "128", "--batch-b", "128"]),
                 ("batch_matmul_v3", 1, 8, 1, ["--batch-a", "300", "--batch-b", "300"]),
                 ("fused_matmul", 96, 80, 64, ["--fused-op", "add", "--batch-a", "3",
                                               "--batch-b", "3", "--x3-shape", "3,96,80"]),
                 ("fused_matmul", 64, 48, 32, ["--fused-op", "gelu_tanh"])]
    for op, m, n, k, flags in op_shapes:
        out = subprocess.run([tilingctl, "tile", "--local", "--json", "--notrace", "--op", op,
                              "--m", str(m), "--n", str(n), "--k", str(k), "--dtype", "float16"]
                             + flags, check=True, stdout=subprocess.PIPE).stdout.decode()
        tiling = json_format.Parse(out, pb.TilingResponse())
        request = pb.ExecuteRequest(id="seed", seed=7)
        p = request.problem
        p.op = 2 if op == "batch_matmul_v3" else 3
        p.m, p.n, p.k = m, n, k
        p.dtype_a = p.dtype_b = p.dtype_c = DTYPES["float16"]
        for flag, value in zip(flags[::2], flags[1::2]):
            dims = [int(d) for d in value.split(",")] if flag != "--fused-op" else []
            if flag == "--batch-a": p.batch_a.extend(dims)
            if flag == "--batch-b": p.batch_b.extend(dims)
            if flag == "--x3-shape": p.x3_shape.extend(dims)
            if flag == "--fused-op":
                p.fused_op = {"add": 1, "mul": 2, "gelu_erf": 3, "gelu_tanh": 4}[value]
        name = "%s-%dx%dx%d" % (op, m, n, k)
        write("explicit_tiling", name + "-engine", request.SerializeToString())
        request.tiling.CopyFrom(tiling)
        write("explicit_tiling", name, request.SerializeToString())
        count += 2
    # Hand-written kernel schedules instead of a tiling: each kind, small and odd.
    kinds = {"single-core": 1, "static-grid": 2, "round-robin": 3, "swizzle": 4, "aswt": 5,
             "stream-k": 6}
    for kind_name, kind in kinds.items():
        request = pb.ExecuteRequest(id="seed", seed=7)
        p = request.problem
        p.m, p.n, p.k = 97, 80, 70
        p.dtype_a = p.dtype_b = p.dtype_c = DTYPES["float16"]
        s = request.kernel_schedule
        s.kind = kind
        s.block_dim = 1 if kind == 1 else 4
        s.base_m = s.base_n = s.l1_m = s.l1_n = 32
        s.base_k, s.l1_k = 16, 32
        s.single_core_m, s.single_core_n = 64, 48
        s.unit_flag = kind % 2 == 0
        write("explicit_tiling", "kernel-" + kind_name, request.SerializeToString())
        request.timing_only = True
        write("explicit_tiling", "kernel-" + kind_name + "-timing", request.SerializeToString())
        count += 2
    return count


def npy(descr, shape, data, version=(1, 0), fortran=False):
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran else "False",
        "(%s)" % ", ".join(str(d) for d in shape) if len(shape) != 1 else "(%d,)" % shape[0])
    length_bytes = 2 if version == (1, 0) else 4
    prefix = 6 + 2 + length_bytes
    pad = 64 - (prefix + len(header) + 1) % 64
    header = header + " " * (pad % 64) + "\n"
    length = struct.pack("<H" if length_bytes == 2 else "<I", len(header))
    return b"\x93NUMPY" + bytes(version) + length + header.encode("latin1") + data


def npy_seeds():
    clear_seeds("npy")
    seeds = {
        "f4-2x3": npy("<f4", (2, 3), struct.pack("<6f", 1, 2, 3, 4, 5, 6)),
        "f2-4": npy("<f2", (4,), struct.pack("<4e", 1, -2, 0.5, 65504)),
        "u2-2x2": npy("<u2", (2, 2), struct.pack("<4H", 0x3f80, 0xbf80, 0, 0x7f80)),
        "f4-scalar": npy("<f4", (), struct.pack("<f", 3.5)),
        "f4-empty": npy("<f4", (0,), b""),
        "f4-3d": npy("<f4", (2, 1, 2), struct.pack("<4f", 1, 2, 3, 4)),
        "f4-v2": npy("<f4", (2,), struct.pack("<2f", 1, 2), version=(2, 0)),
        "f4-v3": npy("<f4", (2,), struct.pack("<2f", 1, 2), version=(3, 0)),
        "f4-fortran": npy("<f4", (2, 2), struct.pack("<4f", 1, 2, 3, 4), fortran=True),
        "f4-big-endian": npy(">f4", (2,), struct.pack(">2f", 1, 2)),
        "f8": npy("<f8", (1,), struct.pack("<d", 1)),
        "object": npy("|O", (1,), b"\x80\x04N."),
        "truncated": npy("<f4", (4,), struct.pack("<2f", 1, 2)),
        "huge-shape": npy("<f4", (1 << 40, 1 << 30), b""),
    }
    for name, data in seeds.items():
        write("npy", name, data)
    write("npy", "magic-only", b"\x93NUMPY")
    return len(seeds) + 1


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tilingctl", required=True, help="a built tilingctl (for --local)")
    args = parser.parse_args()
    pb = load_proto_module()
    print("tiling_request: %d seeds" % tiling_request_seeds(pb))
    print("explicit_tiling: %d seeds" % explicit_tiling_seeds(pb, args.tilingctl))
    print("npy: %d seeds" % npy_seeds())


if __name__ == "__main__":
    main()
