// A client of the kubelet's PodResources API v1 over its unix socket (kubernetes-node.md §1):
// which containers hold which devices (device plugins) and DRA claim devices. One long-lived
// gRPC channel, a deadline per call, a 16 MiB receive limit. Returns plain values; no protobuf
// types above this header. Thread-compatible: one caller at a time (the sampling loop).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "domain/container_allocation.h"

namespace gpumeter::kubelet {

using k8s::ClaimDevice;
using k8s::ContainerAllocation;
using k8s::DeviceAllocation;

struct PodResourcesOptions {
  std::string socket_path = "/var/lib/kubelet/pod-resources/kubelet.sock";
  std::chrono::milliseconds deadline{5000};
  int max_receive_bytes = 16 << 20;  // gRPC's default is 4 MiB; the kubelet's own e2e use 16
};

class PodResourcesClient {
 public:
  explicit PodResourcesClient(PodResourcesOptions options);
  ~PodResourcesClient();
  PodResourcesClient(const PodResourcesClient&) = delete;
  PodResourcesClient& operator=(const PodResourcesClient&) = delete;

  // Every container of every active pod (pods without devices included). Errors: kUnavailable
  // (socket missing, kubelet down or restarting, rate limited), kDeadlineExceeded, kNotSupported
  // (RPC not served by this kubelet), kInvalidInput (reply over the receive limit); the message
  // names the socket.
  Expected<std::vector<ContainerAllocation>> List();
  // Every device the device plugins registered on the node.
  Expected<std::vector<DeviceAllocation>> GetAllocatable();
  // One pod (kubelet 1.27+, beta and on by default since 1.34).
  Expected<std::vector<ContainerAllocation>> Get(const std::string& ns, const std::string& pod);

  const PodResourcesOptions& options() const { return options_; }

 private:
  struct Impl;
  PodResourcesOptions options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpumeter::kubelet
