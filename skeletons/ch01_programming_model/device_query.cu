#include "device_query.h"

cudaError_t query_device(int device, DeviceSummary* summary) {
  // TODO: Fill a cudaDeviceProp with cudaGetDeviceProperties and copy the fields
  //       across; read the memory clock with cudaDeviceGetAttribute(cudaDevAttrMemoryClockRate),
  //       then compute the two derived figures. On an error, clear it with cudaGetLastError()
  //       and return it.
  (void)device; (void)summary;
  return cudaErrorNotSupported;
}
