// Renders every kustomization under deploy/kubernetes with `kubectl kustomize` and checks the
// result: the agent only on GPU nodes, requests and limits on every container, probes on the
// agent's endpoints, a read-only root, nothing privileged, read-only mounts but the one that
// cannot be, RBAC verbs exactly those needed, the Service and ServiceMonitor joined up, and the
// agent's arguments, environment and device-plugin config accepted by the agent's own parsers.
// kubectl: $GPUMETER_KUBECTL, else `kubectl` on the PATH (scripts/setup.sh installs it).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>
#include <algorithm>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/agent/agent.h"
#include "cli/commands.h"
#include "core/allocation/sharing.h"
#include "core/cost/pricing.h"

namespace gpumeter {
namespace {

const std::string kDeploy = GPUMETER_DEPLOY_DIR;

// `kubectl kustomize DIR`, or for "chart:CASE" the Helm chart rendered for that case
// (tests/deploy/render_chart.sh), parsed; fails the test when the command fails.
std::vector<YAML::Node> Render(const std::string& dir) {
  const char* kubectl = std::getenv("GPUMETER_KUBECTL");
  const std::string cmd =
      dir.rfind("chart:", 0) == 0
          ? "bash " + kDeploy + "/../../tests/deploy/render_chart.sh " + dir.substr(6) + " 2>&1"
          : std::string(kubectl && *kubectl ? kubectl : "kubectl") + " kustomize " + kDeploy + "/" +
                dir + " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(cmd.c_str(), "r"), ::pclose);
  if (!pipe) {
    ADD_FAILURE() << "cannot run " << cmd;
    return {};
  }
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe.get())) > 0;) out.append(buf, n);
  const int rc = ::pclose(pipe.release());
  if (rc != 0) {
    ADD_FAILURE() << cmd << " failed (" << rc << "):\n" << out;
    return {};
  }
  std::vector<YAML::Node> docs;
  for (auto& d : YAML::LoadAll(out))
    if (d.IsMap()) docs.push_back(d);
  return docs;
}

std::vector<YAML::Node> OfKind(const std::vector<YAML::Node>& docs, const std::string& kind) {
  std::vector<YAML::Node> out;
  for (const auto& d : docs)
    if (d["kind"].as<std::string>() == kind) out.push_back(d);
  return out;
}

YAML::Node One(const std::vector<YAML::Node>& docs, const std::string& kind) {
  const auto all = OfKind(docs, kind);
  EXPECT_EQ(all.size(), 1u) << kind;
  return all.empty() ? YAML::Node() : all.front();
}

std::set<std::string> Strings(const YAML::Node& seq) {
  std::set<std::string> out;
  for (const auto& s : seq) out.insert(s.as<std::string>());
  return out;
}

// The overlays, and the chart for each of them and for the other values it takes.
const char* const kAgentOverlays[] = {"base",
                                      "overlays/time-slicing",
                                      "overlays/mps",
                                      "overlays/dra",
                                      "overlays/dcgm",
                                      "chart:base",
                                      "chart:time-slicing",
                                      "chart:mps",
                                      "chart:dra",
                                      "chart:dcgm",
                                      "chart:store-off",
                                      "chart:pinned",
                                      "chart:everything"};

// Whether a case enables `what` (mps, time-slicing, dra, dcgm, store): the overlay of that name,
// the chart's case of that name, or the chart's case with everything on.
bool Enables(const std::string& c, const std::string& what) {
  if (what == "store") return c != "chart:store-off";
  if (c == "chart:everything") return what != "time-slicing";
  return c == "overlays/" + what || c == "chart:" + what;
}

class EveryOverlay : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    docs_ = Render(GetParam());
    ASSERT_FALSE(docs_.empty());
    ds_ = One(docs_, "DaemonSet");
    ASSERT_TRUE(ds_.IsMap());
    pod_ = ds_["spec"]["template"]["spec"];
  }
  std::vector<YAML::Node> docs_;
  YAML::Node ds_, pod_;
};

