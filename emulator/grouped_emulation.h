// GroupedMatmul on the emulator: the glue between its problem (tensor lists
// and the token histogram, tiling/types.h GroupedInputs), its tensors as
// the lists describe them, the schedule of its kernels (tiling/
// schedule_grouped.cc) and the per-matrix numerics the emulator already has.
// Part of `npu_emulator`.
//
// Vocabulary (tiling/grouped/gmm_groups.h): a *group* is one expert's
// matmul, C_g [m_g, n_g] = A_g [m_g, k_g] x B_g [k_g, n_g]; a single tensor
// is consumed group after group as consecutive blocks (x: m_g * k_g
// elements, stored [m_g, k_g] or [k_g, m_g] with transpose_x; weight k_g *
// n_g; y m_g * n_g; bias n_g), a list gives each group its own tensor. The
// emulator's C is y: the single y's shape, or for a list of y all groups'
// y one after the other, flat.
//
// Tensors (emulator.h Tensors::grouped, by tiling::GroupedTensor): every
// list the problem has, one HostTensor per instance with the instance's
// origin shape and the list's dtype (an NZ weight given in its ND layout),
// 4-bit codes two per byte. group_list's values are not needed (the
// histogram gives the split); when given, they must be the histogram
// (counts or cumulative, as group_list_type says). y is never an input.
//
// How C is computed, per path (tiling/grouped/gmm_path.h), group by group
// from the schedule's units of that group:
//   * no-quant: each group is a MatMulV3 matmul of its blocks, computed by
//     RunNumerics() along the group's units (fp32 accumulation from the
//     bias, the cast to y) and held against the fp64 reference with the
//     float bound of accuracy.h.
//   * quant: each group's operands become a QuantOperands (quant_numerics.h)
//     with the group's scales: the weight's scale per group ([E] / [E, 1]
//     per-tensor, [E, n] per-channel; uint64 / int64 fixpipe words, float32
//     or bfloat16), x's per_token_scale per row ([M]) or per group ([E],
//     CANN's double per-tensor), MX e8m0 scales ([M, ceil(K / 64), 2] and
//     [E, ceil(K / 64), N, 2] / [E, N, ceil(K / 64), 2]; split K: [K / 64 +
//     E, M, 2] and [K / 64 + E, N, 2], each group starting at row
//     k_offset / 64 + g), per-group x / per-block weight scales ([M,
//     ceil(K / 128)] and [E, ceil(K / 128), ceil(N / 128)]), the bias [E,
//     n]. The path the operands imply (ClassifyQuantPath) must be the one
//     the plan's kernel runs (KERNEL_TYPE: fixpipe, vector, per-block; the
//     MX struct): the fixpipe's fp19 scale, the vector epilogue's fp32
//     steps, the per-block partial sums and the MX blocks are
//     QuantMatmulDevice()'s, the reference and bound QuantMatmulReference()'s
//     and QuantMatmulErrorBound()'s.
//   * weight-quant (x float16 / bfloat16): each group is a
//     WeightQuantBatchMatmulV2 matmul (weight_quant_emulation.h) of its x
//     rows, its weight and its antiquant scale / offset ([E, n]
//     per-channel, [E, G, n] per-group and MX, [E, n, G] with
//     transpose_weight; a list holds one per group), the group size k / G:
//     the AIV's antiquant into L1 (cast, add, multiply in x's dtype) and the
//     fp32 cube.
//   * weight-quant with 8-bit x (a8w4_numerics.h): A8W4 (int8 x, int4 NZ
//     weight [E, K, N]) per expert from its float16 group scales [E, G, n],
//     the float32 scale [E, n], per_token_scale [M] and float32 bias [E, n]:
//     the int4 weight widened to int8 on the AIV, the int32 cube, the AIV's
//     fp32 dequantization and cast; MX-A8W4 (float8_e4m3fn x, float4 NZ
//     weight transposed, its origin the NZ shape (K1, N1, N0, K0), one for
//     the experts or one per expert) from the e8m0 scales [E, n, K / 64, 2]
//     ([n, K / 64, 2] per expert) and [M, K / 64, 2] and a bias of y's dtype:
//     the weight as float8 times 2^-6, the MX cube, the fixpipe's * 64.
// A group of k 0 writes zeros (the kernels' zero fill of split K's empty
// groups). The quant path's vector epilogue applies act_type's activation
// (ReLU, GELU tanh, FastGelu, SiLU) after the dequantization, before the
// cast (quant_numerics.h). Not modelled (kUnimplemented): an activation on
// the other paths, a sparse group list, the quant path's other forms than
// split M with single x, weight and y (and MX split K), its float4_e1m2
// inputs, the weight-quant path's split K (MX-A8W4's group_type 2
// included: its kernel's controller reads every group_list value as rows),
// packed INT32 / FLOAT32 weights, A8W4 other than split M with one x,
// weight and y and float16 group scales (the uint64 scale of the other
// chips' A8W4), MX-A8W4 other than split M with one x and y, or with a K
// not a multiple of 64.
//
// Timing: the schedule's units run through the common program builder and
// timing model (program.h) on GroupedTimedProblem(), with the pipeline of
// PipelineForPlan() (the quant path's vector epilogue, the weight-quant
// path's AIV antiquant, A8W4's dequantizing epilogue in UB); L2 tells each
// group's weight apart (GroupedL2View()). An AIV that both widens A8W4's
// weight and dequantizes its C runs them as two programs whose vector pipes
// are not serialized.
#ifndef NPU_EMULATOR_GROUPED_EMULATION_H_
#define NPU_EMULATOR_GROUPED_EMULATION_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "emulator/accuracy.h"
#include "emulator/emulator.h"
#include "emulator/numerics.h"
#include "emulator/thread_pool.h"
#include "server/tiling/grouped/gmm_groups.h"
#include "server/tiling/schedule.h"
#include "server/tiling/types.h"

