#include "client/npy.h"

#include <cassert>
#include <cctype>
#include <fstream>
#include <limits>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace npu::client {
namespace {

constexpr absl::string_view kMagic("\x93NUMPY", 6);
// NumPy itself refuses headers above 10000 bytes unless told otherwise; a
// larger header is not an array this tool could use.
constexpr uint64_t kMaxHeaderBytes = 65536;
// NumPy's limit on dimensions (NPY_MAXDIMS in NumPy 2).
constexpr size_t kMaxDims = 64;
// NumPy aligns the data to 64 bytes.
constexpr size_t kDataAlignment = 64;

absl::Status Malformed(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("not a valid .npy file: ", what));
}

// A value of the header dict: a string, a bool or a tuple of integers.
struct HeaderValue {
  enum class Kind { kString, kBool, kTuple } kind = Kind::kString;
  std::string text;
  bool flag = false;
  std::vector<int64_t> ints;
};

// The header is a Python dict literal, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// This parser accepts exactly the subset NumPy writes (string keys, string /
// bool / int-tuple values, optional trailing commas) and nothing else.
class HeaderParser {
 public:
  explicit HeaderParser(absl::string_view text) : text_(text) {}

  absl::StatusOr<std::map<std::string, HeaderValue>> Parse() {
    std::map<std::string, HeaderValue> dict;
    SkipSpace();
    if (!Consume('{')) return Error("the header does not start with '{'");
    SkipSpace();
    while (!Peek('}')) {
      absl::StatusOr<std::string> key = String();
      if (!key.ok()) return key.status();
      SkipSpace();
      if (!Consume(':')) return Error(absl::StrCat("no ':' after key '", *key, "'"));
      SkipSpace();
      absl::StatusOr<HeaderValue> value = Value();
      if (!value.ok()) return value.status();
      if (!dict.emplace(*key, *std::move(value)).second) {
        return Error(absl::StrCat("key '", *key, "' appears twice"));
      }
      SkipSpace();
      if (Consume(',')) {
        SkipSpace();
        continue;
      }
      if (!Peek('}')) return Error("expected ',' or '}' after a value");
    }
    Consume('}');
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the header's '}'");
    return dict;
  }

 private:
  absl::Status Error(absl::string_view what) const {
    return Malformed(absl::StrCat("header: ", what, " (at byte ", pos_, ")"));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  bool Consume(char c) {
    if (!Peek(c)) return false;
    ++pos_;
    return true;
  }
  bool ConsumeWord(absl::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  absl::StatusOr<std::string> String() {
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
      return Error("expected a quoted string");
    }
    const char quote = text_[pos_++];
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      const unsigned char c = static_cast<unsigned char>(text_[pos_]);
      // NumPy's keys and dtype strings are plain ASCII; escapes never occur.
      if (c == '\\' || c < 0x20 || c >= 0x7f) return Error("unsupported character in a string");
      ++pos_;
    }
    if (pos_ >= text_.size()) return Error("unterminated string");
    std::string out(text_.substr(start, pos_ - start));
    ++pos_;
    return out;
  }

  absl::StatusOr<int64_t> Integer() {
    const size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      const int digit = text_[pos_] - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) {
        return Error("a dimension does not fit in 64 bits");
      }
      value = value * 10 + digit;
      ++pos_;
    }
    if (pos_ == start) return Error("expected a non-negative integer in the shape");
    Consume('L');  // Python 2 longs: "(3L, 4L)" in old files
    return value;
  }

  absl::StatusOr<HeaderValue> Value() {
    HeaderValue value;
    if (Peek('\'') || Peek('"')) {
      absl::StatusOr<std::string> text = String();
      if (!text.ok()) return text.status();
      value.kind = HeaderValue::Kind::kString;
      value.text = *std::move(text);
      return value;
    }
    if (ConsumeWord("True")) {
      value.kind = HeaderValue::Kind::kBool;
      value.flag = true;
      return value;
    }
    if (ConsumeWord("False")) {
      value.kind = HeaderValue::Kind::kBool;
      value.flag = false;
      return value;
    }
    if (Consume('(')) {
      value.kind = HeaderValue::Kind::kTuple;
      SkipSpace();
      while (!Peek(')')) {
        if (value.ints.size() >= kMaxDims) {
          return Error(absl::StrCat("more than ", kMaxDims, " dimensions"));
        }
        absl::StatusOr<int64_t> dim = Integer();
        if (!dim.ok()) return dim.status();
        value.ints.push_back(*dim);
        SkipSpace();
        if (Consume(',')) {
          SkipSpace();
          continue;
        }
        if (!Peek(')')) return Error("expected ',' or ')' in the shape");
      }
      Consume(')');
      return value;
    }
    if (Peek('[')) return Error("structured dtypes (a list as 'descr') are not supported");
    return Error("expected a string, True, False or a tuple");
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

uint32_t ReadLittleEndian(absl::string_view bytes) {
  uint32_t value = 0;
  for (size_t i = bytes.size(); i-- > 0;) {
    value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  }
  return value;
}

absl::StatusOr<NpyDtype> DtypeFromDescr(const std::string& descr) {
  if (descr == "<f2") return NpyDtype::kFloat16;
  if (descr == "<f4") return NpyDtype::kFloat32;
  if (descr == "<u2") return NpyDtype::kUint16;
  if (descr == "<i4") return NpyDtype::kInt32;
  if (descr == "<i8") return NpyDtype::kInt64;
  if (descr == "<u8") return NpyDtype::kUint64;
  // One-byte types have no byte order: NumPy writes '|', and a '<' or '>'
  // some other writer puts there means the same bytes.
  if (descr.size() == 3 && (descr[0] == '|' || descr[0] == '<' || descr[0] == '>')) {
    const absl::string_view type = absl::string_view(descr).substr(1);
    if (type == "i1") return NpyDtype::kInt8;
    if (type == "u1") return NpyDtype::kUint8;
  }
  if (descr.size() == 3 && descr[0] == '>' && descr[1] != 'O') {
    return absl::InvalidArgumentError(absl::StrCat(
        "unsupported .npy dtype '", descr,
        "': big-endian; save the array little-endian (arr.astype(arr.dtype.newbyteorder('<')))"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unsupported .npy dtype '", descr,
      "'; expected '<f2' (float16), '<f4' (float32), '<u2' (bfloat16 bits), '|i1' (int8), "
      "'|u1' (uint8: 8-bit float codes, packed 4-bit codes), '<i4' (int32), '<i8' (int64) or "
      "'<u8' (uint64)"));
}

// Where the header dictionary and the data of a .npy file are.
struct NpyLayout {
  absl::string_view header;
  size_t data_start = 0;
};

// Checks the magic string, the version and the header length.
absl::StatusOr<NpyLayout> ReadPreamble(absl::string_view bytes) {
  if (bytes.size() < kMagic.size() + 2 || bytes.substr(0, kMagic.size()) != kMagic) {
    return Malformed("it does not start with the magic string \\x93NUMPY");
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  const int minor = static_cast<unsigned char>(bytes[7]);
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    return Malformed(
        absl::StrCat("format version ", major, ".", minor, " is not supported (1.0, 2.0 or 3.0)"));
  }
  const size_t length_bytes = major == 1 ? 2 : 4;
  const size_t header_start = 8 + length_bytes;
  if (bytes.size() < header_start) return Malformed("truncated before the header length");
  const uint64_t header_length = ReadLittleEndian(bytes.substr(8, length_bytes));
  if (header_length > kMaxHeaderBytes) {
    return Malformed(
        absl::StrCat("header of ", header_length, " bytes (at most ", kMaxHeaderBytes, ")"));
  }
  if (header_length > bytes.size() - header_start) {
    return Malformed(absl::StrCat("the header claims ", header_length, " bytes, the file has ",
                                  bytes.size() - header_start, " after the preamble"));
  }
  return NpyLayout{bytes.substr(header_start, header_length), header_start + header_length};
}

// The three keys of a .npy header, pointing into its dictionary.
struct NpyHeader {
  const HeaderValue* descr = nullptr;
  const HeaderValue* fortran_order = nullptr;
  const HeaderValue* shape = nullptr;
};

// Checks that `dict` has exactly the three keys, each of its type.
absl::StatusOr<NpyHeader> HeaderFields(const std::map<std::string, HeaderValue>& dict) {
  for (const auto& [key, value] : dict) {
    if (key != "descr" && key != "fortran_order" && key != "shape") {
      return Malformed(absl::StrCat("header: unknown key '", key, "'"));
    }
  }
  auto require = [&](const char* key,
                     HeaderValue::Kind kind) -> absl::StatusOr<const HeaderValue*> {
    auto it = dict.find(key);
    if (it == dict.end()) return Malformed(absl::StrCat("header: no '", key, "'"));
    if (it->second.kind != kind) {
      return Malformed(absl::StrCat("header: '", key, "' has the wrong type"));
    }
    return &it->second;
  };
  NpyHeader header;
  absl::StatusOr<const HeaderValue*> descr = require("descr", HeaderValue::Kind::kString);
  if (!descr.ok()) return descr.status();
  header.descr = *descr;
  absl::StatusOr<const HeaderValue*> fortran = require("fortran_order", HeaderValue::Kind::kBool);
  if (!fortran.ok()) return fortran.status();
  header.fortran_order = *fortran;
  absl::StatusOr<const HeaderValue*> shape = require("shape", HeaderValue::Kind::kTuple);
  if (!shape.ok()) return shape.status();
  header.shape = *shape;
  return header;
}

// The bytes of data `array`'s dtype and shape need, checked against the cap
// before anything is allocated.
absl::StatusOr<uint64_t> DataBytes(const NpyArray& array) {
  uint64_t data_bytes = NpyItemBytes(array.dtype);
  bool empty = false;
  for (int64_t dim : array.shape) {
    if (dim == 0) empty = true;
    if (!empty && static_cast<uint64_t>(dim) > kMaxNpyDataBytes / data_bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("the .npy shape (", absl::StrJoin(array.shape, ", "), ") holds more than ",
                       kMaxNpyDataBytes, " bytes"));
    }
    if (!empty) data_bytes *= static_cast<uint64_t>(dim);
  }
  return empty ? 0 : data_bytes;
}

}  // namespace

