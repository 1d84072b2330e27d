// The bill benchmark's synthesizer (bench/bill.sh, `make bill-bench`; not in CI): a month of a
// large account's FOCUS export, as AWS writes it (48 columns), of about --bytes, and a usage
// store whose nodes the export's EC2 lines match. Per hour: one line per GPU node (matched), one
// per other VM (unmatched, listed), a volume each (other usage); taxes and a credit a day.
//   gpumeter_bill_synth --bytes N --nodes N --vms N --csv FILE --store FILE
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "store/store.h"

namespace {

constexpr int64_t kStart = 1793491200;  // 2026-11-01T00:00:00Z
constexpr const char* kHeader =
    "AvailabilityZone,BilledCost,BillingAccountId,BillingAccountName,BillingCurrency,"
    "BillingPeriodEnd,BillingPeriodStart,ChargeCategory,ChargeClass,ChargeDescription,"
    "ChargeFrequency,ChargePeriodEnd,ChargePeriodStart,CommitmentDiscountCategory,"
    "CommitmentDiscountId,CommitmentDiscountName,CommitmentDiscountStatus,CommitmentDiscountType,"
    "ConsumedQuantity,ConsumedUnit,ContractedCost,ContractedUnitPrice,EffectiveCost,"
    "InvoiceIssuerName,ListCost,ListUnitPrice,PricingCategory,PricingQuantity,PricingUnit,"
    "ProviderName,PublisherName,RegionId,RegionName,ResourceId,ResourceName,ResourceType,"
    "ServiceCategory,ServiceName,SkuId,SkuPriceId,SubAccountId,SubAccountName,Tags,"
    "x_CostCategories,x_Discounts,x_Operation,x_ServiceCode,x_UsageType\n";

std::string Time(int64_t t) {
  const std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string Instance(int i, int kind) { return fmt::format("i-0{:01x}{:015x}", kind, i); }

std::string Line(int64_t hour, const std::string& category, const std::string& cost,
                 const std::string& resource, const std::string& type, const std::string& service,
                 const std::string& usage_type) {
  return fmt::format(
      "us-east-1a,{0},111122223333,example-org,USD,2026-12-01T00:00:00Z,2026-11-01T00:00:00Z,{1},,"
      "\"{2} for {3}, per hour\",Usage-Based,{4},{5},,,,,,1,Hrs,{0},{0},{0},\"Amazon Web "
      "Services, Inc.\",{0},{0},Standard,1,Hrs,AWS,\"Amazon Web Services, Inc.\",us-east-1,US "
      "East (N. Virginia),arn:aws:ec2:us-east-1:444455556666:instance/{3},{3},{6},Compute,{7},"
      "SKU{8},SKU{8}.OD,444455556666,ml-platform,\"{{\"\"eks:cluster-name\"\": \"\"ml-prod\"\", "
      "\"\"team\"\": \"\"vision\"\"}}\",{{}},,RunInstances,AmazonEC2,{2}\n",
      cost, category, usage_type, resource, Time(hour + 3600), Time(hour), type, service,
      usage_type.size());
}

}  // namespace

int main(int argc, char** argv) {
  long long bytes = 1LL << 30;
  int nodes = 64, vms = 2000;
  std::string csv, store_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--bytes")
      bytes = std::atoll(v.c_str());
    else if (k == "--nodes")
      nodes = std::atoi(v.c_str());
    else if (k == "--vms")
      vms = std::atoi(v.c_str());
    else if (k == "--csv")
      csv = v;
    else if (k == "--store")
      store_path = v;
  }
  if (csv.empty() || store_path.empty()) {
    std::fprintf(stderr,
                 "usage: gpumeter_bill_synth --bytes N --nodes N --vms N --csv F --store F\n");
    return 2;
  }
  std::unique_ptr<FILE, int (*)(FILE*)> out(std::fopen(csv.c_str(), "w"), std::fclose);
  if (!out) return 1;
  long long written = std::fputs(kHeader, out.get()) >= 0 ? 0 : -1;
  int64_t hours = 0;
  for (int64_t hour = kStart; written < bytes && hour < kStart + 31 * 86400;
       hour += 3600, ++hours) {
    std::string block;
    for (int n = 0; n < nodes; ++n)
      block += Line(hour, "Usage", "4.6016", Instance(n, 1), "Instance",
                    "Amazon Elastic Compute Cloud", "BoxUsage:g6.12xlarge");
    for (int v = 0; v < vms; ++v)
      block += Line(hour, "Usage", "0.096", Instance(v, 2), "Instance",
                    "Amazon Elastic Compute Cloud", "BoxUsage:m6i.large");
    for (int v = 0; v < vms / 4; ++v)
      block += Line(hour, "Usage", "0.011", "vol-" + std::to_string(v), "Volume",
                    "Amazon Elastic Block Store", "EBS:VolumeUsage.gp3");
    if ((hour - kStart) % 86400 == 0) {
      block += Line(hour, "Tax", "12.50", "", "", "Tax", "Tax");
      block += Line(hour, "Credit", "-3.00", "", "", "AWS Credits", "Credit");
    }
    written += static_cast<long long>(block.size());
    if (std::fwrite(block.data(), 1, block.size(), out.get()) != block.size()) return 1;
  }
  auto s = gpumeter::store::Store::Open(store_path);
  if (!s) {
    std::fprintf(stderr, "%s\n", s.error().message.c_str());
    return 1;
  }
  // Each node's identity once, then every hour of the export with one GPU per node busy half.
  for (int n = 0; n < nodes; ++n) {
    gpumeter::store::IntervalRecord rec;
    rec.end_unix_s = kStart;
    gpumeter::store::NodeRecord node;
    node.name = fmt::format("gpu-node-{}", n);
    node.provider_id = "aws:///us-east-1a/" + Instance(n, 1);
    node.gpu_count = 4;
    rec.node = node;
    if (!(*s)->Write(rec)) return 1;
  }
  for (int64_t h = 0; h < hours; ++h) {
    gpumeter::store::IntervalRecord rec;
    rec.end_unix_s = kStart + h * 3600 + 1800;
    for (int n = 0; n < nodes; ++n) {
      gpumeter::store::UnitRecord u;
      u.unit = {fmt::format("gpu-node-{}", n),
                fmt::format("GPU-{}-0", n),
                fmt::format("GPU-{}-0", n),
                "NVIDIA L4",
                "",
                gpumeter::domain::SharingMode::kExclusive,
                1.0};
      u.seconds = 3600;
      u.memory_capacity_byte_seconds = 24e9 * 3600;
      u.owners.push_back(
          {gpumeter::domain::Owner::Container("ml", fmt::format("train-{}", n), "main"), 1e9 * 3600,
           1800, 0, 3600});
      u.owners.push_back({{gpumeter::domain::OwnerKind::kIdle, "", "", ""}, 0, 1800, 0, 0});
      rec.units.push_back(u);
    }
    if (!(*s)->Write(rec)) return 1;
  }
  std::printf("%lld bytes, %lld hours, %d GPU nodes, %d other VMs\n", written,
              static_cast<long long>(hours), nodes, vms);
  return 0;
}