TEST_P(EveryOverlay, RunsOnGpuNodesOnlyWithHostPids) {
  const auto terms = pod_["affinity"]["nodeAffinity"]
                         ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
  ASSERT_TRUE(terms.IsSequence());
  for (const auto& term : terms) {  // every term (they are ORed) must require a GPU node
    bool gpu = false;
    for (const auto& e : term["matchExpressions"])
      gpu = gpu || (e["key"].as<std::string>() == "nvidia.com/gpu.present" &&
                    e["operator"].as<std::string>() == "In" &&
                    Strings(e["values"]) == std::set<std::string>{"true"});
    EXPECT_TRUE(gpu) << "a node selector term that admits nodes without GPUs";
  }
  EXPECT_TRUE(pod_["hostPID"].as<bool>(false));
  EXPECT_FALSE(pod_["hostNetwork"].as<bool>(false));
  EXPECT_EQ(pod_["runtimeClassName"].as<std::string>(""), "nvidia");
}

TEST_P(EveryOverlay, ContainersAreBoundedProbedAndUnprivileged) {
  std::vector<YAML::Node> containers;
  for (const char* key : {"initContainers", "containers"})
    for (const auto& c : pod_[key]) containers.push_back(static_cast<const YAML::Node&>(c));
  ASSERT_FALSE(containers.empty());
  for (const auto& c : containers) {
    const std::string name = c["name"].as<std::string>();
    for (const char* kind : {"requests", "limits"})
      for (const char* res : {"cpu", "memory"})
        EXPECT_TRUE(c["resources"][kind][res].IsScalar()) << name << " " << kind << "." << res;
    EXPECT_FALSE(c["resources"]["limits"]["nvidia.com/gpu"].IsDefined())
        << name << " must not take a GPU from workloads";
    const auto sc = c["securityContext"];
    EXPECT_TRUE(sc["readOnlyRootFilesystem"].as<bool>(false)) << name;
    EXPECT_FALSE(sc["privileged"].as<bool>(false)) << name;
    EXPECT_FALSE(sc["allowPrivilegeEscalation"].as<bool>(true)) << name;
    EXPECT_EQ(Strings(sc["capabilities"]["drop"]), std::set<std::string>{"ALL"}) << name;
    // With hostPID these two are close to root on the node: only MPS (clients' environment) needs
    // them.
    const std::set<std::string> allowed =
        Enables(GetParam(), "mps") ? std::set<std::string>{"SYS_PTRACE", "DAC_READ_SEARCH"}
                                   : std::set<std::string>{};
    EXPECT_EQ(Strings(sc["capabilities"]["add"]), allowed) << name;
  }
  const auto& agent = containers.back();
  std::set<std::string> ports;
  for (const auto& p : agent["ports"]) ports.insert(p["name"].as<std::string>());
  for (const auto& [probe, path] :
       {std::pair{"livenessProbe", "/healthz"}, std::pair{"readinessProbe", "/readyz"}}) {
    EXPECT_EQ(agent[probe]["httpGet"]["path"].as<std::string>(""), path);
    EXPECT_EQ(agent[probe]["httpGet"]["port"].as<std::string>(""), "probes")
        << probe << " on the probe listener, which idle connections cannot starve";
    EXPECT_EQ(ports.count("probes"), 1u);
  }
}

TEST_P(EveryOverlay, MountsAreReadOnlyButThePodResourcesSocketDirectory) {
  std::map<std::string, YAML::Node> volumes;
  for (const auto& v : pod_["volumes"])
    volumes[v["name"].as<std::string>()] = static_cast<const YAML::Node&>(v);
  for (const auto& c : pod_["containers"]) {
    for (const auto& m : c["volumeMounts"]) {
      const std::string name = m["name"].as<std::string>();
      ASSERT_EQ(volumes.count(name), 1u) << "mount of an undeclared volume " << name;
      const auto v = volumes[name];
      if (v["emptyDir"].IsDefined()) {
        EXPECT_TRUE(v["emptyDir"]["sizeLimit"].IsScalar())
            << name << ": scratch space needs a size limit";
        continue;
      }
      if (v["hostPath"].IsDefined() &&
          v["hostPath"]["path"].as<std::string>() == "/var/lib/kubelet/pod-resources") {
        // Connecting to a unix socket needs write permission on it; the directory, not the
        // socket, because the kubelet re-creates the socket when it restarts.
        EXPECT_EQ(v["hostPath"]["type"].as<std::string>(""), "Directory");
        continue;
      }
      if (v["hostPath"].IsDefined() &&
          v["hostPath"]["path"].as<std::string>() == "/var/lib/gpumeter") {
        // The usage store: the agent's own directory, written by design.
        EXPECT_EQ(m["mountPath"].as<std::string>(), "/var/lib/gpumeter");
        continue;
      }
      EXPECT_TRUE(m["readOnly"].as<bool>(false)) << name << " is mounted writable";
    }
  }
}

