// The workload of a pod, from the labels its controller set.
#include "core/rightsize/workload.h"

#include <gtest/gtest.h>

namespace gpumeter::rightsize {
namespace {

TEST(Workload, ControllersFromTheirPodLabels) {
  EXPECT_EQ(
      WorkloadOf("chat-7d9f8b6c4-x2x9q", {{"pod-template-hash", "7d9f8b6c4"}, {"app", "chat"}})
          .Key(),
      "Deployment/chat");
  EXPECT_EQ(WorkloadOf("llm-api-v2-5f6d7-abcde", {{"pod-template-hash", "5f6d7"}}).Key(),
            "Deployment/llm-api-v2");
  EXPECT_EQ(WorkloadOf("db-2", {{"statefulset.kubernetes.io/pod-name", "db-2"},
                                {"controller-revision-hash", "db-6d4f"}})
                .Key(),
            "StatefulSet/db");
  EXPECT_EQ(
      WorkloadOf("train-xk2z9", {{"batch.kubernetes.io/job-name", "train"}, {"job-name", "train"}})
          .Key(),
      "Job/train");
  EXPECT_EQ(WorkloadOf("train-xk2z9", {{"job-name", "train"}}).Key(), "Job/train");
  EXPECT_EQ(WorkloadOf("exporter-8kq2v",
                       {{"pod-template-generation", "3"}, {"controller-revision-hash", "7c9"}})
                .Key(),
            "DaemonSet/exporter");
  // Labels that do not match the name are not trusted; a bare pod is its own workload.
  EXPECT_EQ(WorkloadOf("notebook", {{"pod-template-hash", "abc"}}).Key(), "Pod/notebook");
  EXPECT_EQ(WorkloadOf("notebook", {}).Key(), "Pod/notebook");
}

}  // namespace
}  // namespace gpumeter::rightsize
