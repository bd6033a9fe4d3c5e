"""The C++ rows: builds benchmarks/cpp against the installed opdispatch and,
when PyTorch is installed, the same benchmark against libtorch (via
torch.utils.cpp_extension), and returns ns per call for each case, by the
thread's CPU clock ("cpu") and by the wall clock ("wall")."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional

HERE = Path(__file__).resolve().parent
BUILD = HERE.parent / "build" / "bench-cpp"
TORCH_BUILD = HERE.parent / "build" / "bench-cpp-torch"

TORCH_SOURCE = r"""
#include <torch/extension.h>
#include <torch/library.h>
#include "bench_common.h"

namespace {
__attribute__((noinline)) at::Tensor ident1(const at::Tensor& a) { return a; }
__attribute__((noinline)) at::Tensor ident8(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c,
                                            const at::Tensor& d, int64_t i, int64_t j, double f, bool g) { return a; }
__attribute__((noinline)) void stackFloor(torch::jit::Stack* s, size_t n) {
  at::Tensor r = (*s)[s->size() - n].toTensor();
  torch::jit::drop(*s, n);
  s->emplace_back(std::move(r));
}
}
TORCH_LIBRARY(bench_cpp, m) {
  m.def("ident1(Tensor a) -> Tensor");
  m.def("ident8(Tensor a, Tensor b, Tensor c, Tensor d, int i, int j, float f, bool g) -> Tensor");
}
TORCH_LIBRARY_IMPL(bench_cpp, CPU, m) {
  m.impl("ident1", TORCH_FN(ident1));
  m.impl("ident8", TORCH_FN(ident8));
}
std::vector<std::tuple<std::string, double, double>> run(int64_t iters, int rounds) {
  auto op1 = c10::Dispatcher::singleton().findSchemaOrThrow("bench_cpp::ident1", "");
  auto op8 = c10::Dispatcher::singleton().findSchemaOrThrow("bench_cpp::ident8", "");
  auto typed1 = op1.typed<at::Tensor(const at::Tensor&)>();
  auto typed8 = op8.typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                     int64_t, int64_t, double, bool)>();
  at::Tensor x = at::ones({3});
  at::Tensor (*volatile direct1)(const at::Tensor&) = &ident1;
  at::Tensor (*volatile direct8)(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, int64_t,
                                 int64_t, double, bool) = &ident8;
  void (*volatile floor_fn)(torch::jit::Stack*, size_t) = &stackFloor;
  torch::jit::Stack s;
  bench::Rounds timed;
  for (int round = 0; round < rounds; ++round) {
    timed.time("direct_1", [&] { at::Tensor r = direct1(x); }, iters);
    timed.time("typed_1", [&] { at::Tensor r = typed1.call(x); }, iters);
    timed.time("boxed_1", [&] { s.clear(); s.emplace_back(x); op1.callBoxed(&s); }, iters);
    timed.time("stack_1", [&] { s.clear(); s.emplace_back(x); floor_fn(&s, 1); }, iters);
    timed.time("direct_8", [&] { at::Tensor r = direct8(x, x, x, x, 1, 2, 3.0, true); }, iters);
    timed.time("typed_8", [&] { at::Tensor r = typed8.call(x, x, x, x, 1, 2, 3.0, true); }, iters);
    timed.time("boxed_8", [&] {
      s.clear();
      torch::jit::push(s, x, x, x, x, int64_t(1), int64_t(2), 3.0, true);
      op8.callBoxed(&s);
    }, iters);
    timed.time("stack_8", [&] {
      s.clear();
      torch::jit::push(s, x, x, x, x, int64_t(1), int64_t(2), 3.0, true);
      floor_fn(&s, 8);
    }, iters);
  }
  std::vector<std::tuple<std::string, double, double>> out;
  for (const auto& [name, t] : timed.medians()) {
    out.emplace_back(name, t.cpu_ns, t.wall_ns);
  }
  return out;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("run", &run); }
"""


def _tool(name: str) -> str:
    candidate = Path(sys.executable).parent / name
    found = str(candidate) if candidate.exists() else shutil.which(name)
    if found is None:
        raise RuntimeError(f"{name} is needed to build the C++ benchmark (pip install cmake ninja)")
    return found


def opdispatch_rows(iters: int, rounds: int) -> dict[str, dict[str, float]]:
    import opdispatch.cpp_extension as cpp_extension

    subprocess.run([_tool("cmake"), "-S", str(HERE / "cpp"), "-B", str(BUILD), "-G", "Ninja",
                    f"-DCMAKE_MAKE_PROGRAM={_tool('ninja')}", "-DCMAKE_BUILD_TYPE=Release",
                    f"-DCMAKE_PREFIX_PATH={cpp_extension.cmake_prefix_path()}",
                    # (find_package keeps the first package it found in the cache: name this one, or a build
                    # directory first configured against another installation keeps using that one.)
                    f"-Dopdispatch_DIR={Path(cpp_extension.cmake_prefix_path()) / 'opdispatch'}"],
                   check=True, capture_output=True)
    subprocess.run([_tool("cmake"), "--build", str(BUILD)], check=True, capture_output=True)
    out = subprocess.run([str(BUILD / "bench_dispatch"), str(iters), str(rounds)], check=True,
                         capture_output=True, text=True).stdout
    rows = [json.loads(line) for line in out.splitlines()]
    return {clock: {row["case"]: row[f"{clock}_ns"] for row in rows} for clock in ("cpu", "wall")}


def torch_rows(torch: Any, iters: int, rounds: int) -> Optional[dict[str, dict[str, float]]]:
    from torch.utils.cpp_extension import load_inline

    # The checkout's own build directory, not the shared ~/.cache/torch_extensions: checkouts with
    # different benchmark sources would overwrite each other's module there, and a killed run's lock
    # would stall every later run of every checkout.
    TORCH_BUILD.mkdir(parents=True, exist_ok=True)
    module = load_inline("opdispatch_bench_torch", cpp_sources=[TORCH_SOURCE], extra_include_paths=[str(HERE / "cpp")],
                         extra_cflags=["-O2"], build_directory=str(TORCH_BUILD), verbose=False)
    rows = module.run(iters, rounds)
    return {"cpu": {case: cpu for case, cpu, _ in rows}, "wall": {case: wall for case, _, wall in rows}}
