/* VK_LAYER_WGF_stats — a Vulkan layer (a developer's tool beside wgfuse, not part of it) that
 * asks the driver what it compiled each compute pipeline to, through
 * VK_KHR_pipeline_executable_properties: on NVIDIA the register count, shared and local
 * (spill) memory and binary size per pipeline, which WebGPU does not expose and which set how
 * many workgroups a multiprocessor holds. With wgfuse's global --backend-labels flag Dawn names
 * each VkPipeline after the wgfuse label (its use_user_defined_labels_in_backend toggle), so the
 * log joins the driver's numbers to the kernel roles that `--profile` times (join.py).
 *
 * Use (docs/runtime.md, "Driver statistics per pipeline"):
 *   VK_LAYER_PATH=<dir of VK_LAYER_WGF_stats.json> VK_INSTANCE_LAYERS=VK_LAYER_WGF_stats \
 *   VK_LOADER_LAYERS_ENABLE=VK_LAYER_WGF_stats WGF_VKSTATS_OUT=log.txt wgfuse --backend-labels ...
 * Log lines: "device: with|without VK_KHR_pipeline_executable_properties", then per compute
 * pipeline "pipeline N handle=H module=mNNNN spirv_bytes=B | Stat=value | ..." (no statistics
 * where the driver lacks the extension: lavapipe), and "name pipeline handle=H <name>" when the
 * application names it. WGF_VKSTATS_SPV=dir also writes each shader module's SPIR-V as
 * dir/mNNNN.spv, WGF_VKSTATS_IR=dir the driver's internal representations where it gives any
 * (NVIDIA 580 gives none).
 *
 * A layer is loaded once per process and reached only through the loader's entry points, so
 * its state is one static struct (L), guarded by a mutex: the one place in the tree where
 * module state is the design, not a shortcut. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#define EXPORT __attribute__((visibility("default")))

static struct layer {
    pthread_mutex_t                           mu;
    FILE                                     *out;
    const char                               *spv_dir, *ir_dir;
    VkInstance                                inst;
    PFN_vkGetInstanceProcAddr                 gipa;
    PFN_vkGetDeviceProcAddr                   gdpa;
    PFN_vkCreateComputePipelines              create_cp;
    PFN_vkCreateShaderModule                  create_sm;
    PFN_vkGetPipelineExecutablePropertiesKHR  props;
    PFN_vkGetPipelineExecutableStatisticsKHR  stats;
    PFN_vkGetPipelineExecutableInternalRepresentationsKHR irs;
    PFN_vkSetDebugUtilsObjectNameEXT          set_name;
    int                                       have_ext;
    unsigned                                  n_pipes, n_mods;
    struct { VkShaderModule h; size_t bytes; unsigned idx; } mods[4096];
} L = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* the next layer's entry points as CreateInstance / CreateDevice stored them (read under the
 * lock: Dawn may call in from its own threads, and nothing else orders those writes for a
 * thread sanitizer) */
static struct layer_next {
    VkInstance                   inst;
    PFN_vkGetInstanceProcAddr    gipa;
    PFN_vkGetDeviceProcAddr      gdpa;
    PFN_vkCreateComputePipelines create_cp;
    PFN_vkCreateShaderModule     create_sm;
    int                          have_ext;
} next(void)
{
    pthread_mutex_lock(&L.mu);
    struct layer_next n = {L.inst, L.gipa, L.gdpa, L.create_cp, L.create_sm, L.have_ext};
    pthread_mutex_unlock(&L.mu);
    return n;
}

static FILE *out(void)
{
    if (!L.out) {
        const char *p = getenv("WGF_VKSTATS_OUT");
        L.out = p ? fopen(p, "w") : NULL;
        if (p && !L.out)
            fprintf(stderr, "VK_LAYER_WGF_stats: cannot write WGF_VKSTATS_OUT '%s': %s; logging to stderr\n", p,
                    strerror(errno));
        if (!L.out) L.out = stderr;
        L.spv_dir = getenv("WGF_VKSTATS_SPV");
        L.ir_dir  = getenv("WGF_VKSTATS_IR");
    }
    return L.out;
}

