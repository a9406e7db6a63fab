/* wgfuse info — list every adapter with what matters for compute. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static void print_limits(FILE *f, const struct wgf_limits *l, const char *ind)
{
    fprintf(f, "%smaxBufferSize                      %llu\n", ind, (unsigned long long)l->max_buffer_size);
    fprintf(f, "%smaxStorageBufferBindingSize        %llu\n", ind,
            (unsigned long long)l->max_storage_buffer_binding_size);
    fprintf(f, "%smaxUniformBufferBindingSize        %llu\n", ind,
            (unsigned long long)l->max_uniform_buffer_binding_size);
    fprintf(f, "%smaxStorageBuffersPerShaderStage    %u\n", ind, l->max_storage_buffers_per_shader_stage);
    fprintf(f, "%smaxUniformBuffersPerShaderStage    %u\n", ind, l->max_uniform_buffers_per_shader_stage);
    fprintf(f, "%smaxBindGroups                      %u\n", ind, l->max_bind_groups);
    fprintf(f, "%sminStorageBufferOffsetAlignment    %u\n", ind, l->min_storage_buffer_offset_alignment);
    fprintf(f, "%sminUniformBufferOffsetAlignment    %u\n", ind, l->min_uniform_buffer_offset_alignment);
    fprintf(f, "%smaxComputeWorkgroupStorageSize     %u\n", ind, l->max_compute_workgroup_storage_size);
    fprintf(f, "%smaxComputeInvocationsPerWorkgroup  %u\n", ind, l->max_compute_invocations_per_workgroup);
    fprintf(f, "%smaxComputeWorkgroupSize            %u x %u x %u\n", ind, l->max_compute_workgroup_size_x,
            l->max_compute_workgroup_size_y, l->max_compute_workgroup_size_z);
    fprintf(f, "%smaxComputeWorkgroupsPerDimension   %u\n", ind, l->max_compute_workgroups_per_dimension);
}

void wgf_cli_print_adapter(FILE *f, const struct wgf_adapter_desc *d, bool full);
void wgf_cli_print_adapter(FILE *f, const struct wgf_adapter_desc *d, bool full)
{
    fprintf(f, "adapter %d: %s\n", d->index, d->name);
    fprintf(f, "  backend %s, type %s, vendor '%s' (0x%04x), device 0x%04x, architecture '%s'\n", d->backend, d->type,
            d->vendor, d->vendor_id, d->device_id, d->architecture);
    fprintf(f, "  driver: %s\n", d->driver[0] ? d->driver : "(not reported)");
    fprintf(f, "  compute features: shader-f16 %s, subgroups %s (size %u..%u), timestamp-query %s\n",
            d->has_f16 ? "yes" : "NO", d->has_subgroups ? "yes" : "no", d->subgroup_min_size, d->subgroup_max_size,
            d->has_timestamp ? "yes" : "no");
    if (!full) return;
    fprintf(f, "  all features (%d):", d->n_features);
    char hex[16];
    for (int i = 0; i < d->n_features; i++)
        fprintf(f, "%s%s", i ? ", " : " ", wgf_feature_name(d->features[i], hex));
    fprintf(f, "\n  limits:\n");
    print_limits(f, &d->limits, "    ");
    if (!strcmp(d->backend, "null")) fprintf(f, "  (Dawn's Null backend: runs no GPU work; wgfuse refuses it)\n");
}

int wgf_cmd_info(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: wgfuse info\n  Lists every WebGPU adapter the implementation offers, with backend, type,\n"
                   "  driver, features and the limits that matter for compute.\n");
            return 0;
        }
        wgf_cli_error("info: unknown flag '%s'", argv[i]);
        return 2;
    }
    struct wgf_gpu_options o = wgf_cli_gpu_options();
    struct wgf_adapter_desc ds[16];
    int n = 0;
    struct wgf_err err = {0};
    if (wgf_gpu_list_adapters(&o, ds, 16, &n, &err) != WGF_OK) {
        wgf_cli_error("%s", err.msg);
        return 1;
    }
    char lib[512];
    printf("WebGPU implementation: %s\n", wgf_gpu_lib_path(o.lib_path, lib, sizeof lib));
    if (n == 0) printf("no adapters\n");
    for (int i = 0; i < n; i++) wgf_cli_print_adapter(stdout, &ds[i], true);
    return 0;
}
