// Dispatch table: the kernel chosen per key checked against an oracle of the precedence rules (docs/architecture.rst
// "Operator entries and the dispatch table"), through dumps and calls, for every order of registering and
// deregistering up to five of eight registrations, random interleavings of all of them, and focused cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <opdispatch/library.h>

using namespace opdispatch;

namespace {

// --- what the oracle knows about keys ------------------------------------------

enum class KeyKind { Undefined, Backend, Autograd, Other };

/// One dispatch table entry: its key, its kind and, for an autograd key, the
/// backends it serves. Written out here rather than taken from DispatchKeySet.h
/// so that the oracle does not share the code it checks.
struct TableKey {
  DispatchKey key;
  KeyKind kind;
  DispatchKeySet backends;
};

constexpr TableKey kTableKeys[] = {
    {DispatchKey::Undefined, KeyKind::Undefined, {}},
    {DispatchKey::CPU, KeyKind::Backend, {}},
    {DispatchKey::CUDA, KeyKind::Backend, {}},
    {DispatchKey::HIP, KeyKind::Backend, {}},
    {DispatchKey::XLA, KeyKind::Backend, {}},
    {DispatchKey::MPS, KeyKind::Backend, {}},
    {DispatchKey::IPU, KeyKind::Backend, {}},
    {DispatchKey::XPU, KeyKind::Backend, {}},
    {DispatchKey::HPU, KeyKind::Backend, {}},
    {DispatchKey::VE, KeyKind::Backend, {}},
    {DispatchKey::Lazy, KeyKind::Backend, {}},
    {DispatchKey::MTIA, KeyKind::Backend, {}},
    {DispatchKey::MAIA, KeyKind::Backend, {}},
    {DispatchKey::PrivateUse1, KeyKind::Backend, {}},
    {DispatchKey::Meta, KeyKind::Backend, {}},
    {DispatchKey::QuantizedCPU, KeyKind::Backend, {}},
    {DispatchKey::SparseCPU, KeyKind::Backend, {}},
    {DispatchKey::BackendSelect, KeyKind::Other, {}},
    {DispatchKey::Python, KeyKind::Other, {}},
    {DispatchKey::Functionalize, KeyKind::Other, {}},
    {DispatchKey::ADInplaceOrView, KeyKind::Other, {}},
    {DispatchKey::AutogradOther, KeyKind::Autograd, {DispatchKey::QuantizedCPU, DispatchKey::SparseCPU}},
    {DispatchKey::AutogradCPU, KeyKind::Autograd, {DispatchKey::CPU}},
    {DispatchKey::AutogradCUDA, KeyKind::Autograd, {DispatchKey::CUDA}},
    {DispatchKey::AutogradHIP, KeyKind::Autograd, {DispatchKey::HIP}},
    {DispatchKey::AutogradXLA, KeyKind::Autograd, {DispatchKey::XLA}},
    {DispatchKey::AutogradMPS, KeyKind::Autograd, {DispatchKey::MPS}},
    {DispatchKey::AutogradIPU, KeyKind::Autograd, {DispatchKey::IPU}},
    {DispatchKey::AutogradXPU, KeyKind::Autograd, {DispatchKey::XPU}},
    {DispatchKey::AutogradHPU, KeyKind::Autograd, {DispatchKey::HPU}},
    {DispatchKey::AutogradVE, KeyKind::Autograd, {DispatchKey::VE}},
    {DispatchKey::AutogradLazy, KeyKind::Autograd, {DispatchKey::Lazy}},
    {DispatchKey::AutogradMTIA, KeyKind::Autograd, {DispatchKey::MTIA}},
    {DispatchKey::AutogradMAIA, KeyKind::Autograd, {DispatchKey::MAIA}},
    {DispatchKey::AutogradPrivateUse1, KeyKind::Autograd, {DispatchKey::PrivateUse1}},
    {DispatchKey::AutogradMeta, KeyKind::Autograd, {DispatchKey::Meta}},
    {DispatchKey::AutocastCPU, KeyKind::Other, {}},
    {DispatchKey::AutocastXPU, KeyKind::Other, {}},
    {DispatchKey::AutocastHPU, KeyKind::Other, {}},
    {DispatchKey::AutocastXLA, KeyKind::Other, {}},
    {DispatchKey::AutocastMPS, KeyKind::Other, {}},
    {DispatchKey::AutocastCUDA, KeyKind::Other, {}},
    {DispatchKey::AutocastPrivateUse1, KeyKind::Other, {}},
    {DispatchKey::FuncTorchBatched, KeyKind::Other, {}},
    {DispatchKey::FuncTorchVmapMode, KeyKind::Other, {}},
    {DispatchKey::PythonTLSSnapshot, KeyKind::Other, {}},
    {DispatchKey::PreDispatch, KeyKind::Other, {}},
    {DispatchKey::PythonDispatcher, KeyKind::Other, {}},
};

constexpr bool tableKeysAreInTableOrder() {
  for (int i = 0; i < kDispatchTableSize; ++i) {
    if (static_cast<int>(kTableKeys[i].key) != i) {
      return false;
    }
  }
  return true;
}
static_assert(std::size(kTableKeys) == kDispatchTableSize, "one TableKey per dispatch table entry");
static_assert(tableKeysAreInTableOrder(), "kTableKeys[i] is table entry i");

/// The keys libopdispatch gives a fallthrough backend fallback when it loads (DefaultFallbacks.cpp).
constexpr DispatchKeySet kDefaultFallthroughKeys{
    DispatchKey::BackendSelect, DispatchKey::Functionalize,     DispatchKey::ADInplaceOrView,
    DispatchKey::AutocastCPU,   DispatchKey::AutocastXPU,       DispatchKey::AutocastMPS,
    DispatchKey::AutocastCUDA,  DispatchKey::FuncTorchVmapMode, DispatchKey::PreDispatch};

// How the parsed table names kernels that are not the test's: libopdispatch's
// own fallbacks (their debug string is a DefaultFallbacks.cpp site; the
// autograd keys and PythonTLSSnapshot have ones that redispatch, the others
// fallthroughs) and the kernel that raises for an ambiguous AutogradOther.
const std::string kDefaultFallthrough = "<default fallthrough>";
const std::string kDefaultAutogradFallback = "<default redispatching fallback>";
const std::string kAmbiguous = "ambiguous_autogradother";

// --- the oracle ----------------------------------------------------------------------

/// A table entry as dumpComputedTable shows it: the kernel's debug name
/// ("fallthrough <name>" for a fallthrough, "" when missing) and the reason.
struct Entry {
  std::string kernel;
  std::string reason;
  bool operator==(const Entry& o) const { return kernel == o.kernel && reason == o.reason; }
  bool operator!=(const Entry& o) const { return !(*this == o); }
};

std::ostream& operator<<(std::ostream& os, const Entry& e) {
  return os << (e.kernel.empty() ? "(none)" : e.kernel) << " [" << e.reason << "]";
}

const Entry kMissing{"", "missing"};

/// What is registered, as the precedence rules see it.
struct Registrations {
  /// The newest kernel per key (runtime or alias) that has one.
  std::map<DispatchKey, std::string> kernels;
  /// The backend fallback per runtime key that has one.
  std::map<DispatchKey, std::string> fallbacks;
};

std::map<DispatchKey, std::string> defaultFallbacks() {
  std::map<DispatchKey, std::string> out;
  for (const TableKey& t : kTableKeys) {
    if (t.kind == KeyKind::Autograd || t.key == DispatchKey::PythonTLSSnapshot) {
      out[t.key] = kDefaultAutogradFallback;
    } else if (kDefaultFallthroughKeys.has(t.key)) {
      out[t.key] = kDefaultFallthrough;
    }
  }
  return out;
}

/// The entry the rules give key `t`. PyTorch: OperatorEntry::computeDispatchTableEntryWithDebug.
Entry expectedEntry(const Registrations& r, const TableKey& t) {
  auto kernelAt = [&](DispatchKey k) -> const std::string* {
    auto it = r.kernels.find(k);
    return it == r.kernels.end() ? nullptr : &it->second;
  };
  bool backendKernel = false;
  for (DispatchKey b : t.backends) {
    backendKernel = backendKernel || kernelAt(b) != nullptr;
  }
  const bool undefined = t.kind == KeyKind::Undefined;
  // 1. A kernel registered at the key itself.
  if (const std::string* direct = kernelAt(t.key)) {
    return {*direct, "kernel"};
  }
  // 2.1, 2.2 CompositeExplicitAutogradNonFunctional, then CompositeExplicitAutograd: backends and Undefined.
  if (undefined || t.kind == KeyKind::Backend) {
    for (DispatchKey alias :
         {DispatchKey::CompositeExplicitAutogradNonFunctional, DispatchKey::CompositeExplicitAutograd}) {
      if (const std::string* k = kernelAt(alias)) {
        return {*k, "default backend kernel"};
      }
    }
  }
  // 2.3 CompositeImplicitAutograd: backends, autograd keys and Undefined, unless
  // the key's backends or CompositeExplicitAutograd have a kernel; AutogradOther
  // with a kernel at one of its backends is ambiguous.
  if (undefined || t.kind == KeyKind::Backend || t.kind == KeyKind::Autograd) {
    if (const std::string* math = kernelAt(DispatchKey::CompositeImplicitAutograd)) {
      if (t.key == DispatchKey::AutogradOther && backendKernel) {
        return {kAmbiguous, "ambiguous autogradother"};
      }
      if (!backendKernel && !kernelAt(DispatchKey::CompositeExplicitAutograd)) {
        return {*math, "math kernel"};
      }
    }
  }
  // 2.4 Autograd: autograd keys.
  if (t.kind == KeyKind::Autograd) {
    if (const std::string* a = kernelAt(DispatchKey::Autograd)) {
      return {*a, "autograd kernel"};
    }
  }
  // 3. The backend fallback of the key.
  auto fallback = r.fallbacks.find(t.key);
  if (fallback != r.fallbacks.end()) {
    return {fallback->second, "backend fallback"};
  }
  // 4. Missing.
  return kMissing;
}

bool isFallthrough(const Entry& e) { return e.kernel == kDefaultFallthrough || e.kernel.rfind("fallthrough ", 0) == 0; }

/// dumpComputedTable() by key name, with libopdispatch's own fallbacks renamed
/// kDefaultFallthrough / kDefaultAutogradFallback.
std::map<std::string, Entry> parseComputedTable(const std::string& dump) {
  std::map<std::string, Entry> out;
  std::istringstream lines(dump);
  std::string line;
  while (std::getline(lines, line)) {
    auto colon = line.find(": ");
    auto bracket = line.rfind(" [");
    if (colon == std::string::npos || bracket == std::string::npos || bracket < colon || line.back() != ']') {
      out["unparsable line: " + line] = kMissing;
      continue;
    }
    Entry e{line.substr(colon + 2, bracket - colon - 2), line.substr(bracket + 2, line.size() - bracket - 3)};
    if (e.kernel.find("DefaultFallbacks.cpp:") != std::string::npos) {
      e.kernel = e.kernel.rfind("fallthrough ", 0) == 0 ? kDefaultFallthrough : kDefaultAutogradFallback;
    }
    out[line.substr(0, colon)] = e;
  }
  return out;
}

/// The table entry of `k` in a parsed table (kMissing if it has no line).
Entry entryAt(const std::map<std::string, Entry>& table, DispatchKey k) {
  auto it = table.find(toString(k));
  return it == table.end() ? kMissing : it->second;
}

/// The current table entry of `k` for `op`.
Entry tableEntry(const OperatorHandle& op, DispatchKey k) {
  return entryAt(parseComputedTable(op.dumpComputedTable()), k);
}

// --- the registrations -------------------------------------------------------------------

/// The eight registrations combined, and a second CPU kernel for the duplicate cases.
enum class Reg { Def, Cpu, Cuda, Autograd, AutogradCpu, Cia, Cea, CpuFallback, Cpu2 };
constexpr int kNumBasicRegs = 8;  // all but Cpu2
constexpr int kNumRegs = 9;

struct RegInfo {
  const char* debug;  ///< The kernel's debug name; "def" for the schema.
  DispatchKey key;    ///< Where it is registered (Undefined for the def).
  int64_t value;      ///< What the kernel returns.
};
constexpr RegInfo kRegInfo[kNumRegs] = {
    {"def", DispatchKey::Undefined, 0},
    {"cpu_kernel", DispatchKey::CPU, 1},
    {"cuda_kernel", DispatchKey::CUDA, 2},
    {"autograd_kernel", DispatchKey::Autograd, 3},
    {"autogradcpu_kernel", DispatchKey::AutogradCPU, 4},
    {"cia_kernel", DispatchKey::CompositeImplicitAutograd, 5},
    {"cea_kernel", DispatchKey::CompositeExplicitAutograd, 6},
    {"cpu_fallback", DispatchKey::CPU, 7},
    {"cpu_kernel_2", DispatchKey::CPU, 8},
};
const RegInfo& info(Reg r) { return kRegInfo[static_cast<int>(r)]; }

void cpuFallback(const OperatorHandle& op, Stack* stack) {
  drop(*stack, op.schema().arguments().size());
  push(*stack, info(Reg::CpuFallback).value);
}

using IntOp = TypedOperatorHandle<int64_t(const Tensor&)>;

/// Calls `op` on a CPU tensor with the key set {CPU, k} ({} for Undefined);
/// nullopt if it raises NotImplementedError.
std::optional<int64_t> callAt(const IntOp& op, const Tensor& x, DispatchKey k) {
  DispatchKeySet keys = k == DispatchKey::Undefined ? DispatchKeySet() : DispatchKeySet{DispatchKey::CPU, k};
  IncludeDispatchKeyGuard include(keys);
  ExcludeDispatchKeyGuard exclude(DispatchKeySet(DispatchKeySet::FULL) - keys);
  try {
    return op.call(x);
  } catch (const NotImplementedError&) {
    return std::nullopt;
  }
}

/// What callAt(k) returns given the expected table: the kernel's value; a
/// fallthrough or libopdispatch's autograd fallback passes on to the CPU entry;
/// nullopt (NotImplementedError) when missing or ambiguous.
std::optional<int64_t> expectedCall(const std::vector<Entry>& table, DispatchKey k) {
  const Entry& e = table[static_cast<int>(k)];
  if (k != DispatchKey::CPU && (e.kernel == kDefaultFallthrough || e.kernel == kDefaultAutogradFallback)) {
    return expectedCall(table, DispatchKey::CPU);
  }
  for (const RegInfo& r : kRegInfo) {
    if (e.kernel == r.debug) {
      return r.value;
    }
  }
  return std::nullopt;
}

std::string str(std::optional<int64_t> v) { return v ? std::to_string(*v) : "NotImplementedError"; }

/// The operator `<ns>::f` and the registrations live on it, oldest first, each
/// in its own Library; destroying the harness undoes them (the global CPU fallback too).
class Harness {
 public:
  explicit Harness(const std::string& ns)
      : ns_(ns),
        op_(Dispatcher::singleton().findOrRegisterName(OperatorName(ns + "::f", ""))),
        typed_(op_.typed<int64_t(const Tensor&)>()),
        x_(empty({1})) {}

