#ifndef STROBE_CPROTOBUFC_SHIM_H
#define STROBE_CPROTOBUFC_SHIM_H
#include <protobuf-c/protobuf-c.h>
#endif
