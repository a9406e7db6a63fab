#ifndef WGF_UTIL_SANITIZE_PIN_H
#define WGF_UTIL_SANITIZE_PIN_H
/* Keep Vulkan driver libraries loaded (sanitizer builds; no-op otherwise). */
void wgf_sanitize_pin_drivers(void);
#endif
