#include "app/usage/top.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>

#include "app/config_files.h"
#include "app/usage/output.h"
#include "app/usage/top_screen.h"
#include "common/duration_format.h"
#include "sinks/top/fetcher.h"
#include "sinks/top/frame_json.h"
#include "sinks/top/keys.h"
#include "sources/history/agent_source.h"
#include "sources/history/prometheus_frame.h"

namespace gpumeter::app {
namespace {

Error Bad(std::string message) { return Error{ErrorCode::kInvalidInput, std::move(message)}; }

// The flags, checked and turned into a fetch function (which owns everything it uses: it runs
// on the fetcher's thread) and the initial view.
struct Setup {
  top::Fetcher::FetchFn fetch;
  top::ViewState view;
};

// Where the frames come from: --source agent:URL | prometheus:URL, or --agent URL, or the local
// agent. The fetch prices each frame with its own copy of the pricing.
Expected<top::Fetcher::FetchFn> SourceFn(const TopOptions& o, cost::Pricing pricing,
                                         cost::Policy policy, const std::string& by) {
  if (o.source && !o.agent.empty())
    return tl::unexpected(Bad("--source and --agent: give one of them"));
  const UsageSource source =
      o.source ? *o.source
               : UsageSource{UsageSource::Kind::kAgent, o.agent.empty() ? kLocalAgent : o.agent};
  const auto price = [pricing, policy](Expected<top::FrameData> f) {
    if (f) top::PriceFrame(*f, pricing, policy);
    return f;
  };
  if (source.kind == UsageSource::Kind::kAgent) {
    auto token = ReadTokenFlag("--agent-token-file", o.agent_token_file);
    if (!token) return tl::unexpected(token.error());
    // Deadlines well under the time a user waits for a key: a hung agent shows as stale soon.
    const http::Limits limits{.connect_timeout = std::chrono::milliseconds(1000),
                              .read_timeout = {},
                              .deadline = std::chrono::milliseconds(3000),
                              .max_bytes = 16u << 20};
    auto client = history::AgentClient::Open(source.where, *token, o.agent_ca_file, limits);
    if (!client) return tl::unexpected(client.error());
    return [client = *client, price](int64_t now) {
      return price(history::FetchAgentFrame(client, now));
    };
  }
  if (source.kind == UsageSource::Kind::kPrometheus) {
    const int64_t window = WholeSeconds(o.window);
    if (window <= 0) return tl::unexpected(Bad("--window: must be at least 1 s"));
    std::vector<std::string> keys;
    if (by.rfind("label:", 0) == 0) keys.push_back(by.substr(6));
    return [url = source.where, w = window, keys, price](int64_t now) {
      return price(history::FetchPrometheusFrame(url, now, w, keys));
    };
  }
  if (source.kind == UsageSource::Kind::kFile)  // a frame saved with --format json, as it was
    return [path = source.where](int64_t) -> Expected<top::FrameData> {
      auto text = ReadWhole("--source", path);
      if (!text) return tl::unexpected(text.error());
      const auto j = nlohmann::json::parse(*text, nullptr, false);
      if (j.is_discarded()) return tl::unexpected(Bad("--source " + path + ": not JSON"));
      return top::FrameFromJson(j);
    };
  return tl::unexpected(
      Bad("--source " + ToString(source) + ": top reads an agent, Prometheus or a file"));
}

Expected<Setup> Configure(const TopOptions& o) {
  Setup s;
  auto view = top::ParseView(o.view);
  if (!view) return tl::unexpected(view.error());
  auto sort = top::ParseSortKey(o.sort);
  if (!sort) return tl::unexpected(sort.error());
  if (auto by = top::CheckGroupBy(o.by); !by) return tl::unexpected(by.error());
  if (o.format != "text" && !o.once)
    return tl::unexpected(Bad("--format " + o.format + " goes with --once"));
  if (o.at_s != 0 && (!o.once || !o.source || o.source->kind != UsageSource::Kind::kPrometheus))
    return tl::unexpected(
        Bad("--at goes with --once and --source prometheus:URL (an agent has only now)"));
  s.view.view = *view, s.view.sort = *sort, s.view.by = o.by, s.view.filter.ns = o.ns;
  const cost::Policy policy = o.policy;
  auto pricing = LoadPricing(o.pricing_file);
  if (!pricing) return tl::unexpected(pricing.error());
  auto fetch = SourceFn(o, std::move(*pricing), policy, o.by);
  if (!fetch) return tl::unexpected(fetch.error());
  s.fetch = std::move(*fetch);
  return s;
}

// --once: one fetch on this thread, one frame out.
Expected<std::string> OnceFrame(const TopOptions& o, Setup& s) {
  const int64_t now = o.at_s != 0 ? o.at_s : top::NowUnix();
  auto frame = s.fetch(now);
  if (!frame) return tl::unexpected(frame.error());
  if (o.format == "json") {
    auto j = top::FrameOutputJson(*frame, s.view.by, s.view.sort, s.view.filter);
    if (!j) return tl::unexpected(j.error());
    // Names read from outside (a file, a pricing table) may not be UTF-8: U+FFFD, not a throw.
    return j->dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  top::FetchStatus status;
  status.now_unix_s = now, status.interval_s = o.interval.count();
  return top::PlainText(top::Layout(&*frame, s.view, status));
}

// The interactive view: the fetcher fills frames on its thread; this one draws and reads keys,
// never waiting on the source.
int RunScreen(const TopOptions& o, Setup& s) {
  if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
    spdlog::error("top: not a terminal; use --once (with --format json for scripts)");
    return 2;
  }
  const char* no_colour = std::getenv("NO_COLOR");  // https://no-color.org: set and not empty
  auto screen = Screen::Open(!(no_colour && *no_colour));
  if (!screen) {
    spdlog::error("{}", screen.error().message);
    return 1;
  }
  top::Fetcher fetcher(s.fetch, ToMilliseconds(o.interval));
  top::Interaction state{s.view, 0, false};
  state.view.interactive = true;
  std::shared_ptr<const top::FrameData> shown;
  while (!state.quit) {
    auto latest = fetcher.Get();
    if (!state.view.paused) shown = latest.frame;  // paused: the frame stays, the status moves
    top::FetchStatus status{top::NowUnix(), o.interval.count(), latest.failing_since_unix_s,
                            latest.error};
    state.view.width = (*screen)->columns();
    // The selection follows its row as rows re-sort, come and go.
    top::Reanchor(state.view, shown.get());
    const auto lines = top::Layout(shown.get(), state.view, status);
    // Scrolling stops where the last line reaches the bottom, and follows the selected row.
    state.scroll = std::clamp(state.scroll, 0,
                              std::max(0, static_cast<int>(lines.size()) - (*screen)->rows()));
    state.scroll = top::FollowSelection(lines, state.scroll, (*screen)->rows());
    // Sideways scrolling stops where the widest line's end reaches the right edge.
    size_t widest = 0;
    for (size_t i = 2; i < lines.size(); ++i) {
      size_t w = 0;
      for (const auto& span : lines[i]) w += span.text.size();
      widest = std::max(widest, w);
    }
    state.hscroll =
        std::clamp(state.hscroll, 0, std::max(0, static_cast<int>(widest) - (*screen)->columns()));
    (*screen)->Draw(lines, state.scroll, state.hscroll);
    top::ApplyKey(state, (*screen)->ReadKey(std::chrono::milliseconds(200)), (*screen)->rows() - 4);
  }
  screen->reset();  // the terminal back before the fetcher's last fetch is waited for
  return 0;
}

}  // namespace

int RunTop(const TopOptions& o) {
  auto setup = Configure(o);
  if (!setup) {
    spdlog::error("{}", setup.error().message);
    return setup.error().code == ErrorCode::kInvalidInput ? 2 : 1;
  }
  if (o.once) return EmitText(OnceFrame(o, *setup), "");
  return RunScreen(o, *setup);
}

}  // namespace gpumeter::app
