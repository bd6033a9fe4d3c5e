// The core's only contact with Python (it has no Python in it): hooks the
// Python bindings install, OwnedPyObject (a strong reference to a Python
// object) and ReleaseGIL (lets a C++ kernel run without the GIL).
#pragma once

#include <utility>

namespace opdispatch {

/// Functions the Python bindings install when they load.
struct PyInterpreterHooks {
  /// Drops one reference to `obj`, taking the GIL; a no-op once Python has finalized.
  void (*decref)(void* obj) = nullptr;
  /// Adds one reference to `obj`, taking the GIL.
  void (*incref)(void* obj) = nullptr;
  /// Releases the GIL if this thread holds it; returns a token for reacquireGil (null if nothing was released).
  void* (*releaseGil)() = nullptr;
  /// Takes the GIL back with the token of releaseGil.
  void (*reacquireGil)(void* token) = nullptr;
  /// Whether the Python module `name` is imported (in sys.modules), taking the GIL.
  bool (*isModuleImported)(const char* name) = nullptr;
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

/// Releases the GIL for its scope when Python is loaded and this thread holds
/// it; a no-op otherwise. For long-running C++ kernels called from Python:
///   Tensor my_kernel(const Tensor& x) { opdispatch::ReleaseGIL nogil; ...; }
/// The kernel must not touch Python objects (or call Python kernels without
/// them taking the GIL themselves, which the Python-kernel trampoline does).
class ReleaseGIL {
 public:
  ReleaseGIL() {
    auto& hooks = pyInterpreterHooks();
    token_ = hooks.releaseGil ? hooks.releaseGil() : nullptr;
  }
  ReleaseGIL(const ReleaseGIL&) = delete;
  ReleaseGIL& operator=(const ReleaseGIL&) = delete;
  ~ReleaseGIL() {
    if (token_) {
      pyInterpreterHooks().reacquireGil(token_);
    }
  }

 private:
  void* token_;
};

} // namespace opdispatch
