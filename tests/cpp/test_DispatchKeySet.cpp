// DispatchKey / DispatchKeySet: set algebra, priority order, iteration,
// FULL_AFTER, alias-key expansion, names.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include <opdispatch/core/Device.h>
#include <opdispatch/core/DispatchKeySet.h>
#include <opdispatch/core/Exception.h>

using namespace opdispatch;

TEST(DispatchKeySet, EmptyAndSingle) {
  DispatchKeySet empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.highestPriorityTypeId(), DispatchKey::Undefined);
  EXPECT_EQ(empty.getDispatchTableIndex(), 0);
  for (int i = 1; i <= kNumRuntimeKeys; ++i) {
    auto k = static_cast<DispatchKey>(i);
    DispatchKeySet s(k);
    EXPECT_TRUE(s.has(k)) << toString(k);
    EXPECT_EQ(s.highestPriorityTypeId(), k);
    EXPECT_EQ(s.getDispatchTableIndex(), i);
    EXPECT_EQ(s.remove(k), empty);
  }
}

TEST(DispatchKeySet, UndefinedAndAliasKeysHaveNoBit) {
  EXPECT_TRUE(DispatchKeySet(DispatchKey::Undefined).empty());
  EXPECT_TRUE(DispatchKeySet(DispatchKey::Autograd).empty());
  EXPECT_TRUE(DispatchKeySet(DispatchKey::CompositeImplicitAutograd).empty());
  EXPECT_FALSE(DispatchKeySet(DispatchKeySet::FULL).has(DispatchKey::Autograd));
}

TEST(DispatchKeySet, Algebra) {
  DispatchKeySet a{DispatchKey::CPU, DispatchKey::AutogradCPU};
  DispatchKeySet b{DispatchKey::CPU, DispatchKey::Meta};
  EXPECT_EQ(a | b, (DispatchKeySet{DispatchKey::CPU, DispatchKey::Meta, DispatchKey::AutogradCPU}));
  EXPECT_EQ(a & b, DispatchKeySet(DispatchKey::CPU));
  EXPECT_EQ(a - b, DispatchKeySet(DispatchKey::AutogradCPU));
  EXPECT_EQ(a ^ b, (DispatchKeySet{DispatchKey::Meta, DispatchKey::AutogradCPU}));
  EXPECT_TRUE(a.has_any(b));
  EXPECT_FALSE(a.has_all(b));
  EXPECT_TRUE((a | b).isSupersetOf(a));
  EXPECT_EQ(a.add(DispatchKey::Meta).remove(DispatchKey::AutogradCPU), b);
}

TEST(DispatchKeySet, PriorityFollowsPyTorchOrder) {
  // Higher in the enum = higher priority, and the order is PyTorch's:
  // backends (in PyTorch's backend order, Meta last), then functionalities.
  const DispatchKey order[] = {DispatchKey::CPU,
                               DispatchKey::CUDA,
                               DispatchKey::HIP,
                               DispatchKey::XLA,
                               DispatchKey::MPS,
                               DispatchKey::IPU,
                               DispatchKey::XPU,
                               DispatchKey::HPU,
                               DispatchKey::VE,
                               DispatchKey::Lazy,
                               DispatchKey::MTIA,
                               DispatchKey::MAIA,
                               DispatchKey::PrivateUse1,
                               DispatchKey::Meta,
                               DispatchKey::QuantizedCPU,
                               DispatchKey::SparseCPU,
                               DispatchKey::BackendSelect,
                               DispatchKey::Python,
                               DispatchKey::Functionalize,
                               DispatchKey::ADInplaceOrView,
                               DispatchKey::AutogradOther,
                               DispatchKey::AutogradCPU,
                               DispatchKey::AutogradXPU,
                               DispatchKey::AutogradPrivateUse1,
                               DispatchKey::AutogradMeta,
                               DispatchKey::AutocastCPU,
                               DispatchKey::AutocastXPU,
                               DispatchKey::AutocastCUDA,
                               DispatchKey::AutocastPrivateUse1,
                               DispatchKey::FuncTorchBatched,
                               DispatchKey::PythonTLSSnapshot,
                               DispatchKey::PreDispatch,
                               DispatchKey::PythonDispatcher};
  DispatchKeySet acc;
  for (DispatchKey k : order) {
    acc = acc.add(k);
    EXPECT_EQ(acc.highestPriorityTypeId(), k);
  }
}

