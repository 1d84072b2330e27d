#include "sources/kubelet/pod_resources.h"

#include <grpcpp/grpcpp.h>

#include "podresources/v1/api.grpc.pb.h"

namespace gpumeter::kubelet {
namespace {

std::vector<DeviceAllocation> Devices(
    const google::protobuf::RepeatedPtrField<v1::ContainerDevices>& in) {
  std::vector<DeviceAllocation> out;
  out.reserve(static_cast<size_t>(in.size()));
  for (const auto& d : in)
    out.push_back({d.resource_name(), {d.device_ids().begin(), d.device_ids().end()}});
  return out;
}

void AppendPod(const v1::PodResources& pod, std::vector<ContainerAllocation>& out) {
  for (const auto& c : pod.containers()) {
    ContainerAllocation a{pod.namespace_(), pod.name(), c.name(), Devices(c.devices()), {}};
    for (const auto& claim : c.dynamic_resources())
      for (const auto& r : claim.claim_resources())
        a.claim_devices.push_back({claim.claim_name(), claim.claim_namespace(), r.driver_name(),
                                   r.pool_name(), r.device_name(),
                                   r.has_share_id() ? std::optional(r.share_id()) : std::nullopt});
    out.push_back(std::move(a));
  }
}

}  // namespace

struct PodResourcesClient::Impl {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::PodResourcesLister::Stub> stub;

  // Maps a failed status to our error, naming the socket and the RPC.
  Error Fail(const PodResourcesOptions& o, const char* rpc, const grpc::Status& s) const {
    const std::string where =
        "kubelet PodResources " + std::string(rpc) + " at " + o.socket_path + ": ";
    const std::string detail = s.error_message();
    switch (s.error_code()) {
      case grpc::StatusCode::UNAVAILABLE:
        return {ErrorCode::kUnavailable,
                where + "unavailable (" + detail +
                    "); is the kubelet running and /var/lib/kubelet/pod-resources mounted?"};
      case grpc::StatusCode::DEADLINE_EXCEEDED:
        return {ErrorCode::kDeadlineExceeded,
                where + "no reply within " + std::to_string(o.deadline.count()) + " ms"};
      case grpc::StatusCode::RESOURCE_EXHAUSTED:
        // Either the kubelet's rate limit or a reply larger than our receive limit.
        if (detail.find("rate limit") != std::string::npos)
          return {ErrorCode::kUnavailable, where + "rate limited by the kubelet (" + detail + ")"};
        return {ErrorCode::kInvalidInput, where + "reply too large (limit " +
                                              std::to_string(o.max_receive_bytes) +
                                              " bytes): " + detail};
      case grpc::StatusCode::UNIMPLEMENTED:
        return {ErrorCode::kNotSupported, where + "not served by this kubelet (" + detail + ")"};
      default:
        return {ErrorCode::kInternal, where + detail + " (gRPC code " +
                                          std::to_string(static_cast<int>(s.error_code())) + ")"};
    }
  }
  std::unique_ptr<grpc::ClientContext> Context(const PodResourcesOptions& o) const {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() + o.deadline);
    return ctx;
  }
};

PodResourcesClient::PodResourcesClient(PodResourcesOptions options)
    : options_(std::move(options)), impl_(std::make_unique<Impl>()) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options_.max_receive_bytes);
  // The kubelet re-creates its socket when it restarts: reconnect within seconds, not minutes.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5000);
  // "unix:PATH", not "unix://PATH": gRPC reads what follows "//" as an authority, so a relative
  // path (--pod-resources-socket run/kubelet.sock) would be refused as an invalid URI.
  impl_->channel = grpc::CreateCustomChannel("unix:" + options_.socket_path,
                                             grpc::InsecureChannelCredentials(), args);
  impl_->stub = v1::PodResourcesLister::NewStub(impl_->channel);
}

PodResourcesClient::~PodResourcesClient() = default;

Expected<std::vector<ContainerAllocation>> PodResourcesClient::List() {
  v1::ListPodResourcesRequest req;
  v1::ListPodResourcesResponse resp;
  auto ctx = impl_->Context(options_);
  const auto status = impl_->stub->List(ctx.get(), req, &resp);
  if (!status.ok()) return tl::unexpected(impl_->Fail(options_, "List", status));
  std::vector<ContainerAllocation> out;
  for (const auto& pod : resp.pod_resources()) AppendPod(pod, out);
  return out;
}

Expected<std::vector<DeviceAllocation>> PodResourcesClient::GetAllocatable() {
  v1::AllocatableResourcesRequest req;
  v1::AllocatableResourcesResponse resp;
  auto ctx = impl_->Context(options_);
  const auto status = impl_->stub->GetAllocatableResources(ctx.get(), req, &resp);
  if (!status.ok()) return tl::unexpected(impl_->Fail(options_, "GetAllocatableResources", status));
  return Devices(resp.devices());
}

Expected<std::vector<ContainerAllocation>> PodResourcesClient::Get(const std::string& ns,
                                                                   const std::string& pod) {
  v1::GetPodResourcesRequest req;
  req.set_pod_namespace(ns);
  req.set_pod_name(pod);
  v1::GetPodResourcesResponse resp;
  auto ctx = impl_->Context(options_);
  const auto status = impl_->stub->Get(ctx.get(), req, &resp);
  if (!status.ok()) return tl::unexpected(impl_->Fail(options_, "Get", status));
  std::vector<ContainerAllocation> out;
  AppendPod(resp.pod_resources(), out);
  return out;
}

}  // namespace gpumeter::kubelet
