#include "server/tiling/strategies/batch_shared.h"

#include "server/tiling/tiling_data.h"

namespace npu::tiling {

TilingKey BatchKey(const MatmulProblem& problem, ApiLevel api_level, BatchModel batch_model) {
  TilingKey key;
  key.layout = KeyLayoutOf(problem.op);
  key.api_level = api_level;
  key.trans_a = problem.trans_a;
  key.trans_b = problem.trans_b;
  key.batch_model = static_cast<uint8_t>(batch_model);
  if (key.layout == KeyLayout::kFused) {
    key.fused_op = problem.fused_op;
    key.inner_precise = static_cast<uint8_t>(problem.inner_precise);
  }
  return key;
}

void FillBatchBasicTilingData(const MatmulProblem& problem, const ProblemFacts& facts,
                              const ChipSpec& chip, const CubeRunState& state, TilingPlan& plan) {
  FillBasicTilingData(problem, facts, chip, state, plan);
  // BatchMatMulV3BasicTilingData is MatMulV3BasicTilingData's fields in the
  // same order plus two (matmul/mat_mul_v3/op_kernel/arch35/mat_mul_tiling_data.h).
  TilingData batch_data = NewTilingData<BatchBasicField>();
  for (size_t i = 0; i < plan.data.fields.size(); ++i) {
    batch_data.fields[i].value = plan.data.fields[i].value;
  }
  const TilingStructWriter<BatchBasicField> put(batch_data);
  put(BatchBasicField::kBatchDimAll, facts.batch_c);
  put(BatchBasicField::kBatchX3, facts.batch_x3);
  plan.data = std::move(batch_data);
}

}  // namespace npu::tiling
