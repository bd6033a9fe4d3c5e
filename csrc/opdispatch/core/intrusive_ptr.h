// intrusive_ptr: a shared pointer whose count lives in the object
// (intrusive_ptr_target), so a raw pointer can be turned back into an owner.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

namespace opdispatch {

/// Base of every reference-counted opdispatch object.
class intrusive_ptr_target {
 public:
  intrusive_ptr_target() = default;
  intrusive_ptr_target(const intrusive_ptr_target&) : refcount_(0) {}
  intrusive_ptr_target& operator=(const intrusive_ptr_target&) { return *this; }
  virtual ~intrusive_ptr_target() = default;

  uint32_t use_count() const { return refcount_.load(std::memory_order_relaxed); }

 protected:
  /// Called when the last owner lets go (the count is zero), before the
  /// object is deleted. An object that gives itself a new owner instead
  /// (adoptFirstReference, then hands that reference on) returns true and is
  /// not deleted here. Nothing else may refer to the object at that point.
  virtual bool handOffLastReference() { return false; }
  /// Sets the count of an object whose count is zero to one reference.
  void adoptFirstReference() { refcount_.store(1, std::memory_order_relaxed); }

 private:
  template <class T>
  friend class intrusive_ptr;
  mutable std::atomic<uint32_t> refcount_{0};
};

template <class T>
class intrusive_ptr final {
 public:
  constexpr intrusive_ptr() noexcept = default;
  constexpr intrusive_ptr(std::nullptr_t) noexcept {}
  /// Takes shared ownership of `p` (increments its count).
  explicit intrusive_ptr(T* p) noexcept : p_(p) { retain(); }
  intrusive_ptr(const intrusive_ptr& o) noexcept : p_(o.p_) { retain(); }
  intrusive_ptr(intrusive_ptr&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  template <class U>
  intrusive_ptr(const intrusive_ptr<U>& o) noexcept : p_(o.get()) {
    retain();
  }
  template <class U>
  intrusive_ptr(intrusive_ptr<U>&& o) noexcept : p_(o.release()) {}
  ~intrusive_ptr() { reset(); }

  intrusive_ptr& operator=(const intrusive_ptr& o) noexcept {
    intrusive_ptr(o).swap(*this);
    return *this;
  }
  intrusive_ptr& operator=(intrusive_ptr&& o) noexcept {
    intrusive_ptr(std::move(o)).swap(*this);
    return *this;
  }

  T* get() const noexcept { return p_; }
  T* operator->() const noexcept { return p_; }
  T& operator*() const noexcept { return *p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  bool defined() const noexcept { return p_ != nullptr; }
  uint32_t use_count() const noexcept { return p_ ? p_->use_count() : 0; }

  void reset() noexcept {
    if (p_ && p_->refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1 &&
        !static_cast<intrusive_ptr_target*>(p_)->handOffLastReference()) {
      delete p_;
    }
    p_ = nullptr;
  }
  void swap(intrusive_ptr& o) noexcept { std::swap(p_, o.p_); }
  /// Gives up ownership without decrementing; pair with reclaim().
  T* release() noexcept {
    T* p = p_;
    p_ = nullptr;
    return p;
  }
  /// Adopts a pointer previously returned by release() (no increment).
  static intrusive_ptr reclaim(T* p) noexcept {
    intrusive_ptr r;
    r.p_ = p;
    return r;
  }

  bool operator==(const intrusive_ptr& o) const noexcept { return p_ == o.p_; }
  bool operator!=(const intrusive_ptr& o) const noexcept { return p_ != o.p_; }

 private:
  void retain() noexcept {
    if (p_) {
      p_->refcount_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  T* p_ = nullptr;
};

template <class T, class... Args>
intrusive_ptr<T> make_intrusive(Args&&... args) {
  return intrusive_ptr<T>(new T(std::forward<Args>(args)...));
}

} // namespace opdispatch