TEST_P(EveryOverlay, RbacIsReadOnlyAndExactlyWhatIsNeeded) {
  const auto role = One(docs_, "ClusterRole");
  std::set<std::string> granted;
  for (const auto& rule : role["rules"]) {
    EXPECT_FALSE(rule["resourceNames"].IsDefined());
    EXPECT_FALSE(rule["nonResourceURLs"].IsDefined());
    std::string verbs;
    for (const auto& v : Strings(rule["verbs"])) verbs += (verbs.empty() ? "" : ",") + v;
    for (const auto& g : rule["apiGroups"])
      for (const auto& r : rule["resources"])
        granted.insert(g.as<std::string>() + "/" + r.as<std::string>() + " " + verbs);
  }
  // Its node's pods, listed and watched; its own Node, got (never listed: other nodes' labels are
  // none of its business).
  std::set<std::string> expected{"/pods get,list,watch", "/nodes get"};
  if (Enables(GetParam(), "dra")) expected.insert("resource.k8s.io/resourceslices get,list,watch");
  EXPECT_EQ(granted, expected);
  EXPECT_TRUE(OfKind(docs_, "Role").empty());
  EXPECT_TRUE(OfKind(docs_, "RoleBinding").empty());
  const auto binding = One(docs_, "ClusterRoleBinding");
  EXPECT_EQ(binding["roleRef"]["name"].as<std::string>(),
            role["metadata"]["name"].as<std::string>());
  ASSERT_EQ(binding["subjects"].size(), 1u);
  const auto sa = One(docs_, "ServiceAccount");
  EXPECT_EQ(binding["subjects"][0]["kind"].as<std::string>(), "ServiceAccount");
  EXPECT_EQ(binding["subjects"][0]["name"].as<std::string>(),
            sa["metadata"]["name"].as<std::string>());
  EXPECT_EQ(binding["subjects"][0]["namespace"].as<std::string>(),
            sa["metadata"]["namespace"].as<std::string>());
  EXPECT_EQ(pod_["serviceAccountName"].as<std::string>(), sa["metadata"]["name"].as<std::string>());
}

TEST_P(EveryOverlay, ServiceSelectsTheAgentsMetricsPort) {
  const auto svc = One(docs_, "Service");
  EXPECT_EQ(svc["metadata"]["name"].as<std::string>(), "gpumeter")
      << "the rules match job=\"gpumeter\"";
  const auto labels = ds_["spec"]["template"]["metadata"]["labels"];
  for (const auto& kv : svc["spec"]["selector"])
    EXPECT_EQ(labels[kv.first.as<std::string>()].as<std::string>(""), kv.second.as<std::string>());
  ASSERT_EQ(svc["spec"]["ports"].size(), 1u);
  EXPECT_EQ(svc["spec"]["ports"][0]["targetPort"].as<std::string>(), "metrics");
}

