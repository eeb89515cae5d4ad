"""The mixture-of-experts ONNX test models of scripts/export_onnx_models.py.

Each builder writes <name>.onnx and returns the expectations the lowering is
checked against (<name>.lowering.json, read by tests/graph/moe_exports_test.cc),
in the form of scripts/quantized_onnx_models.py: per lowered node the CANN
operator and problem, or the status and the words its reason must hold, and
the share of the model's matmul FLOPs answered OK. The expectations come
from how each model is built (its layer sizes and the ONNX Runtime operator
documentation, docs/ContribOperators.md), not from the service.

  mixtral_moe_ort    a Mixtral-8x7B-class MoE FFN in ONNX Runtime's
                     com.microsoft MoE (fp16, 8 experts, top-2, SiLU-gated
                     with fc3), written with onnx.helper as ONNX Runtime
                     GenAI's model builder lays it out: the router's MatMul,
                     then one MoE node over the [tokens, hidden] input
  phi35_moe_qmoe     two Phi-3.5-MoE-class layers in com.microsoft QMoE
                     (fp16 activations, 16 experts, top-2, sparse mixer):
                     layer 0 with int4 weights and one scale per column,
                     layer 1 with int8 weights and a scale per block of 128
  mixtral_moe_loop   a small Mixtral-like block in torch (the router's topk,
                     then a Python loop over the experts, each taking its
                     tokens by torch.where of the routing mask, as Hugging
                     Face's MixtralSparseMoeBlock does), exported by torch

An ONNX Runtime expert matmul becomes one GroupedMatmul over all experts
(group_type 0, split M): x holds every routed row, tokens x k of them, and
group_list has one entry per expert. How many rows each expert gets is a
run-time fact; the tiling reads only group_list's length.

Weights are graph inputs (no data), as in the other exports.
"""

import onnx
import torch
from onnx import TensorProto, helper

OPSET = 17
MS_DOMAIN = "com.microsoft"

# The GroupedMatmul form of one expert matmul over E experts: one x, one
# 3-D weight, one y (split_item 3), split along M (group_type 0) with a
# group_list of counts (group_list_type 1).
GMM_FORM = {"split_item": 3, "group_type": 0, "group_list_type": 1}


def _flops(m, k, n):
    return 2.0 * m * k * n


def _ok(name, op_type, operator, m, k, n, **extra):
    entry = {"name": name, "op_type": op_type, "status": "OK", "operator": operator,
             "m": m, "k": k, "n": n, "batch": [], "flops": _flops(m, k, n)}
    entry.update(extra)
    return entry


def _grouped(moe, role, rows, k, n, experts, path, dtype_x, dtype_weight, **extra):
    """One GroupedMatmul of an ONNX Runtime MoE node: fc1 / fc3 / fc2 of
    `experts` experts over `rows` routed rows, the weight stored [E, N, K]
    (ContribOperators.md), i.e. transposed."""
    entry = _ok(f"{moe}/{role}", "MoE" if path == "NO_QUANT" else "QMoE", "GroupedMatmul",
                rows, k, n, groups=experts, path=path, dtype_x=dtype_x,
                dtype_weight=dtype_weight, transpose_weight=True,
                x_shape=[rows, k], weight_shape=[experts, n, k], y_shape=[rows, n],
                group_list_shape=[experts])
    entry.update(GMM_FORM)
    entry.update(extra)
    return entry


def _shape(inits, name, values):
    inits.append(helper.make_tensor(name, TensorProto.INT64, [len(values)], values))
    return name


# ---------------------------------------------------------------------------
# ONNX Runtime's float MoE: a Mixtral-8x7B-class FFN.