absl::string_view NpyDescr(NpyDtype dtype) {
  switch (dtype) {
    case NpyDtype::kFloat16:
      return "<f2";
    case NpyDtype::kFloat32:
      return "<f4";
    case NpyDtype::kUint16:
      return "<u2";
    case NpyDtype::kInt8:
      return "|i1";
    case NpyDtype::kUint8:
      return "|u1";
    case NpyDtype::kInt32:
      return "<i4";
    case NpyDtype::kInt64:
      return "<i8";
    case NpyDtype::kUint64:
      return "<u8";
  }
  assert(false && "NpyDtype out of range");
  return "<f4";
}

int NpyItemBytes(NpyDtype dtype) {
  switch (dtype) {
    case NpyDtype::kInt8:
    case NpyDtype::kUint8:
      return 1;
    case NpyDtype::kFloat16:
    case NpyDtype::kUint16:
      return 2;
    case NpyDtype::kFloat32:
    case NpyDtype::kInt32:
      return 4;
    case NpyDtype::kInt64:
    case NpyDtype::kUint64:
      return 8;
  }
  assert(false && "NpyDtype out of range");
  return 4;
}

uint64_t NpyArray::elements() const {
  uint64_t count = 1;
  for (int64_t dim : shape) count *= static_cast<uint64_t>(dim);
  return count;
}