  void add(Reg r) {
    const RegInfo& i = info(r);
    std::unique_ptr<Library> lib;
    if (r == Reg::Def) {
      lib = std::make_unique<Library>(Library::FRAGMENT, ns_, std::nullopt, __FILE__, __LINE__);
      lib->def("f(Tensor x) -> int");
    } else if (r == Reg::CpuFallback) {
      lib = std::make_unique<Library>(Library::IMPL, "_", DispatchKey::CPU, __FILE__, __LINE__);
      lib->fallback(CppFunction::makeFromBoxedFunction<&cpuFallback>().debug(i.debug));
    } else {
      lib = std::make_unique<Library>(Library::IMPL, ns_, i.key, __FILE__, __LINE__);
      int64_t v = i.value;
      lib->impl("f", CppFunction([v](const Tensor&) -> int64_t { return v; }).debug(i.debug));
    }
    live_.emplace_back(r, std::move(lib));
  }

  void remove(Reg r) {
    auto it = std::find_if(live_.begin(), live_.end(), [r](const auto& l) { return l.first == r; });
    ASSERT_NE(it, live_.end());
    live_.erase(it);
  }

  bool isLive(Reg r) const {
    return std::any_of(live_.begin(), live_.end(), [r](const auto& l) { return l.first == r; });
  }
  std::vector<Reg> live() const {
    std::vector<Reg> out;
    for (const auto& l : live_) {
      out.push_back(l.first);
    }
    return out;
  }

