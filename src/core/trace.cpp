#include "core/trace.hpp"

#include <fmt/format.h>

#include <atomic>
#include <map>
#include <mutex>
#include <vector>

namespace paraxis::trace {
namespace {

struct Event {
  const char* category;
  std::string name;
  Clock::time_point start;
  Clock::time_point end;
  std::int64_t bytes;
  int thread;
};

struct Recorder {
  std::atomic<bool> on{false};
  Clock::time_point origin;
  std::mutex mutex;
  std::vector<Event> events;
  std::map<int, std::string> threadNames;
  int nextThread = 0;
};

Recorder& recorder() {
  static Recorder r;
  return r;
}

thread_local int tId = -1;
thread_local int quiet = 0;  // Quiet guards alive on this thread

// A small number per thread (its row), in the order threads first record.
int threadId() {
  int& id = tId;
  if (id < 0) {
    Recorder& r = recorder();
    std::lock_guard lock(r.mutex);
    id = r.nextThread++;
    r.threadNames.emplace(id, fmt::format("thread {}", id));
  }
  return id;
}

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
      continue;
    }
    out += c;
  }
  return out + "\"";
}

double micros(Clock::time_point t, Clock::time_point origin) {
  return std::chrono::duration<double, std::micro>(t - origin).count();
}

}  // namespace

void enable() {
  Recorder& r = recorder();
  {
    std::lock_guard lock(r.mutex);
    if (r.on.load()) return;
    r.origin = Clock::now();
  }
  r.on.store(true, std::memory_order_relaxed);
}

bool enabled() { return quiet == 0 && recorder().on.load(std::memory_order_relaxed); }

Quiet::Quiet() { ++quiet; }
Quiet::~Quiet() { --quiet; }

void nameThread(const std::string& name, bool shareRow) {
  if (!enabled()) return;
  Recorder& r = recorder();
  if (shareRow && tId < 0) {
    std::lock_guard lock(r.mutex);
    for (const auto& [id, existing] : r.threadNames) {
      if (existing == name) {
        tId = id;
        return;
      }
    }
  }
  const int id = threadId();
  std::lock_guard lock(r.mutex);
  r.threadNames[id] = name;
}

void complete(const char* category, std::string name, Clock::time_point start, Clock::time_point end,
              std::int64_t bytes) {
  if (!enabled()) return;
  const int id = threadId();
  Recorder& r = recorder();
  std::lock_guard lock(r.mutex);
  r.events.push_back({category, std::move(name), start, end, bytes, id});
}

void completeOnRow(const std::string& row, const char* category, std::string name, Clock::time_point start,
                   Clock::time_point end, std::int64_t bytes) {
  if (!enabled()) return;
  Recorder& r = recorder();
  std::lock_guard lock(r.mutex);
  int id = -1;
  for (const auto& [rowId, rowName] : r.threadNames) {
    if (rowName == row) id = rowId;
  }
  if (id < 0) {
    id = r.nextThread++;
    r.threadNames.emplace(id, row);
  }
  r.events.push_back({category, std::move(name), start, end, bytes, id});
}

Span::Span(const char* category, std::string name, std::int64_t bytes)
    : category_(category), name_(std::move(name)), bytes_(bytes), on_(enabled()) {
  if (on_) start_ = Clock::now();
}

Span::~Span() {
  if (on_) complete(category_, std::move(name_), start_, Clock::now(), bytes_);
}

std::string eventsJson(int pid, const std::string& processName) {
  Recorder& r = recorder();
  std::lock_guard lock(r.mutex);
  const Clock::time_point origin = r.origin;
  std::string out = fmt::format(R"({{"ph":"M","pid":{},"tid":0,"name":"process_name","args":{{"name":{}}}}})", pid,
                                quoted(processName));
  for (const auto& [id, name] : r.threadNames) {
    out += fmt::format(R"(,{{"ph":"M","pid":{},"tid":{},"name":"thread_name","args":{{"name":{}}}}})", pid, id, quoted(name));
  }
  for (const Event& e : r.events) {
    const std::string args = e.bytes >= 0 ? fmt::format(R"(,"args":{{"bytes":{}}})", e.bytes) : "";
    out += fmt::format(R"(,{{"ph":"X","pid":{},"tid":{},"cat":{},"name":{},"ts":{:.3f},"dur":{:.3f}{}}})", pid, e.thread,
                       quoted(e.category), quoted(e.name), micros(e.start, origin), micros(e.end, e.start), args);
  }
  return out;
}

}  // namespace paraxis::trace