namespace npu::emu {

// Whether `problem` is GroupedMatmul's.
inline bool IsGrouped(const tiling::MatmulProblem& problem) {
  return problem.op == tiling::MatmulOp::kGroupedMatmul;
}

// What the emulator models of a grouped problem (the file comment):
// kInvalidArgument for a histogram or lists that do not fit the problem
// (tiling::grouped::GroupsOf()), kUnimplemented naming the field otherwise.
absl::Status CheckGroupedModelled(const tiling::MatmulProblem& problem);

// The shapes of x[0] (a), weight[0] (b), bias[0] and y (c: the single y, or
// [all groups' y elements] for a list). Empty for a problem GroupsOf()
// refuses.
OperandShapes GroupedShapes(const tiling::MatmulProblem& problem);

// Checks `inputs.grouped` against the problem's lists (count, dtype, shape,
// bytes of every tensor; group_list's values against the histogram);
// kInvalidArgument names the tensor: "grouped.weight[0]: shape [4, 64, 128],
// expected [4, 64, 256]".
absl::Status CheckGroupedInputs(const tiling::MatmulProblem& problem, const Tensors& inputs);

// Random tensors for every list of the problem but y and group_list,
// deterministic for `seed`: floats uniform in [-1, 1) rounded to their
// dtype; quant codes DrawQuantValues() with RandomQuantInputs()' scale
// magnitudes (so that y stays in range); weight-quant codes and scales as
// RandomWeightQuantInputs() draws them.
Tensors RandomGroupedInputs(const tiling::MatmulProblem& problem, uint64_t seed);

// y of `inputs` along `schedule` (tiling::ExpandSchedule() of `plan`),
// group by group (the file comment); bit-identical for any thread count.
// Errors: those of CheckGroupedInputs(); kUnimplemented when the operands'
// dequantization path is not the one the plan's kernel runs; kInternal for
// a unit outside its group or an element written twice; kCancelled.
absl::StatusOr<HostTensor> RunGroupedNumerics(const tiling::Schedule& schedule,
                                              const tiling::TilingPlan& plan,
                                              const tiling::MatmulProblem& problem,
                                              const Tensors& inputs, ThreadPool& pool,
                                              const std::atomic<bool>* cancelled);

// y `c` against each group's fp64 / exact reference under its path's bound;
// worst_index is the flat index into c (GroupedElement() names its group,
// row and column), bound_rule names the path.
absl::StatusOr<AccuracyReport> CheckGroupedAccuracy(const tiling::MatmulProblem& problem,
                                                    const Tensors& inputs, const HostTensor& c,
                                                    int threads,
                                                    const std::atomic<bool>* cancelled);

// The group, row and column of flat element `index` of y.
struct GroupedElement {
  uint64_t group = 0, row = 0, col = 0;
};
GroupedElement GroupedElementOf(const tiling::MatmulProblem& problem, uint64_t index);

// The problem the timing model walks: the stacked C ([sum m_g, max n_g],
// K the largest group's) with x's, the weight's and y's dtypes, the
// transposes and the bias; its op stays GroupedMatmul.
tiling::MatmulProblem GroupedTimedProblem(const tiling::MatmulProblem& problem);

// `schedule` as the L2 estimate reads it: each group's columns moved to
// their own range (group g at g * 2^32), so that one group's weight is no L2
// hit for another's.
tiling::Schedule GroupedL2View(const tiling::Schedule& schedule);

// The useful multiply-adds: sum over the groups of m_g * n_g * k_g.
uint64_t GroupedUsefulMacs(const tiling::MatmulProblem& problem);

// The line an answer carries about the groups (GmmGroups::Describe()), e.g.
// that the rows were spread evenly for want of a histogram.
std::string GroupedNote(const tiling::MatmulProblem& problem);

}  // namespace npu::emu

#endif  // NPU_EMULATOR_GROUPED_EMULATION_H_