  /// The live set, plus whether cpu_kernel_2 is newer than cpu_kernel when
  /// both are live: what the operator's state may depend on.
  unsigned stateKey() const {
    unsigned key = 0;
    for (const auto& l : live_) {
      if (l.first == Reg::Cpu2 && (key & (1u << static_cast<int>(Reg::Cpu)))) {
        key |= 1u << kNumRegs;
      }
      key |= 1u << static_cast<int>(l.first);
    }
    return key;
  }

  const OperatorHandle& op() const { return op_; }
  std::string dump() const { return op_.dumpState() + op_.dumpComputedTable(); }

  Registrations registrations() const {
    Registrations out{{}, defaultFallbacks()};
    for (const auto& l : live_) {  // oldest first: a newer kernel at the same key replaces an older one
      const RegInfo& i = info(l.first);
      if (l.first == Reg::CpuFallback) {
        out.fallbacks[i.key] = i.debug;
      } else if (l.first != Reg::Def) {
        out.kernels[i.key] = i.debug;
      }
    }
    return out;
  }

  /// What must hold after every step: checkInvariants (the stored table and
  /// fallthrough mask equal the recomputed ones; `allOperators` for every
  /// operator), findOp lists the operator iff it has a def or kernel, and the
  /// CPU fallback is registered iff it is live. "" when all hold.
  std::string checkInvariants(bool allOperators) const {
    std::ostringstream problems;
    try {
      op_.checkInvariants();
      if (allOperators) {
        Dispatcher::singleton().checkInvariants();
      }
    } catch (const Error& e) {
      problems << "checkInvariants failed: " << e.what() << "\n";
    }
    bool listed = std::any_of(live_.begin(), live_.end(), [](const auto& l) { return l.first != Reg::CpuFallback; });
    if (Dispatcher::singleton().findOp(op_.operator_name()).has_value() != listed) {
      problems << "findOp should " << (listed ? "" : "not ") << "find the operator\n";
    }
    if (Dispatcher::singleton().hasBackendFallbackForDispatchKey(DispatchKey::CPU) != isLive(Reg::CpuFallback)) {
      problems << "hasBackendFallbackForDispatchKey(CPU) disagrees with the registrations\n";
    }
    return problems.str();
  }

