// The tiling-data structs CANN's mat_mul_v3 kernels read, defined once.
//
// Each struct is an enum of its fields (the typed accessor: `BasicField::kBaseM`
// indexes the field everywhere) and a table of their CANN names and widths in
// struct order. Everything that lays out or reads tiling data derives from
// these tables: the strategies' serializers (`NewTilingData()` then `Set()`),
// the schedule expansion and the advisor (`Get()` / `Set()`), the explicit-
// tiling reader of the service (`TilingStructOf()`), and through the
// answer's field list the CLI's word layout. Each struct belongs to one
// kernel family (KernelId), which kernel_table.h describes. Part of `npu_tiling_types`: plain
// data, no protobuf.
#ifndef NPU_SERVER_TILING_TILING_DATA_H_
#define NPU_SERVER_TILING_TILING_DATA_H_

#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "server/tiling/types.h"

namespace npu::tiling {

// One field of a tiling-data struct as the kernel reads it.
struct TilingFieldSpec {
  std::string_view name;
  // 32, or 8 / 16 for members packed into a word (first member in the low
  // bits), as in MatMulV3BasicTilingData and QuantBatchMatmulV3's structs.
  int bits = 32;
};

// MatMulV3BasicTilingData: every cube model (BASIC, STREAM_K, SLICE and the
// split-K variants).
enum class BasicField : uint8_t {
  kUsedCoreNum,
  kM,
  kN,
  kK,
  kML1,
  kNL1,
  kKL1,
  kBaseM,
  kBaseN,
  kBaseK,
  kSkSingleCoreK,
  kMTailCnt,
  kNTailCnt,
  kMBaseTailSplitCnt,
  kNBaseTailSplitCnt,
  kMTailMain,
  kNTailMain,
  kMmadParam,
  kL1BufferNum,
  kL0cDb,
  kUbDb,
  kL2CacheDisable,
  kSliceM,
  kSrcNdStride,
  kRowStride,
  kInnerBatch,
};
inline constexpr TilingFieldSpec kBasicFields[] = {
    {"usedCoreNum"},
    {"m"},
    {"n"},
    {"k"},
    {"mL1"},
    {"nL1"},
    {"kL1"},
    {"baseM"},
    {"baseN"},
    {"baseK"},
    {"skSingleCoreK"},
    {"mTailCnt"},
    {"nTailCnt"},
    {"mBaseTailSplitCnt"},
    {"nBaseTailSplitCnt"},
    {"mTailMain"},
    {"nTailMain"},
    {"mmadParam", 8},  // the four bytes of word 17, first field lowest
    {"l1BufferNum", 8},
    {"l0cDB", 8},
    {"ubDB", 8},
    {"l2CacheDisable"},
    {"sliceM"},
    {"srcNdStride"},
    {"rowStride"},
    {"innerBatch"},
};

// MatMulV3KEqZeroBasicTilingData: K_EQUAL_ZERO.
enum class KEqZeroField : uint8_t { kTotalDataAmount, kAivNum };
inline constexpr TilingFieldSpec kKEqZeroFields[] = {{"totalDataAmount"}, {"aivNum"}};

// MatMulToMulBasicTilingData: TO_MUL.
enum class ToMulField : uint8_t {
  kUsedCoreNum,
  kTileNum,
  kM,
  kN,
  kK,
  kBaseMN,
  kTailMN,
  kBaseK,
  kTailK,
  kLoopK,
  kDataCopyMode,
};
inline constexpr TilingFieldSpec kToMulFields[] = {
    {"usedCoreNum"},  {"tileNum"}, {"m"},     {"n"},     {"k"},
    {"baseMN"},       {"tailMN"},  {"baseK"}, {"tailK"}, {"loopK"},
    {"dataCopyMode"},
};

// MatMulToVectorBasicTilingData: TO_MULTI_MUL.
enum class ToVectorField : uint8_t { kUsedCoreNum, kM, kN, kK, kBaseM, kBaseN, kBaseK };
inline constexpr TilingFieldSpec kToVectorFields[] = {
    {"usedCoreNum"}, {"m"}, {"n"}, {"k"}, {"baseM"}, {"baseN"}, {"baseK"},
};

// BatchMatMulV3BasicTilingData: BatchMatMulV3's (and FusedMatMul's batched)
// ASW basic, full-load and Stream-K kernels. MatMulV3BasicTilingData's fields
// in the same order (so the BasicField value of a shared field indexes it
// too), then the batch count of C and of FusedMatMul's x3.
enum class BatchBasicField : uint8_t {
  kUsedCoreNum,
  kM,
  kN,
  kK,
  kML1,
  kNL1,
  kKL1,
  kBaseM,
  kBaseN,
  kBaseK,
  kSkSingleCoreK,
  kMTailCnt,
  kNTailCnt,
  kMBaseTailSplitCnt,
  kNBaseTailSplitCnt,
  kMTailMain,
  kNTailMain,
  kMmadParam,
  kL1BufferNum,
  kL0cDb,
  kUbDb,
  kL2CacheDisable,
  kSliceM,
  kSrcNdStride,
  kRowStride,
  kInnerBatch,
  kBatchDimAll,
  kBatchX3,
};
inline constexpr TilingFieldSpec kBatchBasicFields[] = {
    {"usedCoreNum"},
    {"m"},
    {"n"},
    {"k"},
    {"mL1"},
    {"nL1"},
    {"kL1"},
    {"baseM"},
    {"baseN"},
    {"baseK"},
    {"skSingleCoreK"},
    {"mTailCnt"},
    {"nTailCnt"},
    {"mBaseTailSplitCnt"},
    {"nBaseTailSplitCnt"},
    {"mTailMain"},
    {"nTailMain"},
    {"mmadParam", 8},
    {"l1BufferNum", 8},
    {"l0cDB", 8},
    {"ubDB", 8},
    {"l2CacheDisable"},
    {"sliceM"},
    {"srcNdStride"},
    {"rowStride"},
    {"innerBatch"},
    {"batchDimAll"},
    {"batchX3"},
};

// BatchMatMulV3IterBatchBasicTilingData: ITER_BATCH_BASICAPI (several
// batches per L1 / L0 load).
enum class IterBatchField : uint8_t {
  kM,
  kN,
  kK,
  kB,
  kIterBatchL1,
  kIterBatchL0,
  kMmadParam,
  kBaseM,
  kBaseN,
  kBaseK,
  kInnerBatch,
  kBatchX3,
  kNeedNdDma,
  kL2CacheDisable,
};
inline constexpr TilingFieldSpec kIterBatchFields[] = {
    {"m"},           {"n"},
    {"k"},           {"b"},
    {"iterBatchL1"}, {"iterBatchL0"},
    {"mmadParam"},   {"baseM"},
    {"baseN"},       {"baseK"},
    {"innerBatch"},  {"batchX3"},
    {"needNdDma"},   {"l2CacheDisable"},
};

// BatchMatMulV3MergeBatchBasicTilingData: MERGE_BATCH_BASICAPI (several small
// batches side by side in one L0 block).
enum class MergeBatchField : uint8_t {
  kM,
  kN,
  kK,
  kB,
  kBatchAL1,
  kBatchBL1,
  kBatchL0,
  kKL1,
  kBaseK,
  kMmadParam,
  kL2CacheDisable,
  kBatchX3,
};
inline constexpr TilingFieldSpec kMergeBatchFields[] = {
    {"m"},       {"n"},   {"k"},     {"b"},         {"batchAL1"},       {"batchBL1"},
    {"batchL0"}, {"kL1"}, {"baseK"}, {"mmadParam"}, {"l2CacheDisable"}, {"batchX3"},
};

// BatchMatMulToMulBasicTilingData: BATCH_MATMUL_TO_MUL (k = 1 batches on the
// vector cores).
enum class BatchToMulField : uint8_t {
  kM,
  kN,
  kB,
  kUsedCoreNum,
  kSingleCoreBatch,
  kBatchNum,
  kBatchNumLastRound,
  kBatchNumLastRoundTail,
  kLastCoreNum,
  kAlignNum,
};
inline constexpr TilingFieldSpec kBatchToMulFields[] = {
    {"m"},
    {"n"},
    {"b"},
    {"usedCoreNum"},
    {"singleCoreBatch"},
    {"batchNum"},
    {"batchNumLastRound"},
    {"batchNumLastRoundTail"},
    {"lastCoreNum"},
    {"alignNum"},
};

// BatchMatMulV3TilingData: BatchMatMulV3's high-level-API kernels
// (ITER_BATCH_BROADCAST_BASICAPI, ITER_BATCH, BASE; mat_mul_tiling_data.h).
// The high-level API's TCubeTiling (asc-devkit matmul_tilingdata.h order,
// words 0-49), MatMulV3TilingData's ten words (50-59), then the batch dims
// and the batch plan. The struct nests MatMulV3TilingData, so two fields are
// called mmadParam; the nested one carries its path
// ("matMulTilingData.mmadParam") to keep names unique.
enum class HighLevelBatchField : uint8_t {
  kUsedCoreNum,
  kM,
  kN,
  kKa,
  kKb,
  kSingleCoreM,
  kSingleCoreN,
  kSingleCoreK,
  kBaseM,
  kBaseN,
  kBaseK,
  kDepthA1,
  kDepthB1,
  kStepM,
  kStepN,
  kIsBias,
  kTransLength,
  kIterateOrder,
  kShareMode,
  kShareL1Size,
  kShareL0cSize,
  kShareUbSize,
  kBatchM,
  kBatchN,
  kSingleBatchM,
  kSingleBatchN,
  kStepKa,
  kStepKb,
  kDepthAl1CacheUb,
  kDepthBl1CacheUb,
  kDbL0a,
  kDbL0b,
  kDbL0c,
  kALayoutB,
  kALayoutS,
  kALayoutN,
  kALayoutG,
  kALayoutD,
  kBLayoutB,
  kBLayoutS,
  kBLayoutN,
  kBLayoutG,
  kBLayoutD,
  kCLayoutB,
  kCLayoutS1,
  kCLayoutN,
  kCLayoutG,
  kCLayoutS2,
  kBatchNum,
  kMxTypePara,
  kMTailCnt,
  kNTailCnt,
  kKTailCnt,
  kMBaseTailSplitCnt,
  kNBaseTailSplitCnt,
  kMTailMain,
  kNTailMain,
  kMatmulMmadParam,
  kAswWindowLen,
  kL2CacheDisable,
  kABatchDimAll,
  kBBatchDimAll,
  kCBatchDimAll,
  kBiasBatchDimAll,
  kABatchDim0,
  kBBatchDim0,
  kCBatchDim0,
  kABatchDim1,
  kBBatchDim1,
  kCBatchDim1,
  kABatchDim2,
  kBBatchDim2,
  kCBatchDim2,
  kABatchDim3,
  kBBatchDim3,
  kCBatchDim3,
  kIterBatch,
  kBatchOutNum,
  kBatchSplitFactor,
  kML1,
  kNL1,
  kKL1,
  kMmadParam,
  kL1BufferNum,
  kUbDb,
  kL0cDb,
  kSliceM,
  kSrcNdStride,
  kInnerBatch,
  kIterBatchL1,
  kIterBatchL0,
  kBroadcastAxisA,
  kBroadcastAxisB,
};
inline constexpr TilingFieldSpec kHighLevelBatchFields[] = {
    {"usedCoreNum"},
    {"M"},
    {"N"},
    {"Ka"},
    {"Kb"},
    {"singleCoreM"},
    {"singleCoreN"},
    {"singleCoreK"},
    {"baseM"},
    {"baseN"},
    {"baseK"},
    {"depthA1"},
    {"depthB1"},
    {"stepM"},
    {"stepN"},
    {"isBias"},
    {"transLength"},
    {"iterateOrder"},
    {"shareMode"},
    {"shareL1Size"},
    {"shareL0CSize"},
    {"shareUbSize"},
    {"batchM"},
    {"batchN"},
    {"singleBatchM"},
    {"singleBatchN"},
    {"stepKa"},
    {"stepKb"},
    {"depthAL1CacheUB"},
    {"depthBL1CacheUB"},
    {"dbL0A"},
    {"dbL0B"},
    {"dbL0C"},
    {"ALayoutInfoB"},
    {"ALayoutInfoS"},
    {"ALayoutInfoN"},
    {"ALayoutInfoG"},
    {"ALayoutInfoD"},
    {"BLayoutInfoB"},
    {"BLayoutInfoS"},
    {"BLayoutInfoN"},
    {"BLayoutInfoG"},
    {"BLayoutInfoD"},
    {"CLayoutInfoB"},
    {"CLayoutInfoS1"},
    {"CLayoutInfoN"},
    {"CLayoutInfoG"},
    {"CLayoutInfoS2"},
    {"BatchNum"},
    {"mxTypePara"},
    {"mTailCnt"},
    {"nTailCnt"},
    {"kTailCnt"},
    {"mBaseTailSplitCnt"},
    {"nBaseTailSplitCnt"},
    {"mTailMain"},
    {"nTailMain"},
    {"matMulTilingData.mmadParam"},
    {"aswWindowLen"},
    {"l2CacheDisable"},
    {"aBatchDimAll"},
    {"bBatchDimAll"},
    {"cBatchDimAll"},
    {"biasBatchDimAll"},
    {"aBatchDim0"},
    {"bBatchDim0"},
    {"cBatchDim0"},
    {"aBatchDim1"},
    {"bBatchDim1"},
    {"cBatchDim1"},
    {"aBatchDim2"},
    {"bBatchDim2"},
    {"cBatchDim2"},
    {"aBatchDim3"},
    {"bBatchDim3"},
    {"cBatchDim3"},
    {"iterBatch"},
    {"batchOutNum"},
    {"batchSplitFactor"},
    {"mL1"},
    {"nL1"},
    {"kL1"},
    {"mmadParam", 8},
    {"l1BufferNum", 8},
    {"ubDB", 8},
    {"l0cDB", 8},
    {"sliceM"},
    {"srcNdStride"},
    {"innerBatch"},
    {"iterBatchL1"},
    {"iterBatchL0"},
    {"broadcastAxisA"},
    {"broadcastAxisB"},
};

// QuantBatchMatmulV3's four structs
// (matmul/quant_batch_matmul_v3/op_kernel/arch35/quant_batch_matmul_v3_tiling_data.h),
// named as CANN's members are, with their sub-struct: the strategies fill
// them as CANN's words (quant/quant_facts.h, QuantPlan) and
// TilingDataFromWords() names them. QuantBatchMatmulV3BasicAPITilingData
// (38 words): the basic-API kernels with batch, per-block and MX without the
// Tensor API.
inline constexpr TilingFieldSpec kQuantBasicFields[] = {
    {"params.batchA"},
    {"params.batchB"},
    {"params.batchC"},
    {"params.batchA1"},
    {"params.batchA2"},
    {"params.batchA3"},
    {"params.batchA4"},
    {"params.batchB1"},
    {"params.batchB2"},
    {"params.batchB3"},
    {"params.batchB4"},
    {"params.batchC1"},
    {"params.batchC2"},
    {"params.batchC3"},
    {"params.batchC4"},
    {"params.x1QuantMode"},
    {"params.x2QuantMode"},
    {"params.biasThreeDim"},
    {"params.biasDtype"},
    {"params.groupSizeM"},
    {"params.groupSizeN"},
    {"params.groupSizeK"},
    {"matmulTiling.m"},
    {"matmulTiling.n"},
    {"matmulTiling.k"},
    {"matmulTiling.baseM"},
    {"matmulTiling.baseN"},
    {"matmulTiling.baseK"},
    {"matmulTiling.kAL1"},
    {"matmulTiling.kBL1"},
    {"matmulTiling.scaleKL1"},
    {"matmulTiling.nBufferNum", 8},
    {"matmulTiling.isBias", 8},
    {"matmulTiling.dbL0C", 8},
    {"matmulTiling.weightMustHitL2", 8},
    {"adaptiveSlidingWin.mTailTile"},
    {"adaptiveSlidingWin.nTailTile"},
    {"adaptiveSlidingWin.mBaseTailSplitCnt"},
    {"adaptiveSlidingWin.nBaseTailSplitCnt"},
    {"adaptiveSlidingWin.mTailMain"},
    {"adaptiveSlidingWin.nTailMain"},
};

// QuantBatchMatmulV3StreamKBasicAPITilingData (42 words): MX_STREAMK.
inline constexpr TilingFieldSpec kQuantStreamKFields[] = {
    {"params.batchA"},
    {"params.batchB"},
    {"params.batchC"},
    {"params.batchA1"},
    {"params.batchA2"},
    {"params.batchA3"},
    {"params.batchA4"},
    {"params.batchB1"},
    {"params.batchB2"},
    {"params.batchB3"},
    {"params.batchB4"},
    {"params.batchC1"},
    {"params.batchC2"},
    {"params.batchC3"},
    {"params.batchC4"},
    {"params.x1QuantMode"},
    {"params.x2QuantMode"},
    {"params.biasThreeDim"},
    {"params.biasDtype"},
    {"params.groupSizeM"},
    {"params.groupSizeN"},
    {"params.groupSizeK"},
    {"matmulTiling.m"},
    {"matmulTiling.n"},
    {"matmulTiling.k"},
    {"matmulTiling.baseM"},
    {"matmulTiling.baseN"},
    {"matmulTiling.baseK"},
    {"matmulTiling.kAL1"},
    {"matmulTiling.kBL1"},
    {"matmulTiling.scaleKL1"},
    {"matmulTiling.nBufferNum", 8},
    {"matmulTiling.isBias", 8},
    {"matmulTiling.dbL0C", 8},
    {"matmulTiling.weightMustHitL2", 8},
    {"streamKTiling.singleCoreK"},
    {"streamKTiling.kL1"},
    {"streamKTiling.reserved0"},
    {"streamKTiling.reserved1"},
    {"adaptiveSlidingWin.mTailTile"},
    {"adaptiveSlidingWin.nTailTile"},
    {"adaptiveSlidingWin.mBaseTailSplitCnt"},
    {"adaptiveSlidingWin.nBaseTailSplitCnt"},
    {"adaptiveSlidingWin.mTailMain"},
    {"adaptiveSlidingWin.nTailMain"},
};

// QuantBatchMatmulV3TensorAPIWithoutBatchTilingData (16 words): the Tensor
// API kernels of one batch (MX and mix basic), 16-bit and 8-bit members
// packed.
inline constexpr TilingFieldSpec kQuantWithoutBatchFields[] = {
    {"m"},
    {"n"},
    {"k"},
    {"kAL1"},
    {"kBL1"},
    {"scaleKL1"},
    {"baseM", 16},
    {"baseN", 16},
    {"baseK", 16},
    {"groupSizeM", 16},
    {"groupSizeN", 16},
    {"groupSizeK", 16},
    {"mTailTile", 16},
    {"nTailTile", 16},
    {"mBaseTailSplitCnt", 16},
    {"nBaseTailSplitCnt", 16},
    {"mTailMain", 16},
    {"nTailMain", 16},
    {"x1QuantMode", 8},
    {"x2QuantMode", 8},
    {"isBias", 8},
    {"biasDtype", 8},
    {"nBufferNum", 8},
    {"dbL0C", 8},
    {"weightMustHitL2", 8},
    {"reserved0", 8},
    {"reserved1"},
    {"reserved2"},
};

// QuantBatchMatmulV3TilingDataParams (96 words): the high-level API kernels
// (MIX_ASW, CUBE_ASW), with CANN's TCubeTiling in the middle.
inline constexpr TilingFieldSpec kQuantHighLevelFields[] = {
    {"params.batchA"},
    {"params.batchB"},
    {"params.batchC"},
    {"params.batchA1"},
    {"params.batchA2"},
    {"params.batchA3"},
    {"params.batchA4"},
    {"params.batchB1"},
    {"params.batchB2"},
    {"params.batchB3"},
    {"params.batchB4"},
    {"params.batchC1"},
    {"params.batchC2"},
    {"params.batchC3"},
    {"params.batchC4"},
    {"params.singleCoreBatch"},
    {"params.isPerTensor"},
    {"params.isPertoken"},
    {"params.isDoubleScale"},
    {"params.biasThreeDim"},
    {"params.ubCalcM"},
    {"params.ubCalcN"},
    {"params.needUbBuffer"},
    {"params.realSingleCoreM"},
    {"params.realSingleCoreN"},
    {"params.biasDtype"},
    {"params.ubSize"},
    {"params.isMClash"},
    {"params.isNClash"},
    {"params.groupSizeM"},
    {"params.groupSizeN"},
    {"params.groupSizeK"},
    {"params.l2CacheDisable"},
    {"params.reserved"},
    {"matmulTiling.usedCoreNum"},
    {"matmulTiling.M"},
    {"matmulTiling.N"},
    {"matmulTiling.Ka"},
    {"matmulTiling.Kb"},
    {"matmulTiling.singleCoreM"},
    {"matmulTiling.singleCoreN"},
    {"matmulTiling.singleCoreK"},
    {"matmulTiling.baseM"},
    {"matmulTiling.baseN"},
    {"matmulTiling.baseK"},
    {"matmulTiling.depthA1"},
    {"matmulTiling.depthB1"},
    {"matmulTiling.stepM"},
    {"matmulTiling.stepN"},
    {"matmulTiling.isBias"},
    {"matmulTiling.transLength"},
    {"matmulTiling.iterateOrder"},
    {"matmulTiling.shareMode"},
    {"matmulTiling.shareL1Size"},
    {"matmulTiling.shareL0CSize"},
    {"matmulTiling.shareUbSize"},
    {"matmulTiling.batchM"},
    {"matmulTiling.batchN"},
    {"matmulTiling.singleBatchM"},
    {"matmulTiling.singleBatchN"},
    {"matmulTiling.stepKa"},
    {"matmulTiling.stepKb"},
    {"matmulTiling.depthAL1CacheUB"},
    {"matmulTiling.depthBL1CacheUB"},
    {"matmulTiling.dbL0A"},
    {"matmulTiling.dbL0B"},
    {"matmulTiling.dbL0C"},
    {"matmulTiling.ALayoutInfoB"},
    {"matmulTiling.ALayoutInfoS"},
    {"matmulTiling.ALayoutInfoN"},
    {"matmulTiling.ALayoutInfoG"},
    {"matmulTiling.ALayoutInfoD"},
    {"matmulTiling.BLayoutInfoB"},
    {"matmulTiling.BLayoutInfoS"},
    {"matmulTiling.BLayoutInfoN"},
    {"matmulTiling.BLayoutInfoG"},
    {"matmulTiling.BLayoutInfoD"},
    {"matmulTiling.CLayoutInfoB"},
    {"matmulTiling.CLayoutInfoS1"},
    {"matmulTiling.CLayoutInfoN"},
    {"matmulTiling.CLayoutInfoG"},
    {"matmulTiling.CLayoutInfoS2"},
    {"matmulTiling.BatchNum"},
    {"matmulTiling.mxTypePara"},
    {"tileL2cacheTiling.mTileCntL2"},
    {"tileL2cacheTiling.nTileCntL2"},
    {"tileL2cacheTiling.mTileBlock"},
    {"tileL2cacheTiling.nTileBlock"},
    {"tileL2cacheTiling.calOrder"},
    {"tileL2cacheTiling.isBasicTiling"},
    {"adaptiveSlidingWin.mTailTile"},
    {"adaptiveSlidingWin.nTailTile"},
    {"adaptiveSlidingWin.mBaseTailSplitCnt"},
    {"adaptiveSlidingWin.nBaseTailSplitCnt"},
    {"adaptiveSlidingWin.mTailMain"},
    {"adaptiveSlidingWin.nTailMain"},
};

// WeightQuantBatchMatmulV2's three structs on DAV_3510
// (matmul/weight_quant_batch_matmul_v2/op_kernel/arch35/
// weight_quant_batch_matmul_v2_arch35_tiling_data.h and, for the backward-
// compatible custom kernel, op_kernel/weight_quant_batch_matmul_v2_tiling_data.h),
// member by member with CANN's names; the uint64 members are 64-bit fields
// (two words, low first). Each ends or holds the high-level API's
// TCubeTiling as `matmulTiling.<member>`. The strategies fill them through
// the field enums (server/tiling/weight_quant/).
//
// WeightQuantBatchMatmulV2ASTilingDataParams (70 words): ADAPTIVE_SPLIT.
enum class WqAsField : uint8_t {
  kCubeNumBlocksM,
  kCubeNumBlocksN,
  kHasBias,
  kFirstTailBlockCount,
  kSecondTailBlockCount,
  kWeightL2Cacheable,
  kMainBlockL1Size,
  kFirstTailBlockL1Size,
  kSecondTailBlockL1Size,
  kAPreloadSize,
  kGroupSize,
  kMainBlockCount,
  kMSize,
  kKSize,
  kNSize,
  kMatmulTilingUsedCoreNum,
  kMatmulTilingM,
  kMatmulTilingN,
  kMatmulTilingKa,
  kMatmulTilingKb,
  kMatmulTilingSingleCoreM,
  kMatmulTilingSingleCoreN,
  kMatmulTilingSingleCoreK,
  kMatmulTilingBaseM,
  kMatmulTilingBaseN,
  kMatmulTilingBaseK,
  kMatmulTilingDepthA1,
  kMatmulTilingDepthB1,
  kMatmulTilingStepM,
  kMatmulTilingStepN,
  kMatmulTilingIsBias,
  kMatmulTilingTransLength,
  kMatmulTilingIterateOrder,
  kMatmulTilingShareMode,
  kMatmulTilingShareL1Size,
  kMatmulTilingShareL0CSize,
  kMatmulTilingShareUbSize,
  kMatmulTilingBatchM,
  kMatmulTilingBatchN,
  kMatmulTilingSingleBatchM,
  kMatmulTilingSingleBatchN,
  kMatmulTilingStepKa,
  kMatmulTilingStepKb,
  kMatmulTilingDepthAL1CacheUB,
  kMatmulTilingDepthBL1CacheUB,
  kMatmulTilingDbL0A,
  kMatmulTilingDbL0B,
  kMatmulTilingDbL0C,
  kMatmulTilingALayoutInfoB,
  kMatmulTilingALayoutInfoS,
  kMatmulTilingALayoutInfoN,
  kMatmulTilingALayoutInfoG,
  kMatmulTilingALayoutInfoD,
  kMatmulTilingBLayoutInfoB,
  kMatmulTilingBLayoutInfoS,
  kMatmulTilingBLayoutInfoN,
  kMatmulTilingBLayoutInfoG,
  kMatmulTilingBLayoutInfoD,
  kMatmulTilingCLayoutInfoB,
  kMatmulTilingCLayoutInfoS1,
  kMatmulTilingCLayoutInfoN,
  kMatmulTilingCLayoutInfoG,
  kMatmulTilingCLayoutInfoS2,
  kMatmulTilingBatchNum,
  kMatmulTilingMxTypePara,
};
inline constexpr TilingFieldSpec kWqAsFields[] = {
    {"cubeNumBlocksM"},
    {"cubeNumBlocksN"},
    {"hasBias"},
    {"firstTailBlockCount"},
    {"secondTailBlockCount"},
    {"weightL2Cacheable"},
    {"mainBlockL1Size"},
    {"firstTailBlockL1Size"},
    {"secondTailBlockL1Size"},
    {"aPreloadSize"},
    {"groupSize", 64},
    {"mainBlockCount", 64},
    {"mSize", 64},
    {"kSize", 64},
    {"nSize", 64},
    {"matmulTiling.usedCoreNum"},
    {"matmulTiling.M"},
    {"matmulTiling.N"},
    {"matmulTiling.Ka"},
    {"matmulTiling.Kb"},
    {"matmulTiling.singleCoreM"},
    {"matmulTiling.singleCoreN"},
    {"matmulTiling.singleCoreK"},
    {"matmulTiling.baseM"},
    {"matmulTiling.baseN"},
    {"matmulTiling.baseK"},
    {"matmulTiling.depthA1"},
    {"matmulTiling.depthB1"},
    {"matmulTiling.stepM"},
    {"matmulTiling.stepN"},
    {"matmulTiling.isBias"},
    {"matmulTiling.transLength"},
    {"matmulTiling.iterateOrder"},
    {"matmulTiling.shareMode"},
    {"matmulTiling.shareL1Size"},
    {"matmulTiling.shareL0CSize"},
    {"matmulTiling.shareUbSize"},
    {"matmulTiling.batchM"},
    {"matmulTiling.batchN"},
    {"matmulTiling.singleBatchM"},
    {"matmulTiling.singleBatchN"},
    {"matmulTiling.stepKa"},
    {"matmulTiling.stepKb"},
    {"matmulTiling.depthAL1CacheUB"},
    {"matmulTiling.depthBL1CacheUB"},
    {"matmulTiling.dbL0A"},
    {"matmulTiling.dbL0B"},
    {"matmulTiling.dbL0C"},
    {"matmulTiling.ALayoutInfoB"},
    {"matmulTiling.ALayoutInfoS"},
    {"matmulTiling.ALayoutInfoN"},
    {"matmulTiling.ALayoutInfoG"},
    {"matmulTiling.ALayoutInfoD"},
    {"matmulTiling.BLayoutInfoB"},
    {"matmulTiling.BLayoutInfoS"},
    {"matmulTiling.BLayoutInfoN"},
    {"matmulTiling.BLayoutInfoG"},
    {"matmulTiling.BLayoutInfoD"},
    {"matmulTiling.CLayoutInfoB"},
    {"matmulTiling.CLayoutInfoS1"},
    {"matmulTiling.CLayoutInfoN"},
    {"matmulTiling.CLayoutInfoG"},
    {"matmulTiling.CLayoutInfoS2"},
    {"matmulTiling.BatchNum"},
    {"matmulTiling.mxTypePara"},
};

// WeightQuantBatchMatmulV2RegBaseTilingDataParams (64 words): ANTI_REG.
enum class WqRegBaseField : uint8_t {
  kCubeNumBlocksN,
  kCubeNumBlocksM,
  kVecCoreParallel,
  kReserve1,
  kAL1Pingpong,
  kBL1Pingpong,
  kKSize,
  kNSize,
  kGroupSize,
  kMSize,
  kNBubSize,
  kKBubSize,
  kMatmulTilingUsedCoreNum,
  kMatmulTilingM,
  kMatmulTilingN,
  kMatmulTilingKa,
  kMatmulTilingKb,
  kMatmulTilingSingleCoreM,
  kMatmulTilingSingleCoreN,
  kMatmulTilingSingleCoreK,
  kMatmulTilingBaseM,
  kMatmulTilingBaseN,
  kMatmulTilingBaseK,
  kMatmulTilingDepthA1,
  kMatmulTilingDepthB1,
  kMatmulTilingStepM,
  kMatmulTilingStepN,
  kMatmulTilingIsBias,
  kMatmulTilingTransLength,
  kMatmulTilingIterateOrder,
  kMatmulTilingShareMode,
  kMatmulTilingShareL1Size,
  kMatmulTilingShareL0CSize,
  kMatmulTilingShareUbSize,
  kMatmulTilingBatchM,
  kMatmulTilingBatchN,
  kMatmulTilingSingleBatchM,
  kMatmulTilingSingleBatchN,
  kMatmulTilingStepKa,
  kMatmulTilingStepKb,
  kMatmulTilingDepthAL1CacheUB,
  kMatmulTilingDepthBL1CacheUB,
  kMatmulTilingDbL0A,
  kMatmulTilingDbL0B,
  kMatmulTilingDbL0C,
  kMatmulTilingALayoutInfoB,
  kMatmulTilingALayoutInfoS,
  kMatmulTilingALayoutInfoN,
  kMatmulTilingALayoutInfoG,
  kMatmulTilingALayoutInfoD,
  kMatmulTilingBLayoutInfoB,
  kMatmulTilingBLayoutInfoS,
  kMatmulTilingBLayoutInfoN,
  kMatmulTilingBLayoutInfoG,
  kMatmulTilingBLayoutInfoD,
  kMatmulTilingCLayoutInfoB,
  kMatmulTilingCLayoutInfoS1,
  kMatmulTilingCLayoutInfoN,
  kMatmulTilingCLayoutInfoG,
  kMatmulTilingCLayoutInfoS2,
  kMatmulTilingBatchNum,
  kMatmulTilingMxTypePara,
};
inline constexpr TilingFieldSpec kWqRegBaseFields[] = {
    {"cubeNumBlocksN", 8},
    {"cubeNumBlocksM", 8},
    {"vecCoreParallel", 8},
    {"reserve1", 8},
    {"AL1Pingpong", 16},
    {"BL1Pingpong", 16},
    {"kSize", 64},
    {"nSize", 64},
    {"groupSize", 64},
    {"mSize", 64},
    {"nBubSize", 64},
    {"kBubSize", 64},
    {"matmulTiling.usedCoreNum"},
    {"matmulTiling.M"},
    {"matmulTiling.N"},
    {"matmulTiling.Ka"},
    {"matmulTiling.Kb"},
    {"matmulTiling.singleCoreM"},
    {"matmulTiling.singleCoreN"},
    {"matmulTiling.singleCoreK"},
    {"matmulTiling.baseM"},
    {"matmulTiling.baseN"},
    {"matmulTiling.baseK"},
    {"matmulTiling.depthA1"},
    {"matmulTiling.depthB1"},
    {"matmulTiling.stepM"},
    {"matmulTiling.stepN"},
    {"matmulTiling.isBias"},
    {"matmulTiling.transLength"},
    {"matmulTiling.iterateOrder"},
    {"matmulTiling.shareMode"},
    {"matmulTiling.shareL1Size"},
    {"matmulTiling.shareL0CSize"},
    {"matmulTiling.shareUbSize"},
    {"matmulTiling.batchM"},
    {"matmulTiling.batchN"},
    {"matmulTiling.singleBatchM"},
    {"matmulTiling.singleBatchN"},
    {"matmulTiling.stepKa"},
    {"matmulTiling.stepKb"},
    {"matmulTiling.depthAL1CacheUB"},
    {"matmulTiling.depthBL1CacheUB"},
    {"matmulTiling.dbL0A"},
    {"matmulTiling.dbL0B"},
    {"matmulTiling.dbL0C"},
    {"matmulTiling.ALayoutInfoB"},
    {"matmulTiling.ALayoutInfoS"},
    {"matmulTiling.ALayoutInfoN"},
    {"matmulTiling.ALayoutInfoG"},
    {"matmulTiling.ALayoutInfoD"},
    {"matmulTiling.BLayoutInfoB"},
    {"matmulTiling.BLayoutInfoS"},
    {"matmulTiling.BLayoutInfoN"},
    {"matmulTiling.BLayoutInfoG"},
    {"matmulTiling.BLayoutInfoD"},
    {"matmulTiling.CLayoutInfoB"},
    {"matmulTiling.CLayoutInfoS1"},
    {"matmulTiling.CLayoutInfoN"},
    {"matmulTiling.CLayoutInfoG"},
    {"matmulTiling.CLayoutInfoS2"},
    {"matmulTiling.BatchNum"},
    {"matmulTiling.mxTypePara"},
};

// WeightQuantBatchMatmulV2TilingData (120 words): CUSTOM_DEPRECATED (the
// 910B custom kernel's struct, kept by DAV_3510's backward-compatible one).
enum class WqCustomField : uint8_t {
  kVecBlockDimN,
  kVecBlockDimK,
  kCubeBlockDimN,
  kCubeBlockDimM,
  kCubeBlockDimK,
  kKPadSize,
  kNPadSize,
  kHaveBatchA,
  kHaveBatchB,
  kReserve1,
  kReserve2,
  kReserve3,
  kVecSingleKGroupNum,
  kVecSingleKTailGroupNum,
  kAL1Pingpong,
  kBL1Pingpong,
  kVecSingleK,
  kVecSingleN,
  kVec2SingleM,
  kVecSingleKTail,
  kVecSingleNTail,
  kWInQueueSize,
  kOffsetInQueueSize,
  kScaleInQueueSize,
  kWOutQueueSize,
  kAntiQuantTmpBufferSize,
  kVecCubeNRatio,
  kVecCubeTailNRatio,
  kVecCubeKRatio,
  kVecCubeTailKRatio,
  kCubeTailM,
  kCubeTailN,
  kCubeSingleNLoop,
  kCubeSingleNTailLoop,
  kRepeatAxisMax,
  kVecSingleKLoop,
  kVecSingleNLoop,
  kVecSingleKTailLoop,
  kVecSingleNTailLoop,
  kVec2SingleMLoop,
  kKAlign,
  kNAlign,
  kKSize,
  kNSize,
  kGroupSize,
  kMSize,
  kBlockBatch,
  kShapeBatch,
  kMAubSize,
  kKAubSize,
  kNBubSize,
  kKBubSize,
  kMCubSize,
  kNCubSize,
  kMAL1Size,
  kKAL1Size,
  kNBL1Size,
  kKBL1Size,
  kMatmulTilingUsedCoreNum,
  kMatmulTilingM,
  kMatmulTilingN,
  kMatmulTilingKa,
  kMatmulTilingKb,
  kMatmulTilingSingleCoreM,
  kMatmulTilingSingleCoreN,
  kMatmulTilingSingleCoreK,
  kMatmulTilingBaseM,
  kMatmulTilingBaseN,
  kMatmulTilingBaseK,
  kMatmulTilingDepthA1,
  kMatmulTilingDepthB1,
  kMatmulTilingStepM,
  kMatmulTilingStepN,
  kMatmulTilingIsBias,
  kMatmulTilingTransLength,
  kMatmulTilingIterateOrder,
  kMatmulTilingShareMode,
  kMatmulTilingShareL1Size,
  kMatmulTilingShareL0CSize,
  kMatmulTilingShareUbSize,
  kMatmulTilingBatchM,
  kMatmulTilingBatchN,
  kMatmulTilingSingleBatchM,
  kMatmulTilingSingleBatchN,
  kMatmulTilingStepKa,
  kMatmulTilingStepKb,
  kMatmulTilingDepthAL1CacheUB,
  kMatmulTilingDepthBL1CacheUB,
  kMatmulTilingDbL0A,
  kMatmulTilingDbL0B,
  kMatmulTilingDbL0C,
  kMatmulTilingALayoutInfoB,
  kMatmulTilingALayoutInfoS,
  kMatmulTilingALayoutInfoN,
  kMatmulTilingALayoutInfoG,
  kMatmulTilingALayoutInfoD,
  kMatmulTilingBLayoutInfoB,
  kMatmulTilingBLayoutInfoS,
  kMatmulTilingBLayoutInfoN,
  kMatmulTilingBLayoutInfoG,
  kMatmulTilingBLayoutInfoD,
  kMatmulTilingCLayoutInfoB,
  kMatmulTilingCLayoutInfoS1,
  kMatmulTilingCLayoutInfoN,
  kMatmulTilingCLayoutInfoG,
  kMatmulTilingCLayoutInfoS2,
  kMatmulTilingBatchNum,
  kMatmulTilingMxTypePara,
};
inline constexpr TilingFieldSpec kWqCustomFields[] = {
    {"vecBlockDimN", 8},
    {"vecBlockDimK", 8},
    {"cubeBlockDimN", 8},
    {"cubeBlockDimM", 8},
    {"cubeBlockDimK", 8},
    {"kPadSize", 8},
    {"nPadSize", 8},
    {"haveBatchA", 8},
    {"haveBatchB", 8},
    {"reserve1", 8},
    {"reserve2", 8},
    {"reserve3", 8},
    {"vecSingleKGroupNum", 16},
    {"vecSingleKTailGroupNum", 16},
    {"AL1Pingpong", 16},
    {"BL1Pingpong", 16},
    {"vecSingleK"},
    {"vecSingleN"},
    {"vec2SingleM"},
    {"vecSingleKTail"},
    {"vecSingleNTail"},
    {"wInQueueSize"},
    {"offsetInQueueSize"},
    {"scaleInQueueSize"},
    {"wOutQueueSize"},
    {"antiQuantTmpBufferSize"},
    {"vecCubeNRatio"},
    {"vecCubeTailNRatio"},
    {"vecCubeKRatio"},
    {"vecCubeTailKRatio"},
    {"cubeTailM"},
    {"cubeTailN"},
    {"cubeSingleNLoop"},
    {"cubeSingleNTailLoop"},
    {"repeatAxisMax"},
    {"vecSingleKLoop", 64},
    {"vecSingleNLoop", 64},
    {"vecSingleKTailLoop", 64},
    {"vecSingleNTailLoop", 64},
    {"vec2SingleMLoop", 64},
    {"kAlign", 64},
    {"nAlign", 64},
    {"kSize", 64},
    {"nSize", 64},
    {"groupSize", 64},
    {"mSize", 64},
    {"blockBatch", 64},
    {"shapeBatch", 64},
    {"mAubSize", 64},
    {"kAubSize", 64},
    {"nBubSize", 64},
    {"kBubSize", 64},
    {"mCubSize", 64},
    {"nCubSize", 64},
    {"mAL1Size", 64},
    {"kAL1Size", 64},
    {"nBL1Size", 64},
    {"kBL1Size", 64},
    {"matmulTiling.usedCoreNum"},
    {"matmulTiling.M"},
    {"matmulTiling.N"},
    {"matmulTiling.Ka"},
    {"matmulTiling.Kb"},
    {"matmulTiling.singleCoreM"},
    {"matmulTiling.singleCoreN"},
    {"matmulTiling.singleCoreK"},
    {"matmulTiling.baseM"},
    {"matmulTiling.baseN"},
    {"matmulTiling.baseK"},
    {"matmulTiling.depthA1"},
    {"matmulTiling.depthB1"},
    {"matmulTiling.stepM"},
    {"matmulTiling.stepN"},
    {"matmulTiling.isBias"},
    {"matmulTiling.transLength"},
    {"matmulTiling.iterateOrder"},
    {"matmulTiling.shareMode"},
    {"matmulTiling.shareL1Size"},
    {"matmulTiling.shareL0CSize"},
    {"matmulTiling.shareUbSize"},
    {"matmulTiling.batchM"},
    {"matmulTiling.batchN"},
    {"matmulTiling.singleBatchM"},
    {"matmulTiling.singleBatchN"},
    {"matmulTiling.stepKa"},
    {"matmulTiling.stepKb"},
    {"matmulTiling.depthAL1CacheUB"},
    {"matmulTiling.depthBL1CacheUB"},
    {"matmulTiling.dbL0A"},
    {"matmulTiling.dbL0B"},
    {"matmulTiling.dbL0C"},
    {"matmulTiling.ALayoutInfoB"},
    {"matmulTiling.ALayoutInfoS"},
    {"matmulTiling.ALayoutInfoN"},
    {"matmulTiling.ALayoutInfoG"},
    {"matmulTiling.ALayoutInfoD"},
    {"matmulTiling.BLayoutInfoB"},
    {"matmulTiling.BLayoutInfoS"},
    {"matmulTiling.BLayoutInfoN"},
    {"matmulTiling.BLayoutInfoG"},
    {"matmulTiling.BLayoutInfoD"},
    {"matmulTiling.CLayoutInfoB"},
    {"matmulTiling.CLayoutInfoS1"},
    {"matmulTiling.CLayoutInfoN"},
    {"matmulTiling.CLayoutInfoG"},
    {"matmulTiling.CLayoutInfoS2"},
    {"matmulTiling.BatchNum"},
    {"matmulTiling.mxTypePara"},
};

// GroupedMatmul's four structs on DAV_3510
// (gmm/grouped_matmul/op_kernel/arch35/grouped_matmul_tiling_data_apt.h),
// member by member with CANN's names and their sub-struct. Three of them
// end in the high-level API's TCubeTiling, named `mmTilingData.<member>`,
// whose members TCubeField indexes (the same 50 words as the start of
// BatchMatMulV3TilingData); two hold GMMArray, 128 int32 entries of each of
// mList, kList and nList. A field of a struct with those parts is the
// struct's own enum value: GmmNoQuantCube(TCubeField::kBaseM) names
// mmTilingData.baseM of GMMNoQuantTilingData.
enum class TCubeField : uint8_t {
  kUsedCoreNum,
  kM,
  kN,
  kKa,
  kKb,
  kSingleCoreM,
  kSingleCoreN,
  kSingleCoreK,
  kBaseM,
  kBaseN,
  kBaseK,
  kDepthA1,
  kDepthB1,
  kStepM,
  kStepN,
  kIsBias,
  kTransLength,
  kIterateOrder,
  kShareMode,
  kShareL1Size,
  kShareL0cSize,
  kShareUbSize,
  kBatchM,
  kBatchN,
  kSingleBatchM,
  kSingleBatchN,
  kStepKa,
  kStepKb,
  kDepthAl1CacheUb,
  kDepthBl1CacheUb,
  kDbL0a,
  kDbL0b,
  kDbL0c,
  kALayoutB,
  kALayoutS,
  kALayoutN,
  kALayoutG,
  kALayoutD,
  kBLayoutB,
  kBLayoutS,
  kBLayoutN,
  kBLayoutG,
  kBLayoutD,
  kCLayoutB,
  kCLayoutS1,
  kCLayoutN,
  kCLayoutG,
  kCLayoutS2,
  kBatchNum,
  kMxTypePara,
};
inline constexpr size_t kTCubeFieldCount = 50;
inline constexpr TilingFieldSpec kGmmCubeFields[] = {
    {"mmTilingData.usedCoreNum"},
    {"mmTilingData.M"},
    {"mmTilingData.N"},
    {"mmTilingData.Ka"},
    {"mmTilingData.Kb"},
    {"mmTilingData.singleCoreM"},
    {"mmTilingData.singleCoreN"},
    {"mmTilingData.singleCoreK"},
    {"mmTilingData.baseM"},
    {"mmTilingData.baseN"},
    {"mmTilingData.baseK"},
    {"mmTilingData.depthA1"},
    {"mmTilingData.depthB1"},
    {"mmTilingData.stepM"},
    {"mmTilingData.stepN"},
    {"mmTilingData.isBias"},
    {"mmTilingData.transLength"},
    {"mmTilingData.iterateOrder"},
    {"mmTilingData.shareMode"},
    {"mmTilingData.shareL1Size"},
    {"mmTilingData.shareL0CSize"},
    {"mmTilingData.shareUbSize"},
    {"mmTilingData.batchM"},
    {"mmTilingData.batchN"},
    {"mmTilingData.singleBatchM"},
    {"mmTilingData.singleBatchN"},
    {"mmTilingData.stepKa"},
    {"mmTilingData.stepKb"},
    {"mmTilingData.depthAL1CacheUB"},
    {"mmTilingData.depthBL1CacheUB"},
    {"mmTilingData.dbL0A"},
    {"mmTilingData.dbL0B"},
    {"mmTilingData.dbL0C"},
    {"mmTilingData.ALayoutInfoB"},
    {"mmTilingData.ALayoutInfoS"},
    {"mmTilingData.ALayoutInfoN"},
    {"mmTilingData.ALayoutInfoG"},
    {"mmTilingData.ALayoutInfoD"},
    {"mmTilingData.BLayoutInfoB"},
    {"mmTilingData.BLayoutInfoS"},
    {"mmTilingData.BLayoutInfoN"},
    {"mmTilingData.BLayoutInfoG"},
    {"mmTilingData.BLayoutInfoD"},
    {"mmTilingData.CLayoutInfoB"},
    {"mmTilingData.CLayoutInfoS1"},
    {"mmTilingData.CLayoutInfoN"},
    {"mmTilingData.CLayoutInfoG"},
    {"mmTilingData.CLayoutInfoS2"},
    {"mmTilingData.BatchNum"},
    {"mmTilingData.mxTypePara"},
};
static_assert(sizeof(kGmmCubeFields) / sizeof(kGmmCubeFields[0]) == kTCubeFieldCount);

// GMMArray: mList[128], kList[128], nList[128] (the per-group shapes of a
// list of up to 128 tensors), named "gmmArray.mList[i]" and so on.
inline constexpr size_t kGmmArrayEntries = 128;
inline constexpr size_t kGmmArrayFieldCount = 3 * kGmmArrayEntries;
struct GmmArrayNames {
  char text[kGmmArrayFieldCount][24] = {};
  size_t size[kGmmArrayFieldCount] = {};
};
constexpr GmmArrayNames MakeGmmArrayNames() {
  GmmArrayNames names;
  const char* const kLists[] = {"gmmArray.mList[", "gmmArray.kList[", "gmmArray.nList["};
  for (size_t list = 0; list < 3; ++list) {
    for (size_t i = 0; i < kGmmArrayEntries; ++i) {
      char* out = names.text[list * kGmmArrayEntries + i];
      size_t n = 0;
      for (const char* c = kLists[list]; *c != '\0'; ++c) out[n++] = *c;
      if (i >= 100) out[n++] = static_cast<char>('0' + i / 100);
      if (i >= 10) out[n++] = static_cast<char>('0' + i / 10 % 10);
      out[n++] = static_cast<char>('0' + i % 10);
      out[n++] = ']';
      names.size[list * kGmmArrayEntries + i] = n;
    }
  }
  return names;
}
inline constexpr GmmArrayNames kGmmArrayNames = MakeGmmArrayNames();

// The fields of a struct of `params`, then GMMArray when `with_array`, then
// `tail` (TCubeTiling or the basic API's block).
template <size_t kParams, size_t kTail, bool kWithArray>
constexpr auto GmmStructFields(const TilingFieldSpec (&params)[kParams],
                               const TilingFieldSpec (&tail)[kTail]) {
  constexpr size_t kArray = kWithArray ? kGmmArrayFieldCount : 0;
  std::array<TilingFieldSpec, kParams + kArray + kTail> fields{};
  size_t n = 0;
  for (size_t i = 0; i < kParams; ++i) fields[n++] = params[i];
  for (size_t i = 0; i < kArray; ++i) {
    fields[n++] = {std::string_view(kGmmArrayNames.text[i], kGmmArrayNames.size[i])};
  }
  for (size_t i = 0; i < kTail; ++i) fields[n++] = tail[i];
  return fields;
}

// GMMNoQuantTilingData (62 words): GMMNoQuantBaseParams, then TCubeTiling.
enum class GmmNoQuantField : uint8_t {
  kGroupNum,
  kCoreNum,
  kSingleWeight,
  kSingleX,
  kSingleY,
  kGroupType,  // int32: -1 is 0xFFFFFFFF
  kGroupListType,
  kHasBias,
  kMTailCnt,
  kNTailCnt,
  kWeightNoL2Cache,
  kPlaceHolder,
  kCube,  // the first TCubeTiling member: GmmNoQuantCube()
};
constexpr GmmNoQuantField GmmNoQuantCube(TCubeField field) {
  return static_cast<GmmNoQuantField>(static_cast<size_t>(GmmNoQuantField::kCube) +
                                      static_cast<size_t>(field));
}
inline constexpr TilingFieldSpec kGmmNoQuantParamFields[] = {
    {"gmmNoQuantParam.groupNum"},        {"gmmNoQuantParam.coreNum"},
    {"gmmNoQuantParam.singleWeight"},    {"gmmNoQuantParam.singleX"},
    {"gmmNoQuantParam.singleY"},         {"gmmNoQuantParam.groupType"},
    {"gmmNoQuantParam.groupListType"},   {"gmmNoQuantParam.hasBias"},
    {"gmmNoQuantParam.mTailCnt"},        {"gmmNoQuantParam.nTailCnt"},
    {"gmmNoQuantParam.weightNoL2Cache"}, {"gmmNoQuantParam.placeHolder"},
};
inline constexpr auto kGmmNoQuantFields =
    GmmStructFields<12, kTCubeFieldCount, false>(kGmmNoQuantParamFields, kGmmCubeFields);

// GMMQuantParams (6 words), the head of both quant structs: four uint32,
// then u8 singleX / singleW / singleY / i8 groupType, u8 groupListType /
// hasBias / u16 reserved.
inline constexpr TilingFieldSpec kGmmQuantParamFields[] = {
    {"gmmQuantParams.groupNum"},         {"gmmQuantParams.activeType"},
    {"gmmQuantParams.aQuantMode"},       {"gmmQuantParams.bQuantMode"},
    {"gmmQuantParams.singleX", 8},       {"gmmQuantParams.singleW", 8},
    {"gmmQuantParams.singleY", 8},       {"gmmQuantParams.groupType", 8},
    {"gmmQuantParams.groupListType", 8}, {"gmmQuantParams.hasBias", 8},
    {"gmmQuantParams.reserved", 16},
};
inline constexpr size_t kGmmQuantParamCount = 11;

// GMMQuantBasicApiTilingData (18 words): GMMQuantParams, then
// QuantBasicApiMMTiling.
inline constexpr TilingFieldSpec kGmmQuantBasicApiBlockFields[] = {
    {"mmTilingData.m"},
    {"mmTilingData.n"},
    {"mmTilingData.k"},
    {"mmTilingData.baseM"},
    {"mmTilingData.baseN"},
    {"mmTilingData.baseK"},
    {"mmTilingData.kAL1"},
    {"mmTilingData.kBL1"},
    {"mmTilingData.scaleKAL1"},
    {"mmTilingData.scaleKBL1"},
    {"mmTilingData.isBias", 8},
    {"mmTilingData.dbL0C", 8},
    {"mmTilingData.reserved1", 16},
    {"mmTilingData.reserved2"},
};
enum class GmmQuantBasicApiField : uint8_t {
  kGroupNum,
  kActiveType,
  kAQuantMode,
  kBQuantMode,
  kSingleX,
  kSingleW,
  kSingleY,
  kGroupType,
  kGroupListType,
  kHasBias,
  kReserved,
  kM,
  kN,
  kK,
  kBaseM,
  kBaseN,
  kBaseK,
  kKAL1,
  kKBL1,
  kScaleKAL1,
  kScaleKBL1,
  kIsBias,
  kDbL0C,
  kReserved1,
  kReserved2,
};
inline constexpr auto kGmmQuantBasicApiFields = GmmStructFields<kGmmQuantParamCount, 14, false>(
    kGmmQuantParamFields, kGmmQuantBasicApiBlockFields);

// GMMQuantTilingData (440 words): GMMQuantParams, GMMArray, TCubeTiling.
// The first GMMArray entry is kArray (GmmQuantArray()), the first TCubeTiling
// member kCube (GmmQuantCube()).
enum class GmmQuantField : uint16_t {
  kGroupNum,
  kActiveType,
  kAQuantMode,
  kBQuantMode,
  kSingleX,
  kSingleW,
  kSingleY,
  kGroupType,
  kGroupListType,
  kHasBias,
  kReserved,
  kArray,
  kCube = kArray + kGmmArrayFieldCount,
};
// Entry `i` of GMMArray's mList (list 0), kList (1) or nList (2).
constexpr GmmQuantField GmmQuantArray(size_t list, size_t i) {
  return static_cast<GmmQuantField>(static_cast<size_t>(GmmQuantField::kArray) +
                                    list * kGmmArrayEntries + i);
}
constexpr GmmQuantField GmmQuantCube(TCubeField field) {
  return static_cast<GmmQuantField>(static_cast<size_t>(GmmQuantField::kCube) +
                                    static_cast<size_t>(field));
}
inline constexpr auto kGmmQuantFields =
    GmmStructFields<kGmmQuantParamCount, kTCubeFieldCount, true>(kGmmQuantParamFields,
                                                                 kGmmCubeFields);

// GMMWeightQuantTilingData (448 words): GMMWeightQuantParam (14 words),
// GMMArray, TCubeTiling.
inline constexpr TilingFieldSpec kGmmWeightQuantParamFields[] = {
    {"gmmWeightQuantParam.groupNum"},
    {"gmmWeightQuantParam.coreNum"},
    {"gmmWeightQuantParam.kSize", 64},
    {"gmmWeightQuantParam.nSize", 64},
    {"gmmWeightQuantParam.singleX", 8},
    {"gmmWeightQuantParam.singleWeight", 8},
    {"gmmWeightQuantParam.singleY", 8},
    {"gmmWeightQuantParam.groupType", 8},
    {"gmmWeightQuantParam.groupListType", 8},
    {"gmmWeightQuantParam.hasBias", 8},
    {"gmmWeightQuantParam.cubeNumBlocksN", 8},
    {"gmmWeightQuantParam.reserved", 8},
    {"gmmWeightQuantParam.groupSize"},
    {"gmmWeightQuantParam.mainBlockSize"},
    {"gmmWeightQuantParam.mainBlockCount", 64},
    {"gmmWeightQuantParam.firstTailBlockSize", 16},
    {"gmmWeightQuantParam.secondTailBlockSize", 16},
    {"gmmWeightQuantParam.firstTailBlockCount", 16},
    {"gmmWeightQuantParam.secondTailBlockCount", 16},
};
enum class GmmWeightQuantField : uint16_t {
  kGroupNum,
  kCoreNum,
  kKSize,
  kNSize,
  kSingleX,
  kSingleWeight,
  kSingleY,
  kGroupType,
  kGroupListType,
  kHasBias,
  kCubeNumBlocksN,
  kReserved,
  kGroupSize,
  kMainBlockSize,
  kMainBlockCount,
  kFirstTailBlockSize,
  kSecondTailBlockSize,
  kFirstTailBlockCount,
  kSecondTailBlockCount,
  kArray,
  kCube = kArray + kGmmArrayFieldCount,
};
constexpr GmmWeightQuantField GmmWeightQuantArray(size_t list, size_t i) {
  return static_cast<GmmWeightQuantField>(static_cast<size_t>(GmmWeightQuantField::kArray) +
                                          list * kGmmArrayEntries + i);
}
constexpr GmmWeightQuantField GmmWeightQuantCube(TCubeField field) {
  return static_cast<GmmWeightQuantField>(static_cast<size_t>(GmmWeightQuantField::kCube) +
                                          static_cast<size_t>(field));
}
inline constexpr auto kGmmWeightQuantFields =
    GmmStructFields<19, kTCubeFieldCount, true>(kGmmWeightQuantParamFields, kGmmCubeFields);

// A tiling-data struct: the kernel family that reads it, its CANN name and
// its field table.
struct TilingStructSpec {
  KernelId kernel = KernelId::kUnstructured;
  std::string_view name;
  absl::Span<const TilingFieldSpec> fields;
};

// The struct each field enum belongs to (found by overload on the enum).
constexpr TilingStructSpec StructOfField(BasicField) {
  return {KernelId::kMatMulCube, "MatMulV3BasicTilingData", kBasicFields};
}
constexpr TilingStructSpec StructOfField(KEqZeroField) {
  return {KernelId::kMatMulZeroK, "MatMulV3KEqZeroBasicTilingData", kKEqZeroFields};
}
constexpr TilingStructSpec StructOfField(ToMulField) {
  return {KernelId::kMatMulToMul, "MatMulToMulBasicTilingData", kToMulFields};
}
constexpr TilingStructSpec StructOfField(ToVectorField) {
  return {KernelId::kMatMulToVector, "MatMulToVectorBasicTilingData", kToVectorFields};
}

constexpr TilingStructSpec StructOfField(BatchBasicField) {
  return {KernelId::kBatchCube, "BatchMatMulV3BasicTilingData", kBatchBasicFields};
}
constexpr TilingStructSpec StructOfField(IterBatchField) {
  return {KernelId::kBatchIterate, "BatchMatMulV3IterBatchBasicTilingData", kIterBatchFields};
}
constexpr TilingStructSpec StructOfField(MergeBatchField) {
  return {KernelId::kBatchMerge, "BatchMatMulV3MergeBatchBasicTilingData", kMergeBatchFields};
}
constexpr TilingStructSpec StructOfField(BatchToMulField) {
  return {KernelId::kBatchToMul, "BatchMatMulToMulBasicTilingData", kBatchToMulFields};
}

constexpr TilingStructSpec StructOfField(HighLevelBatchField) {
  return {KernelId::kBatchHighLevel, "BatchMatMulV3TilingData", kHighLevelBatchFields};
}

constexpr TilingStructSpec StructOfField(WqAsField) {
  return {KernelId::kWeightQuantAdaptiveSplit, "WeightQuantBatchMatmulV2ASTilingDataParams",
          kWqAsFields};
}
constexpr TilingStructSpec StructOfField(WqRegBaseField) {
  return {KernelId::kWeightQuantRegBase, "WeightQuantBatchMatmulV2RegBaseTilingDataParams",
          kWqRegBaseFields};
}
constexpr TilingStructSpec StructOfField(WqCustomField) {
  return {KernelId::kWeightQuantCustom, "WeightQuantBatchMatmulV2TilingData", kWqCustomFields};
}

constexpr TilingStructSpec StructOfField(GmmNoQuantField) {
  return {KernelId::kGroupedNoQuant, "GMMNoQuantTilingData", kGmmNoQuantFields};
}
constexpr TilingStructSpec StructOfField(GmmQuantBasicApiField) {
  return {KernelId::kGroupedQuantBasicApi, "GMMQuantBasicApiTilingData", kGmmQuantBasicApiFields};
}
constexpr TilingStructSpec StructOfField(GmmQuantField) {
  return {KernelId::kGroupedQuant, "GMMQuantTilingData", kGmmQuantFields};
}
constexpr TilingStructSpec StructOfField(GmmWeightQuantField) {
  return {KernelId::kGroupedWeightQuant, "GMMWeightQuantTilingData", kGmmWeightQuantFields};
}

// The struct of `Field` as compile-time constants.
template <typename Field>
struct TilingStruct {
  static constexpr KernelId kKernel = StructOfField(Field{}).kernel;
  static constexpr std::string_view kName = StructOfField(Field{}).name;
  static constexpr absl::Span<const TilingFieldSpec> kFields = StructOfField(Field{}).fields;
};

// The table entry of `field`.
template <typename Field>
constexpr const TilingFieldSpec& FieldSpec(Field field) {
  return TilingStruct<Field>::kFields[static_cast<size_t>(field)];
}

// The struct `kernel` reads (no name and no fields for kUnstructured).
const TilingStructSpec& TilingStructOf(KernelId kernel);

// The number of 32-bit words of `spec`'s struct.
size_t StructWords(const TilingStructSpec& spec);

// `kernel`'s struct with its members read from CANN's `words` (packed
// members from the low bits up); kInvalidArgument when the count of words
// is not the struct's.
absl::StatusOr<TilingData> TilingDataFromWords(KernelId kernel, absl::Span<const uint32_t> words);

// The kernel family that reads the struct called `struct_name`, or nullopt
// when no kernel reads such a struct.
std::optional<KernelId> KernelOfStruct(std::string_view struct_name);

// The kernel family of MatMulV3's `model`: the struct its kernels read.
KernelId MatMulKernelOf(KernelModel model);

// The fields of the struct `Field` indexes, all zero: built once, so that a
// new struct is one copy (the strategies build one per decision).
template <typename Field>
const std::vector<TilingField>& ZeroFields() {
  static const std::vector<TilingField>* const kZero = [] {
    auto* fields = new std::vector<TilingField>();
    fields->reserve(TilingStruct<Field>::kFields.size());
    for (const TilingFieldSpec& spec : TilingStruct<Field>::kFields) {
      fields->push_back({spec.name, 0, spec.bits});
    }
    return fields;
  }();
  return *kZero;
}

// A struct of kind `Field` with every field present and zero, ready for Set().
template <typename Field>
TilingData NewTilingData() {
  TilingData data;
  data.kernel = TilingStruct<Field>::kKernel;
  data.fields = ZeroFields<Field>();
  return data;
}

// The kernel family that owns the struct `kernel` reads: itself, or the
// family whose struct it shares (the transposed batch matmuls read
// BatchMatMulV3TilingData, BatchMatMulV3's high-level struct).
constexpr KernelId StructOwner(KernelId kernel) {
  return kernel == KernelId::kTransposeBatch || kernel == KernelId::kTransposeQuantBatch
             ? KernelId::kBatchHighLevel
             : kernel;
}

// Whether `data` is a struct of the kind `Field` indexes: the typed
// accessors' guard. Elsewhere a plan's kernel is `plan.data.kernel`.
template <typename Field>
constexpr bool IsStruct(const TilingData& data) {
  return StructOwner(data.kernel) == TilingStruct<Field>::kKernel;
}

// The value of `field`, or nullopt when `data` is not a complete struct of
// that kind (a plan built by hand, or one of another kernel).
template <typename Field>
std::optional<uint64_t> Get(const TilingData& data, Field field) {
  const size_t index = static_cast<size_t>(field);
  if (!IsStruct<Field>(data) || index >= data.fields.size()) {
    return std::nullopt;
  }
  return data.fields[index].value;
}

// Sets `field` when `data` is a struct of that kind (see Get()); otherwise
// leaves `data` as it is.
template <typename Field>
void Set(TilingData& data, Field field, uint64_t value) {
  const size_t index = static_cast<size_t>(field);
  if (!IsStruct<Field>(data) || index >= data.fields.size()) return;
  data.fields[index].value = value;
}

// Writes the fields of a complete struct of kind `Field` (one NewTilingData()
// made) without the checks of Set(): the serializers' path, once per decision.
template <typename Field>
class TilingStructWriter {
 public:
  explicit TilingStructWriter(TilingData& data) : fields_(data.fields.data()) {
    assert(IsStruct<Field>(data) && data.fields.size() == TilingStruct<Field>::kFields.size() &&
           "TilingStructWriter needs a complete struct of its kind");
  }
  void operator()(Field field, uint64_t value) const {
    fields_[static_cast<size_t>(field)].value = value;
  }

