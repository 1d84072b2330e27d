// The usage reader (core/usage/usage_reader.h) that a command's --source names: the one place that
// tells a store from a Prometheus; report, rightsize and the bill read through what it returns.
#pragma once

#include <memory>

#include "app/usage/prometheus_flags.h"
#include "app/usage/usage_source.h"
#include "common/error.h"
#include "core/usage/usage_reader.h"
#include "sources/history/prometheus_usage_reader.h"

namespace gpumeter::app {

// sqlite:PATH: the store opened read-only (kNotFound when missing); prometheus:URL: reached with
// `flags`, read with `read` (errors name the flag or the URL). Another kind: kInvalidInput (each
// command says first which kinds it reads). The reader is the caller's.
Expected<std::unique_ptr<usage::UsageReader>> OpenUsageReader(
    const UsageSource& source, const PrometheusFlags& flags,
    history::PrometheusReadOptions read = {});

}  // namespace gpumeter::app
