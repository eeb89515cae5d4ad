// Tests of client/npy.h: round trips, NumPy's own bytes, and malformed files.
#include "client/npy.h"

#include <cstdio>
#include <random>
#include <string>

#include <unistd.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace npu::client {
namespace {

using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;

// A .npy file as NumPy 1.x writes it: magic, version, little-endian header
// length, the dict padded with spaces to a multiple of 64 ending in '\n'.
std::string NumpyFile(const std::string& dict, const std::string& data, int major = 1) {
  std::string header = dict;
  const size_t preamble = major == 1 ? 10 : 12;
  while ((preamble + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i) {
    out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  }
  return out + header + data;
}

const NpyDtype kAllDtypes[] = {NpyDtype::kFloat16, NpyDtype::kFloat32, NpyDtype::kUint16,
                               NpyDtype::kInt8,    NpyDtype::kUint8,   NpyDtype::kInt32,
                               NpyDtype::kInt64,   NpyDtype::kUint64};

TEST(NpyTest, RoundTripsEveryDtypeAndRank) {
  std::mt19937 random(1);
  for (NpyDtype dtype : kAllDtypes) {
    for (const std::vector<int64_t>& shape :
         std::vector<std::vector<int64_t>>{{}, {7}, {3, 5}, {2, 3, 4}, {0, 4}, {1, 1000}}) {
      NpyArray array;
      array.dtype = dtype;
      array.shape = shape;
      array.data.resize(array.elements() * NpyItemBytes(dtype));
      for (char& c : array.data) c = static_cast<char>(random());
      absl::StatusOr<std::string> bytes = SerializeNpy(array);
      ASSERT_THAT(bytes, IsOk());
      // NumPy aligns the data to 64 bytes.
      EXPECT_EQ((bytes->size() - array.data.size()) % 64, 0u);
      absl::StatusOr<NpyArray> parsed = ParseNpy(*bytes);
      ASSERT_THAT(parsed, IsOk());
      EXPECT_EQ(parsed->dtype, dtype);
      EXPECT_EQ(parsed->shape, shape);
      EXPECT_EQ(parsed->data, array.data);
    }
  }
}

TEST(NpyTest, WritesWhatNumpyWrites) {
  NpyArray array;
  array.dtype = NpyDtype::kFloat32;
  array.shape = {2, 3};
  array.data.assign(24, '\0');
  absl::StatusOr<std::string> bytes = SerializeNpy(array);
  ASSERT_THAT(bytes, IsOk());
  // np.save of np.zeros((2, 3), np.float32), byte for byte.
  EXPECT_EQ(*bytes, NumpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                              std::string(24, '\0')));
  array.shape = {6};
  bytes = SerializeNpy(array);
  ASSERT_THAT(bytes, IsOk());
  EXPECT_THAT(*bytes, HasSubstr("'shape': (6,), }"));
}

// np.save of np.zeros(shape, dtype) for the integer dtypes: NumPy writes
// '|' for one-byte types and '<' for the others.
TEST(NpyTest, WritesNumpysDescrForEachIntegerDtype) {
  struct Case {
    NpyDtype dtype;
    const char* descr;
    int item_bytes;
  };
  for (const Case& c : {Case{NpyDtype::kInt8, "|i1", 1}, Case{NpyDtype::kUint8, "|u1", 1},
                        Case{NpyDtype::kInt32, "<i4", 4}, Case{NpyDtype::kInt64, "<i8", 8},
                        Case{NpyDtype::kUint64, "<u8", 8}}) {
    EXPECT_EQ(NpyDescr(c.dtype), c.descr);
    EXPECT_EQ(NpyItemBytes(c.dtype), c.item_bytes);
    NpyArray array;
    array.dtype = c.dtype;
    array.shape = {2, 3};
    array.data.assign(6 * c.item_bytes, '\0');
    absl::StatusOr<std::string> bytes = SerializeNpy(array);
    ASSERT_THAT(bytes, IsOk());
    EXPECT_EQ(*bytes, NumpyFile(std::string("{'descr': '") + c.descr +
                                    "', 'fortran_order': False, 'shape': (2, 3), }",
                                array.data))
        << c.descr;
  }
}

// One-byte types have no byte order: '|' (NumPy's), '<' and '>' are the
// same bytes. Multi-byte types stay little-endian only.
TEST(NpyTest, ReadsOneByteTypesInAnyByteOrder) {
  const std::string data("\x80\x7f\x01", 3);
  for (const auto& [descr, dtype] :
       {std::pair{"|i1", NpyDtype::kInt8}, std::pair{"<i1", NpyDtype::kInt8},
        std::pair{">i1", NpyDtype::kInt8}, std::pair{"|u1", NpyDtype::kUint8},
        std::pair{"<u1", NpyDtype::kUint8}, std::pair{">u1", NpyDtype::kUint8}}) {
    absl::StatusOr<NpyArray> parsed = ParseNpy(NumpyFile(
        std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (3,), }", data));
    ASSERT_THAT(parsed, IsOk()) << descr;
    EXPECT_EQ(parsed->dtype, dtype) << descr;
    EXPECT_EQ(parsed->data, data) << descr;
    // Written back the way NumPy writes it.
    absl::StatusOr<std::string> written = SerializeNpy(*parsed);
    ASSERT_THAT(written, IsOk());
    EXPECT_THAT(*written, HasSubstr(dtype == NpyDtype::kInt8 ? "'|i1'" : "'|u1'"));
  }
}

TEST(NpyTest, ReadsNumpyVariants) {
  const std::string data(8, '\x01');
  // Version 2.0, double quotes, no trailing comma, Python 2 longs, keys in
  // another order.
  for (const std::string& file : {
           NumpyFile("{'descr': '<f2', 'fortran_order': False, 'shape': (2, 2), }", data, 2),
           NumpyFile("{\"shape\": (2, 2), \"fortran_order\": False, \"descr\": \"<f2\"}", data),
           NumpyFile("{'descr': '<f2', 'fortran_order': False, 'shape': (2L, 2L), }", data, 3),
       }) {
    absl::StatusOr<NpyArray> parsed = ParseNpy(file);
    ASSERT_THAT(parsed, IsOk());
    EXPECT_EQ(parsed->dtype, NpyDtype::kFloat16);
    EXPECT_EQ(parsed->shape, (std::vector<int64_t>{2, 2}));
  }
}

struct Malformed {
  std::string name;
  std::string bytes;
  std::string message;
};

class NpyMalformedTest : public ::testing::TestWithParam<Malformed> {};

TEST_P(NpyMalformedTest, IsAnErrorWithAMessage) {
  EXPECT_THAT(ParseNpy(GetParam().bytes),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().message)));
}

