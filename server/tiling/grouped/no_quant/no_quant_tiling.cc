#include "server/tiling/grouped/no_quant/no_quant_tiling.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/tiling/cann_fault.h"
#include "server/tiling/int_math.h"

namespace npu::tiling::grouped {
namespace {

// A dim past a shape's rank: CANN's runtime answers INT64_MIN for it.
constexpr int64_t kMissingDim = std::numeric_limits<int64_t>::min();
// The fractal size every re-formed block is aligned to.
constexpr uint64_t kBlockAlign = 16;
// CANN's test of the weight-no-L2-cache flag: rows that start on 128-byte
// boundaries.
constexpr uint64_t kL2Align = 128;
// CANN's loops that re-form the block double a count per round below the
// core count; far more rounds than that mean its loop would not end.
constexpr int kMaxFormRounds = 256;

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

std::string DimsText(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

// The no-quant tiling's state, step by step as CANN's GroupedNoQuantMatmulTiling
// holds it.
class NoQuantTiler {
 public:
  NoQuantTiler(const GroupedInputs& g, const ChipSpec& chip) : g_(g), chip_(chip) {}

  absl::StatusOr<NoQuantTiling> Run() {
    t_.used_core_num = chip_.aic_num;
    if (absl::Status s = ReadAttrs(); !s.ok()) return s;
    if (absl::Status s = ReadLists(); !s.ok()) return s;
    if (absl::Status s = Tile(); !s.ok()) return s;
    return t_;
  }

  // CANN's reads and checks (its own tiling must succeed), then the block
  // `base_m` x `base_n` in place of CANN's, the rest derived as CANN derives
  // it for a block of that size: where CANN would have formed the block over
  // the cores (one group, or split K, with fewer blocks than cores), baseK
  // as deep as L0A holds for the wider side (at most K) and the blocks'
  // core count; else baseK from the double-buffered L0B (and L0A) and all
  // cores; then the tail re-split and L1 steps of one group, or the L1 split
  // of several.
  absl::StatusOr<NoQuantTiling> RunWithBlock(uint64_t base_m, uint64_t base_n) {
    if (absl::Status s = Run().status(); !s.ok()) return s;
    const std::string block = absl::StrCat("block ", base_m, "x", base_n);
    if (base_m == 0 || base_n == 0 || base_m % kBlockAlign != 0 || base_n % kBlockAlign != 0) {
      return Invalid(absl::StrCat(block, ": baseM and baseN must be positive multiples of ",
                                  kBlockAlign));
    }
    if (base_m * base_n * 4 > chip_.l0c_bytes) {
      return Invalid(absl::StrCat(block, ": its fp32 L0C tile (", base_m * base_n * 4,
                                  " bytes) exceeds chip field l0c_bytes=", chip_.l0c_bytes));
    }
    const bool split_k = t_.group_type == kGroupTypeSplitK;
    const uint64_t share =
        t_.group_num == 1 ? chip_.aic_num : std::max<uint32_t>(1, chip_.aic_num / t_.group_num);
    const uint64_t blocks = CeilDiv(t_.m, base_m) * CeilDiv(t_.n, base_n);
    const bool formed = (t_.group_num == 1 || split_k) && blocks < share;
    const uint64_t a_fit = chip_.l0a_bytes / 2 / XBytes() / (formed ? std::max(base_m, base_n) : base_m);
    uint64_t base_k = formed ? std::min(CeilAlign(t_.k, kBlockAlign), FloorAlign(a_fit, kBlockAlign))
                             : FloorAlign(std::min(chip_.l0b_bytes / 2 / (base_n * XBytes()), a_fit),
                                          kBlockAlign);
    if (base_k == 0) {
      return Invalid(absl::StrCat(block, ": the double-buffered L0A / L0B hold no K step of ",
                                  kBlockAlign));
    }
    t_.base_m = base_m;
    t_.base_n = base_n;
    t_.base_k = base_k;
    t_.formulated = false;
    t_.m_tail_cnt = t_.n_tail_cnt = 1;
    t_.used_core_num =
        formed ? static_cast<uint32_t>(std::min<uint64_t>(blocks * t_.group_num, chip_.aic_num))
               : chip_.aic_num;
    if (t_.group_num == 1) {
      TailSplit();
      if (absl::Status s = OneGroupL1(); !s.ok()) return s;
      L2Cache();
      return t_;
    }
    if (absl::Status s = L1Steps(); !s.ok()) return s;
    if (!split_k) L2Cache();
    if (absl::Status s = NoWrappedSteps(); !s.ok()) return s;
    return t_;
  }

 private:
  const GroupedTensorList& List(GroupedTensor t) const { return g_[t]; }

  // Where a shape sits in the tensor lists (grouped.<tensor>[i].<which>),
  // spelled only in a refusal: a valid problem's reads allocate nothing.
  struct FieldRef {
    GroupedTensor tensor;
    size_t index;
    const char* which;
  };
  static std::string FieldText(const FieldRef& f) {
    return absl::StrCat("grouped.", std::string(GroupedTensorName(f.tensor)), "[", f.index, "].",
                        f.which);
  }

  // Dim `i` of `dims` as CANN's runtime reads it (INT64_MIN past the
  // rank). Such a read makes CANN compute with a dim that is not there; the
  // engine refuses the problem instead (the first such read names it).
  int64_t Dim(const std::vector<int64_t>& dims, size_t i, const FieldRef& field) {
    if (i < dims.size()) return dims[i];
    if (missing_.empty()) {
      missing_ = absl::StrCat("field ", FieldText(field), "=", DimsText(dims), " has ", dims.size(),
                              " dims, but the no-quant path reads its dim ",
                              static_cast<int64_t>(i), " (CANN would read an invalid dim there)");
    }
    return kMissingDim;
  }

  static FieldRef At(GroupedTensor t, size_t i, const char* which) { return {t, i, which}; }

  // GetAttrs and CheckNoQuantGroupListType.
  absl::Status ReadAttrs() {
    t_.trans_w = g_.transpose_weight;
    t_.trans_x = g_.transpose_x;
    t_.group_type = g_.group_type;
    t_.group_list_type = g_.group_list_type;
    t_.weight_nz = List(GroupedTensor::kWeight).format == Format::kFractalNz;
    if (t_.group_list_type == kGroupListSparse) {
      return Invalid(
          "field grouped.group_list_type=2 (sparse) is not supported by GroupedMatmul's no-quant "
          "path: group_list_type must be 0 (cumulative) or 1 (counts)");
    }
    return absl::OkStatus();
  }

  // Init: x[0]'s storage and weight[0]'s origin shape, the form, the NZ
  // weight's shape, then the read of the form.
  absl::Status ReadLists() {
    const GroupedTensorList& x = List(GroupedTensor::kX);
    const GroupedTensorList& w = List(GroupedTensor::kWeight);
    const std::vector<int64_t>& x_shape = x.instances[0].storage;
    const std::vector<int64_t>& w_shape = w.instances[0].origin;
    x_rank_ = static_cast<uint32_t>(x_shape.size());
    const uint32_t w_rank = static_cast<uint32_t>(w_shape.size());
    if (w_rank < 2 || x_rank_ < 2) {
      return Invalid(absl::StrCat("fields grouped.x[0].storage=", DimsText(x_shape),
                                  " and grouped.weight[0].origin=", DimsText(w_shape),
                                  " must each have at least 2 dims"));
    }
    x_k_dim_ = t_.trans_x ? 0 : x_rank_ - 1;
    w_n_dim_ = t_.trans_w ? w_rank - 2 : w_rank - 1;
    const GroupedTensorList& bias = List(GroupedTensor::kBias);
    if (bias.present()) {
      // An empty bias (a zero dim) is none; CANN's product of the dims
      // wraps as unsigned arithmetic does.
      uint64_t size = 1;
      for (int64_t d : bias.instances[0].storage) size *= static_cast<uint64_t>(d);
      t_.has_bias = size != 0;
    }
    t_.single_w = w.size() == 1;
    t_.single_x = x.size() == 1;
    t_.single_y = g_.split_item == 2 || g_.split_item == 3;
    if (t_.weight_nz) {
      // c0: the elements of 32 bytes.
      const int64_t c0 = static_cast<int64_t>(32 / DataTypeBytes(w.dtype));
      if (w_rank > 4) {
        // An NZ-shaped origin: N is counted in fractals of c0 (16 rows
        // when transposed).
        w_n_dim_ = t_.trans_w ? w_rank - 3 : w_rank - 4;
        nz_factor_ = t_.trans_w ? 16 : c0;
      }
      for (size_t i = 0; i < w.size(); ++i) {
        const std::vector<int64_t>& shape = w.instances[i].origin;
        const FieldRef field = At(GroupedTensor::kWeight, i, "origin");
        const uint64_t k =
            static_cast<uint64_t>(Dim(shape, shape.size() - (t_.trans_w ? 1 : 2), field));
        const uint64_t n =
            static_cast<uint64_t>(Dim(shape, shape.size() - (t_.trans_w ? 2 : 1), field));
        if (k % static_cast<uint64_t>(c0) != 0 || n % static_cast<uint64_t>(c0) != 0) {
          return Invalid(absl::StrCat("field ", FieldText(field), "=", DimsText(shape),
                                      ": a FRACTAL_NZ weight's K and N must be multiples of ", c0,
                                      " (32 bytes of ", std::string(DataTypeName(w.dtype)), ")"));
        }
      }
    }
    return ReadForm(x_shape, w_shape, w_rank);
  }

  absl::Status ReadForm(const std::vector<int64_t>& x_shape, const std::vector<int64_t>& w_shape,
                        uint32_t w_rank) {
    const bool sx = t_.single_x, sw = t_.single_w, sy = t_.single_y;
    if (t_.group_type == kGroupTypeSplitK) {
      if (sx && !sw && !sy) return SplitKSingleX("s-m-m", x_shape);
      if (!sx && sw) return MultiXSingleWeight(sy ? "m-s-s" : "m-s-m", w_shape);
      if (sx && sw && sy) return SplitKSingleXWeightY(x_shape, w_shape);
      return Invalid(absl::StrCat(
          "fields grouped.x, grouped.weight and split_item: x, weight, y = ", FormName(),
          " is not a split K form of the no-quant path (single-multi-multi, multi-single-multi, "
          "multi-single-single or single-single-single)"));
    }
    if (t_.group_type == kGroupTypeSplitM) {
      if (!sx && !sw) return MultiXMultiWeight(sy ? "m-m-s" : "m-m-m");
      if (sx && !sw) return SplitMSingleX(sy ? "s-m-s" : "s-m-m", x_shape);
      if (!sx && sw) return MultiXSingleWeight(sy ? "m-s-s" : "m-s-m", w_shape);
      if (sy) return SplitMSingleXWeightY(x_shape, w_shape);
      return Invalid(absl::StrCat(
          "fields grouped.x, grouped.weight and split_item: x, weight, y = ", FormName(),
          " is not a split M form of the no-quant path (every form but "
          "single-single-multi)"));
    }
    if (t_.group_type == kGroupTypeNone) {
      if (sw && w_rank > 2) return MultiXSingleWeight("no split, single weight", w_shape);
      return MultiXMultiWeight("no split");
    }
    return Invalid(absl::StrCat("field grouped.group_type=", t_.group_type,
                                " must be -1 (no split), 0 (split M) or 2 (split K)"));
  }

  std::string FormName() const {
    return absl::StrCat(t_.single_x ? "single" : "multi", "-", t_.single_w ? "single" : "multi",
                        "-", t_.single_y ? "single" : "multi");
  }

  // N of a weight: its N dim (times the NZ factor), in CANN's 64-bit
  // arithmetic.
  uint64_t WeightN(const std::vector<int64_t>& shape, const FieldRef& field) {
    return static_cast<uint64_t>(Dim(shape, w_n_dim_, field)) * static_cast<uint64_t>(nz_factor_);
  }

  // Split M, s-s-s: E from weight[0]'s first dim.
  absl::Status SplitMSingleXWeightY(const std::vector<int64_t>& x_shape,
                                    const std::vector<int64_t>& w_shape) {
    t_.form = "s-s-s";
    const FieldRef xf = At(GroupedTensor::kX, 0, "storage");
    const FieldRef wf = At(GroupedTensor::kWeight, 0, "origin");
    t_.group_num = static_cast<uint32_t>(static_cast<int32_t>(Dim(w_shape, 0, wf)));
    const int64_t k = Dim(x_shape, x_k_dim_, xf);
    t_.m = static_cast<uint64_t>(Dim(x_shape, 0, xf));
    t_.k = static_cast<uint64_t>(k);
    t_.n = WeightN(w_shape, wf);
    k_zero_ = k_zero_ || k == 0;
    t_.weight_no_l2_cache = true;
    return absl::OkStatus();
  }

  // One x and a list of weights: a group per weight, the widest N, M from
  // x's dim `m_dim` (read before K, as CANN reads them). Returns x's K.
  int64_t ReadWeightList(std::string_view form, const std::vector<int64_t>& x_shape,
                         size_t m_dim) {
    t_.form = form;
    const FieldRef xf = At(GroupedTensor::kX, 0, "storage");
    const int64_t m = Dim(x_shape, m_dim, xf);
    const int64_t k = Dim(x_shape, x_k_dim_, xf);
    const GroupedTensorList& w = List(GroupedTensor::kWeight);
    for (size_t i = 0; i < w.size(); ++i) {
      ++t_.group_num;
      t_.n =
          std::max(t_.n, WeightN(w.instances[i].origin, At(GroupedTensor::kWeight, i, "origin")));
    }
    t_.m = static_cast<uint64_t>(m);
    t_.k = static_cast<uint64_t>(k);
    return k;
  }

  // Split M, one x and a list of weights.
  absl::Status SplitMSingleX(std::string_view form, const std::vector<int64_t>& x_shape) {
    const int64_t k = ReadWeightList(form, x_shape, 0);
    k_zero_ = k_zero_ || k == 0;
    t_.weight_no_l2_cache = t_.single_y;
    return absl::OkStatus();
  }

  // Lists of x and weights: a group per pair, the largest M, K and N.
  absl::Status MultiXMultiWeight(std::string_view form) {
    t_.form = form;
    const GroupedTensorList& x = List(GroupedTensor::kX);
    const GroupedTensorList& w = List(GroupedTensor::kWeight);
    for (size_t i = 0; i < std::min(x.size(), w.size()); ++i) {
      const std::vector<int64_t>& xs = x.instances[i].storage;
      const FieldRef xf = At(GroupedTensor::kX, i, "storage");
      ++t_.group_num;
      const int64_t m = Dim(xs, 0, xf);
      const int64_t k = Dim(xs, x_k_dim_, xf);
      k_zero_ = k_zero_ || k == 0;
      t_.m = std::max(t_.m, static_cast<uint64_t>(m));
      t_.k = std::max(t_.k, static_cast<uint64_t>(k));
      t_.n =
          std::max(t_.n, WeightN(w.instances[i].origin, At(GroupedTensor::kWeight, i, "origin")));
    }
    t_.group_type = kGroupTypeNone;
    return absl::OkStatus();
  }

  // A list of x and one weight: a group per x.
  absl::Status MultiXSingleWeight(std::string_view form, const std::vector<int64_t>& w_shape) {
    t_.form = form;
    const uint64_t n = WeightN(w_shape, At(GroupedTensor::kWeight, 0, "origin"));
    const GroupedTensorList& x = List(GroupedTensor::kX);
    for (size_t i = 0; i < x.size(); ++i) {
      const std::vector<int64_t>& xs = x.instances[i].storage;
      const FieldRef xf = At(GroupedTensor::kX, i, "storage");
      ++t_.group_num;
      const int64_t m = Dim(xs, 0, xf);
      const int64_t k = Dim(xs, x_k_dim_, xf);
      k_zero_ = k_zero_ || k == 0;
      t_.m = std::max(t_.m, static_cast<uint64_t>(m));
      t_.k = std::max(t_.k, static_cast<uint64_t>(k));
    }
    t_.n = n;
    t_.group_type = kGroupTypeNone;
    return absl::OkStatus();
  }

  // Split K, s-s-s: the group count is group_list's length. M is x's dim 1
  // (CANN's read, whatever x's layout).
  absl::Status SplitKSingleXWeightY(const std::vector<int64_t>& x_shape,
                                    const std::vector<int64_t>& w_shape) {
    t_.form = "s-s-s";
    const FieldRef xf = At(GroupedTensor::kX, 0, "storage");
    const int64_t m = Dim(x_shape, 1, xf);
    const int64_t k = Dim(x_shape, x_k_dim_, xf);
    const uint64_t n = WeightN(w_shape, At(GroupedTensor::kWeight, 0, "origin"));
    const GroupedTensorList& group_list = List(GroupedTensor::kGroupList);
    if (!group_list.present()) {
      return Invalid(
          "field grouped.group_list has no instance: split K with a single x, weight and y "
          "takes the group count from group_list's length");
    }
    t_.group_num = static_cast<uint32_t>(static_cast<int32_t>(
        Dim(group_list.instances[0].storage, 0, At(GroupedTensor::kGroupList, 0, "storage"))));
    t_.m = static_cast<uint64_t>(m);
    t_.n = n;
    t_.k = static_cast<uint64_t>(k);
    return absl::OkStatus();
  }

  // Split K, one x ([K, M]) and a list of weights.
  absl::Status SplitKSingleX(std::string_view form, const std::vector<int64_t>& x_shape) {
    ReadWeightList(form, x_shape, 1);
    t_.group_type = kGroupTypeNone;
    return absl::OkStatus();
  }

  // CalMatMulTiling.
  absl::Status Tile() {
    if (!missing_.empty()) return Invalid(missing_);
    if (t_.group_num < 1 || t_.group_num > kNoQuantMaxGroups) {
      return Invalid(absl::StrCat("the group count ", t_.group_num, " (", std::string(t_.form),
                                  ") must be in [1, ", kNoQuantMaxGroups,
                                  "] on GroupedMatmul's no-quant path"));
    }
    if (k_zero_) {
      return Invalid(
          "field grouped.x: K of x is 0; the no-quant path needs a positive K (split M or no "
          "split)");
    }
    if (absl::Status s = BaseBlock(); !s.ok()) return s;
    if (t_.group_num == 1) {
      if (absl::Status s = FormBlock(t_.used_core_num); !s.ok()) return s;
      TailSplit();
      if (absl::Status s = OneGroupL1(); !s.ok()) return s;
      L2Cache();
      return absl::OkStatus();
    }
    if (t_.group_type == kGroupTypeSplitM || t_.group_type == kGroupTypeNone) {
      L2Cache();
      return NoWrappedSteps();
    }
    // Split K: a share of the cores per group.
    if (absl::Status s = FormBlock(std::max<uint32_t>(1, chip_.aic_num / t_.group_num)); !s.ok()) {
      return s;
    }
    return NoWrappedSteps();
  }

  uint64_t XBytes() const { return DataTypeBytes(List(GroupedTensor::kX).dtype); }
  uint64_t WBytes() const { return DataTypeBytes(List(GroupedTensor::kWeight).dtype); }

  // CalBaseMMTiling: baseK from the double-buffered L0B at baseN 256, baseM
  // from the double-buffered L0A and L0C (at most 256), then the L1 steps.
  absl::Status BaseBlock() {
    t_.base_k = (chip_.l0b_bytes / 2) / (t_.base_n * XBytes());
    t_.base_k &= ~uint64_t{15};
    if (t_.base_k == 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "chip field l0b_bytes=", chip_.l0b_bytes, " holds no double-buffered block of baseN ",
          t_.base_n, ": CANN's baseK (l0b_bytes / 2 / (baseN * ", XBytes(),
          ") aligned down to 16) is 0"));
    }
    const uint32_t max_base_m = static_cast<uint32_t>(chip_.l0c_bytes / (t_.base_n * 4));
    t_.base_m = std::min<uint32_t>(
        static_cast<uint32_t>((chip_.l0a_bytes / 2) / (t_.base_k * XBytes())), max_base_m);
    t_.base_m = std::min(t_.base_m, kNoQuantBaseM);
    if (t_.base_m == 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "chip fields l0a_bytes=", chip_.l0a_bytes, " and l0c_bytes=", chip_.l0c_bytes,
          " hold no block: CANN's baseM (min(l0a_bytes / 2 / (baseK * ", XBytes(),
          "), l0c_bytes / (baseN * 4))) is 0"));
    }
    return L1Steps();
  }

  // CalL1Tiling: L1 (less the bias table) split between A and B, 256 KiB
  // to A when baseM > baseN, the rest to B, else the other way round; each
  // half double-buffered; the larger step a multiple of the smaller. (On an
  // L1 below 256 KiB one part wraps below zero: NoWrappedSteps() refuses
  // the plans that keep those steps.)
  absl::Status L1Steps() {
    const uint64_t bias_table = t_.has_bias ? kNoQuantBiasTableBytes : 0;
    l1_total_ = chip_.l1_bytes - bias_table;
    const uint64_t l1_a =
        t_.base_m > t_.base_n ? kNoQuantPartAL1Bytes : l1_total_ - kNoQuantPartAL1Bytes;
    const uint64_t l1_b = l1_total_ - l1_a;
    t_.step_ka = l1_a / 2 / t_.base_m / t_.base_k / XBytes();
    t_.step_kb = l1_b / 2 / t_.base_n / t_.base_k / WBytes();
    if (t_.step_ka == 0 || t_.step_kb == 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "chip field l1_bytes=", chip_.l1_bytes, " holds no double-buffered K step of the ",
          t_.base_m, " x ", t_.base_n, " x ", t_.base_k,
          " block in CANN's split of L1 (stepKa=", t_.step_ka, ", stepKb=", t_.step_kb, ")"));
    }
    AlignSteps();
    return absl::OkStatus();
  }

  void AlignSteps() {
    if (t_.step_ka >= t_.step_kb) {
      t_.step_ka = t_.step_ka / t_.step_kb * t_.step_kb;
    } else {
      t_.step_kb = t_.step_kb / t_.step_ka * t_.step_ka;
    }
    t_.depth_a1 = t_.step_ka * 2;
    t_.depth_b1 = t_.step_kb * 2;
  }

  // The steps of L1Steps() stay in the plan of several groups; on an L1
  // below CANN's 256 KiB part for A, one part's size wrapped below zero.
  absl::Status NoWrappedSteps() const {
    if (l1_total_ >= kNoQuantPartAL1Bytes) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(
        "chip field l1_bytes=", chip_.l1_bytes, t_.has_bias ? " less the bias table" : "",
        " is below the ", kNoQuantPartAL1Bytes,
        " bytes CANN's no-quant L1 split gives one operand: the other's part (", l1_total_, " - ",
        kNoQuantPartAL1Bytes,
        ") wraps below zero, so CANN's plan has wrapped stepKa / stepKb / depth words (stepKa=",
        t_.step_ka, ", stepKb=", t_.step_kb, ")"));
  }

  // FormulateBasicBlock: for one group, or split K, a block that spreads
  // the group's M x N over `cores`: the shorter side's count kept, the other
  // filling the cores, then counts doubled while one side is at least twice
  // the other; baseK as deep as L0A allows for the wider side.
  absl::Status FormBlock(uint32_t cores) {
    uint64_t m_cnt = CeilDiv(t_.m, t_.base_m);
    uint64_t n_cnt = CeilDiv(t_.n, t_.base_n);
    if (m_cnt * n_cnt >= cores) return absl::OkStatus();
    t_.formulated = true;
    const auto divides_by_zero = [&](const char* what) {
      return CannFaultError(absl::StrCat("GroupedNoQuantMatmulTiling::FormulateBasicBlock: ", what,
                                         " with m=", t_.m, ", n=", t_.n));
    };
    if (m_cnt <= n_cnt) {
      t_.base_m = CeilAlign(CeilDiv(t_.m, m_cnt), kBlockAlign);
      m_cnt = CeilDiv(t_.m, t_.base_m);
      if (m_cnt == 0) return divides_by_zero("cores / mCnt, mCnt = ceil(m / baseM) = 0");
      n_cnt = cores / m_cnt;
      t_.base_n = CeilAlign(CeilDiv(t_.n, n_cnt), kBlockAlign);
    } else {
      t_.base_n = CeilAlign(CeilDiv(t_.n, n_cnt), kBlockAlign);
      n_cnt = CeilDiv(t_.n, t_.base_n);
      if (n_cnt == 0) return divides_by_zero("cores / nCnt, nCnt = ceil(n / baseN) = 0");
      m_cnt = cores / n_cnt;
      t_.base_m = CeilAlign(CeilDiv(t_.m, m_cnt), kBlockAlign);
    }
    int rounds = 0;
    while (t_.base_n >= t_.base_m * 2 && n_cnt < cores / 2) {
      if (++rounds > kMaxFormRounds) return NeverEnds();
      n_cnt *= 2;
      m_cnt = cores / n_cnt;
      t_.base_m = CeilAlign(CeilDiv(t_.m, m_cnt), kBlockAlign);
      t_.base_n = CeilAlign(CeilDiv(t_.n, n_cnt), kBlockAlign);
      m_cnt = CeilDiv(t_.m, t_.base_m);
      n_cnt = CeilDiv(t_.n, t_.base_n);
    }
    while (t_.base_m >= t_.base_n * 2 && m_cnt < cores / 2) {
      if (++rounds > kMaxFormRounds) return NeverEnds();
      m_cnt *= 2;
      n_cnt = cores / m_cnt;
      t_.base_m = CeilAlign(CeilDiv(t_.m, m_cnt), kBlockAlign);
      t_.base_n = CeilAlign(CeilDiv(t_.n, n_cnt), kBlockAlign);
      m_cnt = CeilDiv(t_.m, t_.base_m);
      n_cnt = CeilDiv(t_.n, t_.base_n);
    }
    m_cnt = CeilDiv(t_.m, t_.base_m);
    n_cnt = CeilDiv(t_.n, t_.base_n);
    const uint64_t k_align = CeilAlign(t_.k, kBlockAlign);
    const uint64_t wider = std::max(t_.base_m, t_.base_n);
    if (wider == 0) return divides_by_zero("the L0A depth over max(baseM, baseN) = 0");
    const uint64_t k_max = FloorAlign(chip_.l0a_bytes / 2 / XBytes() / wider, kBlockAlign);
    t_.base_k = std::min(k_align, k_max);
    t_.used_core_num = std::min(static_cast<uint32_t>(m_cnt * n_cnt * t_.group_num), chip_.aic_num);
    return absl::OkStatus();
  }

  absl::Status NeverEnds() const {
    return CannFaultError(
        absl::StrCat("GroupedNoQuantMatmulTiling::FormulateBasicBlock doubles a block count that "
                     "its recount never raises, with m=",
                     t_.m, ", n=", t_.n),
        CannFaultKind::kNeverEnds);
  }

  // CalcTailBasicBlock: the last round's blocks re-split mTailCnt x
  // nTailCnt ways while the cores hold them.
  void TailSplit() {
    const uint64_t cores = chip_.aic_num;
    const uint64_t blocks = CeilDiv(t_.m, t_.base_m) * CeilDiv(t_.n, t_.base_n);
    const uint64_t tail = blocks <= cores ? 0 : blocks % cores;
    if (tail == 0) return;
    while ((t_.m_tail_cnt + 1) * t_.n_tail_cnt * tail <= cores) {
      t_.m_tail_cnt += 1;
      if (t_.m_tail_cnt * (t_.n_tail_cnt + 1) * tail <= cores) t_.n_tail_cnt += 1;
    }
  }

  // CalAswtL1Tiling (one group): half of L1 (and CANN's 256 RPC bytes) per
  // operand, the smaller block's depth halved when both overrun L1 less the
  // bias table, steps of half a depth with the larger a multiple of the
  // smaller.
  absl::Status OneGroupL1() {
    const uint64_t total = chip_.l1_bytes + kNoQuantRpcL1Bytes;
    const uint64_t bias_table = t_.has_bias ? kNoQuantBiasTableBytes : 0;
    if (t_.base_k == 0) {
      return CannFaultError(
          absl::StrCat("GroupedNoQuantMatmulTiling::CalAswtL1Tiling: L1 / baseM / baseK with baseK "
                       "= min(align16(k)=",
                       CeilAlign(t_.k, kBlockAlign), ", the L0A depth) = 0"));
    }
    t_.depth_a1 = total / 2 / t_.base_m / t_.base_k / XBytes();
    t_.depth_b1 = total / 2 / t_.base_n / t_.base_k / WBytes();
    const uint64_t a_bytes = t_.depth_a1 * t_.base_m * t_.base_k * XBytes();
    const uint64_t b_bytes = t_.depth_b1 * t_.base_n * t_.base_k * WBytes();
    if (a_bytes + b_bytes > total - bias_table) {
      if (t_.base_m <= t_.base_n) {
        t_.depth_a1 = std::max<uint64_t>(t_.depth_a1 / 2, 1);
      } else {
        t_.depth_b1 = std::max<uint64_t>(t_.depth_b1 / 2, 1);
      }
    }
    t_.step_ka = std::max<uint64_t>(t_.depth_a1 / 2, 1);
    t_.step_kb = std::max<uint64_t>(t_.depth_b1 / 2, 1);
    AlignSteps();
    return absl::OkStatus();
  }

  // SetDisableL2Cache: the weight bypasses L2 when the problem's bytes do
  // not fit L2 and the weight's rows (and the block's) start on 128-byte
  // boundaries, or it is NZ; only for the forms that asked for it.
  void L2Cache() {
    const uint64_t bytes = XBytes();
    const uint64_t inner_b = t_.trans_w ? t_.k : t_.n;
    const bool block_aligned = t_.trans_w ? (t_.base_k * t_.step_kb * bytes % kL2Align == 0)
                                          : (t_.base_n * bytes % kL2Align == 0);
    const uint64_t total =
        t_.m * t_.k * bytes + t_.group_num * t_.k * t_.n * bytes + t_.m * t_.n * bytes;
    if (total < chip_.l2_bytes) {
      t_.weight_no_l2_cache = false;
      return;
    }
    t_.weight_no_l2_cache =
        (((inner_b * bytes % kL2Align == 0) && block_aligned) || t_.weight_nz) &&
        t_.weight_no_l2_cache;
  }

  const GroupedInputs& g_;
  const ChipSpec& chip_;
  NoQuantTiling t_;
  uint32_t x_rank_ = 0;
  size_t x_k_dim_ = 0;
  size_t w_n_dim_ = 0;
  int64_t nz_factor_ = 1;
  bool k_zero_ = false;
  uint64_t l1_total_ = 0;
  std::string missing_;
};

}  // namespace

absl::StatusOr<NoQuantTiling> TileNoQuant(const GroupedInputs& grouped, const ChipSpec& chip) {
  return NoQuantTiler(grouped, chip).Run();
}

absl::StatusOr<NoQuantTiling> TileNoQuantWithBlock(const GroupedInputs& grouped,
                                                   const ChipSpec& chip, uint64_t base_m,
                                                   uint64_t base_n) {
  return NoQuantTiler(grouped, chip).RunWithBlock(base_m, base_n);
}

}  // namespace npu::tiling::grouped