  /// Every difference between the oracle and the operator's dumpState `state`,
  /// dumpComputedTable `table`, fallthrough mask and calls; "" when there is none.
  std::string checkAgainstOracle(const std::string& state, const std::string& table) const {
    std::ostringstream problems;
    // The computed table, entry by entry.
    const Registrations regs = registrations();
    std::vector<Entry> expected;
    for (const TableKey& t : kTableKeys) {
      expected.push_back(expectedEntry(regs, t));
    }
    auto parsed = parseComputedTable(table);
    size_t lines = 0;
    DispatchKeySet nonFallthrough(DispatchKeySet::FULL);
    for (const TableKey& t : kTableKeys) {
      const Entry& want = expected[static_cast<int>(t.key)];
      Entry got = entryAt(parsed, t.key);
      if (got != want) {
        problems << toString(t.key) << ": expected " << want << ", table has " << got << "\n";
      }
      lines += want != kMissing;
      if (isFallthrough(want)) {
        nonFallthrough = nonFallthrough.remove(t.key);
      }
    }
    if (parsed.size() != lines) {
      problems << "table has " << parsed.size() << " lines, expected " << lines << ":\n" << table;
    }
    if (op_.entry().nonFallthroughKeys() != nonFallthrough) {
      problems << "non-fallthrough keys " << op_.entry().nonFallthroughKeys() << ", expected " << nonFallthrough
               << "\n";
    }

    // The registered kernels in dumpState.
    std::string schemaLine = isLive(Reg::Def) ? "\nschema: " + ns_ + "::f(Tensor x) -> int\n" : "\nschema: (none)\n";
    if (state.find(schemaLine) == std::string::npos) {
      problems << "dumpState lacks" << schemaLine << state;
    }
    if (kernelLines(state) != expectedKernelLines()) {
      problems << "dumpState kernels differ from the registrations:\n" << state;
    }
    // Calls, once the operator is defined.
    if (isLive(Reg::Def)) {
      for (const TableKey& t : kTableKeys) {
        auto want = expectedCall(expected, t.key);
        auto got = callAt(typed_, x_, t.key);
        if (got != want) {
          problems << "call at " << toString(t.key) << ": expected " << str(want) << ", got " << str(got) << "\n";
        }
      }
    }
    return problems.str();
  }

  /// checkInvariants and checkAgainstOracle.
  std::string check(bool allOperators) const {
    return checkInvariants(allOperators) + checkAgainstOracle(op_.dumpState(), op_.dumpComputedTable());
  }

 private:
  /// "<Key>[alias][ (inactive)]: <debug>" of each kernel line of dumpState.
  static std::vector<std::string> kernelLines(const std::string& state) {
    std::vector<std::string> out;
    std::istringstream lines(state);
    std::string line;
    while (std::getline(lines, line)) {
      auto sep = line.find(" :: ");
      if (sep != std::string::npos) {
        out.push_back(line.substr(0, sep));
      }
    }
    return out;
  }