// The agent's command line and environment as the DaemonSet gives them, parsed by the agent's own
// flag parser; the device-plugin config it names parsed by the agent's own config parser.
TEST_P(EveryOverlay, TheAgentAcceptsItsArgumentsAndConfig) {
  const auto agent = pod_["containers"][0];
  std::map<std::string, std::string> env;
  for (const auto& from : agent["envFrom"]) {
    const std::string cm = from["configMapRef"]["name"].as<std::string>();
    bool found = false;
    for (const auto& m : OfKind(docs_, "ConfigMap"))
      if (m["metadata"]["name"].as<std::string>() == cm) {
        found = true;
        for (const auto& kv : m["data"])
          env[kv.first.as<std::string>()] = kv.second.as<std::string>();
      }
    EXPECT_TRUE(found) << "envFrom names ConfigMap " << cm << ", which is not rendered";
  }
  for (const auto& e : agent["env"])
    if (e["value"].IsDefined()) env[e["name"].as<std::string>()] = e["value"].as<std::string>();
  std::vector<std::string> args{"gpumeter"};
  for (const auto& a : agent["args"]) args.push_back(a.as<std::string>());
  for (const char* k : {"GPUMETER_RESOURCE_SLICES", "GPUMETER_DEVICE_PLUGIN_CONFIG",
                        "GPUMETER_STORE", "GPUMETER_DCGM_METRICS"})
    ::unsetenv(k);  // hermetic
  for (const auto& [k, v] : env)
    if (k.rfind("GPUMETER_", 0) == 0) ::setenv(k.c_str(), v.c_str(), 1);
  CLI::App app;
  gpumeter::app::AgentOptions options;
  gpumeter::cli::AddAgentCommand(app, options);
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  ASSERT_NO_THROW(app.parse(static_cast<int>(argv.size()), argv.data()));
  EXPECT_EQ(options.listen, "0.0.0.0:9402");
  EXPECT_EQ(options.probe_listen, "0.0.0.0:9401") << "the port named `probes`";
  EXPECT_EQ(options.pod_resources_socket, "/var/lib/kubelet/pod-resources/kubelet.sock");
  const std::string overlay = GetParam();
  EXPECT_EQ(options.resource_slices, Enables(overlay, "dra"));
  // The default set of per-container series unless extraArgs asks for the full one.
  EXPECT_EQ(options.full_container_series, overlay == "chart:everything");
  // The dcgm overlay points the agent at its own node's exporter: the kubelet expands $(NODE_IP),
  // which must be defined before the variable that uses it, from the node's IP.
  if (Enables(overlay, "dcgm")) {
    EXPECT_EQ(options.dcgm_metrics, "http://$(NODE_IP):9400/metrics");
    std::vector<std::string> names;
    for (const auto& e : agent["env"]) names.push_back(e["name"].as<std::string>());
    const auto ip = std::find(names.begin(), names.end(), "NODE_IP");
    ASSERT_NE(ip, names.end());
    EXPECT_LT(ip, std::find(names.begin(), names.end(), "GPUMETER_DCGM_METRICS"));
    for (const auto& e : agent["env"]) {
      if (e["name"].as<std::string>() == "NODE_IP") {
        EXPECT_EQ(e["valueFrom"]["fieldRef"]["fieldPath"].as<std::string>(), "status.hostIP");
      }
    }
  } else {
    EXPECT_TRUE(options.dcgm_metrics.empty());
  }
  // The store is on the mounted hostPath (or there is none, and nothing is mounted for it).
  bool store_mounted = false;
  for (const auto& m : agent["volumeMounts"])
    store_mounted = store_mounted || m["mountPath"].as<std::string>() == "/var/lib/gpumeter";
  EXPECT_EQ(store_mounted, Enables(overlay, "store"));
  EXPECT_EQ(options.store, Enables(overlay, "store") ? "/var/lib/gpumeter/usage.db" : "");

  if (!Enables(overlay, "time-slicing") && !Enables(overlay, "mps")) {
    EXPECT_TRUE(options.device_plugin_config.empty());
    return;
  }
  // The file named is in a mounted ConfigMap volume, and the agent's parser takes its content.
  ASSERT_FALSE(options.device_plugin_config.empty());
  std::optional<std::string> content;
  std::map<std::string, std::string> volume_to_cm;
  for (const auto& v : pod_["volumes"])
    if (v["configMap"].IsDefined())
      volume_to_cm[v["name"].as<std::string>()] = v["configMap"]["name"].as<std::string>();
  for (const auto& m : agent["volumeMounts"]) {
    const std::string dir = m["mountPath"].as<std::string>() + "/";
    if (options.device_plugin_config.rfind(dir, 0) != 0 ||
        !volume_to_cm.count(m["name"].as<std::string>()))
      continue;
    const std::string key = options.device_plugin_config.substr(dir.size());
    for (const auto& cm : OfKind(docs_, "ConfigMap"))
      if (cm["metadata"]["name"].as<std::string>() == volume_to_cm[m["name"].as<std::string>()] &&
          cm["data"][key].IsDefined())
        content = cm["data"][key].as<std::string>();
  }
  if (overlay == "chart:everything") {  // sharing.existingConfigMap: mounted, not rendered
    EXPECT_FALSE(content);
    std::set<std::string> mounted;
    for (const auto& [volume, cm] : volume_to_cm) mounted.insert(cm);
    EXPECT_EQ(mounted.count("nvidia-device-plugin-config"), 1u);
    return;
  }
  ASSERT_TRUE(content) << options.device_plugin_config << " is in no mounted ConfigMap";
  const auto sharing = k8s::ParseDevicePluginConfig(*content);
  ASSERT_TRUE(sharing) << sharing.error().message;
  EXPECT_EQ(sharing->mode, Enables(overlay, "mps") ? domain::SharingMode::kMps
                                                   : domain::SharingMode::kTimeSlicing);
  EXPECT_EQ(sharing->replicas_by_resource.at("nvidia.com/gpu"), 4u);
}

