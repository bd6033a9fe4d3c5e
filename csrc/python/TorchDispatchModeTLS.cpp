// The per-thread dispatch mode stack and its _C functions. See Note [The dispatch mode stack].
#include "TorchDispatchModeTLS.h"

#include <array>
#include <exception>
#include <vector>

#include <pybind11/stl.h>

#include <opdispatch/core/Exception.h>
#include <opdispatch/core/PyInterpreter.h>
#include <opdispatch/dispatch/LocalDispatchKeySet.h>

#include "ContextManager.h"

namespace py = pybind11;

namespace opdispatch::python {

namespace {

constexpr size_t kNumModeKeys = static_cast<size_t>(TorchDispatchModeKey::NUM_MODE_KEYS);

struct ModeState {
  std::vector<OwnedPyObject> stack; ///< user modes, bottom first
  std::array<OwnedPyObject, kNumModeKeys> infra; ///< by TorchDispatchModeKey; empty = unset
};
/// Released with the GIL taken when the thread ends (OwnedPyObject).
thread_local ModeState state;
/// The number of modes in `state` (user and infrastructure): read by every
/// call through the Python key, which a trivially initialised thread_local
/// answers in one access (`state`'s are guarded by its initialisation).
thread_local size_t mode_count = 0;

OwnedPyObject own(py::handle obj) {
  Py_INCREF(obj.ptr());
  return OwnedPyObject::steal(obj.ptr());
}
py::object borrow(const OwnedPyObject& o) {
  return py::reinterpret_borrow<py::object>(static_cast<PyObject*>(o.get()));
}
py::object take(OwnedPyObject& o) { return py::reinterpret_steal<py::object>(static_cast<PyObject*>(o.release())); }

/// Python and PythonTLSSnapshot are included exactly while a mode is set.
void includePythonKeys(bool on) {
  tls_set_dispatch_key_included(DispatchKey::Python, on);
  tls_set_dispatch_key_included(DispatchKey::PythonTLSSnapshot, on);
}

/// The mode's `_mode_key` (an infrastructure mode), if it has one that is not None.
std::optional<TorchDispatchModeKey> modeKeyOf(py::handle mode) {
  if (!py::hasattr(mode, "_mode_key")) {
    return std::nullopt;
  }
  py::object key = mode.attr("_mode_key");
  if (key.is_none()) {
    return std::nullopt;
  }
  try {
    return key.cast<TorchDispatchModeKey>();
  } catch (const py::cast_error&) {
    throw TypeError(detail::str(Py_TYPE(mode.ptr())->tp_name,
                                "._mode_key must be None (a user mode) or a _C._TorchDispatchModeKey (FAKE, PROXY, "
                                "FUNCTIONAL: the infrastructure slot the mode takes), not ",
                                Py_TYPE(key.ptr())->tp_name));
  }
}

} // namespace

const char* toString(TorchDispatchModeKey k) {
  switch (k) {
    case TorchDispatchModeKey::FAKE:
      return "FakeTensorMode";
    case TorchDispatchModeKey::PROXY:
      return "ProxyTorchDispatchMode";
    case TorchDispatchModeKey::FUNCTIONAL:
      return "FunctionalTensorMode";
    case TorchDispatchModeKey::NUM_MODE_KEYS:
      break;
  }
  return "?";
}

namespace TorchDispatchModeTLS {

bool anyModesSet(bool skip_infra_modes) { return skip_infra_modes ? !state.stack.empty() : mode_count != 0; }

namespace {
/// Counts a mode just set; the first includes the Python keys.
void modeAdded() {
  if (mode_count++ == 0) {
    includePythonKeys(true);
  }
}
/// Counts a mode just unset; the last excludes the Python keys again.
void modeRemoved() {
  if (--mode_count == 0) {
    includePythonKeys(false);
  }
}
} // namespace

void pushNonInfraMode(py::handle mode) {
  state.stack.push_back(own(mode));
  modeAdded();
}

py::object popStack() {
  py::object out;
  if (!state.stack.empty()) {
    out = take(state.stack.back());
    state.stack.pop_back();
  } else {
    for (size_t i = kNumModeKeys; i-- > 0;) {
      if (state.infra[i]) {
        out = take(state.infra[i]);
        break;
      }
    }
  }
  OPDISPATCH_CHECK(out, "trying to pop from empty mode stack");
  modeRemoved();
  return out;
}

std::pair<py::object, TorchDispatchModeKey> popHighestInfraMode() {
  for (size_t i = kNumModeKeys; i-- > 0;) {
    if (state.infra[i]) {
      py::object out = take(state.infra[i]);
      modeRemoved();
      return {out, static_cast<TorchDispatchModeKey>(i)};
    }
  }
  throw Error("Called pop_highest_infra_mode, but no infra modes were active.");
}

int64_t stackLen() { return static_cast<int64_t>(mode_count); }

py::object getStackAt(int64_t idx) {
  OPDISPATCH_CHECK(idx >= 0 && idx < stackLen(), "Tried to get stack at idx that's too big: index ", idx,
                   " of a mode stack of length ", stackLen());
  for (const auto& m : state.infra) {
    if (m) {
      if (idx == 0) {
        return borrow(m);
      }
      --idx;
    }
  }
  return borrow(state.stack[static_cast<size_t>(idx)]);
}

std::optional<py::object> getMode(TorchDispatchModeKey key) {
  const OwnedPyObject& m = state.infra.at(static_cast<size_t>(key));
  return m ? std::optional<py::object>(borrow(m)) : std::nullopt;
}

void setMode(py::handle mode, TorchDispatchModeKey key) {
  OwnedPyObject& slot = state.infra.at(static_cast<size_t>(key));
  OPDISPATCH_CHECK(!slot, "trying to set the current ", toString(key), ", but one already exists");
  slot = own(mode);
  modeAdded();
}

std::optional<py::object> unsetMode(TorchDispatchModeKey key) {
  OwnedPyObject& slot = state.infra.at(static_cast<size_t>(key));
  if (!slot) {
    return std::nullopt;
  }
  py::object out = take(slot);
  modeRemoved();
  return out;
}

} // namespace TorchDispatchModeTLS

bool dispatchModeEnabled() {
  return TorchDispatchModeTLS::anyModesSet() && !tls_is_dispatch_key_excluded(DispatchKey::Python);
}

StashTorchDispatchModeGuard::StashTorchDispatchModeGuard() {
  if (TorchDispatchModeTLS::anyModesSet(/*skip_infra_modes=*/true)) {
    mode_ = TorchDispatchModeTLS::popStack();
  } else {
    auto [mode, key] = TorchDispatchModeTLS::popHighestInfraMode();
    mode_ = std::move(mode);
    key_ = key;
  }
}

StashTorchDispatchModeGuard::~StashTorchDispatchModeGuard() {
  if (key_) {
    // The handler may have set a mode of this key meanwhile; PyTorch's set_mode would throw here.
    if (!TorchDispatchModeTLS::getMode(*key_)) {
      TorchDispatchModeTLS::setMode(mode_, *key_);
    }
  } else {
    TorchDispatchModeTLS::pushNonInfraMode(mode_);
  }
}

namespace {

/// Excludes Python, PythonTLSSnapshot and PreDispatch, so neither modes nor
/// subclasses intercept calls. PyTorch: torch::DisableTorchDispatch.
struct DisableTorchDispatch {
  ExcludeDispatchKeyGuard guard{
      DispatchKeySet({DispatchKey::Python, DispatchKey::PythonTLSSnapshot, DispatchKey::PreDispatch})};
};

/// TorchDispatchMode.__exit__: undoes what the mode's __enter__ recorded in
/// its newest `_saved_mode_flags` link, a tuple (live, mode key, stack length
/// before, previous infrastructure mode or None, in_mode, in_non_infra_mode,
/// outer link). When live, pops the mode (its slot or the top), then whatever
/// inner blocks left above the recorded length, and gives the slot back to
/// the previous mode; then, even if a pop failed, restores the two flags in
/// `flags` (the globals of opdispatch.utils._python_dispatch) and the outer
/// link. All in C, so no signal check can stop it half way
/// (Note [Entering and leaving a mode]). RuntimeError without an open block.
void leaveMode(const py::dict& flags, py::handle self) {
  namespace tls = TorchDispatchModeTLS;
  py::object saved = py::getattr(self, "_saved_mode_flags", py::none());
  OPDISPATCH_CHECK(PyTuple_Check(saved.ptr()) && PyTuple_GET_SIZE(saved.ptr()) == 7, Py_TYPE(self.ptr())->tp_name,
                   ".__exit__ without a matching __enter__: the mode is not active");
  auto link = py::reinterpret_borrow<py::tuple>(saved);
  std::exception_ptr failure;
  if (link[0].ptr() == Py_True) {
    try {
      std::optional<TorchDispatchModeKey> key;
      if (!link[1].is_none()) {
        key = link[1].cast<TorchDispatchModeKey>();
      }
      const auto depth = link[2].cast<int64_t>();
      if (key) {
        OPDISPATCH_CHECK(tls::unsetMode(*key), "Attempted to unset ", toString(*key), ", but there wasn't one active.");
      } else {
        tls::popStack();
      }
      while (tls::stackLen() > depth) { // modes of inner blocks that could not leave
        tls::popStack();
      }
      py::handle previous = link[3];
      if (key && !previous.is_none() && !tls::getMode(*key)) {
        tls::setMode(previous, *key);
      }
    } catch (...) {
      failure = std::current_exception();
    }
  }
  flags["_is_in_torch_dispatch_mode"] = link[4];
  flags["_is_in_non_infra_torch_dispatch_mode"] = link[5];
  py::setattr(self, "_saved_mode_flags", link[6]);
  if (failure) {
    std::rethrow_exception(failure);
  }
}

} // namespace

void initTorchDispatchModeBindings(py::module_& m) {
  namespace tls = TorchDispatchModeTLS;
  py::enum_<TorchDispatchModeKey>(m, "_TorchDispatchModeKey",
                                  "The slots of infrastructure modes on the dispatch mode stack (FAKE: "
                                  "FakeTensorMode, PROXY: the make_fx tracer), below the user modes. PyTorch: "
                                  "torch._C._TorchDispatchModeKey.")
      .value("FUNCTIONAL", TorchDispatchModeKey::FUNCTIONAL)
      .value("PROXY", TorchDispatchModeKey::PROXY)
      .value("FAKE", TorchDispatchModeKey::FAKE);
  m.def(
      "_push_on_torch_dispatch_stack",
      [](py::handle mode) {
        if (auto key = modeKeyOf(mode)) {
          tls::setMode(mode, *key);
        } else {
          tls::pushNonInfraMode(mode);
        }
      },
      py::arg("mode"),
      "Pushes a dispatch mode on this thread's stack (a mode with a `_mode_key` goes into that infrastructure "
      "slot; RuntimeError if the slot is taken).");
  m.def(
      "_pop_torch_dispatch_stack",
      [](std::optional<TorchDispatchModeKey> key) -> py::object {
        if (!key) {
          return tls::popStack();
        }
        auto mode = tls::unsetMode(*key);
        OPDISPATCH_CHECK(mode, "Attempted to unset ", toString(*key), ", but there wasn't one active.");
        return *mode;
      },
      py::arg("mode_key"),
      "Pops the top mode (mode_key None) or unsets an infrastructure mode, and returns it. RuntimeError if there "
      "is none.");
  m.def("_get_dispatch_stack_at", &tls::getStackAt, py::arg("idx"),
        "The mode at index idx of this thread's stack (0: the bottom, infrastructure modes first).");
  m.def("_len_torch_dispatch_stack", &tls::stackLen, "The number of modes on this thread's stack.");
  m.def(
      "_set_dispatch_mode",
      [](py::handle mode) {
        auto key = modeKeyOf(mode);
        OPDISPATCH_CHECK(key, "set_dispatch_mode() called with a mode that does not contain a _mode_key attribute!");
        tls::setMode(mode, *key);
      },
      py::arg("mode"), "Sets the infrastructure mode of mode._mode_key (RuntimeError if one is set).");
  m.def(
      "_get_dispatch_mode",
      [](std::optional<TorchDispatchModeKey> key) -> py::object {
        auto mode = key ? tls::getMode(*key) : std::nullopt;
        return mode ? *mode : py::none();
      },
      py::arg("mode_key"), "The infrastructure mode of mode_key, or None.");
  m.def(
      "_unset_dispatch_mode",
      [](TorchDispatchModeKey key) -> py::object {
        auto mode = tls::unsetMode(key);
        return mode ? *mode : py::none();
      },
      py::arg("mode_key"), "Unsets the infrastructure mode of mode_key and returns it (None if none was set).");
  m.def(
      "_torch_dispatch_mode_exit",
      [](const py::dict& flags) {
        py::cpp_function exit([flags](py::handle self, const py::args&) { leaveMode(flags, self); },
                              py::name("__exit__"),
                              py::doc("Leaves the mode's newest `with` block: pops it and restores the stack and "
                                      "the flags as they were before (Note [Entering and leaving a mode])."));
        PyObject* method = PyInstanceMethod_New(exit.ptr());
        if (method == nullptr) {
          throw py::error_already_set();
        }
        return py::reinterpret_steal<py::object>(method);
      },
      py::arg("flags"),
      "TorchDispatchMode.__exit__ as a method written in C, writing the mode flags into the dict `flags` (the "
      "globals of opdispatch.utils._python_dispatch).");
  bindHeldGuard<DisableTorchDispatch>(
      m, "_DisableTorchDispatch",
      "_DisableTorchDispatch(): neither dispatch modes nor tensor subclasses intercept calls from its construction "
      "until __exit__ or its destruction (excludes Python, PythonTLSSnapshot and PreDispatch); usable as `with "
      "_DisableTorchDispatch():`. PyTorch: torch._C._DisableTorchDispatch.");
}

} // namespace opdispatch::python