const std::string kGood = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";

INSTANTIATE_TEST_SUITE_P(
    Files, NpyMalformedTest,
    ::testing::Values(
        Malformed{"Empty", "", "magic string"},
        Malformed{"NotNpy", "PK\x03\x04 a zip file", "magic string"},
        Malformed{"MagicOnly", std::string("\x93NUMPY", 6), "magic string"},
        Malformed{"NoHeaderLength", std::string("\x93NUMPY\x01\x00\x10", 9),
                  "truncated before the header length"},
        Malformed{"Version4", NumpyFile(kGood, std::string(8, '\0'), 4), "format version 4.0"},
        Malformed{"HeaderPastTheEnd", std::string("\x93NUMPY\x01\x00\xff\x00{'d", 13),
                  "the header claims 255 bytes"},
        Malformed{"HugeHeader", std::string("\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12),
                  "header of 2147483647 bytes"},
        Malformed{"FortranOrder",
                  NumpyFile("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 1), }",
                            std::string(8, '\0')),
                  "fortran_order arrays are not supported"},
        Malformed{"BigEndian",
                  NumpyFile("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
                            std::string(8, '\0')),
                  "'>f4': big-endian"},
        Malformed{"Float64",
                  NumpyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
                            std::string(16, '\0')),
                  "unsupported .npy dtype '<f8'"},
        Malformed{"BigEndianInt32",
                  NumpyFile("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }",
                            std::string(8, '\0')),
                  "'>i4': big-endian"},
        Malformed{"BigEndianUint64",
                  NumpyFile("{'descr': '>u8', 'fortran_order': False, 'shape': (1,), }",
                            std::string(8, '\0')),
                  "'>u8': big-endian"},
        Malformed{"Int16",
                  NumpyFile("{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }",
                            std::string(4, '\0')),
                  "unsupported .npy dtype '<i2'"},
        Malformed{"Bool",
                  NumpyFile("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }",
                            std::string(2, '\0')),
                  "unsupported .npy dtype '|b1'"},
        Malformed{"NoByteOrderOnAMultiByteType",
                  NumpyFile("{'descr': '|i4', 'fortran_order': False, 'shape': (2,), }",
                            std::string(8, '\0')),
                  "unsupported .npy dtype '|i4'"},
        Malformed{"NativeOrderOneByte",
                  NumpyFile("{'descr': '=u1', 'fortran_order': False, 'shape': (2,), }",
                            std::string(2, '\0')),
                  "unsupported .npy dtype '=u1'"},
        Malformed{"TruncatedUint64",
                  NumpyFile("{'descr': '<u8', 'fortran_order': False, "
                            "'shape': (2,), }",
                            std::string(15, '\0')),
                  "truncated: 15 bytes of data, the shape (2) of <u8 needs 16"},
        Malformed{"TrailingByteAfterInt8",
                  NumpyFile("{'descr': '|i1', 'fortran_order': False, "
                            "'shape': (2, 2), }",
                            std::string(5, '\0')),
                  "1 bytes after the data"},
        // Exactly the cap of one-byte elements, with no data: refused as
        // truncated, before anything of that size is allocated.
        Malformed{
            "OneByteArrayAtTheCapWithoutData",
            NumpyFile("{'descr': '|u1', 'fortran_order': False, 'shape': (2147483648,), }", ""),
            "truncated: 0 bytes of data, the shape (2147483648) of |u1 needs 2147483648"},
        Malformed{
            "OneByteArrayOverTheCap",
            NumpyFile("{'descr': '|u1', 'fortran_order': False, 'shape': (2147483649,), }", ""),
            "holds more than 2147483648 bytes"},
        Malformed{"EightByteShapeOverflow",
                  NumpyFile("{'descr': '<i8', 'fortran_order': False, 'shape': "
                            "(268435456, 2), }",
                            ""),
                  "holds more than 2147483648 bytes"},
        Malformed{"ObjectArray",
                  NumpyFile("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }",
                            std::string(16, '\0')),
                  "unsupported .npy dtype '|O'"},
        Malformed{"Structured",
                  NumpyFile("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }",
                            std::string(8, '\0')),
                  "structured dtypes"},
        Malformed{"Truncated", NumpyFile(kGood, std::string(7, '\0')),
                  "truncated: 7 bytes of data, the shape (2) of <f4 needs 8"},
        Malformed{"TrailingBytes", NumpyFile(kGood, std::string(9, '\0')),
                  "1 bytes after the data"},
        Malformed{"NegativeDim",
                  NumpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", ""),
                  "expected a non-negative integer"},
        Malformed{"ShapeOverflow",
                  NumpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': "
                            "(4294967296, 4294967296, 4294967296), }",
                            ""),
                  "holds more than 2147483648 bytes"},
        Malformed{"DimBeyond64Bits",
                  NumpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': "
                            "(99999999999999999999,), }",
                            ""),
                  "does not fit in 64 bits"},
        Malformed{"MissingShape", NumpyFile("{'descr': '<f4', 'fortran_order': False, }", ""),
                  "header: no 'shape'"},
        Malformed{"ShapeNotATuple",
                  NumpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': '2', }", ""),
                  "'shape' has the wrong type"},
        Malformed{"UnknownKey",
                  NumpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}", ""),
                  "expected a string, True, False or a tuple"},
        Malformed{"ExtraKey",
                  NumpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': ()}",
                            std::string(4, '\0')),
                  "unknown key 'x'"},
        Malformed{"DuplicateKey",
                  NumpyFile("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
                            "'shape': (2,), }",
                            std::string(8, '\0')),
                  "key 'descr' appears twice"},
        Malformed{"KeyNotClosed", NumpyFile("{'descr: '<f4", ""), "no ':' after key 'descr: '"},
        Malformed{"UnterminatedString", NumpyFile("{'descr", ""),
                  "unsupported character in a string"},
        Malformed{"NoBrace", NumpyFile("descr", ""), "does not start with '{'"},
        Malformed{"TextAfterDict", NumpyFile(kGood + " x", std::string(8, '\0')),
                  "unexpected text after"}),
    [](const ::testing::TestParamInfo<Malformed>& info) { return info.param.name; });