TEST(DispatchKeySet, IterationIsLowestFirst) {
  DispatchKeySet s{DispatchKey::AutogradCPU, DispatchKey::CPU, DispatchKey::ADInplaceOrView};
  std::vector<DispatchKey> seen(s.begin(), s.end());
  EXPECT_EQ(seen, (std::vector<DispatchKey>{DispatchKey::CPU, DispatchKey::ADInplaceOrView, DispatchKey::AutogradCPU}));
  EXPECT_EQ(toString(s), "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU)");
  EXPECT_EQ(toString(DispatchKeySet()), "DispatchKeySet()");
}

TEST(DispatchKeySet, FullAndFullAfter) {
  DispatchKeySet full(DispatchKeySet::FULL);
  int n = 0;
  for (DispatchKey k : full) {
    EXPECT_TRUE(isRuntimeDispatchKey(k));
    ++n;
  }
  EXPECT_EQ(n, kNumRuntimeKeys);
  DispatchKeySet after(DispatchKeySet::FULL_AFTER, DispatchKey::AutogradCPU);
  EXPECT_FALSE(after.has(DispatchKey::AutogradCPU));
  EXPECT_TRUE(after.has(DispatchKey::AutogradOther));
  EXPECT_TRUE(after.has(DispatchKey::CPU));
  EXPECT_FALSE(after.has(DispatchKey::AutocastCPU));
  // FULL_AFTER keeps PythonDispatcher (Note [FULL_AFTER keeps the Python dispatcher]).
  EXPECT_TRUE(after.has(DispatchKey::PythonDispatcher));
  EXPECT_EQ(DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::CPU),
            DispatchKeySet(DispatchKey::PythonDispatcher));
  EXPECT_EQ(DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::PythonDispatcher),
            DispatchKeySet(DispatchKeySet::FULL).remove(DispatchKey::PythonDispatcher));
  // after_autograd_keyset: everything below every autograd key.
  EXPECT_FALSE(after_autograd_keyset.has_any(autograd_dispatch_keyset));
  EXPECT_TRUE(after_autograd_keyset.has(DispatchKey::ADInplaceOrView));
  EXPECT_TRUE(after_autograd_keyset.has(DispatchKey::CPU));
  EXPECT_FALSE(after_ADInplaceOrView_keyset.has(DispatchKey::ADInplaceOrView));
  EXPECT_TRUE(after_ADInplaceOrView_keyset.has(DispatchKey::Python));
}

TEST(DispatchKeySet, AliasExpansion) {
  EXPECT_EQ(getRuntimeDispatchKeySet(DispatchKey::Autograd), autograd_dispatch_keyset);
  EXPECT_EQ(getRuntimeDispatchKeySet(DispatchKey::CompositeImplicitAutograd),
            backend_dispatch_keyset | autograd_dispatch_keyset);
  EXPECT_EQ(getRuntimeDispatchKeySet(DispatchKey::CompositeExplicitAutograd), backend_dispatch_keyset);
  EXPECT_EQ(getRuntimeDispatchKeySet(DispatchKey::CompositeExplicitAutogradNonFunctional), backend_dispatch_keyset);
  EXPECT_EQ(getRuntimeDispatchKeySet(DispatchKey::FuncTorchBatchedDecomposition),
            DispatchKeySet(DispatchKey::FuncTorchBatched));
  EXPECT_EQ(getRuntimeDispatchKeySet(DispatchKey::CPU), DispatchKeySet(DispatchKey::CPU));
  EXPECT_TRUE(isIncludedInAlias(DispatchKey::AutogradCPU, DispatchKey::Autograd));
  EXPECT_TRUE(isIncludedInAlias(DispatchKey::AutogradCPU, DispatchKey::CompositeImplicitAutograd));
  EXPECT_FALSE(isIncludedInAlias(DispatchKey::AutogradCPU, DispatchKey::CompositeExplicitAutograd));
  EXPECT_FALSE(isIncludedInAlias(DispatchKey::Undefined, DispatchKey::CompositeImplicitAutograd));
  EXPECT_FALSE(isIncludedInAlias(DispatchKey::Python, DispatchKey::CompositeImplicitAutograd));
  for (int i = static_cast<int>(kFirstAliasKey); i <= static_cast<int>(kLastAliasKey); ++i) {
    EXPECT_TRUE(isAliasDispatchKey(static_cast<DispatchKey>(i)));
  }
  EXPECT_FALSE(isAliasDispatchKey(DispatchKey::CPU));
}