absl::StatusOr<NpyArray> ParseNpy(absl::string_view bytes) {
  absl::StatusOr<NpyLayout> layout = ReadPreamble(bytes);
  if (!layout.ok()) return layout.status();
  absl::StatusOr<std::map<std::string, HeaderValue>> dict = HeaderParser(layout->header).Parse();
  if (!dict.ok()) return dict.status();
  absl::StatusOr<NpyHeader> header = HeaderFields(*dict);
  if (!header.ok()) return header.status();

  NpyArray array;
  absl::StatusOr<NpyDtype> dtype = DtypeFromDescr(header->descr->text);
  if (!dtype.ok()) return dtype.status();
  array.dtype = *dtype;
  if (header->fortran_order->flag) {
    return absl::InvalidArgumentError(
        "fortran_order arrays are not supported; save a C-order array "
        "(np.save(path, np.ascontiguousarray(arr)))");
  }
  array.shape = header->shape->ints;
  absl::StatusOr<uint64_t> data_bytes = DataBytes(array);
  if (!data_bytes.ok()) return data_bytes.status();
  const uint64_t have = bytes.size() - layout->data_start;
  if (have < *data_bytes) {
    return Malformed(absl::StrCat("truncated: ", have, " bytes of data, the shape (",
                                  absl::StrJoin(array.shape, ", "), ") of ", header->descr->text,
                                  " needs ", *data_bytes));
  }
  if (have > *data_bytes) {
    return Malformed(absl::StrCat(have - *data_bytes, " bytes after the data the shape (",
                                  absl::StrJoin(array.shape, ", "), ") needs"));
  }
  array.data = std::string(bytes.substr(layout->data_start));
  return array;
}