static VKAPI_ATTR VkResult VKAPI_CALL l_CreateInstance(const VkInstanceCreateInfo *ci, const VkAllocationCallbacks *a,
                                                        VkInstance *inst)
{
    VkLayerInstanceCreateInfo *c = (VkLayerInstanceCreateInfo *)ci->pNext;
    while (c && !(c->sType == VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO && c->function == VK_LAYER_LINK_INFO))
        c = (VkLayerInstanceCreateInfo *)c->pNext;
    if (!c) return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr gipa = c->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    c->u.pLayerInfo                = c->u.pLayerInfo->pNext;
    PFN_vkCreateInstance create    = (PFN_vkCreateInstance)gipa(NULL, "vkCreateInstance");
    VkResult r                     = create(ci, a, inst);
    if (r == VK_SUCCESS) {
        pthread_mutex_lock(&L.mu);
        L.gipa = gipa, L.inst = *inst;
        pthread_mutex_unlock(&L.mu);
    }
    return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL l_CreateDevice(VkPhysicalDevice pd, const VkDeviceCreateInfo *ci,
                                                      const VkAllocationCallbacks *a, VkDevice *dev)
{
    VkLayerDeviceCreateInfo *c = (VkLayerDeviceCreateInfo *)ci->pNext;
    while (c && !(c->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO && c->function == VK_LAYER_LINK_INFO))
        c = (VkLayerDeviceCreateInfo *)c->pNext;
    if (!c) return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr gipa = c->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    PFN_vkGetDeviceProcAddr   gdpa = c->u.pLayerInfo->pfnNextGetDeviceProcAddr;
    c->u.pLayerInfo                = c->u.pLayerInfo->pNext;
    VkInstance         inst        = next().inst;
    PFN_vkCreateDevice create      = (PFN_vkCreateDevice)gipa(inst, "vkCreateDevice");
    PFN_vkEnumerateDeviceExtensionProperties enum_ext =
        (PFN_vkEnumerateDeviceExtensionProperties)gipa(inst, "vkEnumerateDeviceExtensionProperties");
    uint32_t n = 0;
    enum_ext(pd, NULL, &n, NULL);
    VkExtensionProperties *ep = calloc(n ? n : 1, sizeof *ep);
    enum_ext(pd, NULL, &n, ep);
    int have = 0;
    for (uint32_t i = 0; i < n; i++) have |= !strcmp(ep[i].extensionName, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    free(ep);
    for (uint32_t i = 0; i < ci->enabledExtensionCount; i++)
        if (!strcmp(ci->ppEnabledExtensionNames[i], VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME)) have = 2;
    VkDeviceCreateInfo info = *ci;
    const char       **names = calloc(ci->enabledExtensionCount + 1, sizeof *names);
    memcpy(names, ci->ppEnabledExtensionNames, ci->enabledExtensionCount * sizeof *names);
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR feat = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR,
        .pNext = (void *)ci->pNext, .pipelineExecutableInfo = VK_TRUE};
    if (have == 1) {
        names[info.enabledExtensionCount++] = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
        info.ppEnabledExtensionNames        = names;
        info.pNext                          = &feat;
    }
    VkResult r = create(pd, &info, a, dev);
    free(names);
    pthread_mutex_lock(&L.mu);
    fprintf(out(), "device: %s VK_KHR_pipeline_executable_properties\n", have ? "with" : "without");
    fflush(out());
    if (r != VK_SUCCESS) {
        pthread_mutex_unlock(&L.mu);
        return r;
    }
    L.gdpa      = gdpa;
    L.have_ext  = have;
    L.create_cp = (PFN_vkCreateComputePipelines)gdpa(*dev, "vkCreateComputePipelines");
    L.create_sm = (PFN_vkCreateShaderModule)gdpa(*dev, "vkCreateShaderModule");
    if (have) {
        L.props = (PFN_vkGetPipelineExecutablePropertiesKHR)gdpa(*dev, "vkGetPipelineExecutablePropertiesKHR");
        L.stats = (PFN_vkGetPipelineExecutableStatisticsKHR)gdpa(*dev, "vkGetPipelineExecutableStatisticsKHR");
        L.irs   = (PFN_vkGetPipelineExecutableInternalRepresentationsKHR)gdpa(
            *dev, "vkGetPipelineExecutableInternalRepresentationsKHR");
    }
    pthread_mutex_unlock(&L.mu);
    return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL l_CreateShaderModule(VkDevice d, const VkShaderModuleCreateInfo *ci,
                                                            const VkAllocationCallbacks *a, VkShaderModule *m)
{
    VkResult r = next().create_sm(d, ci, a, m);
    if (r != VK_SUCCESS) return r;
    pthread_mutex_lock(&L.mu);
    out();
    unsigned idx = L.n_mods++;
    if (idx < 4096) L.mods[idx].h = *m, L.mods[idx].bytes = ci->codeSize, L.mods[idx].idx = idx;
    if (L.spv_dir) {
        char path[512];
        snprintf(path, sizeof path, "%s/m%04u.spv", L.spv_dir, idx);
        FILE *f = fopen(path, "wb");
        if (f) fwrite(ci->pCode, 1, ci->codeSize, f), fclose(f);
        else if (idx == 0)
            fprintf(stderr, "VK_LAYER_WGF_stats: cannot write WGF_VKSTATS_SPV '%s': %s; no SPIR-V written\n", path,
                    strerror(errno));
    }
    pthread_mutex_unlock(&L.mu);
    return r;
}

static void report(VkDevice d, VkPipeline p, VkShaderModule m)
{
    unsigned idx = L.n_pipes++, mi = ~0u;
    size_t   bytes = 0;
    for (unsigned i = 0; i < L.n_mods && i < 4096; i++)
        if (L.mods[i].h == m) mi = L.mods[i].idx, bytes = L.mods[i].bytes;
    FILE *f = out();
    fprintf(f, "pipeline %u handle=%llx module=m%04u spirv_bytes=%zu", idx, (unsigned long long)p, mi, bytes);
    if (L.have_ext && L.props && L.stats) {
        VkPipelineInfoKHR pi = {.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, .pipeline = p};
        uint32_t          ne = 0;
        L.props(d, &pi, &ne, NULL);
        for (uint32_t e = 0; e < ne; e++) {
            VkPipelineExecutableInfoKHR ei = {.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, .pipeline = p,
                                              .executableIndex = e};
            uint32_t ns = 0;
            L.stats(d, &ei, &ns, NULL);
            VkPipelineExecutableStatisticKHR *st = calloc(ns ? ns : 1, sizeof *st);
            for (uint32_t s = 0; s < ns; s++) st[s].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR;
            L.stats(d, &ei, &ns, st);
            for (uint32_t s = 0; s < ns; s++) {
                fprintf(f, " | %s=", st[s].name);
                switch (st[s].format) {
                case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: fprintf(f, "%u", st[s].value.b32); break;
                case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: fprintf(f, "%lld", (long long)st[s].value.i64); break;
                case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: fprintf(f, "%llu", (unsigned long long)st[s].value.u64); break;
                case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: fprintf(f, "%g", st[s].value.f64); break;
                default: fprintf(f, "?");
                }
            }
            free(st);
            if (L.ir_dir && L.irs) {
                uint32_t nr = 0;
                L.irs(d, &ei, &nr, NULL);
                VkPipelineExecutableInternalRepresentationKHR *ir = calloc(nr ? nr : 1, sizeof *ir);
                for (uint32_t k = 0; k < nr; k++) ir[k].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INTERNAL_REPRESENTATION_KHR;
                L.irs(d, &ei, &nr, ir);
                for (uint32_t k = 0; k < nr; k++) {
                    ir[k].pData = calloc(ir[k].dataSize + 1, 1);
                }
                L.irs(d, &ei, &nr, ir);
                for (uint32_t k = 0; k < nr; k++) {
                    char path[512];
                    snprintf(path, sizeof path, "%s/p%04u_%u_%u.%s", L.ir_dir, idx, e, k, ir[k].isText ? "txt" : "bin");
                    FILE *g = fopen(path, "wb");
                    if (g) {
                        fprintf(g, ir[k].isText ? "// %s: %s\n" : "", ir[k].name, ir[k].description);
                        fwrite(ir[k].pData, 1, ir[k].dataSize, g);
                        fclose(g);
                    }
                    free(ir[k].pData);
                }
                free(ir);
            }
        }
    }
    fprintf(f, "\n");
    fflush(f);
}

static VKAPI_ATTR VkResult VKAPI_CALL l_CreateComputePipelines(VkDevice d, VkPipelineCache cache, uint32_t n,
                                                                const VkComputePipelineCreateInfo *ci,
                                                                const VkAllocationCallbacks *a, VkPipeline *p)
{
    struct layer_next            nx = next();
    VkComputePipelineCreateInfo *c  = calloc(n ? n : 1, sizeof *c);
    if (!c) return VK_ERROR_OUT_OF_HOST_MEMORY;
    memcpy(c, ci, n * sizeof *c);
    if (nx.have_ext)
        for (uint32_t i = 0; i < n; i++) {
            c[i].flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
            if (getenv("WGF_VKSTATS_IR")) c[i].flags |= VK_PIPELINE_CREATE_CAPTURE_INTERNAL_REPRESENTATIONS_BIT_KHR;
        }
    VkResult r = nx.create_cp(d, cache, n, c, a, p);
    if (r == VK_SUCCESS) {
        pthread_mutex_lock(&L.mu);
        for (uint32_t i = 0; i < n; i++) report(d, p[i], ci[i].stage.module);
        pthread_mutex_unlock(&L.mu);
    }
    free(c);
    return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL l_SetDebugUtilsObjectNameEXT(VkDevice d, const VkDebugUtilsObjectNameInfoEXT *ni)
{
    pthread_mutex_lock(&L.mu);
    if (!L.set_name && L.gipa) L.set_name = (PFN_vkSetDebugUtilsObjectNameEXT)L.gipa(L.inst, "vkSetDebugUtilsObjectNameEXT");
    PFN_vkSetDebugUtilsObjectNameEXT set_name = L.set_name;
    if (ni->objectType == VK_OBJECT_TYPE_PIPELINE || ni->objectType == VK_OBJECT_TYPE_SHADER_MODULE) {
        fprintf(out(), "name %s handle=%llx %s\n", ni->objectType == VK_OBJECT_TYPE_PIPELINE ? "pipeline" : "module",
                (unsigned long long)ni->objectHandle, ni->pObjectName ? ni->pObjectName : "");
        fflush(out());
    }
    pthread_mutex_unlock(&L.mu);
    return set_name ? set_name(d, ni) : VK_SUCCESS;
}

static PFN_vkVoidFunction own(const char *n);

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL l_GetDeviceProcAddr(VkDevice d, const char *n)
{
    PFN_vkVoidFunction f = own(n);
    return f ? f : next().gdpa(d, n);
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL l_GetInstanceProcAddr(VkInstance i, const char *n)
{
    PFN_vkVoidFunction f = own(n);
    if (f) return f;
    PFN_vkGetInstanceProcAddr gipa = next().gipa;
    return gipa ? gipa(i, n) : NULL;
}

static PFN_vkVoidFunction own(const char *n)
{
    static const struct { const char *name; PFN_vkVoidFunction f; } t[] = {
        {"vkGetInstanceProcAddr", (PFN_vkVoidFunction)l_GetInstanceProcAddr},
        {"vkGetDeviceProcAddr", (PFN_vkVoidFunction)l_GetDeviceProcAddr},
        {"vkCreateInstance", (PFN_vkVoidFunction)l_CreateInstance},
        {"vkCreateDevice", (PFN_vkVoidFunction)l_CreateDevice},
        {"vkCreateShaderModule", (PFN_vkVoidFunction)l_CreateShaderModule},
        {"vkCreateComputePipelines", (PFN_vkVoidFunction)l_CreateComputePipelines},
        {"vkSetDebugUtilsObjectNameEXT", (PFN_vkVoidFunction)l_SetDebugUtilsObjectNameEXT},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(n, t[i].name)) return t[i].f;
    return NULL;
}

EXPORT VKAPI_ATTR VkResult VKAPI_CALL vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface *v)
{
    if (v->loaderLayerInterfaceVersion > 2) v->loaderLayerInterfaceVersion = 2;
    v->pfnGetInstanceProcAddr       = l_GetInstanceProcAddr;
    v->pfnGetDeviceProcAddr         = l_GetDeviceProcAddr;
    v->pfnGetPhysicalDeviceProcAddr = NULL;
    return VK_SUCCESS;
}

EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetInstanceProcAddr(VkInstance i, const char *n)
{
    return l_GetInstanceProcAddr(i, n);
}

EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetDeviceProcAddr(VkDevice d, const char *n)
{
    return l_GetDeviceProcAddr(d, n);
}
