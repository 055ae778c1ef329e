#pragma once
// Rows indexed by request id that hold only the live window of ids: from the oldest id not yet
// dropped to the newest one seen. Request ids are dense and increase in arrival order
// (workload::Request::id), and a finished request is never looked at again once the serving loop
// has reported it, so the engine's per-request state needs no row for the millions of requests
// before the oldest one still queued or running: memory follows the requests in flight, not the
// trace's length.
//
// A ring buffer of rows (power-of-two size, doubled when full, never shrunk): once it has grown to
// the widest window of the run, appending and dropping allocate nothing. Rows move when it grows,
// so callers keep ids, never references, across an append. A dropped row's contents stay in its
// slot until the slot is reused (append() hands them back), so buffers inside rows are recycled.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace headroom::engine {

template <class T>
class IdWindow {
 public:
  // `fill`: the row of an id that extend_to() or drop() creates.
  explicit IdWindow(T fill = T{}) : fill_(std::move(fill)) {}

  // Ids [begin_id(), end_id()) have rows; those below begin_id() were all dropped.
  std::uint64_t begin_id() const { return begin_; }
  std::uint64_t end_id() const { return begin_ + size_; }
  // Rows in the window, dropped ones between live ones included.
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return rows_.size(); }
  // The widest the window has been.
  std::size_t peak_size() const { return peak_size_; }
  bool empty() const { return size_ == 0; }
  bool contains(std::uint64_t id) const { return id - begin_ < size_; }  // ids below begin_ wrap past size_
  bool dropped(std::uint64_t id) const { return id < begin_ || (id < end_id() && dropped_[slot(id)] != 0); }

  // The row of an id in the window (dropped or not); std::logic_error outside it.
  T& operator[](std::uint64_t id) {
    if (!contains(id)) [[unlikely]] outside(id);
    return rows_[slot(id)];
  }
  const T& operator[](std::uint64_t id) const {
    if (!contains(id)) [[unlikely]] outside(id);
    return rows_[slot(id)];
  }

  // The row of id end_id(), with whatever a dropped row left in its slot (a default T when the
  // slot is new): the caller overwrites it, or recycles what it holds.
  T& append() {
    if (size_ == rows_.size()) grow();
    const std::size_t s = slot(end_id());
    dropped_[s] = 0;
    ++size_;
    if (size_ > peak_size_) peak_size_ = size_;
    return rows_[s];
  }
  void push_back(T row) { append() = std::move(row); }

  // Rows exist up to `id`, new ones set to the fill value. std::logic_error for an id already
  // dropped.
  void extend_to(std::uint64_t id) {
    if (id < begin_) [[unlikely]] outside(id);
    while (end_id() <= id) append() = fill_;
  }

  // The id's request is gone for good. An id past the window gets its row first (a request that
  // never needed one here is still dropped exactly once, so the front can pass it); an id before
  // the window was dropped already. The window's front then moves past every dropped row.
  void drop(std::uint64_t id) {
    if (id < begin_) return;
    extend_to(id);
    dropped_[slot(id)] = 1;
    while (size_ > 0 && dropped_[head_] != 0) {
      head_ = (head_ + 1) & mask_;
      ++begin_;
      --size_;
    }
  }

 private:
  std::size_t slot(std::uint64_t id) const {
    return (head_ + static_cast<std::size_t>(id - begin_)) & mask_;
  }
  void grow() {
    const std::size_t n = rows_.empty() ? 64 : 2 * rows_.size();
    std::vector<T> rows(n);
    std::vector<std::uint8_t> dropped(n, 0);
    for (std::size_t i = 0; i < size_; ++i) {
      const std::size_t s = (head_ + i) & (rows_.size() - 1);
      rows[i] = std::move(rows_[s]);
      dropped[i] = dropped_[s];
    }
    rows_ = std::move(rows);
    dropped_ = std::move(dropped);
    head_ = 0;
    mask_ = n - 1;
  }
  [[noreturn]] void outside(std::uint64_t id) const {
    throw std::logic_error("request " + std::to_string(id) + " is outside the live window [" +
                           std::to_string(begin_) + ", " + std::to_string(end_id()) + ")");
  }

  T fill_;
  std::vector<T> rows_;
  std::vector<std::uint8_t> dropped_;
  std::size_t mask_ = 0;  // rows_.size() − 1, kept: every lookup masks with it
  std::size_t head_ = 0;  // slot of begin_
  std::uint64_t begin_ = 0;
  std::size_t size_ = 0;
  std::size_t peak_size_ = 0;
};

}  // namespace headroom::engine
