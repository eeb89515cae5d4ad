"""The quantized and einsum ONNX test models of scripts/export_onnx_models.py.

Each builder writes <name>.onnx and returns the expectations the lowering is
checked against (<name>.lowering.json, read by tests/graph/quant_exports_test.cc):
for every matmul-like node, the CANN operator and problem it must become, or
the UNSUPPORTED reason it must give, and the share of the model's matmul
FLOPs answered OK. The expectations come from how each model is built (its
layer sizes), not from the service.

  llama_block_w8a8_qdq   torch's own quantization-aware training export
                         (torch.ao.quantization fake-quant modules, symmetric
                         int8: per-tensor activations, per-channel weights)
                         of a Llama-class block, via torch.onnx.export
  bert_large_dynamic     one BERT-large layer in ONNX Runtime's dynamic form
                         (DynamicQuantizeLinear -> MatMulInteger -> Cast ->
                         Mul), written with onnx.helper node for node as ONNX
                         Runtime's quantize_dynamic writes it with
                         MatMulConstBOnly (weights only; attention stays float)
  llama_block_nbits      a Llama-2-7B-class block with com.microsoft
                         MatMulNBits (int4, block 32), as ONNX Runtime GenAI's
                         model builder writes it; attention as MatMul
  weight_only_int8       an int8 per-channel weight dequantized into a float
                         matmul in its three layouts: MatMul of a [k, n]
                         weight, Transpose -> MatMul of a torch [n, k] weight,
                         Gemm with transB
  mla_einsum             DeepSeek-V3's absorbed multi-head latent attention
                         written with torch.einsum, exported by torch
  qdq_linear_small       one QAT Linear WITH its weights, and
                         <name>.reference.json: its codes, scales and the
                         graph's own float result evaluated in numpy

Weights are graph inputs (no data), as in the float exports; zero points
and scales of the quantized models are kept.
"""

import json
import math

import numpy as np
import onnx
import onnx.numpy_helper
import torch
from onnx import TensorProto, helper

OPSET = 17
MS_DOMAIN = "com.microsoft"


def _flops(m, k, n, batch=1):
    return 2.0 * batch * m * k * n


def _ok(name, op_type, operator, m, k, n, batch=(), **extra):
    entry = {"name": name, "op_type": op_type, "status": "OK", "operator": operator,
             "m": m, "k": k, "n": n, "batch": list(batch)}
    entry.update(extra)
    return entry


# ---------------------------------------------------------------------------
# torch QAT: a Llama-class block, every Linear fake-quantized W8A8.

def _symmetric_int8_qconfig():
    """Symmetric int8 fake quantization: per-tensor activations, per-channel
    (output channel) weights, every zero point 0."""
    fq = torch.ao.quantization.FakeQuantize
    return torch.ao.quantization.QConfig(
        activation=fq.with_args(observer=torch.ao.quantization.MovingAverageMinMaxObserver,
                                quant_min=-128, quant_max=127, dtype=torch.qint8,
                                qscheme=torch.per_tensor_symmetric),
        weight=fq.with_args(observer=torch.ao.quantization.MovingAveragePerChannelMinMaxObserver,
                            quant_min=-128, quant_max=127, dtype=torch.qint8,
                            qscheme=torch.per_channel_symmetric, ch_axis=0))


class _QLinear(torch.nn.Module):
    """A QAT Linear with its input's activation fake-quant, as eager-mode
    QAT wraps each quantized layer (QuantStub-like observer on the input)."""

    def __init__(self, in_features, out_features, qconfig):
        super().__init__()
        self.input_fake_quant = qconfig.activation()
        self.linear = torch.ao.nn.qat.Linear(in_features, out_features, bias=False,
                                             qconfig=qconfig)

    def forward(self, x):
        return self.linear(self.input_fake_quant(x))


