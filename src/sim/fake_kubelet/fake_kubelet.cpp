#include "sim/fake_kubelet/fake_kubelet.h"

#include <grpcpp/grpcpp.h>

#include <filesystem>
#include <thread>

#include "podresources/v1/api.grpc.pb.h"

namespace gpumeter::kubelet {
namespace {

void Fill(const DeviceAllocation& d, v1::ContainerDevices& out) {
  out.set_resource_name(d.resource_name);
  for (const auto& id : d.device_ids) out.add_device_ids(id);
}

void Fill(const FakePod& p, v1::PodResources& out) {
  out.set_name(p.name);
  out.set_namespace_(p.ns);
  for (const auto& c : p.containers) {
    auto* cr = out.add_containers();
    cr->set_name(c.container);
    for (const auto& d : c.devices) Fill(d, *cr->add_devices());
    for (const auto& cd : c.claim_devices) {
      auto* dr = cr->add_dynamic_resources();
      dr->set_claim_name(cd.claim_name);
      dr->set_claim_namespace(cd.claim_namespace);
      auto* r = dr->add_claim_resources();
      r->set_driver_name(cd.driver);
      r->set_pool_name(cd.pool);
      r->set_device_name(cd.device);
      if (cd.share_id) r->set_share_id(*cd.share_id);
      r->add_cdi_devices()->set_name(cd.driver + "/gpu=" + cd.device);
    }
  }
}

}  // namespace

class FakeKubelet::Service final : public v1::PodResourcesLister::Service {
 public:
  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* resp) override {
    const auto st = Misbehave();
    if (!st.ok()) return st;
    std::lock_guard lock(mu_);
    for (const auto& p : pods_) Fill(p, *resp->add_pod_resources());
    if (padding_ > 0) {
      auto* pad = resp->add_pod_resources();
      pad->set_name("padding");
      pad->set_namespace_("padding");
      auto* d = pad->add_containers()->add_devices();
      d->set_resource_name("example.com/padding");
      d->add_device_ids(std::string(padding_, 'x'));
    }
    return grpc::Status::OK;
  }
  grpc::Status GetAllocatableResources(grpc::ServerContext*, const v1::AllocatableResourcesRequest*,
                                       v1::AllocatableResourcesResponse* resp) override {
    const auto st = Misbehave();
    if (!st.ok()) return st;
    std::lock_guard lock(mu_);
    for (const auto& d : allocatable_) Fill(d, *resp->add_devices());
    return grpc::Status::OK;
  }
  grpc::Status Get(grpc::ServerContext*, const v1::GetPodResourcesRequest* req,
                   v1::GetPodResourcesResponse* resp) override {
    const auto st = Misbehave();
    if (!st.ok()) return st;
    std::lock_guard lock(mu_);
    for (const auto& p : pods_) {
      if (p.ns == req->pod_namespace() && p.name == req->pod_name()) {
        Fill(p, *resp->mutable_pod_resources());
        return grpc::Status::OK;
      }
    }
    // The kubelet's own reply for an unknown pod: a plain error with code Unknown.
    return {grpc::StatusCode::UNKNOWN,
            "pod " + req->pod_name() + " in namespace " + req->pod_namespace() + " not found"};
  }

  std::mutex mu_;
  std::vector<FakePod> pods_;
  std::vector<DeviceAllocation> allocatable_;
  std::chrono::milliseconds delay_{0};
  std::optional<std::pair<int, std::string>> failure_;
  size_t padding_ = 0;

 private:
  grpc::Status Misbehave() {
    std::chrono::milliseconds delay;
    std::optional<std::pair<int, std::string>> failure;
    {
      std::lock_guard lock(mu_);
      delay = delay_;
      failure = failure_;
    }
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    if (failure) return {static_cast<grpc::StatusCode>(failure->first), failure->second};
    return grpc::Status::OK;
  }
};

FakeKubelet::FakeKubelet() : service_(std::make_unique<Service>()) {}

FakeKubelet::~FakeKubelet() { Stop(); }

Expected<void> FakeKubelet::Start(const std::string& socket_path) {
  Stop();
  std::error_code ec;
  std::filesystem::remove(socket_path, ec);  // a stale socket from an earlier run
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + socket_path, grpc::InsecureServerCredentials());  // any path
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (!server_)
    return MakeError(ErrorCode::kUnavailable, "fake kubelet: cannot listen on " + socket_path);
  socket_path_ = socket_path;
  return {};
}

void FakeKubelet::Stop() {
  if (!server_) return;
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  server_->Wait();
  server_.reset();
  std::error_code ec;
  std::filesystem::remove(socket_path_, ec);
}

void FakeKubelet::SetPods(std::vector<FakePod> pods) {
  std::lock_guard lock(service_->mu_);
  service_->pods_ = std::move(pods);
}
void FakeKubelet::SetAllocatable(std::vector<DeviceAllocation> devices) {
  std::lock_guard lock(service_->mu_);
  service_->allocatable_ = std::move(devices);
}
void FakeKubelet::SetDelay(std::chrono::milliseconds delay) {
  std::lock_guard lock(service_->mu_);
  service_->delay_ = delay;
}
void FakeKubelet::SetFailure(std::optional<std::pair<int, std::string>> failure) {
  std::lock_guard lock(service_->mu_);
  service_->failure_ = std::move(failure);
}
void FakeKubelet::SetPaddingBytes(size_t bytes) {
  std::lock_guard lock(service_->mu_);
  service_->padding_ = bytes;
}

}  // namespace gpumeter::kubelet