  /// kernelLines as the registrations imply: by key in DispatchKey order, newest first.
  std::vector<std::string> expectedKernelLines() const {
    std::vector<std::pair<DispatchKey, std::vector<const char*>>> byKey;
    for (auto it = live_.rbegin(); it != live_.rend(); ++it) {
      if (it->first == Reg::Def || it->first == Reg::CpuFallback) {
        continue;
      }
      const RegInfo& i = info(it->first);
      auto slot = std::find_if(byKey.begin(), byKey.end(), [&](const auto& b) { return b.first == i.key; });
      if (slot == byKey.end()) {
        slot = byKey.insert(byKey.end(), {i.key, {}});
      }
      slot->second.push_back(i.debug);
    }
    std::sort(byKey.begin(), byKey.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> out;
    for (const auto& [key, debugs] : byKey) {
      for (size_t n = 0; n < debugs.size(); ++n) {
        out.push_back(std::string(toString(key)) + (isAliasDispatchKey(key) ? "[alias]" : "") +
                      (n > 0 ? " (inactive)" : "") + ": " + debugs[n]);
      }
    }
    return out;
  }

  std::string ns_;
  OperatorHandle op_;
  IntOp typed_;
  Tensor x_;
  std::vector<std::pair<Reg, std::unique_ptr<Library>>> live_;
};

/// Dumps per Harness::stateKey: the first dump seen for a state, which every later one must equal.
using Recorded = std::map<unsigned, std::string>;

/// Harness::checkInvariants after every step. The first time a state is seen,
/// its dumps and calls are checked against the oracle and recorded; after
/// that, its dumps must equal the recorded ones (with every kernel's debug
/// name distinct, equal dumps mean the same kernel and reason for every key).
std::string checkStep(const Harness& h, Recorded& recorded, bool allOperators) {
  std::string problems = h.checkInvariants(allOperators);
  std::string state = h.op().dumpState();
  std::string table = h.op().dumpComputedTable();
  auto [it, inserted] = recorded.emplace(h.stateKey(), state + table);
  if (inserted) {
    problems += h.checkAgainstOracle(state, table);
  } else if (it->second != state + table) {
    problems += "dumps differ from the earlier ones with the same registrations; before:\n" + it->second + "now:\n" +
                state + table;
  }
  return problems;
}

std::vector<Reg> regsOf(unsigned mask) {
  std::vector<Reg> out;
  for (int i = 0; i < kNumRegs; ++i) {
    if (mask & (1u << i)) {
      out.push_back(static_cast<Reg>(i));
    }
  }
  return out;
}

/// The subsets of the eight basic registrations with at most `maxSize` members, smallest first.
std::vector<unsigned> subsetsUpTo(int maxSize) {
  std::vector<unsigned> out;
  for (int size = 0; size <= maxSize; ++size) {
    for (unsigned mask = 0; mask < (1u << kNumBasicRegs); ++mask) {
      if (__builtin_popcount(mask) == size) {
        out.push_back(mask);
      }
    }
  }
  return out;
}

std::vector<std::vector<Reg>> permutationsOf(unsigned mask) {
  std::vector<std::vector<Reg>> out;
  std::vector<Reg> order = regsOf(mask);
  do {
    out.push_back(order);
  } while (std::next_permutation(order.begin(), order.end()));
  return out;
}

/// "+cpu_kernel +cia_kernel -cpu_kernel": the steps so far, for failure messages.
void note(std::string& history, char sign, Reg r) {
  history += std::string(history.empty() ? "" : " ") + sign + info(r).debug;
}

constexpr int kMaxExhaustiveSize = 5;

/// The CPU backend fallback is Dispatcher-wide: each test starts and ends without one.
class ComputedTable : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(Dispatcher::singleton().hasBackendFallbackForDispatchKey(DispatchKey::CPU)); }
  void TearDown() override { EXPECT_FALSE(Dispatcher::singleton().hasBackendFallbackForDispatchKey(DispatchKey::CPU)); }
};

} // namespace

// --- the oracle's assumptions -------------------------------------------------------------

TEST_F(ComputedTable, LibopdispatchRegistersExactlyTheKnownDefaultFallbacks) {
  auto defaults = defaultFallbacks();
  for (const TableKey& t : kTableKeys) {
    EXPECT_EQ(Dispatcher::singleton().hasBackendFallbackForDispatchKey(t.key), defaults.count(t.key) > 0)
        << toString(t.key);
  }
  EXPECT_EQ(defaults.size(), 25u);  // 15 autograd keys, PythonTLSSnapshot and 9 fallthrough keys
}

// --- commutativity and invertibility, exhaustively up to five registrations ----------------

TEST_F(ComputedTable, EveryRegistrationOrderOfUpToFiveGivesTheOracleTable) {
  Harness h("dt_orders");
  Recorded recorded;
  int orders = 0;
  for (unsigned mask : subsetsUpTo(kMaxExhaustiveSize)) {
    for (const auto& order : permutationsOf(mask)) {
      ++orders;
      std::string history;
      for (Reg r : order) {
        h.add(r);
        note(history, '+', r);
        ASSERT_EQ(checkStep(h, recorded, r == Reg::CpuFallback), "") << history;
      }
      for (auto r = order.rbegin(); r != order.rend(); ++r) {
        h.remove(*r);
      }
      ASSERT_EQ(checkStep(h, recorded, true), "") << history << ", then all removed";
    }
  }
  EXPECT_EQ(orders, 8801);  // sum over k <= 5 of C(8, k) * k!
  EXPECT_EQ(recorded.size(), 219u);  // one state per subset
}

TEST_F(ComputedTable, EveryDeregistrationOrderRestoresEachEarlierState) {
  Harness h("dt_inverse");
  Recorded recorded;
  auto subsets = subsetsUpTo(kMaxExhaustiveSize);
  // Record each subset's state as registered from empty, in increasing order.
  for (unsigned mask : subsets) {
    std::string history;
    for (Reg r : regsOf(mask)) {
      h.add(r);
      note(history, '+', r);
    }
    ASSERT_EQ(checkStep(h, recorded, true), "") << history;
    for (Reg r : regsOf(mask)) {
      h.remove(r);
    }
  }
  ASSERT_EQ(recorded.size(), subsets.size());
  // Register each subset in a random order, then deregister it in every order:
  // each state on the way must be the recorded one for what is left.
  std::mt19937 rng(20240611);
  int orders = 0;
  for (unsigned mask : subsets) {
    for (const auto& removal : permutationsOf(mask)) {
      ++orders;
      std::vector<Reg> order = regsOf(mask);
      std::shuffle(order.begin(), order.end(), rng);
      std::string history;
      for (Reg r : order) {
        h.add(r);
        note(history, '+', r);
      }
      for (Reg r : removal) {
        h.remove(r);
        note(history, '-', r);
        ASSERT_EQ(checkStep(h, recorded, r == Reg::CpuFallback), "") << history;
      }
      ASSERT_TRUE(h.live().empty());
      ASSERT_FALSE(Dispatcher::singleton().findOp(OperatorName("dt_inverse::f", "")).has_value()) << history;
    }
  }
  EXPECT_EQ(orders, 8801);
  EXPECT_EQ(recorded.size(), subsets.size());  // no state appeared that was not recorded from empty
}

// --- all registrations, duplicates, random interleavings ----------------------------------

