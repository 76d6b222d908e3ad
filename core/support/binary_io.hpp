#pragma once
// Little-endian binary writing and bounds-checked reading, for checkpoints. A Reader never reads
// past its buffer: a short or corrupt input makes ok() false instead.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace cas {

class Writer {
 public:
  template <typename T>
  void pod(const T& v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void string(std::string_view s) {
    pod(std::uint32_t(s.size()));
    out_.append(s);
  }
  void floats(const std::vector<float>& v) {
    pod(std::uint64_t(v.size()));
    out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  }
  void raw(const void* data, std::size_t n) { out_.append(static_cast<const char*>(data), n); }
  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool ok() const { return ok_; }
  bool atEnd() const { return pos_ == in_.size(); }

  template <typename T>
  T pod() {
    T v{};
    if (!take(sizeof v)) return v;
    std::memcpy(&v, in_.data() + pos_ - sizeof v, sizeof v);
    return v;
  }
  std::string string(std::uint32_t maxLength = 1 << 16) {
    const auto n = pod<std::uint32_t>();
    if (!ok_ || n > maxLength || !take(n)) return fail<std::string>();
    return std::string(in_.substr(pos_ - n, n));
  }
  // The next n bytes as they stand (empty, and ok() false, when fewer remain).
  std::string_view raw(std::uint64_t n) {
    if (!take(n)) return {};
    return in_.substr(pos_ - n, n);
  }
  // `held`, when given, receives the count the input declares, so that a caller can say how a
  // mismatch differs from what it expected.
  std::vector<float> floats(std::uint64_t expected, std::uint64_t* held = nullptr) {
    const auto n = pod<std::uint64_t>();
    if (held && ok_) *held = n;
    if (!ok_ || n != expected || !take(n * sizeof(float))) return fail<std::vector<float>>();
    std::vector<float> v(n);
    std::memcpy(v.data(), in_.data() + pos_ - n * sizeof(float), n * sizeof(float));
    return v;
  }

 private:
  bool take(std::uint64_t n) {
    if (!ok_ || n > in_.size() - pos_) return ok_ = false;
    pos_ += n;
    return true;
  }
  template <typename T>
  T fail() {
    ok_ = false;
    return T{};
  }
  std::string_view in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace cas
