#include "emulator/kernel_schedule.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/tiling/schedule.h"
#include "tests/testing/kernel_schedules.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::emu {
namespace {

using ::npu::testing::Chip950;
using ::npu::testing::IsOk;
using ::npu::testing::Problem;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;
using tiling::CoreKind;
using tiling::DataType;
using tiling::MatmulProblem;
using tiling::Range;
using tiling::Schedule;
using tiling::UnitOp;
using tiling::WorkUnit;

constexpr KernelScheduleKind kAllKinds[] = {
    KernelScheduleKind::kSingleCore,
    KernelScheduleKind::kStaticGrid,
    KernelScheduleKind::kRoundRobinTiles,
    KernelScheduleKind::kIdentitySwizzle,
    KernelScheduleKind::kAswt,
    KernelScheduleKind::kStreamKDp,
    KernelScheduleKind::kSwat,
    KernelScheduleKind::kGroupedRoundRobin,
};

tiling::ChipSpec Chip910b() { return *tiling::FindPlatform("ascend910b1"); }

// The measured rows' problems: fp16 A [m, k], B stored transposed.
MatmulProblem RowProblem(int64_t m, int64_t n, int64_t k, DataType in = DataType::kFloat16,
                         DataType out = DataType::kFloat16, bool trans_b = true) {
  MatmulProblem problem = Problem(m, n, k, in);
  problem.dtype_c = out;
  problem.trans_b = trans_b;
  return problem;
}

// A valid fp16 schedule of `kind` with 128 x 128 x 64 base tiles and
// 128 x 256 x 128 L1 tiles, ping-pong everywhere.
KernelSchedule SmallKernel(KernelScheduleKind kind, uint32_t block_dim) {
  KernelSchedule kernel;
  kernel.kind = kind;
  kernel.block_dim = kind == KernelScheduleKind::kSingleCore ? 1 : block_dim;
  kernel.base_m = 128;
  kernel.base_n = 128;
  kernel.base_k = 64;
  kernel.l1_m = 128;
  kernel.l1_n = 256;
  kernel.l1_k = 128;
  kernel.single_core_m = 300;
  kernel.single_core_n = 500;
  return kernel;
}

// The kernel of the 950PR rows of asc-devkit's matmul_high_performance
// (cases 2-8): 256 x 256 x 64 base tiles, ORDER_M inside each block.
KernelSchedule A1Grid950(uint64_t single_core_m, uint64_t single_core_n, uint64_t l1_k,
                         uint32_t depth, uint32_t l2_split_rounds) {
  KernelSchedule kernel;
  kernel.kind = KernelScheduleKind::kStaticGrid;
  kernel.block_dim = 32;
  kernel.base_m = kernel.base_n = 256;
  kernel.base_k = 64;
  kernel.l1_m = kernel.l1_n = 256;
  kernel.l1_k = l1_k;
  kernel.depth_a1 = kernel.depth_b1 = depth;
  kernel.single_core_m = single_core_m;
  kernel.single_core_n = single_core_n;
  kernel.inner_order = TileOrder::kColMajor;
  kernel.l2_split_rounds = l2_split_rounds;
  return kernel;
}

using ::npu::testing::CatlassAswt;

// cann-samples' bf16 matmul kernels (1024 x 4096 x 2048 and the Stream-K
// sample): 256 x 256 x 64 tiles, K packs of 256.
KernelSchedule SamplesKernel(KernelScheduleKind kind) {
  KernelSchedule kernel;
  kernel.kind = kind;
  kernel.block_dim = 32;
  kernel.base_m = kernel.base_n = 256;
  kernel.base_k = 64;
  kernel.l1_m = kernel.l1_n = 256;
  kernel.l1_k = 256;
  kernel.sk_k_splits = 2;
  return kernel;
}

// The AIC units of each core, in schedule order.
std::map<uint32_t, std::vector<WorkUnit>> AicUnitsByCore(const Schedule& schedule) {
  std::map<uint32_t, std::vector<WorkUnit>> by_core;
  for (const WorkUnit& unit : schedule.units) {
    if (unit.core_kind == CoreKind::kAic) by_core[unit.core].push_back(unit);
  }
  return by_core;
}

size_t CountUnits(const Schedule& schedule, CoreKind kind) {
  size_t count = 0;
  for (const WorkUnit& unit : schedule.units) count += unit.core_kind == kind ? 1 : 0;
  return count;
}

// The invariants every expansion keeps: units in (core kind, core, round)
// order with each core's rounds 0, 1, ...; AIC units no larger than an L1
// tile; the header fields from the kernel; C covered exactly once.
void ExpectWellFormed(const Schedule& schedule, const KernelSchedule& kernel,
                      const MatmulProblem& problem) {
  EXPECT_THAT(tiling::CheckScheduleCoverage(schedule, problem), IsOk());
  EXPECT_EQ(schedule.aic_cores, kernel.block_dim);
  EXPECT_EQ(schedule.base_m, kernel.base_m);
  EXPECT_EQ(schedule.base_n, kernel.base_n);
  EXPECT_EQ(schedule.base_k, kernel.base_k);
  EXPECT_EQ(schedule.k_l1, kernel.l1_k);
  EXPECT_EQ(schedule.model, kernel.kind == KernelScheduleKind::kStreamKDp
                                ? tiling::KernelModel::kStreamK
                                : tiling::KernelModel::kBasic);
  uint32_t longest = 0;
  for (size_t i = 0; i < schedule.units.size(); ++i) {
    const WorkUnit& unit = schedule.units[i];
    if (i > 0) {
      const WorkUnit& prev = schedule.units[i - 1];
      const auto key = [](const WorkUnit& u) { return std::make_pair(u.core_kind, u.core); };
      ASSERT_LE(key(prev), key(unit)) << "unit " << i << " out of core order";
      if (key(prev) == key(unit)) {
        ASSERT_EQ(unit.round, prev.round + 1) << "unit " << i;
      } else {
        ASSERT_EQ(unit.round, 0u) << "unit " << i;
      }
    } else {
      ASSERT_EQ(unit.round, 0u);
    }
    if (unit.core_kind == CoreKind::kAic) {
      EXPECT_EQ(unit.op, UnitOp::kMmad);
      EXPECT_LT(unit.core, kernel.block_dim);
      EXPECT_LE(unit.m.size(), kernel.l1_m);
      EXPECT_LE(unit.n.size(), kernel.l1_n);
      longest = std::max(longest, unit.round + 1);
    }
  }
  EXPECT_EQ(schedule.rounds, longest);
}

// ---------------------------------------------------------------------------
// Names.

TEST(KernelScheduleNamesTest, RoundTripsEveryName) {
  for (KernelScheduleKind kind : kAllKinds) {
    absl::StatusOr<KernelScheduleKind> parsed =
        ParseKernelScheduleKind(KernelScheduleKindName(kind));
    ASSERT_THAT(parsed, IsOk());
    EXPECT_EQ(*parsed, kind);
  }
  EXPECT_EQ(KernelScheduleKindName(KernelScheduleKind::kStreamKDp), "stream_k_dp");
  EXPECT_EQ(KernelScheduleKindName(KernelScheduleKind::kRoundRobinTiles), "round_robin_tiles");
  for (TileOrder order : {TileOrder::kRowMajor, TileOrder::kColMajor}) {
    absl::StatusOr<TileOrder> parsed = ParseTileOrder(TileOrderName(order));
    ASSERT_THAT(parsed, IsOk());
    EXPECT_EQ(*parsed, order);
  }
  EXPECT_EQ(TileOrderName(TileOrder::kColMajor), "col_major");
  for (Epilogue epilogue : {Epilogue::kNone, Epilogue::kReluGm, Epilogue::kReluUb}) {
    absl::StatusOr<Epilogue> parsed = ParseEpilogue(EpilogueName(epilogue));
    ASSERT_THAT(parsed, IsOk());
    EXPECT_EQ(*parsed, epilogue);
  }
  EXPECT_EQ(EpilogueName(Epilogue::kReluUb), "relu_ub");
}

TEST(KernelScheduleNamesTest, UnknownKindNameListsTheAcceptedNames) {
  EXPECT_THAT(ParseKernelScheduleKind("swizzle"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("single_core, static_grid, round_robin_tiles, "
                                 "identity_swizzle, aswt, stream_k_dp")));
  EXPECT_THAT(ParseTileOrder("ORDER_M"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("row_major, col_major")));
  EXPECT_THAT(ParseEpilogue("relu"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("none, relu_gm, relu_ub")));
}

// ---------------------------------------------------------------------------
// Coverage and order invariants over odd shapes.

TEST(ExpandKernelScheduleTest, EveryKindCoversOddShapesOnce) {
  const tiling::ChipSpec chip = Chip950();
  const std::vector<std::vector<int64_t>> shapes = {
      {1000, 777, 333}, {1, 1, 1}, {129, 4097, 64}, {2058, 2038, 256}, {555, 129, 1000}};
  for (const std::vector<int64_t>& shape : shapes) {
    const MatmulProblem problem = Problem(shape[0], shape[1], shape[2]);
    for (KernelScheduleKind kind : kAllKinds) {
      for (uint32_t block_dim : {1u, 3u, 7u, 24u, 32u}) {
        std::vector<KernelSchedule> variants;
        KernelSchedule kernel = SmallKernel(kind, block_dim);
        switch (kind) {
          case KernelScheduleKind::kSingleCore:
          case KernelScheduleKind::kStaticGrid:
            for (uint32_t rounds : {0u, 3u}) {
              for (TileOrder order : {TileOrder::kRowMajor, TileOrder::kColMajor}) {
                kernel.inner_order = order;
                kernel.l2_split_rounds = kind == KernelScheduleKind::kStaticGrid ? rounds : 0;
                variants.push_back(kernel);
              }
            }
            break;
          case KernelScheduleKind::kIdentitySwizzle:
            for (uint32_t offset : {1u, 3u}) {
              for (uint32_t direction : {0u, 1u}) {
                kernel.swizzle_offset = offset;
                kernel.swizzle_direction = direction;
                variants.push_back(kernel);
              }
            }
            break;
          case KernelScheduleKind::kAswt:
            for (uint32_t window : {1u, 4u}) {
              kernel.aswt_window = window;
              variants.push_back(kernel);
            }
            break;
          case KernelScheduleKind::kStreamKDp: {
            // The tail's K slices must fit one round of cores.
            const uint64_t tiles = ((shape[0] + 127) / 128) * ((shape[1] + 255) / 256);
            const uint64_t tail = tiles % kernel.block_dim;
            const uint64_t k_steps = (shape[2] + 63) / 64;
            for (uint32_t splits : {2u, 3u}) {
              kernel.sk_k_splits = splits;
              const bool fits = splits <= kernel.block_dim && splits <= k_steps &&
                                tail * splits <= kernel.block_dim;
              if (fits) {
                variants.push_back(kernel);
              } else {
                EXPECT_THAT(ExpandKernelSchedule(kernel, problem, chip),
                            StatusIs(absl::StatusCode::kInvalidArgument,
                                     HasSubstr("kernel_schedule.sk_k_splits=")));
              }
            }
            break;
          }
          case KernelScheduleKind::kRoundRobinTiles:
            for (TileNumbering numbering : {TileNumbering::kRowMajor, TileNumbering::kColMajor}) {
              kernel.tile_numbering = numbering;
              variants.push_back(kernel);
            }
            break;
          case KernelScheduleKind::kSwat:
            for (uint32_t window : {1u, 4u}) {
              for (const auto& [ms, ns] :
                   {std::pair{1u, 1u}, std::pair{1u, 2u}, std::pair{2u, 2u}}) {
                kernel.aswt_window = window;
                kernel.tail_split_m = ms;
                kernel.tail_split_n = ns;
                variants.push_back(kernel);
              }
            }
            break;
          case KernelScheduleKind::kGroupedRoundRobin: {
            // Three groups (two when m is small), each with its own B.
            const uint64_t m = static_cast<uint64_t>(shape[0]);
            kernel.group_m = m >= 3 ? std::vector<uint64_t>{m / 3, m / 3, m - 2 * (m / 3)}
                                    : std::vector<uint64_t>{m};
            kernel.b_per_group = true;
            for (TileNumbering numbering : {TileNumbering::kRowMajor, TileNumbering::kColMajor}) {
              kernel.tile_numbering = numbering;
              variants.push_back(kernel);
            }
            break;
          }
        }
        for (const KernelSchedule& variant : variants) {
          SCOPED_TRACE(absl::StrCat(std::string(KernelScheduleKindName(kind)), " ", shape[0], "x",
                                    shape[1], "x", shape[2], " block_dim=", variant.block_dim,
                                    " l2_split_rounds=", variant.l2_split_rounds,
                                    " order=", std::string(TileOrderName(variant.inner_order)),
                                    " swizzle=", variant.swizzle_offset, "/",
                                    variant.swizzle_direction, " window=", variant.aswt_window,
                                    " splits=", variant.sk_k_splits));
          absl::StatusOr<Schedule> schedule = ExpandKernelSchedule(variant, problem, chip);
          ASSERT_THAT(schedule, IsOk());
          ExpectWellFormed(*schedule, variant, problem);
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------
// The measured kernels (shared/calibration/ascend_measured.json), by row.

// a1-950-case1: one core walks the 32 x 32 tiles of C down M first.
TEST(ExpandKernelScheduleTest, A1SingleCoreWalksDownMFirst) {
  KernelSchedule kernel = A1Grid950(0, 0, 64, 1, 0);
  kernel.kind = KernelScheduleKind::kSingleCore;
  kernel.block_dim = 1;
  const MatmulProblem problem = RowProblem(8192, 8192, 8192);
  absl::StatusOr<Schedule> schedule = ExpandKernelSchedule(kernel, problem, Chip950());
  ASSERT_THAT(schedule, IsOk());
  ASSERT_EQ(schedule->units.size(), 1024u);
  EXPECT_EQ(schedule->rounds, 1024u);
  for (uint32_t i = 0; i < 1024; ++i) {
    const WorkUnit& unit = schedule->units[i];
    ASSERT_EQ(unit.core, 0u);
    ASSERT_EQ(unit.round, i);
    ASSERT_EQ(unit.m, (Range{(i % 32) * 256, (i % 32) * 256 + 256}));
    ASSERT_EQ(unit.n, (Range{(i / 32) * 256, (i / 32) * 256 + 256}));
    ASSERT_EQ(unit.k, (Range{0, 8192}));
  }
}

// a1-950-case2: "2x16 grid, block b = core, mIdx = b % 2, nIdx = b / 2";
// inside the 4096 x 512 block, ORDER_M.
TEST(ExpandKernelScheduleTest, A1Case2GridGivesBlockBToCoreB) {
  const KernelSchedule kernel = A1Grid950(4096, 512, 64, 1, 0);
  const MatmulProblem problem = RowProblem(8192, 8192, 8192);
  absl::StatusOr<Schedule> schedule = ExpandKernelSchedule(kernel, problem, Chip950());
  ASSERT_THAT(schedule, IsOk());
  ExpectWellFormed(*schedule, kernel, problem);
  EXPECT_EQ(schedule->rounds, 32u);
  const auto by_core = AicUnitsByCore(*schedule);
  ASSERT_EQ(by_core.size(), 32u);
  for (const auto& [core, units] : by_core) {
    ASSERT_EQ(units.size(), 32u) << "core " << core;
    const uint64_t m0 = (core % 2) * 4096, n0 = (core / 2) * 512;
    for (uint32_t r = 0; r < 32; ++r) {
      EXPECT_EQ(units[r].tile_idx, core);
      EXPECT_EQ(units[r].m.begin, m0 + (r % 16) * 256) << "core " << core << " round " << r;
      EXPECT_EQ(units[r].n.begin, n0 + (r / 16) * 256) << "core " << core << " round " << r;
    }
  }
}

// a1-950-case6 (and 7, 8, a2-950-scenario2): "L2 split: 8x8 blocks of
// 1024x1024, 2 rounds; core c does (mIdx = c%4 + 4r, nIdx = c/4) in round
// r, i.e. block b = r*32 + c".
TEST(ExpandKernelScheduleTest, A1Case6L2SplitRunsTwoHalvesOfM) {
  const KernelSchedule kernel = A1Grid950(1024, 1024, 256, 2, 2);
  const MatmulProblem problem = RowProblem(8192, 8192, 8192);
  absl::StatusOr<Schedule> schedule = ExpandKernelSchedule(kernel, problem, Chip950());
  ASSERT_THAT(schedule, IsOk());
  ExpectWellFormed(*schedule, kernel, problem);
  const auto by_core = AicUnitsByCore(*schedule);
  ASSERT_EQ(by_core.size(), 32u);
  for (const auto& [core, units] : by_core) {
    ASSERT_EQ(units.size(), 32u) << "core " << core;
    for (uint32_t r = 0; r < 2; ++r) {
      const uint64_t m_idx = core % 4 + 4 * r, n_idx = core / 4;
      for (uint32_t t = 0; t < 16; ++t) {
        const WorkUnit& unit = units[16 * r + t];
        EXPECT_EQ(unit.tile_idx, r * 32 + core);
        EXPECT_EQ(unit.m.begin, m_idx * 1024 + (t % 4) * 256) << "core " << core << " " << t;
        EXPECT_EQ(unit.n.begin, n_idx * 1024 + (t / 4) * 256) << "core " << core << " " << t;
      }
    }
  }
}

// a1-910b-case2: "2x12 grid, block b = core, mIdx = b % 2, nIdx = b / 2. N
// tail block 679", on the Atlas A2 profile.
TEST(ExpandKernelScheduleTest, A1Case2On910bCutsTheNTailBlock) {
  KernelSchedule kernel = A1Grid950(4096, 683, 64, 1, 0);
  kernel.block_dim = 24;
  kernel.base_m = kernel.l1_m = 128;
  const MatmulProblem problem = RowProblem(8192, 8192, 8192);
  absl::StatusOr<Schedule> schedule = ExpandKernelSchedule(kernel, problem, Chip910b());
  ASSERT_THAT(schedule, IsOk());
  ExpectWellFormed(*schedule, kernel, problem);
  const auto by_core = AicUnitsByCore(*schedule);
  ASSERT_EQ(by_core.size(), 24u);
  const std::vector<WorkUnit>& last = by_core.at(23);  // block (1, 11)
  ASSERT_EQ(last.size(), 32u * 3);
  EXPECT_EQ(last.front().m, (Range{4096, 4224}));
  EXPECT_EQ(last.front().n, (Range{7513, 7769}));
  EXPECT_EQ(last.back().m, (Range{8064, 8192}));
  EXPECT_EQ(last.back().n, (Range{8025, 8192}));
}

// c2-567x488x399: "6 tiles (3x2); 6 tail tiles <= 32/2 -> each split 2x2
// (24 pieces)". Core c takes piece c % 4 of tile c / 4 (the window walk
// visits the three tile rows of each column in turn).
TEST(ExpandKernelScheduleTest, CatlassAswtSplitsSixTilesIntoTwentyFourPieces) {
  const KernelSchedule kernel = CatlassAswt();
  const MatmulProblem problem = RowProblem(567, 488, 399, DataType::kFloat16, DataType::kFloat32);
  absl::StatusOr<Schedule> schedule = ExpandKernelSchedule(kernel, problem, Chip950());
  ASSERT_THAT(schedule, IsOk());
  ExpectWellFormed(*schedule, kernel, problem);
  ASSERT_EQ(schedule->units.size(), 24u);
  EXPECT_EQ(schedule->rounds, 1u);
  // Tile rows of 256, 256 and 55; tile columns of 256 and 232.
  const Range m_pieces[3][2] = {
      {{0, 128}, {128, 256}}, {{256, 384}, {384, 512}}, {{512, 540}, {540, 567}}};
  const Range n_pieces[2][2] = {{{0, 128}, {128, 256}}, {{256, 372}, {372, 488}}};
  for (uint32_t core = 0; core < 24; ++core) {
    const WorkUnit& unit = schedule->units[core];
    ASSERT_EQ(unit.core, core);
    const uint32_t tile = core / 4, piece = core % 4;
    EXPECT_EQ(unit.m, m_pieces[tile % 3][piece % 2]) << "core " << core;
    EXPECT_EQ(unit.n, n_pieces[tile / 3][piece / 2]) << "core " << core;
    EXPECT_EQ(unit.k, (Range{0, 399}));
  }
}

// c2-2058x2038x256: "72 tiles (9x8); 8 tail tiles <= 32/2 -> each split 2x2
// (32 pieces)".
TEST(ExpandKernelScheduleTest, CatlassAswtSplitsTheEightTailTilesTwoByTwo) {
  const KernelSchedule kernel = CatlassAswt();
  const MatmulProblem problem = RowProblem(2058, 2038, 256, DataType::kFloat16, DataType::kFloat32);
  absl::StatusOr<Schedule> schedule = ExpandKernelSchedule(kernel, problem, Chip950());
  ASSERT_THAT(schedule, IsOk());
  ExpectWellFormed(*schedule, kernel, problem);
  EXPECT_EQ(schedule->rounds, 3u);
  std::map<std::pair<uint64_t, uint64_t>, std::vector<WorkUnit>> tail_pieces;
  size_t whole = 0;
  for (const WorkUnit& unit : schedule->units) {
    if (unit.round < 2) {
      ++whole;
      EXPECT_TRUE(unit.m.size() == 256 || unit.m.begin == 2048);
      EXPECT_TRUE(unit.n.size() == 256 || unit.n.begin == 1792);
    } else {
      tail_pieces[{unit.m.begin / 256, unit.n.begin / 256}].push_back(unit);
    }
  }
  EXPECT_EQ(whole, 64u);
  ASSERT_EQ(tail_pieces.size(), 8u);
  for (const auto& [tile, pieces] : tail_pieces) {
    ASSERT_EQ(pieces.size(), 4u) << tile.first << "," << tile.second;
    std::set<uint64_t> m_begins, n_begins;
    for (const WorkUnit& piece : pieces) {
      m_begins.insert(piece.m.begin);
      n_begins.insert(piece.n.begin);
    }
    EXPECT_EQ(m_begins.size(), 2u);
    EXPECT_EQ(n_begins.size(), 2u);
  }
  // The last tile row is 10 high: cores 8..11 take tile (8, 1) in pieces of 5 rows.
  const auto by_core = AicUnitsByCore(*schedule);
  EXPECT_EQ(by_core.at(8).back().m, (Range{2048, 2053}));
  EXPECT_EQ(by_core.at(8).back().n, (Range{256, 384}));
  EXPECT_EQ(by_core.at(11).back().m, (Range{2053, 2058}));
  EXPECT_EQ(by_core.at(11).back().n, (Range{384, 512}));
}

// c2-1226x1557x399: "35 tiles (5x7); 3 tail tiles <= 32/2 -> each split
// 3x3 (27 pieces)"; c2-2048x2048x256: "64 tiles; 32 tail tiles > 32/2 -> no
// split".
TEST(ExpandKernelScheduleTest, CatlassAswtTailSplitFollowsTheCoresLeft) {
  const KernelSchedule kernel = CatlassAswt();
  const MatmulProblem three_tail =
      RowProblem(1226, 1557, 399, DataType::kFloat16, DataType::kFloat32);
  absl::StatusOr<Schedule> schedule = ExpandKernelSchedule(kernel, three_tail, Chip950());
  ASSERT_THAT(schedule, IsOk());
  ExpectWellFormed(*schedule, kernel, three_tail);
  size_t last_round = 0;
  for (const WorkUnit& unit : schedule->units) last_round += unit.round == 1 ? 1 : 0;
  EXPECT_EQ(last_round, 27u);

  const MatmulProblem no_tail = RowProblem(2048, 2048, 256, DataType::kFloat16, DataType::kFloat32);
  schedule = ExpandKernelSchedule(kernel, no_tail, Chip950());
  ASSERT_THAT(schedule, IsOk());
  ExpectWellFormed(*schedule, kernel, no_tail);
  ASSERT_EQ(schedule->units.size(), 64u);
  for (const WorkUnit& unit : schedule->units) {
    EXPECT_EQ(unit.m.size(), 256u);
    EXPECT_EQ(unit.n.size(), 256u);
  }
}

// s3-intro-matmul and its variants: "64 row-major tiles on 32 cores, full K
// each" -> core c runs tiles c and c + 32.
TEST(ExpandKernelScheduleTest, SamplesRoundRobinGivesTwoRowMajorTilesPerCore) {
  const KernelSchedule kernel = SamplesKernel(KernelScheduleKind::kRoundRobinTiles);
  const MatmulProblem problem =
      RowProblem(1024, 4096, 2048, DataType::kBFloat16, DataType::kBFloat16, false);
  absl::StatusOr<Schedule> schedule = ExpandKernelSchedule(kernel, problem, Chip950());
  ASSERT_THAT(schedule, IsOk());
  ExpectWellFormed(*schedule, kernel, problem);
  EXPECT_EQ(schedule->rounds, 2u);
  const auto by_core = AicUnitsByCore(*schedule);
  ASSERT_EQ(by_core.size(), 32u);
  for (const auto& [core, units] : by_core) {
    ASSERT_EQ(units.size(), 2u);
    for (uint32_t r = 0; r < 2; ++r) {
      const uint64_t tile = core + 32 * r;
      EXPECT_EQ(units[r].tile_idx, static_cast<int64_t>(tile));
      EXPECT_EQ(units[r].m.begin, (tile / 16) * 256);
      EXPECT_EQ(units[r].n.begin, (tile % 16) * 256);
      EXPECT_EQ(units[r].k, (Range{0, 2048}));
    }
  }
}

// s3-streamk: "16 tiles <= 32/2 -> 2 K-splits of 1024: no DP rounds, 32
// units, one per core (tile u/2, half u%2)", then the AIV cores add the
// partials.
TEST(ExpandKernelScheduleTest, SamplesStreamKSplitsSixteenTilesOverThirtyTwoCores) {
  const KernelSchedule kernel = SamplesKernel(KernelScheduleKind::kStreamKDp);
  const MatmulProblem problem =
      RowProblem(1024, 1024, 2048, DataType::kBFloat16, DataType::kBFloat16, false);
  absl::StatusOr<Schedule> schedule = ExpandKernelSchedule(kernel, problem, Chip950());
  ASSERT_THAT(schedule, IsOk());
  ExpectWellFormed(*schedule, kernel, problem);
  EXPECT_EQ(schedule->aiv_cores, 64u);
  EXPECT_EQ(schedule->rounds, 1u);
  EXPECT_TRUE(schedule->idle_aic_cores.empty());
  ASSERT_EQ(CountUnits(*schedule, CoreKind::kAic), 32u);
  ASSERT_EQ(schedule->reductions.size(), 16u);
  for (uint32_t u = 0; u < 32; ++u) {
    const WorkUnit& unit = schedule->units[u];
    ASSERT_EQ(unit.core, u);
    const uint64_t tile = u / 2;
    EXPECT_EQ(unit.m.begin, (tile / 4) * 256) << "unit " << u;
    EXPECT_EQ(unit.n.begin, (tile % 4) * 256) << "unit " << u;
    EXPECT_EQ(unit.k, (Range{(u % 2) * 1024, (u % 2) * 1024 + 1024})) << "unit " << u;
    EXPECT_TRUE(unit.writes_partial);
    EXPECT_EQ(unit.k_slice, u % 2);
    EXPECT_EQ(unit.workspace_slot, u);
    EXPECT_EQ(unit.reduction, static_cast<int32_t>(tile));
    EXPECT_TRUE(unit.signals_aiv);
  }
  for (uint32_t t = 0; t < 16; ++t) {
    EXPECT_EQ(schedule->reductions[t].slots, (std::vector<uint32_t>{2 * t, 2 * t + 1}));
    EXPECT_EQ(schedule->reductions[t].workspace_row_stride, 256u);
  }
  // Four AIV cores per tile, 64 rows each.
  ASSERT_EQ(CountUnits(*schedule, CoreKind::kAiv), 64u);
  for (const WorkUnit& unit : schedule->units) {
    if (unit.core_kind != CoreKind::kAiv) continue;
    EXPECT_EQ(unit.op, UnitOp::kReduce);
    EXPECT_EQ(unit.reduction, static_cast<int32_t>(unit.core / 4));
    EXPECT_EQ(unit.m.size(), 64u);
  }
}

// With data-parallel rounds, the tail's K slices run one round early and
// the last whole tiles one round late (the DP+SK preload); the slices are
// whole base_k steps, as even as possible.
TEST(ExpandKernelScheduleTest, StreamKPreloadsTheSlicesBeforeTheLastWholeTiles) {
  KernelSchedule kernel = SamplesKernel(KernelScheduleKind::kStreamKDp);
  kernel.block_dim = 8;
  // 5 x 4 = 20 tiles on 8 cores: 16 whole tiles in two rounds, then the 4
  // tail tiles of row 4 in 2 slices each; K = 700 has 11 steps of 64: 6 + 5.
  const MatmulProblem problem = Problem(1200, 1024, 700, DataType::kBFloat16);
  absl::StatusOr<Schedule> schedule = ExpandKernelSchedule(kernel, problem, Chip950());
  ASSERT_THAT(schedule, IsOk());
  ExpectWellFormed(*schedule, kernel, problem);
  EXPECT_EQ(schedule->rounds, 3u);
  const Range slices[2] = {{0, 384}, {384, 700}};
  const auto by_core = AicUnitsByCore(*schedule);
  ASSERT_EQ(by_core.size(), 8u);
  for (const auto& [core, units] : by_core) {
    // Scheduler tiles core, core + 8 (whole) and 16 + core (a slice): the
    // slice swaps places with the second whole tile.
    ASSERT_EQ(units.size(), 3u) << "core " << core;
    EXPECT_EQ(units[0].tile_idx, core);
    EXPECT_FALSE(units[0].writes_partial);
    EXPECT_FALSE(units[0].signals_aiv);
    EXPECT_EQ(units[1].tile_idx, 16 + core);
    EXPECT_TRUE(units[1].writes_partial);
    EXPECT_TRUE(units[1].signals_aiv);
    EXPECT_EQ(units[1].m, (Range{1024, 1200}));
    EXPECT_EQ(units[1].n.begin, (core / 2) * 256);
    EXPECT_EQ(units[1].k, slices[core % 2]);
    EXPECT_EQ(units[2].tile_idx, 8 + core);
    EXPECT_FALSE(units[2].writes_partial);
    EXPECT_FALSE(units[2].signals_aiv);
    EXPECT_EQ(units[2].k, (Range{0, 700}));
  }
}

// catlass GemmIdentityBlockSwizzle on a 5 x 3 tile grid with SwizzleOffset 2:
// bands of two tile rows (the last one row), every other band walked
// backwards; SwizzleDirection 1 is the same on the transposed grid.
TEST(ExpandKernelScheduleTest, IdentitySwizzleWalksBandsSerpentine) {
  KernelSchedule kernel = SmallKernel(KernelScheduleKind::kIdentitySwizzle, 1);
  kernel.l1_n = 128;
  kernel.swizzle_offset = 2;
  const MatmulProblem problem = Problem(5 * 128, 3 * 128, 64);
  const std::vector<std::pair<uint64_t, uint64_t>> along_m = {
      {0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 2}, {2, 2}, {3, 2},
      {2, 1}, {3, 1}, {2, 0}, {3, 0}, {4, 0}, {4, 1}, {4, 2}};
  absl::StatusOr<Schedule> schedule = ExpandKernelSchedule(kernel, problem, Chip950());
  ASSERT_THAT(schedule, IsOk());
  ASSERT_EQ(schedule->units.size(), along_m.size());
  for (size_t i = 0; i < along_m.size(); ++i) {
    EXPECT_EQ(schedule->units[i].m.begin, along_m[i].first * 128) << "tile " << i;
    EXPECT_EQ(schedule->units[i].n.begin, along_m[i].second * 128) << "tile " << i;
  }

  kernel.swizzle_direction = 1;
  const MatmulProblem transposed = Problem(3 * 128, 5 * 128, 64);
  schedule = ExpandKernelSchedule(kernel, transposed, Chip950());
  ASSERT_THAT(schedule, IsOk());
  ASSERT_EQ(schedule->units.size(), along_m.size());
  for (size_t i = 0; i < along_m.size(); ++i) {
    EXPECT_EQ(schedule->units[i].m.begin, along_m[i].second * 128) << "tile " << i;
    EXPECT_EQ(schedule->units[i].n.begin, along_m[i].first * 128) << "tile " << i;
  }

  // On 4 cores the swizzled tiles are dealt round-robin: core 1 runs 1, 5, 9, 13.
  kernel.swizzle_direction = 0;
  kernel.block_dim = 4;
  schedule = ExpandKernelSchedule(kernel, problem, Chip950());
  ASSERT_THAT(schedule, IsOk());
  const std::vector<WorkUnit> core1 = AicUnitsByCore(*schedule).at(1);
  ASSERT_EQ(core1.size(), 4u);
  for (size_t r = 0; r < 4; ++r) {
    const size_t i = 1 + 4 * r;
    EXPECT_EQ(core1[r].tile_idx, static_cast<int64_t>(i));
    EXPECT_EQ(core1[r].m.begin, along_m[i].first * 128);
    EXPECT_EQ(core1[r].n.begin, along_m[i].second * 128);
  }
}

// Every 950 row's kernel passes the checks for its problem.
TEST(ValidateKernelScheduleTest, AcceptsTheMeasured950Kernels) {
  const tiling::ChipSpec chip = Chip950();
  const MatmulProblem a1 = RowProblem(8192, 8192, 8192);
  KernelSchedule single = A1Grid950(0, 0, 64, 1, 0);
  single.kind = KernelScheduleKind::kSingleCore;
  single.block_dim = 1;
  EXPECT_THAT(ValidateKernelSchedule(single, a1, chip), IsOk());
  EXPECT_THAT(ValidateKernelSchedule(A1Grid950(4096, 512, 64, 1, 0), a1, chip), IsOk());
  EXPECT_THAT(ValidateKernelSchedule(A1Grid950(2048, 1024, 256, 2, 0), a1, chip), IsOk());
  EXPECT_THAT(ValidateKernelSchedule(A1Grid950(1024, 1024, 256, 2, 2), a1, chip), IsOk());
  for (const auto& [m, n] : std::vector<std::pair<int64_t, int64_t>>{
           {567, 488}, {1226, 1557}, {2058, 2038}, {2048, 2048}, {2058, 2048}, {2048, 2038}}) {
    EXPECT_THAT(ValidateKernelSchedule(CatlassAswt(),
                                       RowProblem(m, n, m == 567 || m == 1226 ? 399 : 256,
                                                  DataType::kFloat16, DataType::kFloat32),
                                       chip),
                IsOk());
  }
  const MatmulProblem s3 =
      RowProblem(1024, 4096, 2048, DataType::kBFloat16, DataType::kBFloat16, false);
  KernelSchedule intro = SamplesKernel(KernelScheduleKind::kRoundRobinTiles);
  intro.base_k = 128;
  intro.l1_k = 512;
  intro.depth_a1 = intro.depth_b1 = 1;
  intro.l0_double_buffer = false;
  EXPECT_THAT(ValidateKernelSchedule(intro, s3, chip), IsOk());
  KernelSchedule weight_nz = SamplesKernel(KernelScheduleKind::kRoundRobinTiles);
  weight_nz.b_format = tiling::Format::kFractalNz;
  MatmulProblem s3_nz = s3;
  s3_nz.format_b = tiling::Format::kFractalNz;
  EXPECT_THAT(ValidateKernelSchedule(weight_nz, s3_nz, chip), IsOk());
}

// ---------------------------------------------------------------------------
// Malformed schedules: one rule each.

// A valid kernel for a 1000 x 777 x 333 fp16 problem, changed by `edit`.
template <typename Edit>
absl::Status ValidateEdited(Edit edit, KernelScheduleKind kind = KernelScheduleKind::kStaticGrid,
                            const tiling::ChipSpec& chip = Chip950()) {
  KernelSchedule kernel = SmallKernel(kind, 8);
  MatmulProblem problem = Problem(1000, 777, 333);
  EXPECT_THAT(ValidateKernelSchedule(kernel, problem, chip), IsOk());
  edit(kernel, problem);
  return ValidateKernelSchedule(kernel, problem, chip);
}

auto InvalidField(const std::string& text) {
  return StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(text));
}

TEST(ValidateKernelScheduleTest, RejectsBlockDimZero) {
  EXPECT_THAT(ValidateEdited([](KernelSchedule& k, MatmulProblem&) { k.block_dim = 0; }),
              InvalidField("kernel_schedule.block_dim=0 must be in 1..32"));
}

TEST(ValidateKernelScheduleTest, RejectsBlockDimAboveTheChipsCores) {
  EXPECT_THAT(ValidateEdited([](KernelSchedule& k, MatmulProblem&) { k.block_dim = 33; }),
              InvalidField("kernel_schedule.block_dim=33 must be in 1..32"));
  EXPECT_THAT(ValidateEdited([](KernelSchedule& k, MatmulProblem&) { k.block_dim = 25; },
                             KernelScheduleKind::kStaticGrid, Chip910b()),
              InvalidField("kernel_schedule.block_dim=25 must be in 1..24"));
}

TEST(ValidateKernelScheduleTest, RejectsSingleCoreOnTwoCores) {
  EXPECT_THAT(ValidateEdited([](KernelSchedule& k, MatmulProblem&) { k.block_dim = 2; },
                             KernelScheduleKind::kSingleCore),
              InvalidField("kernel_schedule.block_dim=2 must be 1 for kind=single_core"));
}

TEST(ValidateKernelScheduleTest, RejectsBaseMNotAMultipleOf16) {
  EXPECT_THAT(ValidateEdited([](KernelSchedule& k, MatmulProblem&) { k.base_m = 120; }),
              InvalidField("kernel_schedule.base_m=120 must be a positive multiple of 16"));
}

TEST(ValidateKernelScheduleTest, RejectsMisalignedBaseK) {
  EXPECT_THAT(ValidateEdited([](KernelSchedule& k, MatmulProblem&) { k.base_k = 24; }),
              InvalidField("kernel_schedule.base_k=24 must be a positive multiple of 16"));
  // fp32 A: 8 elements make 32 bytes.
  EXPECT_THAT(ValidateEdited([](KernelSchedule& k, MatmulProblem& p) {
                k.base_k = 12;
                k.l1_k = 24;
                p.dtype_a = p.dtype_b = DataType::kFloat32;
              }),
              InvalidField("kernel_schedule.base_k=12 must be a positive multiple of 8"));
}

TEST(ValidateKernelScheduleTest, RejectsL1KNotAMultipleOfBaseK) {
  EXPECT_THAT(ValidateEdited([](KernelSchedule& k, MatmulProblem&) { k.l1_k = 96; }),
              InvalidField("kernel_schedule.l1_k=96 must be a positive multiple of base_k=64"));
}

TEST(ValidateKernelScheduleTest, RejectsL1MNotAMultipleOfBaseM) {
  EXPECT_THAT(ValidateEdited([](KernelSchedule& k, MatmulProblem&) { k.l1_m = 192; }),
              InvalidField("kernel_schedule.l1_m=192 must be a positive multiple of base_m=128"));
}

TEST(ValidateKernelScheduleTest, RejectsDepthThree) {
  EXPECT_THAT(ValidateEdited([](KernelSchedule& k, MatmulProblem&) { k.depth_a1 = 3; }),
              InvalidField("kernel_schedule.depth_a1=3 must be 1 or 2"));
  EXPECT_THAT(ValidateEdited([](KernelSchedule& k, MatmulProblem&) { k.depth_b1 = 0; }),
              InvalidField("kernel_schedule.depth_b1=0 must be 1 or 2"));
}

TEST(ValidateKernelScheduleTest, RejectsL1Overflow) {
  // 2 x 128 x 1024 x 2 + 2 x 1024 x 256 x 2 = 1.5 MiB.
  EXPECT_THAT(ValidateEdited([](KernelSchedule& k, MatmulProblem&) { k.l1_k = 1024; }),
              InvalidField("kernel_schedule.l1_k=1024 must fit L1: needs 1572864 bytes"));
}

TEST(ValidateKernelScheduleTest, RejectsL0AOverflow) {
  EXPECT_THAT(ValidateEdited([](KernelSchedule& k, MatmulProblem&) {
                k.base_k = 256;
                k.l1_k = 256;
              }),
              InvalidField("kernel_schedule.base_k=256 must fit L0A: needs 131072 bytes"));
}

TEST(ValidateKernelScheduleTest, RejectsL0COverflow) {
  // 2 x 256 x 256 fp32 = 512 KiB of the 950's 256 KiB.
  EXPECT_THAT(ValidateEdited([](KernelSchedule& k, MatmulProblem&) {
                k.base_m = k.base_n = k.l1_m = k.l1_n = 256;
                k.base_k = k.l1_k = 32;
                k.l0c_double_buffer = true;
              }),
              InvalidField("kernel_schedule.base_n=256 must fit L0C: needs 524288 bytes"));
}

TEST(ValidateKernelScheduleTest, RejectsBiasTableOverflow) {
  EXPECT_THAT(ValidateEdited(
                  [](KernelSchedule& k, MatmulProblem& p) {
                    k.base_m = k.l1_m = 16;
                    k.base_n = k.l1_n = 512;
                    k.base_k = k.l1_k = 16;
                    p.has_bias = true;
                  },
                  KernelScheduleKind::kStaticGrid, Chip910b()),
              InvalidField("kernel_schedule.base_n=512 must fit the bias table: needs 2048 bytes"));
}

TEST(ValidateKernelScheduleTest, RejectsReluUbOverflow) {
  // A 128 x 256 fp32 half tile needs 128 KiB of UB; this chip has 64 KiB.
  tiling::ChipSpec small_ub = Chip950();
  small_ub.ub_bytes = 64 * 1024;
  EXPECT_THAT(ValidateEdited(
                  [](KernelSchedule& k, MatmulProblem&) {
                    k.base_m = k.base_n = k.l1_m = k.l1_n = 256;
                    k.base_k = k.l1_k = 32;
                    k.epilogue = Epilogue::kReluUb;
                  },
                  KernelScheduleKind::kStaticGrid, small_ub),
              InvalidField("kernel_schedule.base_m=256 must fit UB: needs 131072 bytes"));
}

TEST(ValidateKernelScheduleTest, RejectsReluUbWithStreamK) {
  EXPECT_THAT(
      ValidateEdited([](KernelSchedule& k, MatmulProblem&) { k.epilogue = Epilogue::kReluUb; },
                     KernelScheduleKind::kStreamKDp),
      InvalidField("kernel_schedule.epilogue=relu_ub must not be used with kind "
                   "stream_k_dp"));
}

TEST(ValidateKernelScheduleTest, RejectsStaticGridWithoutBlock) {
  EXPECT_THAT(ValidateEdited([](KernelSchedule& k, MatmulProblem&) { k.single_core_n = 0; }),
              InvalidField("kernel_schedule.single_core_n=0 must be positive"));
}

TEST(ValidateKernelScheduleTest, RejectsL2SplitOutsideStaticGrid) {
  EXPECT_THAT(ValidateEdited([](KernelSchedule& k, MatmulProblem&) { k.l2_split_rounds = 2; },
                             KernelScheduleKind::kRoundRobinTiles),
              InvalidField("kernel_schedule.l2_split_rounds=2 must be 0 or 1"));
  EXPECT_THAT(ValidateEdited([](KernelSchedule& k, MatmulProblem&) { k.l2_split_rounds = 65; }),
              InvalidField("kernel_schedule.l2_split_rounds=65 must be at most 64"));
}

TEST(ValidateKernelScheduleTest, RejectsSwizzleDirectionTwo) {
  EXPECT_THAT(ValidateEdited([](KernelSchedule& k, MatmulProblem&) { k.swizzle_direction = 2; },
                             KernelScheduleKind::kIdentitySwizzle),
              InvalidField("kernel_schedule.swizzle_direction=2 must be 0"));
  EXPECT_THAT(ValidateEdited([](KernelSchedule& k, MatmulProblem&) { k.swizzle_offset = 0; },
                             KernelScheduleKind::kIdentitySwizzle),
              InvalidField("kernel_schedule.swizzle_offset=0 must be at least 1"));
}

TEST(ValidateKernelScheduleTest, RejectsAswtWindowZero) {
  EXPECT_THAT(ValidateEdited([](KernelSchedule& k, MatmulProblem&) { k.aswt_window = 0; },
                             KernelScheduleKind::kAswt),
              InvalidField("kernel_schedule.aswt_window=0 must be at least 1"));
}

TEST(ValidateKernelScheduleTest, RejectsSkKSplitsOne) {
  EXPECT_THAT(ValidateEdited([](KernelSchedule& k, MatmulProblem&) { k.sk_k_splits = 1; },
                             KernelScheduleKind::kStreamKDp),
              InvalidField("kernel_schedule.sk_k_splits=1 must be in 2..block_dim=8"));
}

TEST(ValidateKernelScheduleTest, RejectsSkKSplitsWithoutABaseKStepEach) {
  // K = 100 has two base_k=64 steps.
  EXPECT_THAT(ValidateEdited(
                  [](KernelSchedule& k, MatmulProblem& p) {
                    k.sk_k_splits = 3;
                    p.k = 100;
                  },
                  KernelScheduleKind::kStreamKDp),
              InvalidField("kernel_schedule.sk_k_splits=3 must be at most the 2 base_k=64 steps"));
}

TEST(ValidateKernelScheduleTest, RejectsSkKSplitsBeyondOneRoundOfCores) {
  // 8 x 4 = 32 tiles on 12 cores: 8 tail tiles, 2 slices each is 16 > 12.
  EXPECT_THAT(ValidateEdited([](KernelSchedule& k, MatmulProblem&) { k.block_dim = 12; },
                             KernelScheduleKind::kStreamKDp),
              InvalidField("kernel_schedule.sk_k_splits=2 must be at most block_dim / tail "
                           "tiles = 12 / 8"));
}

TEST(ValidateKernelScheduleTest, RejectsStreamKTilesBeyondAWorkspaceSlot) {
  EXPECT_THAT(ValidateEdited([](KernelSchedule& k, MatmulProblem&) { k.l1_m = 512; },
                             KernelScheduleKind::kStreamKDp),
              InvalidField("kernel_schedule.l1_n=256 must be such that l1_m x l1_n"));
}

TEST(ValidateKernelScheduleTest, RejectsProblemFeaturesTheReplayDoesNotModel) {
  EXPECT_THAT(ValidateEdited([](KernelSchedule&, MatmulProblem& p) { p.k = 0; }),
              InvalidField("problem.k=0 is not supported"));
  EXPECT_THAT(ValidateEdited([](KernelSchedule&, MatmulProblem& p) { p.a_slice.enabled = true; }),
              InvalidField("problem.a_slice"));
  EXPECT_THAT(ValidateEdited([](KernelSchedule&, MatmulProblem& p) {
                p.format_a = tiling::Format::kFractalNz;
              }),
              InvalidField("problem.format_a=FRACTAL_NZ is not supported"));
  EXPECT_THAT(ValidateEdited([](KernelSchedule&, MatmulProblem& p) {
                p.format_c = tiling::Format::kFractalNz;
              }),
              InvalidField("problem.format_c=FRACTAL_NZ is not supported"));
  EXPECT_THAT(ValidateEdited([](KernelSchedule&, MatmulProblem& p) {
                p.format_b = tiling::Format::kFractalNz;
              }),
              InvalidField("kernel_schedule.b_format=ND must match problem.format_b=FRACTAL_NZ"));
}

// ---------------------------------------------------------------------------
// Schema /2: SWAT, grouped and more-blocks-than-cores schedules, MX scales,
// mix kernels.

// The MXFP4 tutorial's SWAT kernel (demo 3) on 4096 x 6912: 16 x 27 = 432
// tiles, 16 in the last round, each cut 1 x 2 so all 32 cores take a piece.
TEST(ExpandKernelScheduleTest, SwatCutsTheLastRoundAsTheTailSplitSays) {
  KernelSchedule kernel = SamplesKernel(KernelScheduleKind::kSwat);
  kernel.base_k = kernel.l1_k = 256;
  kernel.tail_split_m = 1;
  kernel.tail_split_n = 2;
  const MatmulProblem problem = npu::testing::MxFp4Problem(4096, 6912, 2048);
  absl::StatusOr<Schedule> schedule = ExpandKernelSchedule(kernel, problem, Chip950());
  ASSERT_THAT(schedule, IsOk());
  ExpectWellFormed(*schedule, kernel, problem);
  const auto by_core = AicUnitsByCore(*schedule);
  ASSERT_EQ(by_core.size(), 32u);
  for (const auto& [core, units] : by_core) {
    ASSERT_EQ(units.size(), 14u) << "core " << core;
    EXPECT_EQ(units.back().n.size(), 128u) << "core " << core;
    EXPECT_EQ(units.back().m.size(), 256u) << "core " << core;
  }
  // Round 0: tile t at m = t % 4, n = t / 4 (the first window, m fastest).
  EXPECT_EQ(by_core.at(5)[0].m, (Range{256, 512}));
  EXPECT_EQ(by_core.at(5)[0].n, (Range{256, 512}));
  // A split that does not fit the round's cores is not made.
  kernel.tail_split_n = 3;
  schedule = ExpandKernelSchedule(kernel, problem, Chip950());
  ASSERT_THAT(schedule, IsOk());
  EXPECT_EQ(AicUnitsByCore(*schedule).at(0).back().n.size(), 256u);
}

// The grouped int8 kernel: 8 groups x 32 blocks of 256 x 1024 on 32 cores,
// core c taking block c of every group, its 4 tiles along N in a row.
TEST(ExpandKernelScheduleTest, GroupedRoundRobinDealsEveryGroupsBlocks) {
  const KernelSchedule kernel = npu::testing::GroupedW8A8Kernel();
  const MatmulProblem problem = npu::testing::W8A8Problem(8192, 8192, 1024);
  absl::StatusOr<Schedule> schedule = ExpandKernelSchedule(kernel, problem, Chip950());
  ASSERT_THAT(schedule, IsOk());
  ExpectWellFormed(*schedule, kernel, problem);
  const std::vector<WorkUnit> core9 = AicUnitsByCore(*schedule).at(9);
  ASSERT_EQ(core9.size(), 32u);
  for (uint32_t group = 0; group < 8; ++group) {
    for (uint32_t t = 0; t < 4; ++t) {
      const WorkUnit& unit = core9[group * 4 + t];
      // Block 9 of a group: row band 9 / 8 = 1, column block 9 % 8 = 1.
      EXPECT_EQ(unit.m, (Range{group * 1024 + 256, group * 1024 + 512}));
      EXPECT_EQ(unit.n, (Range{1024 + t * 256, 1024 + t * 256 + 256}));
      EXPECT_EQ(unit.batch, group);
    }
  }
  // Unequal groups: one group's remainder carries into the next.
  KernelSchedule uneven = kernel;
  uneven.block_dim = 3;
  uneven.group_m = {512, 768};
  const MatmulProblem small = npu::testing::W8A8Problem(1280, 2048, 1024);
  schedule = ExpandKernelSchedule(uneven, small, Chip950());
  ASSERT_THAT(schedule, IsOk());
  ExpectWellFormed(*schedule, uneven, small);
  // Group 0 has 2 x 2 blocks, group 1 3 x 2: block 4 (group 1's first) on core 1.
  EXPECT_EQ(AicUnitsByCore(*schedule).at(1)[4].m, (Range{512, 768}));
}

// The C-API kernel launching 64 blocks on 32 cores: block b on core b % 32,
// one 128 x 128 tile each, tiles numbered down M first.
TEST(ExpandKernelScheduleTest, RoundRobinRunsBlocksBeyondTheCoresOnFreeCores) {
  KernelSchedule kernel = SmallKernel(KernelScheduleKind::kRoundRobinTiles, 64);
  kernel.l1_n = 128;
  kernel.tile_numbering = TileNumbering::kColMajor;
  const MatmulProblem problem = RowProblem(1024, 1024, 1024);
  absl::StatusOr<Schedule> schedule = ExpandKernelSchedule(kernel, problem, Chip950());
  ASSERT_THAT(schedule, IsOk());
  EXPECT_THAT(tiling::CheckScheduleCoverage(*schedule, problem), IsOk());
  EXPECT_EQ(schedule->aic_cores, 32u);
  const std::vector<WorkUnit> core3 = AicUnitsByCore(*schedule).at(3);
  ASSERT_EQ(core3.size(), 2u);
  EXPECT_EQ(core3[0].tile_idx, 3);
  EXPECT_EQ(core3[1].tile_idx, 35);
  EXPECT_EQ(core3[1].m, (Range{3 * 128, 4 * 128}));  // 35 % 8
  EXPECT_EQ(core3[1].n, (Range{4 * 128, 5 * 128}));  // 35 / 8
}

TEST(ValidateKernelScheduleTest, AcceptsTheMeasuredQuantKernels) {
  EXPECT_THAT(ValidateKernelSchedule(npu::testing::MxBasicApiKernel(),
                                     npu::testing::MxFp4Problem(8192, 8192, 8192), Chip950()),
              IsOk());
  EXPECT_THAT(ValidateKernelSchedule(npu::testing::GroupedW8A8Kernel(),
                                     npu::testing::W8A8Problem(8192, 8192, 1024), Chip950()),
              IsOk());
}

TEST(ValidateKernelScheduleTest, CountsFp4AndMxScalesInTheBuffers) {
  KernelSchedule kernel = npu::testing::MxBasicApiKernel();
  const MatmulProblem problem = npu::testing::MxFp4Problem(8192, 8192, 8192);
  // base_k 32 is 16 bytes of fp4 and below the MX MMAD's 64.
  kernel.base_k = 32;
  kernel.l1_k = 512;
  EXPECT_THAT(ValidateKernelSchedule(kernel, problem, Chip950()),
              InvalidField("kernel_schedule.base_k=32 must be a positive multiple of 64"));
  // 2 x 256 x 512 fp4 per operand and 2 x 2 x 256 x 64 scale bytes fit
  // 512 KiB; A and B stages of 2048 K with 8192-K scales do not.
  kernel = npu::testing::MxBasicApiKernel();
  kernel.l1_k = 2048;
  kernel.scale_l1_k = 8192;
  EXPECT_THAT(ValidateKernelSchedule(kernel, problem, Chip950()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("MX scales")));
  kernel = npu::testing::MxBasicApiKernel();
  EXPECT_THAT(ValidateKernelSchedule(kernel, RowProblem(8192, 8192, 8192), Chip950()),
              InvalidField("kernel_schedule.scale_l1_k=2048 must be 0 for a problem without MX"));
}

TEST(ValidateKernelScheduleTest, RejectsSchemaTwoFieldsOutsideTheirKinds) {
  KernelSchedule kernel = SmallKernel(KernelScheduleKind::kRoundRobinTiles, 8);
  kernel.tail_split_n = 2;
  EXPECT_THAT(ValidateKernelSchedule(kernel, Problem(1000, 777, 333), Chip950()),
              InvalidField("kernel_schedule.tail_split is for kind=swat only"));
  kernel = SmallKernel(KernelScheduleKind::kStaticGrid, 8);
  kernel.tile_numbering = TileNumbering::kColMajor;
  EXPECT_THAT(ValidateKernelSchedule(kernel, Problem(1000, 777, 333), Chip950()),
              InvalidField("kernel_schedule.tile_numbering=col_major is for round_robin_tiles"));
  kernel = SmallKernel(KernelScheduleKind::kStaticGrid, 33);
  EXPECT_THAT(ValidateKernelSchedule(kernel, Problem(1000, 777, 333), Chip950()),
              InvalidField("kernel_schedule.block_dim=33 must be in 1..32"));
  KernelSchedule grouped = npu::testing::GroupedW8A8Kernel();
  grouped.group_m.back() = 1000;
  EXPECT_THAT(
      ValidateKernelSchedule(grouped, npu::testing::W8A8Problem(8192, 8192, 1024), Chip950()),
      InvalidField("kernel_schedule.group_m: the groups' rows sum to 8168"));
  grouped = npu::testing::GroupedW8A8Kernel();
  grouped.aiv_per_aic = 0;
  EXPECT_THAT(
      ValidateKernelSchedule(grouped, npu::testing::W8A8Problem(8192, 8192, 1024), Chip950()),
      InvalidField("kernel_schedule.epilogue=dequant_gelu_aiv runs on the AIV"));
  grouped = npu::testing::GroupedW8A8Kernel();
  EXPECT_THAT(ValidateKernelSchedule(
                  grouped, RowProblem(8192, 8192, 1024, DataType::kInt8, DataType::kFloat16, false),
                  Chip950()),
              InvalidField("must be a QuantBatchMatmulV3 one"));
  grouped = npu::testing::GroupedW8A8Kernel(1, 1);
  grouped.aiv_split = AivSplit::kAlternate;
  EXPECT_THAT(
      ValidateKernelSchedule(grouped, npu::testing::W8A8Problem(8192, 8192, 1024), Chip950()),
      InvalidField("aiv_split=alternate needs two AIVs per AIC"));
  kernel = SmallKernel(KernelScheduleKind::kRoundRobinTiles, 8);
  kernel.l1_offsets.a = {0, 600 * 1024};
  EXPECT_THAT(ValidateKernelSchedule(kernel, Problem(1000, 777, 333), Chip950()),
              InvalidField("kernel_schedule.l1_offsets.a=614400 must be inside L1"));
}

TEST(ValidateKernelScheduleTest, ExpandRefusesWhatValidateRefuses) {
  KernelSchedule kernel = SmallKernel(KernelScheduleKind::kRoundRobinTiles, 0);
  EXPECT_THAT(ExpandKernelSchedule(kernel, Problem(1000, 777, 333), Chip950()),
              InvalidField("kernel_schedule.block_dim=0"));
}

}  // namespace
}  // namespace npu::emu