// Every namespaced object goes where the DaemonSet is: a ConfigMap an overlay generated once had
// no namespace, so it landed in kubectl's current one and the pods could not mount it.
TEST_P(EveryOverlay, EveryNamespacedObjectIsInTheAgentsNamespace) {
  const std::set<std::string> cluster_scoped{"Namespace", "ClusterRole", "ClusterRoleBinding"};
  for (const auto& d : docs_) {
    const std::string kind = d["kind"].as<std::string>();
    if (cluster_scoped.count(kind)) continue;
    EXPECT_EQ(d["metadata"]["namespace"].as<std::string>(""), "gpumeter")
        << kind << "/" << d["metadata"]["name"].as<std::string>();
  }
}

std::string OverlayName(const ::testing::TestParamInfo<const char*>& param) {
  std::string n = param.param;
  for (auto& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}
INSTANTIATE_TEST_SUITE_P(Deploy, EveryOverlay, ::testing::ValuesIn(kAgentOverlays), OverlayName);

// The pricing ConfigMap mounted for `gpumeter report` holds a file the report's parser takes.
TEST(Pricing, TheShippedPricingFileParses) {
  const auto docs = Render("base");
  bool found = false;
  for (const auto& cm : OfKind(docs, "ConfigMap")) {
    if (cm["metadata"]["name"].as<std::string>() != "gpumeter-pricing") continue;
    found = true;
    const auto p =
        cost::Pricing::Parse(cm["data"]["pricing.yaml"].as<std::string>(""), "pricing.yaml");
    ASSERT_TRUE(p) << p.error().message;
    EXPECT_EQ(p->currency(), "USD");
  }
  EXPECT_TRUE(found);
}

TEST(Monitoring, ServiceMonitorRuleAndDashboard) {
  const auto docs = Render("monitoring");
  const auto base = Render("base");
  ASSERT_FALSE(docs.empty());
  ASSERT_FALSE(base.empty());
  const auto sm = One(docs, "ServiceMonitor");
  const auto svc = One(base, "Service");
  for (const auto& kv : sm["spec"]["selector"]["matchLabels"])
    EXPECT_EQ(svc["metadata"]["labels"][kv.first.as<std::string>()].as<std::string>(""),
              kv.second.as<std::string>());
  EXPECT_EQ(Strings(sm["spec"]["namespaceSelector"]["matchNames"]),
            std::set<std::string>{svc["metadata"]["namespace"].as<std::string>()});
  ASSERT_EQ(sm["spec"]["endpoints"].size(), 1u);
  EXPECT_EQ(sm["spec"]["endpoints"][0]["port"].as<std::string>(),
            svc["spec"]["ports"][0]["name"].as<std::string>());
  // The series' namespace/pod/container are the workload's, not the target's.
  EXPECT_TRUE(sm["spec"]["endpoints"][0]["honorLabels"].as<bool>(false));

  const auto rule = One(docs, "PrometheusRule");
  size_t alerts = 0, records = 0;
  for (const auto& g : rule["spec"]["groups"])
    for (const auto& r : g["rules"]) {
      alerts += r["alert"].IsDefined();
      records += r["record"].IsDefined();
      EXPECT_FALSE(r["expr"].as<std::string>("").empty());
    }
  EXPECT_GT(alerts, 0u);
  EXPECT_GT(records, 0u);

  const auto dash = One(docs, "ConfigMap");
  EXPECT_EQ(dash["metadata"]["labels"]["grafana_dashboard"].as<std::string>(""), "1");
  const auto json = nlohmann::json::parse(
      dash["data"]["gpumeter-dashboard.json"].as<std::string>(""), nullptr, false);
  ASSERT_FALSE(json.is_discarded());
  EXPECT_FALSE(json["panels"].empty());
}

}  // namespace
}  // namespace gpumeter
