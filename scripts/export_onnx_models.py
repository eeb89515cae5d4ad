#!/usr/bin/python3
"""Export the ONNX test models and their golden GEMM lists.

Writes into OUT_DIR (default: tests/data/onnx under the repository root):

  <model>.onnx           the model's graph, opset 17, WITHOUT weights
                         (export_params=False: every parameter and buffer is a
                         graph input with a static shape, so the file is small)
  <model>.matmuls.json   the GEMMs torch.profiler records in one CPU forward
                         pass at batch=2 (and seq=128 for the encoder layers)

and the quantized and einsum models of scripts/quantized_onnx_models.py
(QDQ, ONNX Runtime's dynamic form and MatMulNBits, weight-only DQ, an
einsum MLA block) and the mixture-of-experts models of
scripts/moe_onnx_models.py (ONNX Runtime's com.microsoft MoE and QMoE, a
torch expert loop):

  <model>.onnx           the graph, opset 17, weights as graph inputs
  <model>.lowering.json  per lowered node the CANN operator and problem
                         (or the UNSUPPORTED / UNRESOLVED reason) it must
                         lower to, and the share of the matmul FLOPs
                         answered OK

Needs Debian 12's python3-torch (1.13) and python3-torchvision (0.14);
python3-onnx is used to check the exported files when it is installed.
The weights are random and never written, so the output does not depend on
them.  Usage:

  /usr/bin/python3 scripts/export_onnx_models.py [OUT_DIR] [--models NAME ...]
"""

import argparse
import collections
import json
import os
import sys
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

try:  # only the vision models need it
    import torchvision
except ImportError:
    torchvision = None

OPSET = min(17, torch.onnx._constants.ONNX_MAX_OPSET)
PROFILE_DIMS = {"batch": 2, "seq": 128}

# The ops counted as GEMMs.  aten::linear / aten::matmul / aten::einsum are
# parents that call one of these; aten::matmul is counted only when it
# recorded none of them beneath it (it never happens with torch 1.13 on CPU).
GEMM_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm")
FALLBACK_OPS = ("aten::matmul",)


def encoder_layer(d_model, nhead, dim_feedforward):
    return torch.nn.TransformerEncoderLayer(
        d_model=d_model, nhead=nhead, dim_feedforward=dim_feedforward,
        batch_first=True)


# name -> (constructor, input shape with dim names as strings)
MODELS = {
    "vit_b_16": (lambda: torchvision.models.vit_b_16(weights=None),
                 ("batch", 3, 224, 224)),
    "swin_t": (lambda: torchvision.models.swin_t(weights=None),
               ("batch", 3, 224, 224)),
    "resnet50": (lambda: torchvision.models.resnet50(weights=None),
                 ("batch", 3, 224, 224)),
    "encoder_llama3_8b": (lambda: encoder_layer(4096, 32, 14336),
                          ("batch", "seq", 4096)),
    "encoder_qwen2_7b": (lambda: encoder_layer(3584, 28, 18944),
                         ("batch", "seq", 3584)),
}


def concrete(shape):
    return [PROFILE_DIMS[d] if isinstance(d, str) else d for d in shape]


def build(name):
    torch.manual_seed(0)
    model = MODELS[name][0]()
    # Eval mode (dropout off), but grad stays enabled and every parameter
    # requires grad: that keeps nn.TransformerEncoderLayer and
    # nn.MultiheadAttention off their fused "fast path"
    # (torch._transformer_encoder_layer_fwd / _native_multi_head_attention),
    # so the graph is made of plain MatMul/Gemm/Add/Softmax nodes.
    model.eval()
    for p in model.parameters():
        p.requires_grad_(True)
    return model


def export_onnx(name, model, path):
    shape = MODELS[name][1]
    x = torch.randn(concrete(shape))
    axes = {i: d for i, d in enumerate(shape) if isinstance(d, str)}
    with torch.enable_grad():
        torch.onnx.export(
            model, (x,), str(path),
            export_params=False,
            opset_version=OPSET,
            do_constant_folding=True,
            input_names=["input"],
            output_names=["output"],
            # The output is [batch, 1000] for the vision models and
            # [batch, seq, d_model] for the encoder layers.
            dynamic_axes={"input": axes, "output": axes if "seq" in shape
                          else {0: "batch"}},
        )