class _LlamaBlock(torch.nn.Module):
    def __init__(self, d_model, heads, ffn, qconfig):
        super().__init__()
        self.heads = heads
        self.head_dim = d_model // heads
        for name, (i, o) in {"q_proj": (d_model, d_model), "k_proj": (d_model, d_model),
                             "v_proj": (d_model, d_model), "o_proj": (d_model, d_model),
                             "gate_proj": (d_model, ffn), "up_proj": (d_model, ffn),
                             "down_proj": (ffn, d_model)}.items():
            setattr(self, name, _QLinear(i, o, qconfig))

    def forward(self, x):
        b, t = x.size(0), x.size(1)
        split = lambda y: y.view(b, t, self.heads, self.head_dim).transpose(1, 2)
        q, k, v = split(self.q_proj(x)), split(self.k_proj(x)), split(self.v_proj(x))
        p = torch.softmax(torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim), -1)
        a = torch.matmul(p, v).transpose(1, 2).reshape(b, t, -1)
        h = x + self.o_proj(a)
        return h + self.down_proj(torch.nn.functional.silu(self.gate_proj(h)) * self.up_proj(h))


def _materialize_zero_points(model_proto, module):
    """Zero-point graph inputs (the exporter makes a folded zero point an
    input under export_params=False) become the int8 initializers they are:
    every fake-quant here is symmetric, so each zero point is 0; checked on
    the module's own buffers."""
    for fq in module.modules():
        if isinstance(fq, torch.ao.quantization.FakeQuantize):
            assert torch.count_nonzero(fq.zero_point) == 0, "a symmetric zero point is not 0"
    graph = model_proto.graph

    def only_zero_point(tensor):
        """Read only as a zero point, directly or through Identity nodes (the
        exporter shares one constant among layers that way)."""
        readers = [n for n in graph.node if tensor in n.input]
        for n in readers:
            if n.op_type == "Identity":
                if not only_zero_point(n.output[0]):
                    return False
            elif not (n.op_type in ("QuantizeLinear", "DequantizeLinear") and len(n.input) > 2
                      and n.input[2] == tensor and tensor not in n.input[:2]):
                return False
        return bool(readers)

    kept = []
    for value in graph.input:
        if only_zero_point(value.name):
            dims = [d.dim_value for d in value.type.tensor_type.shape.dim]
            graph.initializer.append(helper.make_tensor(
                value.name, value.type.tensor_type.elem_type, dims,
                np.zeros(int(np.prod(dims)) if dims else 1, dtype=np.int64).tolist()))
        else:
            kept.append(value)
    del graph.input[:]
    graph.input.extend(kept)


def llama_block_w8a8_qdq(path):
    d_model, heads, ffn = 4096, 32, 14336
    qconfig = _symmetric_int8_qconfig()
    torch.manual_seed(0)
    block = _LlamaBlock(d_model, heads, ffn, qconfig).train()
    with torch.no_grad():
        for _ in range(2):  # calibrate the observers
            block(torch.randn(1, 8, d_model))
    block.apply(torch.ao.quantization.disable_observer)
    block.eval()
    torch.onnx.export(block, (torch.randn(1, 8, d_model),), str(path), export_params=False,
                      opset_version=OPSET, do_constant_folding=True, input_names=["input"],
                      output_names=["output"],
                      dynamic_axes={"input": {0: "batch", 1: "seq"},
                                    "output": {0: "batch", 1: "seq"}})
    model = onnx.load(str(path))
    _materialize_zero_points(model, block)
    onnx.save(model, str(path))
    dims = {"batch": 1, "seq": 128}
    tokens = 128
    nodes = []
    for name, (k, n) in {"q_proj": (d_model, d_model), "k_proj": (d_model, d_model),
                         "v_proj": (d_model, d_model), "o_proj": (d_model, d_model),
                         "gate_proj": (d_model, ffn), "up_proj": (d_model, ffn),
                         "down_proj": (ffn, d_model)}.items():
        nodes.append(_ok(f"/{name}/linear/MatMul", "MatMul", "QuantBatchMatmulV3", tokens, k, n,
                         dtype_a="int8", trans_b=True, scale_shape=[n]))
    hd = d_model // heads
    nodes.append(_ok("/MatMul", "MatMul", "BatchMatMulV3", tokens, hd, tokens, (1, heads)))
    nodes.append(_ok("/MatMul_1", "MatMul", "BatchMatMulV3", tokens, tokens, hd, (1, heads)))
    return dims, nodes, 1.0