TEST_F(ComputedTable, RandomInterleavingsOfAllRegistrationsAndADuplicateCpuKernelMatchTheOracle) {
  Harness h("dt_random");
  Recorded recorded;
  std::mt19937 rng(7);
  constexpr int kRuns = 300;
  constexpr int kTogglesPerRun = 24;
  std::vector<Reg> all = regsOf((1u << kNumRegs) - 1);
  for (int run = 0; run < kRuns; ++run) {
    std::string history = "run " + std::to_string(run) + ":";
    std::vector<Reg> order = all;
    std::shuffle(order.begin(), order.end(), rng);
    for (Reg r : order) {
      h.add(r);
      note(history, '+', r);
      ASSERT_EQ(checkStep(h, recorded, r == Reg::CpuFallback), "") << history;
    }
    for (int step = 0; step < kTogglesPerRun; ++step) {
      Reg r = all[std::uniform_int_distribution<int>(0, kNumRegs - 1)(rng)];
      if (h.isLive(r)) {
        h.remove(r);
        note(history, '-', r);
      } else {
        h.add(r);
        note(history, '+', r);
      }
      ASSERT_EQ(checkStep(h, recorded, r == Reg::CpuFallback), "") << history;
    }
    std::vector<Reg> rest = h.live();
    std::shuffle(rest.begin(), rest.end(), rng);
    for (Reg r : rest) {
      h.remove(r);
      note(history, '-', r);
      ASSERT_EQ(checkStep(h, recorded, r == Reg::CpuFallback), "") << history;
    }
    ASSERT_FALSE(Dispatcher::singleton().findOp(OperatorName("dt_random::f", "")).has_value()) << history;
  }
  // With this seed every state occurs, each checked against the oracle: the
  // 2^9 sets, and the 2^7 with both CPU kernels once more for the other order.
  EXPECT_EQ(recorded.size(), 512u + 128u);
}

TEST_F(ComputedTable, NewerCpuKernelWinsAndRemovingItRestoresTheOlder) {
  Harness h("dt_duplicate");
  h.add(Reg::Def);
  h.add(Reg::Cpu);
  h.add(Reg::Cpu2);
  ASSERT_EQ(h.check(false), "");
  EXPECT_EQ(tableEntry(Dispatcher::singleton().findSchemaOrThrow("dt_duplicate::f", ""), DispatchKey::CPU),
            (Entry{"cpu_kernel_2", "kernel"}));
  std::string state = Dispatcher::singleton().findSchemaOrThrow("dt_duplicate::f", "").dumpState();
  EXPECT_NE(state.find("CPU: cpu_kernel_2 :: "), std::string::npos) << state;
  EXPECT_NE(state.find("CPU (inactive): cpu_kernel :: "), std::string::npos) << state;
  h.remove(Reg::Cpu2);
  ASSERT_EQ(h.check(false), "");
  EXPECT_EQ(tableEntry(Dispatcher::singleton().findSchemaOrThrow("dt_duplicate::f", ""), DispatchKey::CPU),
            (Entry{"cpu_kernel", "kernel"}));
}

// --- the global CPU fallback ---------------------------------------------------------------

