// PodVector: a vector of trivially copyable records that grows with
// realloc(). A thread's records and intervals grow to hundreds of KiB in a
// window; std::vector doubles by allocating anew and copying everything
// (the copies were 5% of an export's instructions), where realloc extends
// a block in place or copies it. A large one is a mapping of its own
// (largeblocks.h) that grows by moving its pages (mremap), never copied,
// and a freed one is kept for the next while a reader of segments asks.
// Iterators are pointers.
#ifndef THREADMON_PODVECTOR_H
#define THREADMON_PODVECTOR_H

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include "largeblocks.h"

namespace tmon {

template <typename T>
class PodVector {
  static_assert(std::is_trivially_copyable_v<T>, "moved by realloc and memmove");
  static_assert(sizeof(T) <= largeblocks::kPage, "a large block's size from its capacity");

 public:
  using value_type = T;
  using iterator = T *;
  using const_iterator = const T *;

  PodVector() = default;
  PodVector(const PodVector &o) { assign(o.begin(), o.end()); }
  PodVector(PodVector &&o) noexcept
      : p_(std::exchange(o.p_, nullptr)),
        e_(std::exchange(o.e_, nullptr)),
        c_(std::exchange(o.c_, nullptr)) {}
  PodVector &operator=(const PodVector &o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  PodVector &operator=(PodVector &&o) noexcept {
    std::swap(p_, o.p_);
    std::swap(e_, o.e_);
    std::swap(c_, o.c_);
    return *this;
  }
  ~PodVector() { release(); }

  // Three pointers, as std::vector keeps: the appends and the reads of the
  // last element compile to what they did with it.
  T *data() { return p_; }
  const T *data() const { return p_; }
  size_t size() const { return size_t(e_ - p_); }
  size_t capacity() const { return size_t(c_ - p_); }
  bool empty() const { return e_ == p_; }
  bool full() const { return e_ == c_; }  // no room for one more
  T *begin() { return p_; }
  T *end() { return e_; }
  const T *begin() const { return p_; }
  const T *end() const { return e_; }
  T &operator[](size_t i) { return p_[i]; }
  const T &operator[](size_t i) const { return p_[i]; }
  T &front() { return *p_; }
  const T &front() const { return *p_; }
  T &back() { return e_[-1]; }
  const T &back() const { return e_[-1]; }

  void push_back(const T &v) {
    if (e_ == c_) grow(size() + 1);
    *e_++ = v;
  }
  void pop_back() { --e_; }
  void clear() { e_ = p_; }
  void reserve(size_t n) {
    if (n > capacity()) reallocTo(n);
  }
  // Room for n more, grown as push_back grows it; a loop that appends writes
  // from the end returned and gives its own end to setEnd, so that the end
  // stays in a register.
  T *reserveMore(size_t n) {
    if (size_t(c_ - e_) < n) grow(size() + n);
    return e_;
  }
  void setEnd(T *e) { e_ = e; }
  // v before at (a pointer into this vector; v not an element of it).
  T *insert(const T *at, const T &v) {
    const size_t i = size_t(at - p_), n = size();
    if (e_ == c_) grow(n + 1);
    std::memmove(p_ + i + 1, p_ + i, (n - i) * sizeof(T));
    p_[i] = v;
    ++e_;
    return p_ + i;
  }
  // [first, last) before at (a range not of this vector).
  T *insert(const T *at, const T *first, const T *last) {
    const size_t i = size_t(at - p_), n = size(), k = size_t(last - first);
    if (!k) return p_ + i;
    if (size_t(c_ - e_) < k) grow(n + k);
    std::memmove(p_ + i + k, p_ + i, (n - i) * sizeof(T));
    std::memcpy(p_ + i, first, k * sizeof(T));
    e_ += k;
    return p_ + i;
  }
  T *erase(const T *first, const T *last) {
    T *const f = p_ + (first - p_), *const l = p_ + (last - p_);
    if (f != l) std::memmove(f, l, size_t(e_ - l) * sizeof(T));
    e_ -= l - f;
    return f;
  }
  // To the capacity doubling from empty would have given its size (a large
  // block's pages past it are given back: kept, resident, while a reader
  // of segments keeps them).
  void shrinkToDoubling() {
    size_t cap = kFirst;
    while (cap < size()) cap *= 2;
    if (cap < capacity()) reallocTo(cap);
  }
  void shrink_to_fit() {
    if (e_ == p_) {
      release();
      p_ = e_ = c_ = nullptr;
    } else if (e_ < c_) {
      reallocTo(size());
    }
  }

 private:
  void assign(const T *first, const T *last) {
    const size_t n = size_t(last - first);
    if (n > capacity()) reallocTo(n);
    if (n) std::memcpy(p_, first, n * sizeof(T));
    e_ = p_ + n;
  }
  // Doubling, as std::vector: a block that realloc cannot extend is
  // copied, at most as often as std::vector would copy it.
  void grow(size_t need) { reallocTo(std::max(need, p_ ? 2 * capacity() : kFirst)); }
  static constexpr size_t kFirst = 8;
  // A block's kind follows from its capacity: malloc's below kFrom bytes, a
  // mapping of pagesFor(capacity bytes) from it (a mapping's capacity is
  // its pages' whole records: less than one record short of them).
  bool isLarge() const { return capacity() * sizeof(T) >= largeblocks::kFrom; }
  size_t blockSize() const { return largeblocks::pagesFor(capacity() * sizeof(T)); }
  void release() {
    if (isLarge())
      largeblocks::give(p_, blockSize());
    else
      std::free(p_);
  }
  void reallocTo(size_t cap) {
    if (isLarge() || cap * sizeof(T) >= largeblocks::kFrom) return remapTo(cap);
    const size_t n = size();
    void *q = std::realloc(p_, cap * sizeof(T));
    if (!q) throw std::bad_alloc();
    p_ = static_cast<T *>(q);
    e_ = p_ + n;
    c_ = p_ + cap;
  }
  // To or from a large block, or between two sizes of one.
  [[gnu::noinline]] void remapTo(size_t cap) {
    const size_t n = size(), bytes = cap * sizeof(T);
    void *q = nullptr;
    size_t got = 0;
    if (bytes < largeblocks::kFrom) {  // large to small: malloc's again
      q = std::malloc(bytes);
      if (!q) throw std::bad_alloc();
      std::memcpy(q, p_, n * sizeof(T));
      release();
      got = bytes;
    } else if (!isLarge()) {
      q = largeblocks::take(bytes, &got);
      if (!q) throw std::bad_alloc();
      if (n) std::memcpy(q, p_, n * sizeof(T));
      std::free(p_);
    } else if (cap > capacity()) {
      q = largeblocks::grow(p_, blockSize(), n * sizeof(T), bytes, &got);
      if (!q) throw std::bad_alloc();
    } else {
      largeblocks::shrink(p_, blockSize(), bytes);
      q = p_;
      got = largeblocks::pagesFor(bytes);
    }
    p_ = static_cast<T *>(q);
    e_ = p_ + n;
    c_ = p_ + got / sizeof(T);
  }

  T *p_ = nullptr, *e_ = nullptr, *c_ = nullptr;
};

}  // namespace tmon

#endif
