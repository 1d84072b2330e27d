#include "sources/node/node_source.h"

namespace gpumeter::kube_api {
namespace {

// A 200 with this node's Node object; a 403 names the RBAC the agent lacks.
Expected<std::shared_ptr<k8s::NodeFacts>> Interpret(const http::Reply& r, const std::string& what,
                                                    const std::string& node) {
  if (r.status == 403)
    return MakeError(ErrorCode::kUnavailable, what + ": " + Describe(r) +
                                                  " (the service account needs `get` on nodes: "
                                                  "deploy/kubernetes/base/rbac.yaml)");
  if (r.status != 200) return MakeError(ErrorCode::kUnavailable, what + ": " + Describe(r));
  auto facts = std::make_shared<k8s::NodeFacts>();
  if (auto applied = facts->ApplyList(r.body); !applied)
    return MakeError(ErrorCode::kInvalidInput, what + ": " + applied.error().message);
  if (facts->name != node)
    return MakeError(ErrorCode::kInvalidInput, what + ": the reply is node '" + facts->name + "'");
  return facts;
}

}  // namespace

ApiServerNodeSource::ApiServerNodeSource(NodeSourceOptions o)
    : get_(o.config,
           {"get node " + o.node_name,
            "/api/v1/nodes/" + o.node_name,
            {},
            {.connect_timeout = o.connect_timeout,
             .read_timeout = o.limits.deadline,
             .deadline = o.limits.deadline,
             .max_bytes = o.limits.max_bytes}},
           o.period,
           {"node",
            "the last good node facts; pricing by instance type and GFD labels wait for them"},
           [what = "get node " + o.node_name, node = o.node_name](const http::Reply& r) {
             return Interpret(r, what, node);
           }) {}

NodeFileSource::NodeFileSource(std::filesystem::path path, std::string node_name)
    : file_(std::move(path),
            {"node", "node file", "the last good node facts",
             [](const k8s::NodeFacts& f) {
               return f.name + (f.instance_type.empty() ? std::string() : ", " + f.instance_type);
             },
             [node = std::move(node_name)](const k8s::NodeFacts& f) -> Expected<void> {
               if (f.name != node)
                 return MakeError(ErrorCode::kInvalidInput,
                                  "Node: the file is node '" + f.name + "', not '" + node + "'");
               return {};
             }}) {}

}  // namespace gpumeter::kube_api
