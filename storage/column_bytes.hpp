#pragma once
// The bytes of a column vector (its values, or its validity): a std::vector
// the vector's owner fills and changes, until freeze() makes them shared and
// read-only. A copy of frozen bytes shares them instead of copying: the
// host's chunk cache freezes the chunks it keeps, so that a scan's
// projection of a cached chunk (TableStore::project_written) or a copy of one
// of its columns costs no memory and no page faults. Changing frozen bytes
// through a non-const member first makes them this object's own again (a
// copy), so no change is ever seen through another object.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace tally::storage {

class ColumnBytes {
 public:
  using value_type = uint8_t;
  using Vector = std::vector<uint8_t>;

  ColumnBytes() = default;
  explicit ColumnBytes(size_t n, uint8_t v = 0) : own_(n, v) {}
  ColumnBytes(Vector v) : own_(std::move(v)) {}  // NOLINT: a vector's bytes, as before
  ColumnBytes(const ColumnBytes& o) : own_(o.shared_ ? Vector() : o.own_), shared_(o.shared_) {}
  ColumnBytes(ColumnBytes&& o) noexcept : own_(std::move(o.own_)), shared_(std::move(o.shared_)) { o.own_.clear(); }
  ColumnBytes& operator=(const ColumnBytes& o) {
    if (this != &o) {
      shared_ = o.shared_;
      own_ = o.shared_ ? Vector() : o.own_;
    }
    return *this;
  }
  ColumnBytes& operator=(ColumnBytes&& o) noexcept {
    own_ = std::move(o.own_);
    shared_ = std::move(o.shared_);
    o.own_.clear();
    return *this;
  }
  ColumnBytes& operator=(Vector v) {
    shared_.reset();
    own_ = std::move(v);
    return *this;
  }

  // Makes the bytes shared and read-only (until a non-const member copies them).
  void freeze() {
    if (!shared_) shared_ = std::make_shared<const Vector>(std::move(own_));
    own_ = Vector();
  }
  bool frozen() const { return shared_ != nullptr; }

  // Reading.
  const Vector& vec() const { return shared_ ? *shared_ : own_; }
  operator const Vector&() const { return vec(); }  // NOLINT: read as the vector it is
  const uint8_t* data() const { return vec().data(); }
  size_t size() const { return vec().size(); }
  bool empty() const { return vec().empty(); }
  size_t capacity() const { return vec().capacity(); }
  Vector::const_iterator begin() const { return vec().begin(); }
  Vector::const_iterator end() const { return vec().end(); }
  uint8_t operator[](size_t i) const { return vec()[i]; }

  // Changing: the bytes are this object's own from here on.
  Vector& own() {
    if (shared_) {
      own_ = *shared_;
      shared_.reset();
    }
    return own_;
  }
  uint8_t* data() { return own().data(); }
  Vector::iterator begin() { return own().begin(); }
  Vector::iterator end() { return own().end(); }
  uint8_t& operator[](size_t i) { return own()[i]; }
  void resize(size_t n) { own().resize(n); }
  void resize(size_t n, uint8_t v) { own().resize(n, v); }
  void assign(size_t n, uint8_t v) {
    shared_.reset();
    own_.assign(n, v);
  }
  template <class It>
  void assign(It first, It last) {
    shared_.reset();
    own_.assign(first, last);
  }
  void reserve(size_t n) { own().reserve(n); }
  void clear() {
    shared_.reset();
    own_.clear();
  }
  void shrink_to_fit() { own().shrink_to_fit(); }
  void push_back(uint8_t v) { own().push_back(v); }
  template <class It>
  Vector::iterator insert(Vector::const_iterator at, It first, It last) {
    return own().insert(at, first, last);
  }
  void swap(ColumnBytes& o) noexcept {
    own_.swap(o.own_);
    shared_.swap(o.shared_);
  }
  void swap(Vector& v) { own().swap(v); }

  friend bool operator==(const ColumnBytes& a, const ColumnBytes& b) { return a.vec() == b.vec(); }
  friend bool operator==(const ColumnBytes& a, const Vector& b) { return a.vec() == b; }

 private:
  Vector own_;
  std::shared_ptr<const Vector> shared_;  // set: frozen, own_ is empty
};

}  // namespace tally::storage
