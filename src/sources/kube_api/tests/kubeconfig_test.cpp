#include "sources/kube_api/kubeconfig.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "support/temp_dir.h"
#include "support/yaml_bombs.h"

namespace gpumeter::kube_api {
namespace {

using ::testing::HasSubstr;

TEST(Base64, DecodesAndRejects) {
  EXPECT_EQ(DecodeBase64("aGVsbG8="), "hello");
  EXPECT_EQ(DecodeBase64("aGVsbG8"), "hello");
  EXPECT_EQ(DecodeBase64("aGVs\nbG8h"), "hello!");
  EXPECT_FALSE(DecodeBase64("aGV$"));
  EXPECT_FALSE(DecodeBase64("aG=Vs"));
}

TEST(InCluster, FromTheEnvironmentAndTheServiceAccount) {
  testing::TempDir dir("gpumeter-incluster");
  EXPECT_EQ(InClusterConfig({}, dir.path()).error().code, ErrorCode::kNotFound);
  const std::map<std::string, std::string> env{{"KUBERNETES_SERVICE_HOST", "fd00::1"},
                                               {"KUBERNETES_SERVICE_PORT", "443"}};
  EXPECT_THAT(InClusterConfig(env, dir.path()).error().message,
              HasSubstr("no service-account token"));
  std::ofstream(dir.path() / "token") << "t";
  auto c = InClusterConfig(env, dir.path());
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->server, "https://[fd00::1]:443") << "IPv6 hosts are bracketed";
  EXPECT_EQ(c->token_file, (dir.path() / "token").string());
  EXPECT_EQ(c->ca_file, (dir.path() / "ca.crt").string());
}

constexpr const char* kKubeconfig = R"(apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: prod-cluster
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority-data: LS0tLS1CRUdJTg==
- name: lab
  cluster:
    server: https://lab:6443
    certificate-authority: certs/lab-ca.crt
contexts:
- name: prod
  context: {cluster: prod-cluster, user: agent}
- name: lab
  context: {cluster: lab, user: lab-user}
users:
- name: agent
  user:
    token: abc.def
- name: lab-user
  user:
    client-certificate: /etc/lab/client.crt
    client-key: keys/client.key
)";

TEST(Kubeconfig, CurrentContextAndANamedOne) {
  auto c = ParseKubeconfig(kKubeconfig, "/home/u/.kube", "/home/u/.kube/config");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->server, "https://10.0.0.1:6443");
  EXPECT_EQ(c->ca_pem, "-----BEGIN");
  EXPECT_EQ(c->token, "abc.def");
  EXPECT_THAT(c->source, HasSubstr("context prod"));
  auto lab = ParseKubeconfig(kKubeconfig, "/home/u/.kube", "cfg", "lab");
  ASSERT_TRUE(lab) << lab.error().message;
  EXPECT_EQ(lab->ca_file, "/home/u/.kube/certs/lab-ca.crt") << "relative to the kubeconfig";
  EXPECT_EQ(lab->client_cert_file, "/etc/lab/client.crt");
  EXPECT_EQ(lab->client_key_file, "/home/u/.kube/keys/client.key");
}

TEST(Kubeconfig, ErrorsNameTheFileAndKey) {
  EXPECT_THAT(ParseKubeconfig("a: [", "/", "cfg").error().message, HasSubstr("cfg: not YAML"));
  EXPECT_THAT(ParseKubeconfig(testing::BillionLaughs(), "/", "cfg").error().message,
              HasSubstr("cfg: line 2, column 8: YAML aliases are not accepted"));
  EXPECT_THAT(ParseKubeconfig(kKubeconfig, "/", "cfg", "nope").error().message,
              HasSubstr("cfg: contexts: no context named 'nope'"));
  EXPECT_THAT(
      ParseKubeconfig("current-context: x\ncontexts:\n- name: x\n  context: {cluster: gone}\n", "/",
                      "cfg")
          .error()
          .message,
      HasSubstr("clusters: no cluster named 'gone'"));
  EXPECT_THAT(ParseKubeconfig("current-context: x\ncontexts:\n- name: x\n  context: {cluster: "
                              "c}\nclusters:\n- name: c\n  cluster: {server: ftp://x}\n",
                              "/", "cfg")
                  .error()
                  .message,
              HasSubstr("is not an http(s) URL"));
  // "aGVsbG8=" is base64 of "hello": decodes, but no certificate is in it.
  EXPECT_THAT(ParseKubeconfig("current-context: x\ncontexts:\n- name: x\n  context: {cluster: "
                              "c}\nclusters:\n- name: c\n  cluster: {server: https://x, "
                              "certificate-authority-data: aGVsbG8=}\n",
                              "/", "cfg")
                  .error()
                  .message,
              HasSubstr("certificate-authority-data: base64, but not of a PEM block"));
  const auto exec = ParseKubeconfig(
      "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\nclusters:\n- "
      "name: c\n  cluster: {server: https://x}\n"
      "users:\n- name: u\n  user:\n    exec: {command: aws}\n",
      "/", "cfg");
  EXPECT_EQ(exec.error().code, ErrorCode::kNotSupported);
  EXPECT_THAT(exec.error().message, HasSubstr("exec/auth-provider plugin"));
}

}  // namespace
}  // namespace gpumeter::kube_api