TEST(DispatchKeySet, BackendAndAutogradRelations) {
  // Every device backend has its own autograd key, named after it, and back.
  int device_backends = 0;
  DispatchKeySet autograd_keys(DispatchKey::AutogradOther);
  for (DispatchKey b : backend_dispatch_keyset - autogradother_backends) {
    DispatchKey a = getAutogradKeyFromBackend(b);
    EXPECT_EQ(std::string(toString(a)), std::string("Autograd") + toString(b));
    EXPECT_EQ(getBackendKeySetFromAutograd(a), DispatchKeySet(b)) << toString(a);
    autograd_keys = autograd_keys.add(a);
    ++device_backends;
  }
  EXPECT_EQ(device_backends, 14);
  EXPECT_EQ(autograd_keys, autograd_dispatch_keyset);
  EXPECT_EQ(getAutogradKeyFromBackend(DispatchKey::XPU), DispatchKey::AutogradXPU);
  EXPECT_EQ(getAutogradKeyFromBackend(DispatchKey::CPU), DispatchKey::AutogradCPU);
  EXPECT_EQ(getAutogradKeyFromBackend(DispatchKey::Meta), DispatchKey::AutogradMeta);
  EXPECT_EQ(getAutogradKeyFromBackend(DispatchKey::QuantizedCPU), DispatchKey::AutogradOther);
  EXPECT_EQ(getAutogradKeyFromBackend(DispatchKey::SparseCPU), DispatchKey::AutogradOther);
  EXPECT_EQ(getAutogradKeyFromBackend(DispatchKey::Python), DispatchKey::Undefined);
  EXPECT_EQ(getBackendKeySetFromAutograd(DispatchKey::AutogradCPU), DispatchKeySet(DispatchKey::CPU));
  EXPECT_EQ(getBackendKeySetFromAutograd(DispatchKey::AutogradOther), autogradother_backends);
  EXPECT_TRUE(getBackendKeySetFromAutograd(DispatchKey::CPU).empty());
  EXPECT_EQ(tensorKeySet(DispatchKey::CPU, false), DispatchKeySet(DispatchKey::CPU));
  EXPECT_EQ(tensorKeySet(DispatchKey::CPU, true),
            (DispatchKeySet{DispatchKey::CPU, DispatchKey::ADInplaceOrView, DispatchKey::AutogradCPU}));
}

TEST(DispatchKey, NamesRoundTrip) {
  std::set<std::string> names;
  for (int i = 0; i < kNumDispatchKeys; ++i) {
    auto k = static_cast<DispatchKey>(i);
    EXPECT_EQ(parseDispatchKey(toString(k)), k);
    names.insert(toString(k));
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kNumDispatchKeys)) << "names are distinct";
  EXPECT_STREQ(toString(DispatchKey::NumDispatchKeys), "UNKNOWN_DISPATCH_KEY");
  try {
    parseDispatchKey("CPUU");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("'CPUU'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("AutogradCPU"), std::string::npos);
  }
}

TEST(Device, EveryDeviceTypeParsesAndMapsToItsBackendKey) {
  const DeviceType types[] = {kCPU, kCUDA, kHIP,  kXLA,  kMPS,  kIPU,         kXPU,
                              kHPU, kVE,   kLazy, kMTIA, kMAIA, kPrivateUse1, kMeta};
  DispatchKeySet seen;
  for (DeviceType t : types) {
    Device d(toString(t));
    EXPECT_EQ(d.type(), t);
    EXPECT_FALSE(d.has_index());
    DispatchKey k = backendKeyForDevice(t);
    EXPECT_TRUE(isBackendDispatchKey(k)) << toString(t);
    seen = seen.add(k);
  }
  EXPECT_EQ(seen, backend_dispatch_keyset - autogradother_backends);
  EXPECT_EQ(backendKeyForDevice(kPrivateUse1), DispatchKey::PrivateUse1);
  EXPECT_STREQ(toString(kPrivateUse1), "privateuseone");
  // PyTorch's numbering (c10/core/DeviceType.h).
  EXPECT_EQ(static_cast<int>(kXPU), 12);
  EXPECT_EQ(static_cast<int>(kPrivateUse1), 20);
}

TEST(Device, IndexAndErrors) {
  Device d("xpu:3");
  EXPECT_EQ(d.type(), kXPU);
  EXPECT_EQ(d.index(), 3);
  EXPECT_EQ(d.str(), "xpu:3");
  EXPECT_EQ(Device(kHPU, 1), Device("hpu:1"));
  EXPECT_TRUE(Device("privateuseone").is_privateuseone());
  EXPECT_THROW(Device("tpu"), ValueError);
  EXPECT_THROW(Device("xpu:128"), ValueError);
  EXPECT_THROW(Device(kXPU, -2), ValueError);
}
