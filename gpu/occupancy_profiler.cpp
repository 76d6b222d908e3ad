#include "gpu/occupancy_profiler.hpp"

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <cstdlib>
#include <mutex>

namespace cas::gpu {
namespace {

constexpr const char* kMetric = "sm__warps_active.avg.pct_of_peak_sustained_active";

// A CUPTI parameter block: zeroed, its size set.
template <typename Params>
Params params(size_t size) {
  Params p{};
  p.structSize = size;
  return p;
}

struct CuptiFailure {
  std::string what;
};

void check(CUptiResult r, const char* call) {
  if (r == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  std::string what = std::string(call) + " failed: " + (text ? text : "CUPTI error " + std::to_string(int(r)));
  if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
    what += " (GPU performance counters are restricted to administrators on this system: NVreg_RestrictProfilingToAdminUsers)";
  throw CuptiFailure{what};
}

// Everything a measurement creates, released in reverse order whatever happens.
struct Session {
  bool initialised = false;
  CUpti_Profiler_Host_Object* host = nullptr;
  CUpti_RangeProfiler_Object* profiler = nullptr;
  ~Session() {
    if (profiler) {
      auto p = params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
      p.pRangeProfilerObject = profiler;
      cuptiRangeProfilerDisable(&p);
    }
    if (host) {
      auto p = params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
      p.pHostObject = host;
      cuptiProfilerHostDeinitialize(&p);
    }
    if (initialised) {
      auto p = params<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
      cuptiProfilerDeInitialize(&p);
    }
  }
};

}  // namespace

OccupancyMeasurement measureAchievedOccupancy(CUcontext context, CUdevice device, int kernels, const std::function<void()>& launch) {
  static std::mutex serial;
  std::lock_guard<std::mutex> lock(serial);
  OccupancyMeasurement m;
  if (kernels <= 0) return m;
  const char* metrics[] = {kMetric};
  try {
    Session session;
    auto init = params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    check(cuptiProfilerInitialize(&init), "cuptiProfilerInitialize");
    session.initialised = true;

    auto chip = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    chip.deviceIndex = size_t(device);
    check(cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName");
    auto available = params<CUpti_Profiler_GetCounterAvailability_Params>(CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
    available.ctx = context;
    check(cuptiProfilerGetCounterAvailability(&available), "cuptiProfilerGetCounterAvailability");
    std::vector<uint8_t> availability(available.counterAvailabilityImageSize);
    available.pCounterAvailabilityImage = availability.data();
    check(cuptiProfilerGetCounterAvailability(&available), "cuptiProfilerGetCounterAvailability");

    // The host side: which counters the metric needs, as a configuration image.
    auto host = params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    host.pChipName = chip.pChipName;
    host.pCounterAvailabilityImage = availability.data();
    check(cuptiProfilerHostInitialize(&host), "cuptiProfilerHostInitialize");
    session.host = host.pHostObject;
    auto add = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    add.pHostObject = session.host;
    add.ppMetricNames = metrics;
    add.numMetrics = 1;
    check(cuptiProfilerHostConfigAddMetrics(&add), "cuptiProfilerHostConfigAddMetrics");
    auto configSize = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
    configSize.pHostObject = session.host;
    check(cuptiProfilerHostGetConfigImageSize(&configSize), "cuptiProfilerHostGetConfigImageSize");
    std::vector<uint8_t> config(configSize.configImageSize);
    auto configImage = params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
    configImage.pHostObject = session.host;
    configImage.configImageSize = config.size();
    configImage.pConfigImage = config.data();
    check(cuptiProfilerHostGetConfigImage(&configImage), "cuptiProfilerHostGetConfigImage");

    // The device side: one range per kernel, replayed by CUPTI.
    auto enable = params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    enable.ctx = context;
    check(cuptiRangeProfilerEnable(&enable), "cuptiRangeProfilerEnable");
    session.profiler = enable.pRangeProfilerObject;
    auto dataSize = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
    dataSize.pRangeProfilerObject = session.profiler;
    dataSize.pMetricNames = metrics;
    dataSize.numMetrics = 1;
    dataSize.maxNumOfRanges = size_t(kernels);
    dataSize.maxNumRangeTreeNodes = uint32_t(kernels);
    check(cuptiRangeProfilerGetCounterDataSize(&dataSize), "cuptiRangeProfilerGetCounterDataSize");
    std::vector<uint8_t> counterData(dataSize.counterDataSize);
    auto data = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    data.pRangeProfilerObject = session.profiler;
    data.counterDataSize = counterData.size();
    data.pCounterData = counterData.data();
    check(cuptiRangeProfilerCounterDataImageInitialize(&data), "cuptiRangeProfilerCounterDataImageInitialize");
    auto set = params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
    set.pRangeProfilerObject = session.profiler;
    set.configSize = config.size();
    set.pConfig = config.data();
    set.counterDataImageSize = counterData.size();
    set.pCounterDataImage = counterData.data();
    set.range = CUPTI_AutoRange;
    set.replayMode = CUPTI_KernelReplay;
    set.maxRangesPerPass = size_t(kernels);
    set.numNestingLevels = 1;
    set.minNestingLevel = 1;
    set.targetNestingLevel = 1;
    check(cuptiRangeProfilerSetConfig(&set), "cuptiRangeProfilerSetConfig");

    auto start = params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    start.pRangeProfilerObject = session.profiler;
    check(cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart");
    launch();
    auto stop = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    stop.pRangeProfilerObject = session.profiler;
    check(cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop");
    auto decode = params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
    decode.pRangeProfilerObject = session.profiler;
    check(cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData");

    auto info = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
    info.pCounterDataImage = counterData.data();
    info.counterDataImageSize = counterData.size();
    check(cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");
    if (info.numTotalRanges != size_t(kernels))
      throw CuptiFailure{"CUPTI recorded " + std::to_string(info.numTotalRanges) + " ranges for " + std::to_string(kernels) + " kernels" +
                         (decode.numOfRangeDropped ? " (" + std::to_string(decode.numOfRangeDropped) + " dropped)" : "")};
    // Auto ranges are numbered in launch order.
    std::vector<double> achieved(size_t(kernels), -1.0);
    for (size_t i = 0; i < info.numTotalRanges; ++i) {
      auto name = params<CUpti_Profiler_Host_GetRangeName_Params>(CUpti_Profiler_Host_GetRangeName_Params_STRUCT_SIZE);
      name.pCounterDataImage = counterData.data();
      name.counterDataImageSize = counterData.size();
      name.rangeIndex = i;
      name.delimiter = "/";
      check(cuptiProfilerHostGetRangeName(&name), "cuptiProfilerHostGetRangeName");
      char* end = nullptr;
      const long order = name.pRangeName ? std::strtol(name.pRangeName, &end, 10) : -1;
      const bool numbered = name.pRangeName && end != name.pRangeName && *end == '\0';
      std::free(const_cast<char*>(name.pRangeName));
      const size_t slot = numbered && order >= 0 && order < kernels ? size_t(order) : i;
      double percent = 0;
      auto value = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
      value.pHostObject = session.host;
      value.pCounterDataImage = counterData.data();
      value.counterDataImageSize = counterData.size();
      value.rangeIndex = i;
      value.ppMetricNames = metrics;
      value.numMetrics = 1;
      value.pMetricValues = &percent;
      check(cuptiProfilerHostEvaluateToGpuValues(&value), "cuptiProfilerHostEvaluateToGpuValues");
      achieved[slot] = percent / 100.0;
    }
    m.achieved = std::move(achieved);
  } catch (const CuptiFailure& f) {
    m.error = f.what;
  }
  return m;
}

}  // namespace cas::gpu
