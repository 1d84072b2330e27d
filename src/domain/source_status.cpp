#include "domain/source_status.h"

namespace gpumeter::domain {

SourceTracker::SourceTracker(std::string name, std::string detail) {
  status_.name = std::move(name);
  status_.detail = std::move(detail);
}

bool SourceTracker::Succeeded(Clock::time_point now) {
  const bool back = status_.consecutive_failures > 0;
  status_.up = true;
  status_.last_success = now;
  status_.consecutive_failures = 0;
  status_.last_error.clear();
  return back;
}

bool SourceTracker::Failed(std::string why) {
  const bool first = status_.consecutive_failures == 0;
  status_.up = false;
  ++status_.consecutive_failures;
  ++status_.failures;
  status_.last_error = std::move(why);
  return first;
}

void SourceTracker::Unchanged() {
  status_.up = true;
  status_.consecutive_failures = 0;
}

}  // namespace gpumeter::domain