 private:
  TilingField* fields_;
};

// The BlockTiling members a MatMulV3BasicTilingData carries, and where.
struct BlockFieldBinding {
  BasicField field;
  uint64_t BlockTiling::*member;
};
inline constexpr BlockFieldBinding kBlockFields[] = {
    {BasicField::kML1, &BlockTiling::m_l1},
    {BasicField::kNL1, &BlockTiling::n_l1},
    {BasicField::kKL1, &BlockTiling::k_l1},
    {BasicField::kBaseM, &BlockTiling::base_m},
    {BasicField::kBaseN, &BlockTiling::base_n},
    {BasicField::kBaseK, &BlockTiling::base_k},
    {BasicField::kSkSingleCoreK, &BlockTiling::single_core_k},
    {BasicField::kMTailCnt, &BlockTiling::m_tail_cnt},
    {BasicField::kNTailCnt, &BlockTiling::n_tail_cnt},
    {BasicField::kL1BufferNum, &BlockTiling::l1_buffer_num},
    {BasicField::kL0cDb, &BlockTiling::l0c_db},
    {BasicField::kUbDb, &BlockTiling::ub_db},
};

// Writes the struct fields that mirror `block` (L0 / L1 blocks, Stream-K
// slice, tail re-split counts, buffer counts) into a complete
// MatMulV3BasicTilingData (otherwise leaves `data` as it is), so that the
// typed BlockTiling stays the one place a strategy or the advisor writes
// them.
// (A BatchMatMulV3BasicTilingData holds the same fields at the same places.)
inline void WriteBlockFields(const BlockTiling& block, TilingData& data) {
  if (data.kernel == KernelId::kBatchCube &&
      data.fields.size() == TilingStruct<BatchBasicField>::kFields.size()) {
    const TilingStructWriter<BatchBasicField> put(data);
    for (const BlockFieldBinding& binding : kBlockFields) {
      put(static_cast<BatchBasicField>(binding.field), block.*binding.member);
    }
    return;
  }
  if (data.kernel != KernelId::kMatMulCube ||
      data.fields.size() != TilingStruct<BasicField>::kFields.size()) {
    return;
  }
  const TilingStructWriter<BasicField> put(data);
  for (const BlockFieldBinding& binding : kBlockFields) put(binding.field, block.*binding.member);
}

// The inverse of WriteBlockFields(): the block members a
// MatMulV3BasicTilingData (or BatchMatMulV3BasicTilingData) carries, read
// into `block` (the others untouched).
inline void ReadBlockFields(const TilingData& data, BlockTiling& block) {
  const bool batch = data.kernel == KernelId::kBatchCube;
  for (const BlockFieldBinding& binding : kBlockFields) {
    std::optional<uint64_t> value =
        batch ? Get(data, static_cast<BatchBasicField>(binding.field)) : Get(data, binding.field);
    if (value) block.*binding.member = *value;
  }
}

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_TILING_DATA_H_
