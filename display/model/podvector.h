// PodVector: a vector of trivially copyable records that grows without
// copying. A thread's records and intervals grow to hundreds of KiB in a
// window; std::vector doubles by allocating anew and copying everything
// (the copies were 5% of an export's instructions). realloc() of a block
// in the heap copies too whenever the next chunk is taken (100 threads'
// vectors growing in turn), and glibc puts even large blocks there once a
// freed mapping has raised its mmap threshold: the copies were 3.5% of an
// export's instructions. So a block of kMapBytes or more is a mapping of
// its own, which mremap() grows by moving its pages; one the kernel
// refuses (vm.max_map_count) stays with realloc(). Iterators are pointers.
#ifndef THREADMON_PODVECTOR_H
#define THREADMON_PODVECTOR_H

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace tmon {

template <typename T>
class PodVector {
  static_assert(std::is_trivially_copyable_v<T>, "moved by realloc and memmove");

 public:
  using value_type = T;
  using iterator = T *;
  using const_iterator = const T *;

  PodVector() = default;
  PodVector(const PodVector &o) { assign(o.begin(), o.end()); }
  PodVector(PodVector &&o) noexcept
      : p_(std::exchange(o.p_, nullptr)),
        e_(std::exchange(o.e_, nullptr)),
        c_(std::exchange(o.c_, nullptr)),
        mapped_(std::exchange(o.mapped_, false)) {}
  PodVector &operator=(const PodVector &o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  PodVector &operator=(PodVector &&o) noexcept {
    std::swap(p_, o.p_);
    std::swap(e_, o.e_);
    std::swap(c_, o.c_);
    std::swap(mapped_, o.mapped_);
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
  T *erase(const T *first, const T *last) {
    T *const f = p_ + (first - p_), *const l = p_ + (last - p_);
    if (f != l) std::memmove(f, l, size_t(e_ - l) * sizeof(T));
    e_ -= l - f;
    return f;
  }
  // To the capacity doubling from empty would have given its size.
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
  // Mapped from here: a mapping's rounding to pages wastes at most an
  // eighth of it, and the copies below it are a tenth of those up to
  // glibc's first mmap threshold (128 KiB; 28 M instructions of the export).
  static constexpr size_t kMapBytes = 32 << 10;
  static size_t pages(size_t bytes) { return (bytes + 4095) & ~size_t(4095); }
  // cap >= size().
  void reallocTo(size_t cap) {
    const size_t n = size(), bytes = cap * sizeof(T);
    void *q = nullptr;
    if (mapped_ && bytes >= kMapBytes) {
      q = mremap(p_, pages(capacity() * sizeof(T)), pages(bytes), MREMAP_MAYMOVE);
      if (q == MAP_FAILED) throw std::bad_alloc();
    } else if (bytes >= kMapBytes && (q = mmap(nullptr, pages(bytes), PROT_READ | PROT_WRITE,
                                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) != MAP_FAILED) {
      if (n) std::memcpy(q, p_, n * sizeof(T));
      release();
      mapped_ = true;
    } else if (mapped_) {  // shrunk below kMapBytes
      if (!(q = std::malloc(bytes))) throw std::bad_alloc();
      if (n) std::memcpy(q, p_, n * sizeof(T));
      release();
    } else if (!(q = std::realloc(p_, bytes))) {
      throw std::bad_alloc();
    }
    p_ = static_cast<T *>(q);
    e_ = p_ + n;
    c_ = p_ + cap;
  }
  void release() {
    if (mapped_)
      munmap(p_, pages(capacity() * sizeof(T)));
    else
      std::free(p_);
    mapped_ = false;
  }

  T *p_ = nullptr, *e_ = nullptr, *c_ = nullptr;
  bool mapped_ = false;  // p_ is a mapping of its own
};

}  // namespace tmon

#endif