# ---------------------------------------------------------------------------
# ONNX Runtime's dynamic quantization of a BERT-large layer.

def bert_large_dynamic(path):
    d_model, heads, ffn = 1024, 16, 4096
    hd = d_model // heads
    nodes, inits, inputs = [], [], []
    quantized = set()
    inputs.append(helper.make_tensor_value_info("input", TensorProto.FLOAT,
                                                ["batch", "seq", d_model]))

    def const_i64(name, values):
        inits.append(helper.make_tensor(name, TensorProto.INT64, [len(values)], values))
        return name

    def dynamic_matmul(prefix, x, k, n):
        """quantize_dynamic's MatMul: the weight int8 per tensor, zero point
        0; the input's DynamicQuantizeLinear; the scales multiplied."""
        w = f"{prefix}.weight_quantized"
        inputs.append(helper.make_tensor_value_info(w, TensorProto.INT8, [k, n]))
        inits.append(helper.make_tensor(f"{prefix}.weight_scale", TensorProto.FLOAT, [], [0.01]))
        inits.append(helper.make_tensor(f"{prefix}.weight_zero_point", TensorProto.INT8, [], [0]))
        if x not in quantized:  # one DynamicQuantizeLinear per tensor, shared by its readers
            quantized.add(x)
            nodes.append(helper.make_node("DynamicQuantizeLinear", [x],
                                          [f"{x}_quantized", f"{x}_scale", f"{x}_zero_point"],
                                          name=f"{x}_QuantizeLinear"))
        nodes.append(helper.make_node("MatMulInteger",
                                      [f"{x}_quantized", w, f"{x}_zero_point",
                                       f"{prefix}.weight_zero_point"],
                                      [f"{prefix}/MatMul_output_quantized"],
                                      name=f"{prefix}/MatMul_quant"))
        nodes.append(helper.make_node("Cast", [f"{prefix}/MatMul_output_quantized"],
                                      [f"{prefix}/MatMul_output_quantized_cast_output"],
                                      to=TensorProto.FLOAT,
                                      name=f"{prefix}/MatMul_output_quantized_cast"))
        nodes.append(helper.make_node("Mul", [f"{x}_scale", f"{prefix}.weight_scale"],
                                      [f"{prefix}/MatMul_quant_scales_mul:0"],
                                      name=f"{prefix}/MatMul_quant_scales_mul"))
        nodes.append(helper.make_node("Mul", [f"{prefix}/MatMul_output_quantized_cast_output",
                                              f"{prefix}/MatMul_quant_scales_mul:0"],
                                      [f"{prefix}/MatMul_output"],
                                      name=f"{prefix}/MatMul_quant_output_scale_mul"))
        inputs.append(helper.make_tensor_value_info(f"{prefix}.bias", TensorProto.FLOAT, [n]))
        nodes.append(helper.make_node("Add", [f"{prefix}/MatMul_output", f"{prefix}.bias"],
                                      [f"{prefix}/Add_output"], name=f"{prefix}/Add"))
        return f"{prefix}/Add_output"

    def heads_split(x, name):
        nodes.append(helper.make_node("Reshape", [x, const_i64(f"{name}_shape",
                                                              [0, 0, heads, hd])],
                                      [f"{name}_4d"], name=f"{name}/Reshape"))
        nodes.append(helper.make_node("Transpose", [f"{name}_4d"], [f"{name}_heads"],
                                      perm=[0, 2, 1, 3], name=f"{name}/Transpose"))
        return f"{name}_heads"

    q = heads_split(dynamic_matmul("attention.self.query", "input", d_model, d_model), "q")
    k = heads_split(dynamic_matmul("attention.self.key", "input", d_model, d_model), "k")
    v = heads_split(dynamic_matmul("attention.self.value", "input", d_model, d_model), "v")
    nodes.append(helper.make_node("Transpose", [k], ["k_t"], perm=[0, 1, 3, 2], name="k_t"))
    nodes.append(helper.make_node("MatMul", [q, "k_t"], ["scores"], name="attention/scores"))
    nodes.append(helper.make_node("Softmax", ["scores"], ["probs"], axis=-1, name="softmax"))
    nodes.append(helper.make_node("MatMul", ["probs", v], ["context"], name="attention/context"))
    nodes.append(helper.make_node("Transpose", ["context"], ["context_t"], perm=[0, 2, 1, 3],
                                  name="context_t"))
    nodes.append(helper.make_node("Reshape", ["context_t", const_i64("merge", [0, 0, d_model])],
                                  ["context_2d"], name="merge_heads"))
    attn = dynamic_matmul("attention.output.dense", "context_2d", d_model, d_model)
    nodes.append(helper.make_node("Add", [attn, "input"], ["h"], name="residual"))
    up = dynamic_matmul("intermediate.dense", "h", d_model, ffn)
    nodes.append(helper.make_node("Relu", [up], ["up_act"], name="act"))
    down = dynamic_matmul("output.dense", "up_act", ffn, d_model)
    nodes.append(helper.make_node("Add", [down, "h"], ["output"], name="residual_2"))
    graph = helper.make_graph(nodes, "bert_large_dynamic", inputs,
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                                             ["batch", "seq", d_model])],
                              initializer=inits)
    model = helper.make_model(graph, producer_name="onnxruntime.quantization",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    dims = {"batch": 2, "seq": 384}
    tokens = 2 * 384
    expected = []
    for prefix, (kk, n) in {"attention.self.query": (d_model, d_model),
                            "attention.self.key": (d_model, d_model),
                            "attention.self.value": (d_model, d_model)}.items():
        expected.append(_ok(f"{prefix}/MatMul_quant", "MatMulInteger", "QuantBatchMatmulV3",
                            tokens, kk, n, dtype_a="int8", pertoken=True, scale_shape=[1]))
    expected.append(_ok("attention/scores", "MatMul", "BatchMatMulV3", 384, hd, 384, (2, heads)))
    expected.append(_ok("attention/context", "MatMul", "BatchMatMulV3", 384, 384, hd, (2, heads)))
    for prefix, (kk, n) in {"attention.output.dense": (d_model, d_model),
                            "intermediate.dense": (d_model, ffn),
                            "output.dense": (ffn, d_model)}.items():
        expected.append(_ok(f"{prefix}/MatMul_quant", "MatMulInteger", "QuantBatchMatmulV3",
                            tokens, kk, n, dtype_a="int8", pertoken=True, scale_shape=[1]))
    return dims, expected, 1.0


# ---------------------------------------------------------------------------
# ONNX Runtime GenAI's MatMulNBits (int4 per-group weights, fp16).

def llama_block_nbits(path):
    d_model, heads, ffn, bits, block = 4096, 32, 11008, 4, 32
    hd = d_model // heads
    nodes, inits, inputs = [], [], []
    inputs.append(helper.make_tensor_value_info("input", TensorProto.FLOAT16,
                                                ["batch", "seq", d_model]))

    def nbits(prefix, x, k, n):
        blocks = k // block
        b = f"{prefix}.MatMul.weight_Q4"
        inputs.append(helper.make_tensor_value_info(b, TensorProto.UINT8,
                                                    [n, blocks, block * bits // 8]))
        inputs.append(helper.make_tensor_value_info(f"{prefix}.MatMul.weight_scales",
                                                    TensorProto.FLOAT16, [n * blocks]))
        nodes.append(helper.make_node("MatMulNBits", [x, b, f"{prefix}.MatMul.weight_scales"],
                                      [f"{prefix}/MatMul/output_0"], domain=MS_DOMAIN,
                                      name=f"{prefix}/MatMulNBits", K=k, N=n, bits=bits,
                                      block_size=block, accuracy_level=4))
        return f"{prefix}/MatMul/output_0"

    def shape(name, values):
        inits.append(helper.make_tensor(name, TensorProto.INT64, [len(values)], values))
        return name

    q, k, v = (nbits(f"/model/layers.0/attn/{p}", "input", d_model, d_model)
               for p in ("q_proj", "k_proj", "v_proj"))
    for name, t in (("q", q), ("k", k), ("v", v)):
        nodes.append(helper.make_node("Reshape", [t, shape(f"{name}_shape", [0, 0, heads, hd])],
                                      [f"{name}_4d"], name=f"{name}/Reshape"))
        nodes.append(helper.make_node("Transpose", [f"{name}_4d"], [f"{name}_h"],
                                      perm=[0, 2, 1, 3], name=f"{name}/Transpose"))
    nodes.append(helper.make_node("Transpose", ["k_h"], ["k_t"], perm=[0, 1, 3, 2]))
    nodes.append(helper.make_node("MatMul", ["q_h", "k_t"], ["s"], name="/attn/qk"))
    nodes.append(helper.make_node("Softmax", ["s"], ["p"], axis=-1))
    nodes.append(helper.make_node("MatMul", ["p", "v_h"], ["c"], name="/attn/pv"))
    nodes.append(helper.make_node("Transpose", ["c"], ["c_t"], perm=[0, 2, 1, 3]))
    nodes.append(helper.make_node("Reshape", ["c_t", shape("merge", [0, 0, d_model])], ["c_2d"]))
    o = nbits("/model/layers.0/attn/o_proj", "c_2d", d_model, d_model)
    nodes.append(helper.make_node("Add", [o, "input"], ["h"]))
    gate = nbits("/model/layers.0/mlp/gate_proj", "h", d_model, ffn)
    up = nbits("/model/layers.0/mlp/up_proj", "h", d_model, ffn)
    nodes.append(helper.make_node("Sigmoid", [gate], ["g_s"]))
    nodes.append(helper.make_node("Mul", [gate, "g_s"], ["g_act"]))
    nodes.append(helper.make_node("Mul", ["g_act", up], ["gu"]))
    down = nbits("/model/layers.0/mlp/down_proj", "gu", ffn, d_model)
    nodes.append(helper.make_node("Add", [down, "h"], ["output"]))
    graph = helper.make_graph(nodes, "llama_block_nbits", inputs,
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT16,
                                                             ["batch", "seq", d_model])],
                              initializer=inits)
    model = helper.make_model(graph, producer_name="onnxruntime-genai",
                              opset_imports=[helper.make_opsetid("", OPSET),
                                             helper.make_opsetid(MS_DOMAIN, 1)])
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    seq = 256
    expected = []
    nbits_ok = lambda p, kk, n: _ok(f"/model/layers.0/{p}/MatMulNBits", "MatMulNBits",
                                    "WeightQuantBatchMatmulV2", seq, kk, n, dtype_b="int4",
                                    trans_b=True, antiquant_scale_shape=[n, kk // block],
                                    group_size=block)
    for p in ("attn/q_proj", "attn/k_proj", "attn/v_proj"):
        expected.append(nbits_ok(p, d_model, d_model))
    expected.append(_ok("/attn/qk", "MatMul", "BatchMatMulV3", seq, hd, seq, (1, heads)))
    expected.append(_ok("/attn/pv", "MatMul", "BatchMatMulV3", seq, seq, hd, (1, heads)))
    for p, (kk, n) in {"attn/o_proj": (d_model, d_model), "mlp/gate_proj": (d_model, ffn),
                       "mlp/up_proj": (d_model, ffn), "mlp/down_proj": (ffn, d_model)}.items():
        expected.append(nbits_ok(p, kk, n))
    return {"batch": 1, "seq": seq}, expected, 1.0


# ---------------------------------------------------------------------------
# Weight-only int8 in its three layouts.

def weight_only_int8(path):
    k, n = 4096, 4096
    nodes, inits = [], []
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["tokens", k])]
    for name, stored, axis in (("matmul", [k, n], 1), ("transpose_matmul", [n, k], 0),
                               ("gemm", [n, k], 0)):
        inputs.append(helper.make_tensor_value_info(f"{name}.w_q", TensorProto.INT8, stored))
        inputs.append(helper.make_tensor_value_info(f"{name}.w_scale", TensorProto.FLOAT, [n]))
        inits.append(helper.make_tensor(f"{name}.w_zero", TensorProto.INT8, [n], [0] * n))
        nodes.append(helper.make_node("DequantizeLinear",
                                      [f"{name}.w_q", f"{name}.w_scale", f"{name}.w_zero"],
                                      [f"{name}.w"], axis=axis, name=f"{name}/DequantizeLinear"))
    nodes.append(helper.make_node("MatMul", ["x", "matmul.w"], ["y0"], name="matmul/MatMul"))
    nodes.append(helper.make_node("Transpose", ["transpose_matmul.w"], ["w1_t"], perm=[1, 0],
                                  name="transpose_matmul/Transpose"))
    nodes.append(helper.make_node("MatMul", ["x", "w1_t"], ["y1"], name="transpose_matmul/MatMul"))
    nodes.append(helper.make_node("Gemm", ["x", "gemm.w"], ["y2"], transB=1, name="gemm/Gemm"))
    outputs = [helper.make_tensor_value_info(y, TensorProto.FLOAT, ["tokens", n])
               for y in ("y0", "y1", "y2")]
    graph = helper.make_graph(nodes, "weight_only_int8", inputs, outputs, initializer=inits)
    model = helper.make_model(graph, producer_name="onnx.helper",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    tokens = 16
    expected = [_ok("matmul/MatMul", "MatMul", "WeightQuantBatchMatmulV2", tokens, k, n,
                    dtype_b="int8", trans_b=False, antiquant_scale_shape=[n]),
                _ok("transpose_matmul/MatMul", "MatMul", "WeightQuantBatchMatmulV2", tokens, k, n,
                    dtype_b="int8", trans_b=True, antiquant_scale_shape=[n]),
                _ok("gemm/Gemm", "Gemm", "WeightQuantBatchMatmulV2", tokens, k, n,
                    dtype_b="int8", trans_b=True, antiquant_scale_shape=[n])]
    return {"tokens": tokens}, expected, 1.0


# ---------------------------------------------------------------------------
# DeepSeek-V3's absorbed MLA in einsum.

class _AbsorbedMla(torch.nn.Module):
    """The decode-time attention of DeepSeek-V3's model code (absorb mode):
    q_nope . W_UK, scores against the latent cache and the rope cache, the
    weighted latent, then W_UV."""

    def __init__(self, heads=128, nope=128, rope=64, rank=512, v_dim=128):
        super().__init__()
        self.w_uk = torch.nn.Parameter(torch.randn(heads, nope, rank) * 0.02)
        self.w_uv = torch.nn.Parameter(torch.randn(heads, v_dim, rank) * 0.02)
        self.scale = 1.0 / math.sqrt(nope + rope)

    def forward(self, q_nope, q_pe, kv, pe):
        q = torch.einsum("bshd,hdc->bshc", q_nope, self.w_uk)
        scores = (torch.einsum("bshc,btc->bsht", q, kv) +
                  torch.einsum("bshr,btr->bsht", q_pe, pe)) * self.scale
        x = torch.einsum("bsht,btc->bshc", scores.softmax(dim=-1), kv)
        return torch.einsum("bshc,hdc->bshd", x, self.w_uv)


def mla_einsum(path):
    heads, nope, rope, rank, v_dim = 128, 128, 64, 512, 128
    module = _AbsorbedMla(heads, nope, rope, rank, v_dim).eval()
    b, s, t = 1, 4, 16
    args = (torch.randn(b, s, heads, nope), torch.randn(b, s, heads, rope),
            torch.randn(b, t, rank), torch.randn(b, t, rope))
    torch.onnx.export(module, args, str(path), export_params=False, opset_version=OPSET,
                      input_names=["q_nope", "q_pe", "kv", "pe"], output_names=["output"],
                      dynamic_axes={"q_nope": {0: "batch", 1: "seq"},
                                    "q_pe": {0: "batch", 1: "seq"},
                                    "kv": {0: "batch", 1: "ctx"}, "pe": {0: "batch", 1: "ctx"},
                                    "output": {0: "batch", 1: "seq"}})
    model = onnx.load(str(path))
    names = [n.name for n in model.graph.node if n.op_type == "Einsum"]
    assert len(names) == 5, names
    b, s, t = 2, 1, 4096
    expected = [
        _ok(names[0], "Einsum", "TransposeBatchMatMul", b * s, nope, rank, (heads,),
            perm_x1=[1, 0, 2], perm_x2=[0, 1, 2]),
        _ok(names[1], "Einsum", "BatchMatMulV3", s * heads, rank, t, (b,), trans_b=True),
        _ok(names[2], "Einsum", "BatchMatMulV3", s * heads, rope, t, (b,), trans_b=True),
        _ok(names[3], "Einsum", "BatchMatMulV3", s * heads, t, rank, (b,)),
        _ok(names[4], "Einsum", "TransposeBatchMatMul", b * s, rank, v_dim, (heads,),
            perm_x1=[1, 0, 2], perm_x2=[0, 2, 1]),
    ]
    return {"batch": b, "seq": s, "ctx": t}, expected, 1.0




# ---------------------------------------------------------------------------
# A small QDQ Linear with its weights, and the graph's own arithmetic in numpy.

def qdq_linear_small(path):
    """One torch QAT Linear (64 -> 48, bias) exported WITH its weights, and
    <name>.reference.json: an input, its int8 codes, the weight's codes,
    the scales, the bias and the ONNX graph's float result, evaluated in
    numpy from the exported tensors by ONNX's QuantizeLinear /
    DequantizeLinear arithmetic (round half to even, saturate to int8)."""
    qconfig = _symmetric_int8_qconfig()
    torch.manual_seed(1)
    layer = _QLinear(64, 48, qconfig)
    layer.linear.bias = torch.nn.Parameter(torch.randn(48) * 0.1)
    layer.train()
    with torch.no_grad():
        for _ in range(4):
            layer(torch.randn(8, 64))
    layer.apply(torch.ao.quantization.disable_observer)
    layer.eval()
    x = torch.randn(8, 64)
    torch.onnx.export(layer, (x,), str(path), export_params=True, opset_version=OPSET,
                      do_constant_folding=True, input_names=["input"], output_names=["output"])
    model = onnx.load(str(path))
    init = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    graph = model.graph
    qs = [n for n in graph.node if n.op_type == "QuantizeLinear"]
    # The activation's Q reads the graph input; the weight's Q reads the weight.
    q_x = next(n for n in qs if n.input[0] == "input")
    q_w = next(n for n in qs if n.input[0] != "input")
    # torch writes a 2-D Linear as Gemm (transB=1) with the bias as C.
    gemm = next(n for n in graph.node if n.op_type == "Gemm")
    bias = init[gemm.input[2]].astype(np.float32)
    s_x = init[q_x.input[1]].astype(np.float32).reshape(())
    s_w = init[q_w.input[1]].astype(np.float32)
    w = init[q_w.input[0]].astype(np.float32)
    xn = x.numpy().astype(np.float32)
    x_q = np.clip(np.rint(xn / s_x), -128, 127).astype(np.int8)
    w_q = np.clip(np.rint(w / s_w[:, None]), -128, 127).astype(np.int8)
    x_dq = x_q.astype(np.float32) * s_x
    w_dq = w_q.astype(np.float32) * s_w[:, None]
    y = (x_dq @ w_dq.T + bias).astype(np.float32)
    with torch.no_grad():
        torch_y = layer(x).numpy()
    # torch's fake-quant rounds x * (1 / scale), ONNX x / scale: a code can
    # differ at a tie, so the two agree to a few codes' worth, not exactly.
    diff = np.abs(torch_y - y).max()
    print(f"  numpy vs torch: max |diff| {diff:.3g} (max |y| {np.abs(y).max():.3g})")
    assert diff < 0.01 * np.abs(y).max(), "numpy's QDQ arithmetic disagrees with torch"
    reference = {"x_q": x_q.tolist(), "w_q": w_q.tolist(), "s_x": float(s_x),
                 "s_w": s_w.tolist(), "bias": bias.tolist(), "y": y.tolist()}
    with open(str(path).replace(".onnx", ".reference.json"), "w") as f:
        f.write(json.dumps(reference) + "\n")
    node = next(n.name for n in graph.node if n.op_type in ("MatMul", "Gemm"))
    op_type = next(n.op_type for n in graph.node if n.op_type in ("MatMul", "Gemm"))
    return {}, [_ok(node, op_type, "QuantBatchMatmulV3", 8, 64, 48, dtype_a="int8",
                    trans_b=True, scale_shape=[48])], 1.0


class _MlaBmm(torch.nn.Module):
    """The same absorbed projections as torch code writes them with bmm on
    [tokens, heads, dim] tensors: q_nope.transpose(0, 1) @ W_UK, and the
    attention output's latent through W_UV^T, each transposed back."""

    def __init__(self, heads=128, nope=128, rank=512, v_dim=128):
        super().__init__()
        self.w_uk = torch.nn.Parameter(torch.randn(heads, nope, rank) * 0.02)
        self.w_uv = torch.nn.Parameter(torch.randn(heads, v_dim, rank) * 0.02)

    def forward(self, q_nope, latent):
        q = torch.bmm(q_nope.transpose(0, 1), self.w_uk).transpose(0, 1)
        out = torch.bmm(latent.transpose(0, 1), self.w_uv.transpose(1, 2)).transpose(0, 1)
        return q, out


def mla_transpose_bmm(path):
    heads, nope, rank, v_dim = 128, 128, 512, 128
    module = _MlaBmm(heads, nope, rank, v_dim).eval()
    args = (torch.randn(4, heads, nope), torch.randn(4, heads, rank))
    torch.onnx.export(module, args, str(path), export_params=False, opset_version=OPSET,
                      input_names=["q_nope", "latent"], output_names=["q", "out"],
                      dynamic_axes={"q_nope": {0: "tokens"}, "latent": {0: "tokens"},
                                    "q": {0: "tokens"}, "out": {0: "tokens"}})
    model = onnx.load(str(path))
    names = [n.name for n in model.graph.node if n.op_type == "MatMul"]
    assert len(names) == 2, names
    tokens = 16
    expected = [
        _ok(names[0], "MatMul", "TransposeBatchMatMul", tokens, nope, rank, (heads,),
            perm_x1=[1, 0, 2], perm_x2=[0, 1, 2]),
        # The exporter writes W_UV^T as a parameter of its own ([heads, rank, v_dim]).
        _ok(names[1], "MatMul", "TransposeBatchMatMul", tokens, rank, v_dim, (heads,),
            perm_x1=[1, 0, 2], perm_x2=[0, 1, 2]),
    ]
    return {"tokens": tokens}, expected, 1.0


QUANT_MODELS = {
    "llama_block_w8a8_qdq": llama_block_w8a8_qdq,
    "bert_large_dynamic": bert_large_dynamic,
    "llama_block_nbits": llama_block_nbits,
    "weight_only_int8": weight_only_int8,
    "mla_einsum": mla_einsum,
    "qdq_linear_small": qdq_linear_small,
    "mla_transpose_bmm": mla_transpose_bmm,
}