TEST(NpyTest, SixtyFiveDimensionsAreRefused) {
  std::string shape;
  for (int i = 0; i < 65; ++i) shape += "1, ";
  EXPECT_THAT(
      ParseNpy(NumpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (" + shape + "), }",
                         std::string(4, '\0'))),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("more than 64 dimensions")));
}

// Every prefix and many single-byte corruptions of a valid file: the parser
// answers each with a value or an error, and never reads past the input
// (checked under NPU_SANITIZE).
TEST(NpyTest, TruncationsAndCorruptionsNeverCrash) {
  for (NpyDtype dtype : {NpyDtype::kFloat16, NpyDtype::kInt8, NpyDtype::kUint64}) {
    NpyArray array;
    array.dtype = dtype;
    array.shape = {3, 4};
    array.data.assign(12 * NpyItemBytes(dtype), '\x3c');
    absl::StatusOr<std::string> bytes = SerializeNpy(array);
    ASSERT_THAT(bytes, IsOk());
    for (size_t size = 0; size < bytes->size(); ++size) {
      EXPECT_FALSE(ParseNpy(absl::string_view(*bytes).substr(0, size)).ok()) << size;
    }
    std::mt19937 random(7);
    int accepted = 0;
    for (int i = 0; i < 5000; ++i) {
      std::string corrupt = *bytes;
      corrupt[random() % corrupt.size()] = static_cast<char>(random());
      absl::StatusOr<NpyArray> parsed = ParseNpy(corrupt);
      if (parsed.ok()) {
        ++accepted;
        EXPECT_EQ(parsed->data.size(), parsed->elements() * NpyItemBytes(parsed->dtype));
      }
    }
    EXPECT_GT(accepted, 0) << NpyDescr(dtype);  // padding bytes may change harmlessly
  }
}

TEST(NpyTest, FilesRoundTripAndErrorsNameThePath) {
  // The process id: ctest runs cases as parallel processes sharing the dir.
  const std::string path = ::testing::TempDir() + "/npy_test_" + std::to_string(getpid()) + ".npy";
  NpyArray array;
  array.dtype = NpyDtype::kUint16;
  array.shape = {2, 2};
  array.data = std::string("\x80\x3f\x00\x40\x40\x40\x80\x40", 8);  // bf16 1, 2, 3, 4
  ASSERT_THAT(WriteNpyFile(path, array), IsOk());
  absl::StatusOr<NpyArray> read = ReadNpyFile(path);
  ASSERT_THAT(read, IsOk());
  EXPECT_EQ(read->data, array.data);
  std::remove(path.c_str());
  EXPECT_THAT(ReadNpyFile(path), StatusIs(absl::StatusCode::kNotFound, HasSubstr(path)));
  array.data.pop_back();
  EXPECT_THAT(WriteNpyFile(path, array), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace npu::client