TEST_F(ComputedTable, OnlyOneCpuFallbackAtATimeAndItGoesWithItsLibrary) {
  Harness h("dt_fallback");
  h.add(Reg::Def);
  h.add(Reg::CpuFallback);
  ASSERT_EQ(h.check(true), "");
  std::string before = h.dump();
  {
    Library second(Library::IMPL, "_", DispatchKey::CPU, "second.cpp", 2);
    try {
      second.fallback(CppFunction::makeFallthrough());
      FAIL() << "a second CPU fallback was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("CPU"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("cpu_fallback"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(h.dump(), before);
  ASSERT_EQ(h.check(true), "");
  h.remove(Reg::CpuFallback);
  EXPECT_FALSE(Dispatcher::singleton().hasBackendFallbackForDispatchKey(DispatchKey::CPU));
  ASSERT_EQ(h.check(true), "");
  // The key is free again.
  Library again(Library::IMPL, "_", DispatchKey::CPU, __FILE__, __LINE__);
  again.fallback(CppFunction::makeFromBoxedFunction<&cpuFallback>());
  EXPECT_TRUE(Dispatcher::singleton().hasBackendFallbackForDispatchKey(DispatchKey::CPU));
}

// --- focused cases, with expectations written out from PyTorch's behaviour ----------------

namespace {

Tensor cpuTensor(bool requiresGrad) {
  Tensor t = empty({1});
  t.set_requires_grad(requiresGrad);
  return t;
}

CppFunction constant(int64_t v, const char* debug) {
  return CppFunction([v](const Tensor&) -> int64_t { return v; }).debug(debug);
}

IntOp intOp(const std::string& name) {
  return Dispatcher::singleton().findSchemaOrThrow(name, "").typed<int64_t(const Tensor&)>();
}

} // namespace

TEST_F(ComputedTable, CompositeImplicitAutogradAloneServesBackendsAutogradKeysAndUndefined) {
  Library lib(Library::DEF, "dt_cia", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> int");
  lib.impl("f", dispatch(DispatchKey::CompositeImplicitAutograd, constant(5, "cia_kernel")));
  auto op = intOp("dt_cia::f");
  auto table = parseComputedTable(op.dumpComputedTable());
  const Entry math{"cia_kernel", "math kernel"};
  for (DispatchKey k : {DispatchKey::Undefined, DispatchKey::CPU, DispatchKey::CUDA, DispatchKey::SparseCPU,
                        DispatchKey::AutogradCPU, DispatchKey::AutogradOther, DispatchKey::AutogradPrivateUse1}) {
    EXPECT_EQ(entryAt(table, k), math) << toString(k);
  }
  EXPECT_EQ(entryAt(table, DispatchKey::Python), kMissing);
  EXPECT_EQ(op.call(cpuTensor(false)), 5);
  EXPECT_EQ(op.call(cpuTensor(true)), 5);
}

TEST_F(ComputedTable, KernelRegisteredWithoutAKeyIsCompositeImplicitAutograd) {
  Library lib(Library::DEF, "dt_nokey", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> int");
  lib.impl("f", constant(5, "nokey_kernel"));
  auto op = intOp("dt_nokey::f");
  EXPECT_NE(op.dumpState().find("CompositeImplicitAutograd[alias]: nokey_kernel :: "), std::string::npos);
  EXPECT_EQ(tableEntry(op, DispatchKey::AutogradCPU), (Entry{"nokey_kernel", "math kernel"}));
}

TEST_F(ComputedTable, CpuKernelSendsAutogradCpuToTheAutogradFallbackInsteadOfTheMathKernel) {
  Library lib(Library::DEF, "dt_cia_cpu", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> int");
  lib.impl("f", dispatch(DispatchKey::CompositeImplicitAutograd, constant(5, "cia_kernel")));
  lib.impl("f", dispatch(DispatchKey::CPU, constant(1, "cpu_kernel")));
  auto op = intOp("dt_cia_cpu::f");
  auto table = parseComputedTable(op.dumpComputedTable());
  EXPECT_EQ(entryAt(table, DispatchKey::CPU), (Entry{"cpu_kernel", "kernel"}));
  EXPECT_EQ(entryAt(table, DispatchKey::AutogradCPU), (Entry{kDefaultAutogradFallback, "backend fallback"}));
  // Other backends and their autograd keys still take the math kernel.
  EXPECT_EQ(entryAt(table, DispatchKey::CUDA), (Entry{"cia_kernel", "math kernel"}));
  EXPECT_EQ(entryAt(table, DispatchKey::AutogradCUDA), (Entry{"cia_kernel", "math kernel"}));
  // The autograd fallback redispatches below autograd, to the CPU kernel.
  EXPECT_EQ(op.call(cpuTensor(true)), 1);
}

TEST_F(ComputedTable, CompositeExplicitAutogradServesBackendsAndUndefinedButNotAutogradKeys) {
  Library lib(Library::DEF, "dt_cea", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> int");
  lib.impl("f", dispatch(DispatchKey::CompositeExplicitAutograd, constant(6, "cea_kernel")));
  auto op = intOp("dt_cea::f");
  const Entry cea{"cea_kernel", "default backend kernel"};
  const Entry autogradFallback{kDefaultAutogradFallback, "backend fallback"};
  auto table = parseComputedTable(op.dumpComputedTable());
  for (DispatchKey k : {DispatchKey::Undefined, DispatchKey::CPU, DispatchKey::Meta, DispatchKey::QuantizedCPU}) {
    EXPECT_EQ(entryAt(table, k), cea) << toString(k);
  }
  EXPECT_EQ(entryAt(table, DispatchKey::AutogradCPU), autogradFallback);
  EXPECT_EQ(entryAt(table, DispatchKey::AutogradOther), autogradFallback);
  EXPECT_EQ(op.call(cpuTensor(true)), 6);
  // With a CompositeImplicitAutograd kernel as well, CompositeExplicitAutograd
  // still serves the backends and keeps the math kernel off the autograd keys.
  lib.impl("f", dispatch(DispatchKey::CompositeImplicitAutograd, constant(5, "cia_kernel")));
  table = parseComputedTable(op.dumpComputedTable());
  EXPECT_EQ(entryAt(table, DispatchKey::CPU), cea);
  EXPECT_EQ(entryAt(table, DispatchKey::Undefined), cea);
  EXPECT_EQ(entryAt(table, DispatchKey::AutogradCPU), autogradFallback);
  EXPECT_EQ(op.call(cpuTensor(true)), 6);
}

TEST_F(ComputedTable, MathKernelWithAnAutogradOtherBackendKernelIsAmbiguousAndRaises) {
  for (DispatchKey backend : {DispatchKey::QuantizedCPU, DispatchKey::SparseCPU}) {
    SCOPED_TRACE(toString(backend));
    Library lib(Library::DEF, "dt_ambiguous", std::nullopt, __FILE__, __LINE__);
    lib.def("f(Tensor x) -> int");
    lib.impl("f", dispatch(DispatchKey::CompositeImplicitAutograd, constant(5, "cia_kernel")));
    lib.impl("f", dispatch(backend, constant(9, "other_backend_kernel")));
    auto op = intOp("dt_ambiguous::f");
    auto table = parseComputedTable(op.dumpComputedTable());
    EXPECT_EQ(entryAt(table, DispatchKey::AutogradOther), (Entry{kAmbiguous, "ambiguous autogradother"}));
    EXPECT_EQ(entryAt(table, backend), (Entry{"other_backend_kernel", "kernel"}));
    EXPECT_EQ(entryAt(table, DispatchKey::AutogradCPU), (Entry{"cia_kernel", "math kernel"}));
    {
      IncludeDispatchKeyGuard requiresGradOnBackend(DispatchKeySet{backend, DispatchKey::AutogradOther});
      try {
        op.call(cpuTensor(false));
        FAIL() << "the ambiguous AutogradOther kernel did not raise";
      } catch (const NotImplementedError& e) {
        EXPECT_NE(std::string(e.what()).find("dt_ambiguous::f"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("register a kernel for AutogradOther"), std::string::npos) << e.what();
      }
    }
    // An Autograd kernel does not resolve it (2.3 comes before 2.4) nor replace the math kernel at AutogradCPU.
    lib.impl("f", dispatch(DispatchKey::Autograd, constant(3, "autograd_kernel")));
    table = parseComputedTable(op.dumpComputedTable());
    EXPECT_EQ(entryAt(table, DispatchKey::AutogradOther), (Entry{kAmbiguous, "ambiguous autogradother"}));
    EXPECT_EQ(entryAt(table, DispatchKey::AutogradCPU), (Entry{"cia_kernel", "math kernel"}));
    // A kernel at AutogradOther itself does.
    lib.impl("f", dispatch(DispatchKey::AutogradOther, constant(10, "autogradother_kernel")));
    EXPECT_EQ(tableEntry(op, DispatchKey::AutogradOther), (Entry{"autogradother_kernel", "kernel"}));
    IncludeDispatchKeyGuard requiresGradOnBackend(DispatchKeySet{backend, DispatchKey::AutogradOther});
    EXPECT_EQ(op.call(cpuTensor(false)), 10);
  }
}

TEST_F(ComputedTable, FallthroughKernelAtAutogradCpuRemovesItFromTheNonFallthroughKeys) {
  Library lib(Library::DEF, "dt_fallthrough", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> int");
  lib.impl("f", dispatch(DispatchKey::CPU, constant(1, "cpu_kernel")));
  auto op = intOp("dt_fallthrough::f");
  EXPECT_TRUE(op.entry().nonFallthroughKeys().has(DispatchKey::AutogradCPU));
  {
    Library impl(Library::IMPL, "dt_fallthrough", DispatchKey::AutogradCPU, __FILE__, __LINE__);
    impl.impl("f", CppFunction::makeFallthrough().debug("autogradcpu_fallthrough"));
    EXPECT_EQ(tableEntry(op, DispatchKey::AutogradCPU), (Entry{"fallthrough autogradcpu_fallthrough", "kernel"}));
    DispatchKeySet keys = op.entry().nonFallthroughKeys();
    EXPECT_FALSE(keys.has(DispatchKey::AutogradCPU));
    EXPECT_TRUE(keys.has(DispatchKey::CPU));
    EXPECT_TRUE(keys.has(DispatchKey::AutogradCUDA));
    EXPECT_EQ(op.call(cpuTensor(true)), 1);
    op.checkInvariants();
  }
  EXPECT_TRUE(op.entry().nonFallthroughKeys().has(DispatchKey::AutogradCPU));
  EXPECT_EQ(tableEntry(op, DispatchKey::AutogradCPU), (Entry{kDefaultAutogradFallback, "backend fallback"}));
  op.checkInvariants();
}

TEST_F(ComputedTable, TableStoresOneEntryPerRunOfEqualNeighboursAndAnswersEveryKey) {
  // Note [Hot dispatch table]: a kernel at CPU and the default fallbacks make
  // a handful of runs (the missing kernel of the other backends is one run,
  // the autograd fallback of every autograd key another), not 48 entries.
  Library lib(Library::DEF, "dt_runs", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> int");
  lib.impl("f", dispatch(DispatchKey::CPU, constant(1, "cpu_kernel")));
  auto op = intOp("dt_runs::f");
  const size_t runs = op.entry().table().numRuns();
  EXPECT_GE(runs, 3u);  // Undefined (missing), CPU, the autograd fallback at least
  EXPECT_LE(runs, 12u);
  // Every index, fallthrough keys included, answers what the precedence rules choose.
  op.checkInvariants();
  EXPECT_TRUE(op.entry().table().entry(static_cast<int>(DispatchKey::ADInplaceOrView)).isFallthrough());
  EXPECT_FALSE(op.entry().nonFallthroughKeys().has(DispatchKey::ADInplaceOrView));
  EXPECT_EQ(op.call(cpuTensor(false)), 1);
  // A kernel inside a run splits it in three; removing it merges them again.
  {
    Library more(Library::IMPL, "dt_runs", DispatchKey::Meta, __FILE__, __LINE__);
    more.impl("f", constant(2, "meta_kernel"));
    EXPECT_EQ(op.entry().table().numRuns(), runs + 2);
    op.checkInvariants();
  }
  EXPECT_EQ(op.entry().table().numRuns(), runs);
  op.checkInvariants();
}

TEST_F(ComputedTable, HintHoldsTheFirstLookedUpKeySetAndEveryOtherSetStillFindsItsOwnKernel) {
  // Note [Dispatch table hint]: the first lookup of a table hints its key set
  // and run; a lookup of another set computes its run, and does not replace
  // the hint; a new table starts without one.
  Library lib(Library::DEF, "dt_hint", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> int");
  lib.impl("f", dispatch(DispatchKey::CPU, constant(1, "cpu_kernel")));
  lib.impl("f", dispatch(DispatchKey::Meta, constant(2, "meta_kernel")));
  auto op = intOp("dt_hint::f");
  const DispatchTable& table = op.entry().table();
  EXPECT_FALSE(table.hintedKeySet().has_value());
  EXPECT_EQ(op.call(cpuTensor(false)), 1);
  const std::optional<DispatchKeySet> hinted = table.hintedKeySet();
  ASSERT_TRUE(hinted.has_value());
  EXPECT_TRUE(hinted->has(DispatchKey::CPU));
  EXPECT_FALSE(hinted->has(DispatchKey::Meta));
  {
    IncludeDispatchKeyGuard meta(DispatchKey::Meta);
    EXPECT_EQ(op.call(cpuTensor(false)), 2);
  }
  EXPECT_EQ(table.hintedKeySet(), hinted);
  EXPECT_EQ(op.call(cpuTensor(false)), 1);
  EXPECT_EQ(op.call(cpuTensor(true)), 1);  // the autograd fallback, then its redispatch
  {
    // A newer CPU kernel: a new table, no hint; Meta's lookup comes first now.
    Library more(Library::IMPL, "dt_hint", DispatchKey::CPU, __FILE__, __LINE__);
    more.impl("f", constant(3, "newer_cpu_kernel"));
    EXPECT_FALSE(table.hintedKeySet().has_value());
    {
      IncludeDispatchKeyGuard meta(DispatchKey::Meta);
      EXPECT_EQ(op.call(cpuTensor(false)), 2);
    }
    ASSERT_TRUE(table.hintedKeySet().has_value());
    EXPECT_TRUE(table.hintedKeySet()->has(DispatchKey::Meta));
    EXPECT_EQ(op.call(cpuTensor(false)), 3);
    Stack s;
    s.emplace_back(cpuTensor(false));
    op.callBoxed(&s);
    EXPECT_EQ(s.at(0).toInt(), 3);
  }
  EXPECT_EQ(op.call(cpuTensor(false)), 1);
  op.checkInvariants();
}
