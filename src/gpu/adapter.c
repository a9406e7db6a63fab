/* wgfuse runtime — adapters: describing, listing, and picking one. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu_internal.h"

const char *wgf_feature_name(uint32_t f, char buf[16])
{
    switch (f) {
    case 0x01: return "depth-clip-control";
    case 0x02: return "depth32float-stencil8";
    case 0x03: return "timestamp-query";
    case 0x04: return "texture-compression-bc";
    case 0x05: return "texture-compression-bc-sliced-3d";
    case 0x06: return "texture-compression-etc2";
    case 0x07: return "texture-compression-astc";
    case 0x08: return "texture-compression-astc-sliced-3d";
    case 0x09: return "indirect-first-instance";
    case 0x0A: return "shader-f16";
    case 0x0B: return "rg11b10ufloat-renderable";
    case 0x0C: return "bgra8unorm-storage";
    case 0x0D: return "float32-filterable";
    case 0x0E: return "float32-blendable";
    case 0x0F: return "clip-distances";
    case 0x10: return "dual-source-blending";
    case 0x11: return "subgroups";
    default: break;
    }
    /* Dawn's own features live at 0x0005xxxx; print the value, it is stable per build */
    snprintf(buf, 16, "0x%x", f);
    return buf;
}

static const char *backend_name(WGPUBackendType b)
{
    switch (b) {
    case WGPUBackendType_Null: return "null";
    case WGPUBackendType_WebGPU: return "webgpu";
    case WGPUBackendType_D3D11: return "d3d11";
    case WGPUBackendType_D3D12: return "d3d12";
    case WGPUBackendType_Metal: return "metal";
    case WGPUBackendType_Vulkan: return "vulkan";
    case WGPUBackendType_OpenGL: return "opengl";
    case WGPUBackendType_OpenGLES: return "opengles";
    default: return "unknown";
    }
}

static const char *type_name(WGPUAdapterType t)
{
    switch (t) {
    case WGPUAdapterType_DiscreteGPU: return "discrete";
    case WGPUAdapterType_IntegratedGPU: return "integrated";
    case WGPUAdapterType_CPU: return "cpu";
    default: return "unknown";
    }
}

static void copy_sv(char *dst, size_t cap, WGPUStringView v)
{
    if (!v.data) {
        dst[0] = '\0';
        return;
    }
    size_t n = v.length == WGPU_STRLEN ? strlen(v.data) : v.length;
    if (n >= cap) n = cap - 1;
    memcpy(dst, v.data, n);
    dst[n] = '\0';
}

void wgf__limits_from_wgpu(const WGPULimits *l, struct wgf_limits *o)
{
    o->max_buffer_size                       = l->maxBufferSize;
    o->max_storage_buffer_binding_size       = l->maxStorageBufferBindingSize;
    o->max_uniform_buffer_binding_size       = l->maxUniformBufferBindingSize;
    o->max_storage_buffers_per_shader_stage  = l->maxStorageBuffersPerShaderStage;
    o->max_uniform_buffers_per_shader_stage  = l->maxUniformBuffersPerShaderStage;
    o->max_bind_groups                       = l->maxBindGroups;
    o->max_bindings_per_bind_group           = l->maxBindingsPerBindGroup;
    o->min_storage_buffer_offset_alignment   = l->minStorageBufferOffsetAlignment;
    o->min_uniform_buffer_offset_alignment   = l->minUniformBufferOffsetAlignment;
    o->max_compute_workgroup_storage_size    = l->maxComputeWorkgroupStorageSize;
    o->max_compute_invocations_per_workgroup = l->maxComputeInvocationsPerWorkgroup;
    o->max_compute_workgroup_size_x          = l->maxComputeWorkgroupSizeX;
    o->max_compute_workgroup_size_y          = l->maxComputeWorkgroupSizeY;
    o->max_compute_workgroup_size_z          = l->maxComputeWorkgroupSizeZ;
    o->max_compute_workgroups_per_dimension  = l->maxComputeWorkgroupsPerDimension;
}

void wgf__describe_adapter(const struct wgf__procs *p, WGPUAdapter a, int index, struct wgf_adapter_desc *d)
{
    memset(d, 0, sizeof *d);
    d->index = index;
    WGPUAdapterInfo info;
    memset(&info, 0, sizeof info);
    if (p->AdapterGetInfo(a, &info) == WGPUStatus_Success) {
        copy_sv(d->name, sizeof d->name, info.device);
        copy_sv(d->vendor, sizeof d->vendor, info.vendor);
        copy_sv(d->architecture, sizeof d->architecture, info.architecture);
        copy_sv(d->driver, sizeof d->driver, info.description);
        snprintf(d->backend, sizeof d->backend, "%s", backend_name(info.backendType));
        snprintf(d->type, sizeof d->type, "%s", type_name(info.adapterType));
        d->vendor_id         = info.vendorID;
        d->device_id         = info.deviceID;
        d->subgroup_min_size = info.subgroupMinSize;
        d->subgroup_max_size = info.subgroupMaxSize;
        p->AdapterInfoFreeMembers(info);
    }
    WGPULimits l;
    memset(&l, 0, sizeof l);
    if (p->AdapterGetLimits(a, &l) == WGPUStatus_Success) wgf__limits_from_wgpu(&l, &d->limits);
    WGPUSupportedFeatures f = {0, NULL};
    p->AdapterGetFeatures(a, &f);
    for (size_t i = 0; i < f.featureCount && d->n_features < WGF_MAX_FEATURES; i++)
        d->features[d->n_features++] = (uint32_t)f.features[i];
    p->SupportedFeaturesFreeMembers(f);
    d->has_f16       = p->AdapterHasFeature(a, WGPUFeatureName_ShaderF16);
    d->has_subgroups = p->AdapterHasFeature(a, WGPUFeatureName_Subgroups);
    d->has_timestamp = p->AdapterHasFeature(a, WGPUFeatureName_TimestampQuery);
}
