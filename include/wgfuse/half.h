/* wgfuse — f16 and bf16 scalar conversions (src/util/half.c).
 *
 * IEEE binary16 and bfloat16 to and from binary32: round to nearest even, NaN stays NaN,
 * overflow goes to inf, f16 subnormals are exact. The model loader, cpu-ref and the
 * benchmarks' f16 kernels all use these, so they agree bit for bit. */
#ifndef WGFUSE_HALF_H
#define WGFUSE_HALF_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

float    wgf_f16_to_f32(uint16_t h);
float    wgf_bf16_to_f32(uint16_t h);
uint16_t wgf_f32_to_f16(float f);
uint16_t wgf_f32_to_bf16(float f);

#ifdef __cplusplus
}
#endif
#endif