def mixtral_moe_ort(path):
    hidden, inter, experts, top_k = 4096, 14336, 8, 2
    prefix = "/model/layers.0/moe"
    nodes, inits = [], []
    inputs = [helper.make_tensor_value_info("input", TensorProto.FLOAT16,
                                            ["batch", "seq", hidden])]
    nodes.append(helper.make_node("Reshape", ["input", _shape(inits, "tokens_shape",
                                                              [-1, hidden])],
                                  ["x2d"], name=f"{prefix}/Reshape"))
    inputs.append(helper.make_tensor_value_info(f"{prefix}/gate.weight", TensorProto.FLOAT16,
                                                [hidden, experts]))
    nodes.append(helper.make_node("MatMul", ["x2d", f"{prefix}/gate.weight"], ["router_logits"],
                                  name=f"{prefix}/gate/MatMul"))
    # fc1 = w1 (the gate), fc2 = w2 (down), fc3 = w3 (up), each [E, N, K].
    for fc, dims in (("fc1", [experts, inter, hidden]), ("fc2", [experts, hidden, inter]),
                     ("fc3", [experts, inter, hidden])):
        inputs.append(helper.make_tensor_value_info(f"{prefix}/{fc}.weight", TensorProto.FLOAT16,
                                                    dims))
    nodes.append(helper.make_node(
        "MoE", ["x2d", "router_logits", f"{prefix}/fc1.weight", "", f"{prefix}/fc2.weight", "",
                f"{prefix}/fc3.weight"],
        ["moe_out"], domain=MS_DOMAIN, name=f"{prefix}/MoE", k=top_k, activation_type="silu",
        normalize_routing_weights=1, use_sparse_mixer=0))
    nodes.append(helper.make_node("Shape", ["input"], ["input_shape"], name=f"{prefix}/Shape"))
    nodes.append(helper.make_node("Reshape", ["moe_out", "input_shape"], ["output"],
                                  name=f"{prefix}/Reshape_1"))
    graph = helper.make_graph(nodes, "mixtral_moe_ort", inputs,
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT16,
                                                             ["batch", "seq", hidden])],
                              initializer=inits)
    model = helper.make_model(graph, producer_name="onnxruntime-genai",
                              opset_imports=[helper.make_opsetid("", OPSET),
                                             helper.make_opsetid(MS_DOMAIN, 1)])
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    batch, seq = 1, 128
    tokens = batch * seq
    rows = tokens * top_k
    moe = f"{prefix}/MoE"
    expected = [
        _ok(f"{prefix}/gate/MatMul", "MatMul", "MatMulV3", tokens, hidden, experts),
        _grouped(moe, "fc1", rows, hidden, inter, experts, "NO_QUANT", "float16", "float16"),
        _grouped(moe, "fc3", rows, hidden, inter, experts, "NO_QUANT", "float16", "float16"),
        _grouped(moe, "fc2", rows, inter, hidden, experts, "NO_QUANT", "float16", "float16"),
    ]
    return {"batch": batch, "seq": seq}, expected, 1.0


# ---------------------------------------------------------------------------
# ONNX Runtime's QMoE: two Phi-3.5-MoE-class layers, int4 and int8 weights.

