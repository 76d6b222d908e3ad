#pragma once
// The part of Protocol Buffers' wire format an ONNX file needs: varints, 32-bit floats and
// length-delimited fields (strings, bytes, nested messages). A message is built field by field
// into bytes; a nested message is written whole into its parent, so messages are built from the
// leaves up. Field numbers are onnx.proto's (onnx_export.cpp names each where it writes it).
// Thread-safety: a ProtoMessage is a plain value.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace cas::exports {

class ProtoMessage {
 public:
  // Wire type 0. Negative int64 values are written as their two's complement (ten bytes), as
  // protobuf's int64 fields are.
  ProtoMessage& varint(int field, std::uint64_t value) {
    tag(field, 0);
    raw(value);
    return *this;
  }
  ProtoMessage& int64(int field, std::int64_t value) { return varint(field, static_cast<std::uint64_t>(value)); }
  // Wire type 5: a little-endian IEEE float.
  ProtoMessage& float32(int field, float value) {
    tag(field, 5);
    std::uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    for (int k = 0; k < 4; ++k) bytes_ += char((bits >> (8 * k)) & 0xFF);
    return *this;
  }
  // Wire type 2: a string, raw bytes or a nested message.
  ProtoMessage& bytes(int field, std::string_view value) {
    tag(field, 2);
    raw(value.size());
    bytes_.append(value);
    return *this;
  }
  ProtoMessage& message(int field, const ProtoMessage& nested) { return bytes(field, nested.bytes_); }

  const std::string& data() const { return bytes_; }

 private:
  void tag(int field, int wireType) { raw((std::uint64_t(field) << 3) | std::uint64_t(wireType)); }
  void raw(std::uint64_t v) {
    while (v >= 0x80) {
      bytes_ += char((v & 0x7F) | 0x80);
      v >>= 7;
    }
    bytes_ += char(v);
  }
  std::string bytes_;
};

}  // namespace cas::exports
