// OwnedPyObject: a strong reference to a Python object held by the core,
// which has no Python in it. The Python bindings install the hooks that
// decref with the GIL held.
#pragma once

#include <utility>

namespace opdispatch {

/// Functions the Python bindings install when they load.
struct PyInterpreterHooks {
  /// Drops one reference to `obj`, taking the GIL; a no-op once Python has finalized.
  void (*decref)(void* obj) = nullptr;
  /// Adds one reference to `obj`, taking the GIL.
  void (*incref)(void* obj) = nullptr;
};

/// The process-wide hooks (in libopdispatch, shared by every extension).
PyInterpreterHooks& pyInterpreterHooks();

/// An owned reference to a Python object (a `PyObject*` the core cannot name).
class OwnedPyObject {
 public:
  OwnedPyObject() = default;
  /// Steals one reference to `obj`.
  static OwnedPyObject steal(void* obj) {
    OwnedPyObject o;
    o.obj_ = obj;
    return o;
  }
  OwnedPyObject(const OwnedPyObject& o) : obj_(o.obj_) {
    if (obj_) {
      pyInterpreterHooks().incref(obj_);
    }
  }
  OwnedPyObject(OwnedPyObject&& o) noexcept : obj_(o.obj_) { o.obj_ = nullptr; }
  OwnedPyObject& operator=(OwnedPyObject o) noexcept {
    std::swap(obj_, o.obj_);
    return *this;
  }
  ~OwnedPyObject() { reset(); }

  void* get() const { return obj_; }
  explicit operator bool() const { return obj_ != nullptr; }
  void reset() {
    if (obj_) {
      void* o = obj_;
      obj_ = nullptr;
      pyInterpreterHooks().decref(o);
    }
  }
  /// Gives the reference to the caller.
  void* release() {
    void* o = obj_;
    obj_ = nullptr;
    return o;
  }

 private:
  void* obj_ = nullptr;
};

} // namespace opdispatch
