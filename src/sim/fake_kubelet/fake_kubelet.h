// A kubelet PodResources server for tests and the demo: serves the v1 API from the same .proto on
// a unix socket, with what it serves and how it misbehaves (delay, error status, padding) set by
// the caller. Thread-safe: setters may be called while the server runs.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "sources/kubelet/pod_resources.h"

namespace grpc {
class Server;
}

namespace gpumeter::kubelet {

struct FakePod {
  std::string ns, name;
  std::vector<ContainerAllocation> containers;  // ns/pod of each are ignored; the pod's are used
};

class FakeKubelet {
 public:
  FakeKubelet();
  ~FakeKubelet();
  FakeKubelet(const FakeKubelet&) = delete;
  FakeKubelet& operator=(const FakeKubelet&) = delete;

  // Listens on `socket_path` (removing a stale socket file first, as the kubelet does).
  Expected<void> Start(const std::string& socket_path);
  void Stop();  // also removes the socket file

  void SetPods(std::vector<FakePod> pods);
  void SetAllocatable(std::vector<DeviceAllocation> devices);
  void SetDelay(std::chrono::milliseconds delay);
  // Every RPC fails with this gRPC status code and message (nullopt: succeed).
  void SetFailure(std::optional<std::pair<int, std::string>> failure);
  // Adds a container whose device list makes List replies at least this many bytes.
  void SetPaddingBytes(size_t bytes);

 private:
  class Service;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  std::string socket_path_;
};

}  // namespace gpumeter::kubelet
