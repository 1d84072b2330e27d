// The command line: each subcommand's flags, declared on a CLI11 app and parsed into the typed
// options of its use case in src/app/. Nothing here runs anything. The simulated node's commands
// (demo, simulate) are in sim_commands.h: the agent-only binary is built without them.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "app/agent/agent.h"
#include "app/diagnose/audit.h"
#include "app/diagnose/doctor.h"
#include "app/diagnose/probe.h"
#include "app/usage/cost_flags.h"
#include "app/usage/prometheus_flags.h"
#include "app/usage/report.h"
#include "app/usage/rightsize.h"
#include "app/usage/top.h"
#include "app/usage/usage_source.h"
#include "common/duration.h"

namespace gpumeter::cli {

void AddAgentCommand(CLI::App& app, app::AgentOptions& options);
void AddAuditCommand(CLI::App& app, app::AuditOptions& options);
void AddDoctorCommand(CLI::App& app, app::DoctorOptions& options);
void AddProbeCommand(CLI::App& app, app::ProbeOptions& options);
void AddReportCommand(CLI::App& app, app::ReportOptions& options);
void AddRightsizeCommand(CLI::App& app, app::RightsizeOptions& options);
void AddTopCommand(CLI::App& app, app::TopOptions& options);
// --prometheus-token-file, --prometheus-user, … on a command that reads --source prometheus:URL.
void AddPrometheusFlags(CLI::App* cmd, app::PrometheusFlags& flags);
// --policy and --idle of a command that prices usage (report, top), into `policy`.
void AddPolicyFlags(CLI::App* cmd, cost::Policy& policy);
// --by: comma-separated group-by dimensions, into `by` (its value when added is the default).
void AddGroupByFlag(CLI::App* cmd, std::vector<std::string>& by, const std::string& help);
// A flag NAME (e.g. "--to") taking an instant, given to `set` in Unix seconds as it is parsed;
// `help` is completed with the accepted forms.
void AddTimeFlag(CLI::App* cmd, const std::string& name, std::function<void(int64_t)> set,
                 const std::string& help);
// A flag NAME taking a duration (seconds, or a number and a unit) within [min, max], into `out`;
// its default shown is out's value as it is when added.
CLI::Option* AddDurationOption(CLI::App* cmd, const std::string& name, Seconds& out,
                               const std::string& help, Seconds min, Seconds max);
// The same, into seconds as a number (scenario times: simulate's --step, --from, --to).
CLI::Option* AddDurationOption(CLI::App* cmd, const std::string& name, double& out_s,
                               const std::string& help, Seconds min, Seconds max);
// --interval and --call-deadline of a command that samples NVML (agent, demo).
void AddSamplingFlags(CLI::App* cmd, Seconds& interval, Seconds& call_deadline,
                      Seconds& drain_interval);
// --container-series default|full of a command that serves /metrics (agent, demo): `full` is true
// for the full set of per-owner series.
void AddContainerSeriesFlag(CLI::App* cmd, bool& full);
// --source, one of the `accepted` kinds, given to `set` parsed (a bad one fails the parse with
// the message of app::ParseUsageSource).
// Where a store is accepted, `--store PATH` too (as `agent --store`): the same as
// `--source sqlite:PATH`; the two exclude each other. `required`: one of them must be given.
CLI::Option* AddSourceFlag(CLI::App* cmd, std::function<void(app::UsageSource)> set,
                           std::vector<app::UsageSource::Kind> accepted, const std::string& help,
                           bool required = false);

}  // namespace gpumeter::cli
