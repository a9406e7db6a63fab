/* Sanitizer builds only: keep the Vulkan loader and CPU drivers loaded until exit.
 *
 * The Vulkan loader dlclose()s the driver when the instance goes away; LeakSanitizer then
 * sees the driver's own allocations as "<unknown module>" and cannot attribute them, so
 * tests/lsan.supp could not tell them from wgfuse's. Pinning them (RTLD_NODELETE) keeps
 * their names in the reports. In normal builds this function does nothing. */
#include "util/sanitize_pin.h"

#if defined(WGF_SANITIZE_BUILD)
#include <dlfcn.h>
void wgf_sanitize_pin_drivers(void)
{
    static const char *libs[] = {"libvulkan.so.1", "libvulkan_lvp.so", "/usr/lib/chromium/libvk_swiftshader.so"};
    for (unsigned i = 0; i < sizeof libs / sizeof libs[0]; i++) dlopen(libs[i], RTLD_LAZY | RTLD_NODELETE);
}
#else
void wgf_sanitize_pin_drivers(void) {}
#endif