def phi35_moe_qmoe(path):
    hidden, inter, experts, top_k = 4096, 6400, 16, 2
    layers = ((4, 0), (8, 128))  # (expert_weight_bits, block_size; 0 = one scale per column)
    nodes, inits = [], []
    inputs = [helper.make_tensor_value_info("input", TensorProto.FLOAT16, ["tokens", hidden])]
    x = "input"
    for layer, (bits, block) in enumerate(layers):
        prefix = f"/model/layers.{layer}/moe"
        pack = 8 // bits
        inputs.append(helper.make_tensor_value_info(f"{prefix}/gate.weight", TensorProto.FLOAT16,
                                                    [hidden, experts]))
        nodes.append(helper.make_node("MatMul", [x, f"{prefix}/gate.weight"],
                                      [f"{prefix}/router_logits"], name=f"{prefix}/gate/MatMul"))
        args = [x, f"{prefix}/router_logits"]
        # (name, N, K) of fc1 (gate), fc2 (down), fc3 (up); the weights are
        # the uint8 codes [E, N, K / pack], the scales [E, N] or
        # [E, N, K / block].
        for fc, n, k in (("fc1", inter, hidden), ("fc2", hidden, inter), ("fc3", inter, hidden)):
            inputs.append(helper.make_tensor_value_info(f"{prefix}/{fc}.qweight", TensorProto.UINT8,
                                                        [experts, n, k // pack]))
            scale_dims = [experts, n] if block == 0 else [experts, n, k // block]
            inputs.append(helper.make_tensor_value_info(f"{prefix}/{fc}.scales",
                                                        TensorProto.FLOAT16, scale_dims))
            args += [f"{prefix}/{fc}.qweight", f"{prefix}/{fc}.scales", ""]
        attributes = dict(k=top_k, activation_type="silu", normalize_routing_weights=0,
                          use_sparse_mixer=1, expert_weight_bits=bits)
        if block:
            attributes["block_size"] = block
        nodes.append(helper.make_node("QMoE", args[:-1], [f"{prefix}/output"], domain=MS_DOMAIN,
                                      name=f"{prefix}/QMoE", **attributes))
        nodes.append(helper.make_node("Add", [f"{prefix}/output", x], [f"{prefix}/residual"],
                                      name=f"{prefix}/Add"))
        x = f"{prefix}/residual"
    nodes.append(helper.make_node("Identity", [x], ["output"], name="/output"))
    graph = helper.make_graph(nodes, "phi35_moe_qmoe", inputs,
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT16,
                                                             ["tokens", hidden])],
                              initializer=inits)
    model = helper.make_model(graph, producer_name="onnxruntime.quantization",
                              opset_imports=[helper.make_opsetid("", OPSET),
                                             helper.make_opsetid(MS_DOMAIN, 1)])
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    tokens = 256
    rows = tokens * top_k
    expected = []
    for layer, (bits, block) in enumerate(layers):
        prefix = f"/model/layers.{layer}/moe"
        expected.append(_ok(f"{prefix}/gate/MatMul", "MatMul", "MatMulV3", tokens, hidden,
                            experts))
        for fc, n, k in (("fc1", inter, hidden), ("fc3", inter, hidden), ("fc2", hidden, inter)):
            scale = [experts, n] if block == 0 else [experts, n, k // block]
            expected.append(_grouped(f"{prefix}/QMoE", fc, rows, k, n, experts, "WEIGHT_QUANT",
                                     "float16", f"int{bits}", antiquant_scale_shape=scale,
                                     dtype_antiquant_scale="float16"))
    return {"tokens": tokens}, expected, 1.0


# ---------------------------------------------------------------------------
# torch: a Mixtral-like block whose experts are a Python loop.

class _MixtralLikeBlock(torch.nn.Module):
    """Hugging Face's MixtralSparseMoeBlock in miniature: a linear router,
    softmax and top-k, then for each expert the tokens that chose it
    (torch.where of the one-hot routing mask), its SiLU-gated FFN (w1, w3,
    w2) and index_add_ back into the output."""

    def __init__(self, hidden, ffn, experts, top_k):
        super().__init__()
        self.experts, self.top_k = experts, top_k
        self.gate = torch.nn.Linear(hidden, experts, bias=False)
        linear = lambda i, o: torch.nn.ModuleList(
            torch.nn.Linear(i, o, bias=False) for _ in range(experts))
        self.w1, self.w3, self.w2 = linear(hidden, ffn), linear(hidden, ffn), linear(ffn, hidden)

    def forward(self, x):
        batch, seq, hidden = x.shape
        x = x.view(-1, hidden)
        weights = torch.softmax(self.gate(x), dim=1, dtype=torch.float)
        weights, selected = torch.topk(weights, self.top_k, dim=-1)
        weights = (weights / weights.sum(dim=-1, keepdim=True)).to(x.dtype)
        out = torch.zeros_like(x)
        mask = torch.nn.functional.one_hot(selected, num_classes=self.experts).permute(2, 1, 0)
        for e in range(self.experts):
            slot, token = torch.where(mask[e])
            rows = x[token]
            y = self.w2[e](torch.nn.functional.silu(self.w1[e](rows)) * self.w3[e](rows))
            out.index_add_(0, token, y * weights[token, slot, None])
        return out.view(batch, seq, hidden)


LOOP_REASON = "rows per expert depend on the router's choice at run time (MoE expert loop"


def mixtral_moe_loop(path):
    hidden, ffn, experts, top_k = 512, 1792, 8, 2
    torch.manual_seed(0)
    block = _MixtralLikeBlock(hidden, ffn, experts, top_k).eval()
    x = torch.randn(1, 16, hidden)
    torch.onnx.export(block, (x,), str(path), export_params=False, opset_version=OPSET,
                      input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch", 1: "seq"},
                                    "output": {0: "batch", 1: "seq"}})
    model = onnx.load(str(path))
    names = [n.name for n in model.graph.node if n.op_type == "MatMul"]
    assert len(names) == 1 + 3 * experts, names
    batch, seq = 1, 128
    expected = [_ok("/gate/MatMul", "MatMul", "MatMulV3", batch * seq, hidden, experts)]
    for e in range(experts):
        for proj, k, n in (("w1", hidden, ffn), ("w3", hidden, ffn), ("w2", ffn, hidden)):
            name = f"/{proj}.{e}/MatMul"
            assert name in names, (name, names)
            expected.append({"name": name, "op_type": "MatMul", "status": "UNRESOLVED",
                             "reason": LOOP_REASON, "k": k, "n": n})
    # Torch's export order: w1, w3, w2 of each expert, as forward calls them.
    order = {name: i for i, name in enumerate(names)}
    expected.sort(key=lambda row: order[row["name"]])
    return {"batch": batch, "seq": seq}, expected, 1.0


MOE_MODELS = {
    "mixtral_moe_ort": mixtral_moe_ort,
    "phi35_moe_qmoe": phi35_moe_qmoe,
    "mixtral_moe_loop": mixtral_moe_loop,
}