def canonical(op, shapes):
    """(batch, m, k, n) of one GEMM call from the profiler's input shapes."""
    if op in ("aten::mm",):
        a, b = shapes[0], shapes[1]
    elif op in ("aten::addmm", "aten::baddbmm"):
        a, b = shapes[1], shapes[2]  # shapes[0] is the bias / accumulator
    elif op in ("aten::bmm", "aten::matmul"):
        a, b = shapes[0], shapes[1]
    else:
        raise ValueError(op)
    if len(a) == 2 and len(b) == 2:
        batch = 1
    elif len(a) == 3 and len(b) == 3 and op != "aten::matmul":
        assert a[0] == b[0], (op, shapes)
        batch = a[0]
    else:  # aten::matmul with broadcasting leading dims
        lead_a, lead_b = list(a[:-2]), list(b[:-2])
        n_lead = max(len(lead_a), len(lead_b))
        lead_a = [1] * (n_lead - len(lead_a)) + lead_a
        lead_b = [1] * (n_lead - len(lead_b)) + lead_b
        batch = 1
        for x, y in zip(lead_a, lead_b):
            batch *= max(x, y)
    m, k = a[-2], a[-1]
    k2, n = b[-2], b[-1]
    assert k == k2, (op, shapes)
    return {"batch": batch, "m": m, "k": k, "n": n}


def profile_gemms(name, model):
    x = torch.randn(concrete(MODELS[name][1]))
    # Same mode as the export (eval, grad enabled, parameters requiring
    # grad) so the fused fast path is not taken here either: under
    # torch.no_grad() the fast path would run _native_multi_head_attention
    # and record different GEMMs from those the ONNX graph holds.
    with torch.enable_grad():
        model(x)  # warm-up, not recorded
        with profile(activities=[ProfilerActivity.CPU],
                     record_shapes=True) as prof:
            model(x)
    events = prof.events()

    def ancestors(e):
        p = e.cpu_parent
        while p is not None:
            yield p
            p = p.cpu_parent

    def descendants(e):
        for c in e.cpu_children:
            yield c
            yield from descendants(c)

    counts = collections.Counter()
    for e in events:
        if e.name in GEMM_OPS:
            # Outermost GEMM only: a GEMM op nested in another one would be
            # part of it (torch 1.13's CPU kernels do not do that).
            if any(a.name in GEMM_OPS for a in ancestors(e)):
                print(f"  note: {e.name} nested in another GEMM op, "
                      "not counted")
                continue
        elif e.name in FALLBACK_OPS:
            if any(d.name in GEMM_OPS + FALLBACK_OPS
                   for d in descendants(e)):
                continue
            print(f"  note: {e.name} {e.input_shapes} recorded no "
                  "mm/bmm beneath it, counted as a GEMM")
        else:
            continue
        shapes = tuple(tuple(s) for s in e.input_shapes)
        counts[(e.name, shapes)] += 1

    gemms = []
    for (op, shapes), count in sorted(counts.items()):
        entry = {"op": op,
                 "input_shapes": [list(s) for s in shapes],
                 "count": count}
        entry.update(canonical(op, [list(s) for s in shapes]))
        gemms.append(entry)
    dims = {d: PROFILE_DIMS[d] for d in ("batch", "seq")
            if d in MODELS[name][1]}
    return {"model": name,
            "onnx": name + ".onnx",
            "dims": dims,
            "torch_version": torch.__version__,
            "torchvision_version": torchvision.__version__,
            "gemms": gemms}


