// Umbrella header of the StrobeProtos module: the protobuf-c message types
// generated from Proto/*.proto by scripts/generate-protos.sh.
//
//   perfetto_trace.pb-c.h  Perfetto trace packets (package perfetto.protos,
//                          C prefix Perfetto__Protos__ / perfetto__protos__)
//   strobe_results.pb-c.h  perf-test results (package strobe.results,
//                          C prefix Strobe__Results__ / strobe__results__)
#ifndef STROBE_PROTOS_H
#define STROBE_PROTOS_H

#include "perfetto_trace.pb-c.h"
#include "strobe_results.pb-c.h"

#endif
