// InternedString: the process-wide pool of shared texts (Note [Interned debug strings]).
#include <opdispatch/core/InternedString.h>

#include <mutex>
#include <string_view>
#include <unordered_map>

namespace opdispatch {

namespace {
/// Text -> its shared copy while some InternedString holds it. Each key
/// views the text of its own entry.
struct Pool {
  std::mutex mutex;
  std::unordered_map<std::string_view, std::weak_ptr<const std::string>> texts;
};

Pool& pool() {
  // Never destroyed: InternedStrings in static objects outlive any static pool.
  static Pool* p = new Pool();
  return *p;
}

/// Deletes a shared text when its last InternedString goes, removing its
/// pool entry unless a newer copy of the same text replaced it meanwhile.
void release(const std::string* text) {
  Pool& p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    auto it = p.texts.find(*text);
    if (it != p.texts.end() && it->second.expired()) {
      p.texts.erase(it);
    }
  }
  delete text;
}
} // namespace

InternedString::InternedString(const std::string& text) {
  if (text.empty()) {
    return;
  }
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  auto it = p.texts.find(text);
  if (it != p.texts.end()) {
    text_ = it->second.lock();
    if (text_) {
      return;
    }
    // Its last holder is releasing it (waiting for the lock): replace the
    // entry, whose key views the text being deleted.
    p.texts.erase(it);
  }
  text_ = std::shared_ptr<const std::string>(new std::string(text), &release);
  p.texts.emplace(*text_, text_);
}

const std::string& InternedString::emptyText() {
  static const std::string e;
  return e;
}

} // namespace opdispatch