def golden_json(golden):
    """Indented JSON with one GEMM entry per line."""
    head = {k: v for k, v in golden.items() if k != "gemms"}
    lines = ["{"]
    for k, v in head.items():
        lines.append(f" {json.dumps(k)}: {json.dumps(v)},")
    lines.append(' "gemms": [')
    rows = [json.dumps(g) for g in golden["gemms"]]
    lines.append(",\n".join("  " + r for r in rows))
    lines.append(" ]")
    lines.append("}")
    text = "\n".join(lines) + "\n"
    assert json.loads(text) == golden
    return text


def check_onnx(name, path):
    """Checker plus a printed summary; returns the op-type counts."""
    try:
        import onnx
    except ImportError:
        print("  (python3-onnx not installed: no check)")
        return None
    m = onnx.load(str(path))
    onnx.checker.check_model(m)
    ops = collections.Counter(n.op_type for n in m.graph.node)
    fused = [o for o in ops if "multi_head" in o.lower()
             or "transformer" in o.lower() or o.startswith("ATen")]
    if fused:
        raise SystemExit(f"{name}: fused / ATen ops in the graph: {fused}")
    if len(m.graph.initializer) != 0:
        print(f"  note: {len(m.graph.initializer)} initializers kept")

    def dims(vi):
        return [d.dim_param if d.HasField("dim_param") else d.dim_value
                for d in vi.type.tensor_type.shape.dim]

    inp = m.graph.input[0]
    print(f"  opset {m.opset_import[0].version}, "
          f"{len(m.graph.node)} nodes, {len(m.graph.input)} graph inputs "
          f"(1 data + {len(m.graph.input) - 1} weights/buffers)")
    print(f"  input  {inp.name} {dims(inp)}")
    for o in m.graph.output:
        print(f"  output {o.name} {dims(o)}")
    print("  ops: " + ", ".join(f"{k} {v}" for k, v in sorted(ops.items())))
    return ops


def main(argv):
    root = Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir", nargs="?", default=str(root / "tests/data/onnx"),
                    help="output folder (default: tests/data/onnx)")
    import moe_onnx_models
    import quantized_onnx_models
    quant = dict(quantized_onnx_models.QUANT_MODELS)
    quant.update(moe_onnx_models.MOE_MODELS)
    ap.add_argument("--models", nargs="+", choices=list(MODELS) + list(quant),
                    default=list(MODELS) + list(quant),
                    help="models to export (default: all)")
    args = ap.parse_args(argv)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))

    for name in args.models:
        print(f"{name}:", flush=True)
        if name in quant:
            onnx_path = out / f"{name}.onnx"
            dims, nodes, share = quant[name](onnx_path)
            check_onnx(name, onnx_path)
            expected = {"model": name, "onnx": name + ".onnx", "dims": dims,
                        "torch_version": torch.__version__, "answered_share": share,
                        "nodes": nodes}
            json_path = out / f"{name}.lowering.json"
            with open(json_path, "w") as f:
                f.write(json.dumps(expected, indent=1) + "\n")
            print(f"  wrote {onnx_path} ({onnx_path.stat().st_size} bytes), {json_path}: "
                  f"{len(nodes)} nodes, answered share {share:.4f}", flush=True)
            continue
        model = build(name)
        onnx_path = out / f"{name}.onnx"
        export_onnx(name, model, onnx_path)
        print(f"  wrote {onnx_path} ({onnx_path.stat().st_size} bytes)")
        ops = check_onnx(name, onnx_path)
        golden = profile_gemms(name, model)
        json_path = out / f"{name}.matmuls.json"
        with open(json_path, "w") as f:
            f.write(golden_json(golden))
        calls = sum(g["count"] for g in golden["gemms"])
        nodes = ops["MatMul"] + ops["Gemm"] if ops is not None else None
        print(f"  profiler GEMM calls {calls}, ONNX MatMul+Gemm nodes {nodes}"
              + ("" if nodes in (None, calls) else "  <-- differ"))
        print(f"  wrote {json_path}: "
              + ", ".join(f"{g['op']} {g['input_shapes']} x{g['count']}"
                          for g in golden["gemms"]), flush=True)
        del model


if __name__ == "__main__":
    main(sys.argv[1:])