absl::StatusOr<std::string> SerializeNpy(const NpyArray& array) {
  uint64_t elements = 1;
  for (int64_t dim : array.shape) {
    if (dim < 0) return absl::InvalidArgumentError("negative dimension");
    elements *= static_cast<uint64_t>(dim);
  }
  if (array.data.size() != elements * NpyItemBytes(array.dtype)) {
    return absl::InvalidArgumentError(absl::StrCat("array data is ", array.data.size(),
                                                   " bytes, the shape needs ",
                                                   elements * NpyItemBytes(array.dtype)));
  }
  std::string shape = absl::StrJoin(array.shape, ", ");
  if (array.shape.size() == 1) shape += ",";  // a Python 1-tuple
  std::string header = absl::StrCat("{'descr': '", NpyDescr(array.dtype),
                                    "', 'fortran_order': False, 'shape': (", shape, "), }");
  // Pad with spaces to the alignment, ending in '\n', as NumPy does.
  int major = 1;
  size_t preamble = 10;
  size_t total = preamble + header.size() + 1;
  if (total - preamble > 65535) {
    major = 2;
    preamble = 12;
    total = preamble + header.size() + 1;
  }
  header.append((kDataAlignment - total % kDataAlignment) % kDataAlignment, ' ');
  header.push_back('\n');
  std::string out(kMagic);
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  const uint64_t length = header.size();
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i) {
    out.push_back(static_cast<char>((length >> (8 * i)) & 0xff));
  }
  out += header;
  out += array.data;
  return out;
}

absl::StatusOr<NpyArray> ReadNpyFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  // Refuse a file the parser would refuse anyway before reading it whole.
  const std::streamoff size = in.tellg();
  if (size < 0 || static_cast<uint64_t>(size) > kMaxNpyDataBytes + kMaxHeaderBytes + 12) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", size, " bytes, more than a supported .npy file can hold"));
  }
  std::string bytes(static_cast<size_t>(size), '\0');
  in.seekg(0);
  in.read(bytes.data(), size);
  if (!in) return absl::DataLossError(absl::StrCat("error reading ", path));
  absl::StatusOr<NpyArray> array = ParseNpy(bytes);
  if (!array.ok()) {
    return absl::Status(array.status().code(), absl::StrCat(path, ": ", array.status().message()));
  }
  return array;
}

absl::Status WriteNpyFile(const std::string& path, const NpyArray& array) {
  absl::StatusOr<std::string> bytes = SerializeNpy(array);
  if (!bytes.ok()) return bytes.status();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::PermissionDeniedError(absl::StrCat("cannot write ", path));
  out.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
  out.close();
  if (!out) return absl::DataLossError(absl::StrCat("error writing ", path));
  return absl::OkStatus();
}

}  // namespace npu::client
