/* wgfuse — our own declarations of the part of webgpu.h that wgfuse uses.
 *
 * The only header in wgfuse that describes the WebGPU C ABI. It matches the standard
 * webgpu.h of the webgpu-native/webgpu-headers project as of 2025-04-24 (the ABI era of
 * the Dawn build wgfuse ships with, bun-webgpu-linux-x64@0.1.7, Dawn of ~2025-04-27).
 * Function names, enum values and struct layouts are facts of that ABI and must match;
 * comments, grouping and the subset are ours. Later 2025 header changes (a message argument
 * on the queue-work-done callback, binding arrays in bind group layout entries,
 * maxImmediateSize in limits) are NOT in this build: don't add them here.
 *
 * Nothing is linked: src/gpu/loader.c resolves every function with dlsym() from the library
 * the user picks at run time (--webgpu-lib / $WGFUSE_WEBGPU_LIB), into struct wgf__procs. */
#ifndef WGF_GPU_WGPU_ABI_H
#define WGF_GPU_WGPU_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef uint64_t WGPUFlags;
typedef uint32_t WGPUBool;

#define WGPU_STRLEN SIZE_MAX
#define WGPU_WHOLE_SIZE UINT64_MAX
#define WGPU_QUERY_SET_INDEX_UNDEFINED UINT32_MAX

typedef struct WGPUStringView {
    const char *data;  /* NULL + WGPU_STRLEN = "no string"                */
    size_t      length; /* WGPU_STRLEN: NUL-terminated                      */
} WGPUStringView;

/* ---- opaque handles ---------------------------------------------------------------- */
typedef struct WGPUAdapterImpl            *WGPUAdapter;
typedef struct WGPUBindGroupImpl          *WGPUBindGroup;
typedef struct WGPUBindGroupLayoutImpl    *WGPUBindGroupLayout;
typedef struct WGPUBufferImpl             *WGPUBuffer;
typedef struct WGPUCommandBufferImpl      *WGPUCommandBuffer;
typedef struct WGPUCommandEncoderImpl     *WGPUCommandEncoder;
typedef struct WGPUComputePassEncoderImpl *WGPUComputePassEncoder;
typedef struct WGPUComputePipelineImpl    *WGPUComputePipeline;
typedef struct WGPUDeviceImpl             *WGPUDevice;
typedef struct WGPUInstanceImpl           *WGPUInstance;
typedef struct WGPUPipelineLayoutImpl     *WGPUPipelineLayout;
typedef struct WGPUQuerySetImpl           *WGPUQuerySet;
typedef struct WGPUQueueImpl              *WGPUQueue;
typedef struct WGPUShaderModuleImpl       *WGPUShaderModule;
typedef struct WGPUSurfaceImpl            *WGPUSurface;
typedef struct WGPUSamplerImpl            *WGPUSampler;
typedef struct WGPUTextureViewImpl        *WGPUTextureView;

/* ---- enums (values are ABI) ------------------------------------------------------------ */
typedef enum WGPUAdapterType {
    WGPUAdapterType_DiscreteGPU = 1, WGPUAdapterType_IntegratedGPU = 2, WGPUAdapterType_CPU = 3,
    WGPUAdapterType_Unknown = 4, WGPUAdapterType_Force32 = 0x7FFFFFFF
} WGPUAdapterType;
typedef enum WGPUBackendType {
    WGPUBackendType_Undefined = 0, WGPUBackendType_Null = 1, WGPUBackendType_WebGPU = 2,
    WGPUBackendType_D3D11 = 3, WGPUBackendType_D3D12 = 4, WGPUBackendType_Metal = 5,
    WGPUBackendType_Vulkan = 6, WGPUBackendType_OpenGL = 7, WGPUBackendType_OpenGLES = 8,
    WGPUBackendType_Force32 = 0x7FFFFFFF
} WGPUBackendType;
typedef enum WGPUCallbackMode {
    WGPUCallbackMode_WaitAnyOnly = 1, WGPUCallbackMode_AllowProcessEvents = 2,
    WGPUCallbackMode_AllowSpontaneous = 3, WGPUCallbackMode_Force32 = 0x7FFFFFFF
} WGPUCallbackMode;
typedef enum WGPUCompilationInfoRequestStatus {
    WGPUCompilationInfoRequestStatus_Success = 1, WGPUCompilationInfoRequestStatus_CallbackCancelled = 2,
    WGPUCompilationInfoRequestStatus_Force32 = 0x7FFFFFFF
} WGPUCompilationInfoRequestStatus;
typedef enum WGPUCompilationMessageType {
    WGPUCompilationMessageType_Error = 1, WGPUCompilationMessageType_Warning = 2,
    WGPUCompilationMessageType_Info = 3, WGPUCompilationMessageType_Force32 = 0x7FFFFFFF
} WGPUCompilationMessageType;
typedef enum WGPUDeviceLostReason {
    WGPUDeviceLostReason_Unknown = 1, WGPUDeviceLostReason_Destroyed = 2,
    WGPUDeviceLostReason_CallbackCancelled = 3, WGPUDeviceLostReason_FailedCreation = 4,
    WGPUDeviceLostReason_Force32 = 0x7FFFFFFF
} WGPUDeviceLostReason;
typedef enum WGPUErrorFilter {
    WGPUErrorFilter_Validation = 1, WGPUErrorFilter_OutOfMemory = 2, WGPUErrorFilter_Internal = 3,
    WGPUErrorFilter_Force32 = 0x7FFFFFFF
} WGPUErrorFilter;
typedef enum WGPUErrorType {
    WGPUErrorType_NoError = 1, WGPUErrorType_Validation = 2, WGPUErrorType_OutOfMemory = 3,
    WGPUErrorType_Internal = 4, WGPUErrorType_Unknown = 5, WGPUErrorType_Force32 = 0x7FFFFFFF
} WGPUErrorType;
typedef enum WGPUFeatureLevel {
    WGPUFeatureLevel_Undefined = 0, WGPUFeatureLevel_Compatibility = 1, WGPUFeatureLevel_Core = 2,
    WGPUFeatureLevel_Force32 = 0x7FFFFFFF
} WGPUFeatureLevel;
typedef enum WGPUFeatureName {
    WGPUFeatureName_TimestampQuery = 0x03, WGPUFeatureName_ShaderF16 = 0x0A,
    WGPUFeatureName_Subgroups = 0x11, WGPUFeatureName_Force32 = 0x7FFFFFFF
} WGPUFeatureName;
typedef enum WGPUMapAsyncStatus {
    WGPUMapAsyncStatus_Success = 1, WGPUMapAsyncStatus_CallbackCancelled = 2, WGPUMapAsyncStatus_Error = 3,
    WGPUMapAsyncStatus_Aborted = 4, WGPUMapAsyncStatus_Force32 = 0x7FFFFFFF
} WGPUMapAsyncStatus;
typedef enum WGPUPopErrorScopeStatus {
    WGPUPopErrorScopeStatus_Success = 1, WGPUPopErrorScopeStatus_CallbackCancelled = 2,
    WGPUPopErrorScopeStatus_Error = 3, WGPUPopErrorScopeStatus_Force32 = 0x7FFFFFFF
} WGPUPopErrorScopeStatus;
typedef enum WGPUPowerPreference {
    WGPUPowerPreference_Undefined = 0, WGPUPowerPreference_LowPower = 1,
    WGPUPowerPreference_HighPerformance = 2, WGPUPowerPreference_Force32 = 0x7FFFFFFF
} WGPUPowerPreference;
typedef enum WGPUQueryType {
    WGPUQueryType_Occlusion = 1, WGPUQueryType_Timestamp = 2, WGPUQueryType_Force32 = 0x7FFFFFFF
} WGPUQueryType;
typedef enum WGPUQueueWorkDoneStatus {
    WGPUQueueWorkDoneStatus_Success = 1, WGPUQueueWorkDoneStatus_CallbackCancelled = 2,
    WGPUQueueWorkDoneStatus_Error = 3, WGPUQueueWorkDoneStatus_Force32 = 0x7FFFFFFF
} WGPUQueueWorkDoneStatus;
typedef enum WGPURequestAdapterStatus {
    WGPURequestAdapterStatus_Success = 1, WGPURequestAdapterStatus_CallbackCancelled = 2,
    WGPURequestAdapterStatus_Unavailable = 3, WGPURequestAdapterStatus_Error = 4,
    WGPURequestAdapterStatus_Force32 = 0x7FFFFFFF
} WGPURequestAdapterStatus;
typedef enum WGPURequestDeviceStatus {
    WGPURequestDeviceStatus_Success = 1, WGPURequestDeviceStatus_CallbackCancelled = 2,
    WGPURequestDeviceStatus_Error = 3, WGPURequestDeviceStatus_Force32 = 0x7FFFFFFF
} WGPURequestDeviceStatus;
typedef enum WGPUSType {
    WGPUSType_ShaderSourceWGSL = 0x02,
    WGPUSType_DawnTogglesDescriptor = 0x0005000A, /* Dawn extension */
    WGPUSType_Force32 = 0x7FFFFFFF
} WGPUSType;
typedef enum WGPUStatus { WGPUStatus_Success = 1, WGPUStatus_Error = 2, WGPUStatus_Force32 = 0x7FFFFFFF } WGPUStatus;

typedef WGPUFlags WGPUBufferUsage;
#define WGPUBufferUsage_MapRead      ((WGPUBufferUsage)0x001)
#define WGPUBufferUsage_MapWrite     ((WGPUBufferUsage)0x002)
#define WGPUBufferUsage_CopySrc      ((WGPUBufferUsage)0x004)
#define WGPUBufferUsage_CopyDst      ((WGPUBufferUsage)0x008)
#define WGPUBufferUsage_Uniform      ((WGPUBufferUsage)0x040)
#define WGPUBufferUsage_Storage      ((WGPUBufferUsage)0x080)
#define WGPUBufferUsage_Indirect     ((WGPUBufferUsage)0x100)
#define WGPUBufferUsage_QueryResolve ((WGPUBufferUsage)0x200)
typedef WGPUFlags WGPUMapMode;
#define WGPUMapMode_Read ((WGPUMapMode)0x1)

/* ---- callbacks ---------------------------------------------------------------------------- */
struct WGPUCompilationInfo;
typedef void (*WGPUBufferMapCallback)(WGPUMapAsyncStatus, WGPUStringView message, void *u1, void *u2);
typedef void (*WGPUCompilationInfoCallback)(WGPUCompilationInfoRequestStatus, const struct WGPUCompilationInfo *,
                                            void *u1, void *u2);
typedef void (*WGPUDeviceLostCallback)(const WGPUDevice *, WGPUDeviceLostReason, WGPUStringView message, void *u1,
                                       void *u2);
typedef void (*WGPUPopErrorScopeCallback)(WGPUPopErrorScopeStatus, WGPUErrorType, WGPUStringView message, void *u1,
                                          void *u2);
/* Measured on the shipped Dawn build (2026-11-30): this callback DOES receive a message
 * argument, unlike the 2025-04-24 header; other implementations may differ. wgfuse therefore
 * never uses onSubmittedWorkDone: it waits by mapping a fence buffer (context.c). */
typedef void (*WGPUQueueWorkDoneCallback)(WGPUQueueWorkDoneStatus, WGPUStringView message, void *u1, void *u2);
typedef void (*WGPURequestAdapterCallback)(WGPURequestAdapterStatus, WGPUAdapter, WGPUStringView message, void *u1,
                                           void *u2);
typedef void (*WGPURequestDeviceCallback)(WGPURequestDeviceStatus, WGPUDevice, WGPUStringView message, void *u1,
                                          void *u2);
typedef void (*WGPUUncapturedErrorCallback)(const WGPUDevice *, WGPUErrorType, WGPUStringView message, void *u1,
                                            void *u2);

typedef struct WGPUChainedStruct {
    struct WGPUChainedStruct *next;
    WGPUSType                 sType;
} WGPUChainedStruct;

#define WGF__CALLBACK_INFO(Name, Cb)                                                                                \
    typedef struct Name {                                                                                          \
        WGPUChainedStruct *nextInChain;                                                                            \
        WGPUCallbackMode   mode;                                                                                   \
        Cb                 callback;                                                                               \
        void              *userdata1;                                                                              \
        void              *userdata2;                                                                              \
    } Name
WGF__CALLBACK_INFO(WGPUBufferMapCallbackInfo, WGPUBufferMapCallback);
WGF__CALLBACK_INFO(WGPUCompilationInfoCallbackInfo, WGPUCompilationInfoCallback);
WGF__CALLBACK_INFO(WGPUDeviceLostCallbackInfo, WGPUDeviceLostCallback);
WGF__CALLBACK_INFO(WGPUPopErrorScopeCallbackInfo, WGPUPopErrorScopeCallback);
WGF__CALLBACK_INFO(WGPUQueueWorkDoneCallbackInfo, WGPUQueueWorkDoneCallback);
WGF__CALLBACK_INFO(WGPURequestAdapterCallbackInfo, WGPURequestAdapterCallback);
WGF__CALLBACK_INFO(WGPURequestDeviceCallbackInfo, WGPURequestDeviceCallback);
/* the uncaptured-error info has no mode: it may be called at any time */
typedef struct WGPUUncapturedErrorCallbackInfo {
    WGPUChainedStruct          *nextInChain;
    WGPUUncapturedErrorCallback callback;
    void                       *userdata1;
    void                       *userdata2;
} WGPUUncapturedErrorCallbackInfo;

/* ---- structs ------------------------------------------------------------------------------- */
typedef struct WGPUFuture { uint64_t id; } WGPUFuture;
typedef struct WGPUFutureWaitInfo {
    WGPUFuture future;
    WGPUBool   completed;
} WGPUFutureWaitInfo;
typedef enum WGPUWaitStatus {
    WGPUWaitStatus_Success = 1, WGPUWaitStatus_TimedOut = 2, WGPUWaitStatus_Force32 = 0x7FFFFFFF
} WGPUWaitStatus;

typedef struct WGPUInstanceCapabilities {
    WGPUChainedStruct *nextInChain;
    WGPUBool           timedWaitAnyEnable;
    size_t             timedWaitAnyMaxCount;
} WGPUInstanceCapabilities;
typedef struct WGPUInstanceDescriptor {
    WGPUChainedStruct       *nextInChain;
    WGPUInstanceCapabilities capabilities;
} WGPUInstanceDescriptor;

typedef struct WGPURequestAdapterOptions {
    WGPUChainedStruct  *nextInChain;
    WGPUFeatureLevel    featureLevel;
    WGPUPowerPreference powerPreference;
    WGPUBool            forceFallbackAdapter;
    WGPUBackendType     backendType;
    WGPUSurface         compatibleSurface;
} WGPURequestAdapterOptions;

typedef struct WGPUAdapterInfo {
    WGPUChainedStruct *nextInChain;
    WGPUStringView     vendor;
    WGPUStringView     architecture;
    WGPUStringView     device;
    WGPUStringView     description;
    WGPUBackendType    backendType;
    WGPUAdapterType    adapterType;
    uint32_t           vendorID;
    uint32_t           deviceID;
    uint32_t           subgroupMinSize;
    uint32_t           subgroupMaxSize;
} WGPUAdapterInfo;

typedef struct WGPULimits {
    WGPUChainedStruct *nextInChain;
    uint32_t maxTextureDimension1D;
    uint32_t maxTextureDimension2D;
    uint32_t maxTextureDimension3D;
    uint32_t maxTextureArrayLayers;
    uint32_t maxBindGroups;
    uint32_t maxBindGroupsPlusVertexBuffers;
    uint32_t maxBindingsPerBindGroup;
    uint32_t maxDynamicUniformBuffersPerPipelineLayout;
    uint32_t maxDynamicStorageBuffersPerPipelineLayout;
    uint32_t maxSampledTexturesPerShaderStage;
    uint32_t maxSamplersPerShaderStage;
    uint32_t maxStorageBuffersPerShaderStage;
    uint32_t maxStorageTexturesPerShaderStage;
    uint32_t maxUniformBuffersPerShaderStage;
    uint64_t maxUniformBufferBindingSize;
    uint64_t maxStorageBufferBindingSize;
    uint32_t minUniformBufferOffsetAlignment;
    uint32_t minStorageBufferOffsetAlignment;
    uint32_t maxVertexBuffers;
    uint64_t maxBufferSize;
    uint32_t maxVertexAttributes;
    uint32_t maxVertexBufferArrayStride;
    uint32_t maxInterStageShaderVariables;
    uint32_t maxColorAttachments;
    uint32_t maxColorAttachmentBytesPerSample;
    uint32_t maxComputeWorkgroupStorageSize;
    uint32_t maxComputeInvocationsPerWorkgroup;
    uint32_t maxComputeWorkgroupSizeX;
    uint32_t maxComputeWorkgroupSizeY;
    uint32_t maxComputeWorkgroupSizeZ;
    uint32_t maxComputeWorkgroupsPerDimension;
} WGPULimits;

typedef struct WGPUSupportedFeatures {
    size_t                 featureCount;
    const WGPUFeatureName *features;
} WGPUSupportedFeatures;

typedef struct WGPUQueueDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView     label;
} WGPUQueueDescriptor;
typedef struct WGPUDeviceDescriptor {
    WGPUChainedStruct              *nextInChain;
    WGPUStringView                  label;
    size_t                          requiredFeatureCount;
    const WGPUFeatureName          *requiredFeatures;
    const WGPULimits               *requiredLimits;
    WGPUQueueDescriptor             defaultQueue;
    WGPUDeviceLostCallbackInfo      deviceLostCallbackInfo;
    WGPUUncapturedErrorCallbackInfo uncapturedErrorCallbackInfo;
} WGPUDeviceDescriptor;

/* Dawn extension, chained on the device descriptor: named behaviour switches. */
typedef struct WGPUDawnTogglesDescriptor {
    WGPUChainedStruct  chain;
    size_t             enabledToggleCount;
    const char *const *enabledToggles;
    size_t             disabledToggleCount;
    const char *const *disabledToggles;
} WGPUDawnTogglesDescriptor;

typedef struct WGPUBufferDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView     label;
    WGPUBufferUsage    usage;
    uint64_t           size;
    WGPUBool           mappedAtCreation;
} WGPUBufferDescriptor;

typedef struct WGPUShaderModuleDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView     label;
} WGPUShaderModuleDescriptor;
typedef struct WGPUShaderSourceWGSL {
    WGPUChainedStruct chain;
    WGPUStringView    code;
} WGPUShaderSourceWGSL;

typedef struct WGPUCompilationMessage {
    WGPUChainedStruct         *nextInChain;
    WGPUStringView             message;
    WGPUCompilationMessageType type;
    uint64_t                   lineNum;
    uint64_t                   linePos;
    uint64_t                   offset;
    uint64_t                   length;
} WGPUCompilationMessage;
typedef struct WGPUCompilationInfo {
    WGPUChainedStruct            *nextInChain;
    size_t                        messageCount;
    const WGPUCompilationMessage *messages;
} WGPUCompilationInfo;

typedef struct WGPUConstantEntry {
    WGPUChainedStruct *nextInChain;
    WGPUStringView     key;
    double             value;
} WGPUConstantEntry;
typedef struct WGPUComputeState {
    WGPUChainedStruct       *nextInChain;
    WGPUShaderModule         module;
    WGPUStringView           entryPoint;
    size_t                   constantCount;
    const WGPUConstantEntry *constants;
} WGPUComputeState;
typedef struct WGPUComputePipelineDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView     label;
    WGPUPipelineLayout layout; /* NULL: layout "auto" */
    WGPUComputeState   compute;
} WGPUComputePipelineDescriptor;

typedef struct WGPUBindGroupEntry {
    WGPUChainedStruct *nextInChain;
    uint32_t           binding;
    WGPUBuffer         buffer;
    uint64_t           offset;
    uint64_t           size;
    WGPUSampler        sampler;
    WGPUTextureView    textureView;
} WGPUBindGroupEntry;
typedef struct WGPUBindGroupDescriptor {
    WGPUChainedStruct        *nextInChain;
    WGPUStringView            label;
    WGPUBindGroupLayout       layout;
    size_t                    entryCount;
    const WGPUBindGroupEntry *entries;
} WGPUBindGroupDescriptor;

typedef struct WGPUCommandEncoderDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView     label;
} WGPUCommandEncoderDescriptor;
typedef struct WGPUCommandBufferDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView     label;
} WGPUCommandBufferDescriptor;
typedef struct WGPUPassTimestampWrites {
    WGPUChainedStruct *nextInChain;
    WGPUQuerySet       querySet;
    uint32_t           beginningOfPassWriteIndex;
    uint32_t           endOfPassWriteIndex;
} WGPUPassTimestampWrites;
typedef struct WGPUComputePassDescriptor {
    WGPUChainedStruct             *nextInChain;
    WGPUStringView                 label;
    const WGPUPassTimestampWrites *timestampWrites;
} WGPUComputePassDescriptor;
typedef struct WGPUQuerySetDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView     label;
    WGPUQueryType      type;
    uint32_t           count;
} WGPUQuerySetDescriptor;

/* ---- the function table ------------------------------------------------------------------ *
 * X(Name, return type, (parameters)) for each wgpu<Name> wgfuse calls. REQUIRED ones must
 * resolve; OPTIONAL ones (Dawn extensions) may be missing in other implementations. */
#define WGF_WGPU_REQUIRED_PROCS(X)                                                                                \
    X(CreateInstance, WGPUInstance, (const WGPUInstanceDescriptor *))                                             \
    X(InstanceRequestAdapter, WGPUFuture, (WGPUInstance, const WGPURequestAdapterOptions *, WGPURequestAdapterCallbackInfo)) \
    X(InstanceProcessEvents, void, (WGPUInstance))                                                                \
    X(InstanceRelease, void, (WGPUInstance))                                                                      \
    X(AdapterGetInfo, WGPUStatus, (WGPUAdapter, WGPUAdapterInfo *))                                               \
    X(AdapterGetLimits, WGPUStatus, (WGPUAdapter, WGPULimits *))                                                  \
    X(AdapterGetFeatures, void, (WGPUAdapter, WGPUSupportedFeatures *))                                           \
    X(AdapterHasFeature, WGPUBool, (WGPUAdapter, WGPUFeatureName))                                                \
    X(AdapterRequestDevice, WGPUFuture, (WGPUAdapter, const WGPUDeviceDescriptor *, WGPURequestDeviceCallbackInfo)) \
    X(AdapterRelease, void, (WGPUAdapter))                                                                        \
    X(AdapterInfoFreeMembers, void, (WGPUAdapterInfo))                                                            \
    X(SupportedFeaturesFreeMembers, void, (WGPUSupportedFeatures))                                                \
    X(DeviceGetQueue, WGPUQueue, (WGPUDevice))                                                                    \
    X(DeviceGetLimits, WGPUStatus, (WGPUDevice, WGPULimits *))                                                    \
    X(DeviceHasFeature, WGPUBool, (WGPUDevice, WGPUFeatureName))                                                  \
    X(DeviceCreateBuffer, WGPUBuffer, (WGPUDevice, const WGPUBufferDescriptor *))                                 \
    X(DeviceCreateShaderModule, WGPUShaderModule, (WGPUDevice, const WGPUShaderModuleDescriptor *))               \
    X(DeviceCreateComputePipeline, WGPUComputePipeline, (WGPUDevice, const WGPUComputePipelineDescriptor *))      \
    X(DeviceCreateBindGroup, WGPUBindGroup, (WGPUDevice, const WGPUBindGroupDescriptor *))                        \
    X(DeviceCreateCommandEncoder, WGPUCommandEncoder, (WGPUDevice, const WGPUCommandEncoderDescriptor *))         \
    X(DeviceCreateQuerySet, WGPUQuerySet, (WGPUDevice, const WGPUQuerySetDescriptor *))                           \
    X(DevicePushErrorScope, void, (WGPUDevice, WGPUErrorFilter))                                                  \
    X(DevicePopErrorScope, WGPUFuture, (WGPUDevice, WGPUPopErrorScopeCallbackInfo))                               \
    X(DeviceDestroy, void, (WGPUDevice))                                                                          \
    X(DeviceRelease, void, (WGPUDevice))                                                                          \
    X(QueueSubmit, void, (WGPUQueue, size_t, const WGPUCommandBuffer *))                                          \
    X(QueueWriteBuffer, void, (WGPUQueue, WGPUBuffer, uint64_t, const void *, size_t))                            \
    X(QueueRelease, void, (WGPUQueue))                                                                            \
    X(BufferMapAsync, WGPUFuture, (WGPUBuffer, WGPUMapMode, size_t, size_t, WGPUBufferMapCallbackInfo))           \
    X(BufferGetConstMappedRange, const void *, (WGPUBuffer, size_t, size_t))                                      \
    X(BufferUnmap, void, (WGPUBuffer))                                                                            \
    X(BufferDestroy, void, (WGPUBuffer))                                                                          \
    X(BufferRelease, void, (WGPUBuffer))                                                                          \
    X(ShaderModuleGetCompilationInfo, WGPUFuture, (WGPUShaderModule, WGPUCompilationInfoCallbackInfo))            \
    X(ShaderModuleRelease, void, (WGPUShaderModule))                                                              \
    X(ComputePipelineGetBindGroupLayout, WGPUBindGroupLayout, (WGPUComputePipeline, uint32_t))                    \
    X(ComputePipelineRelease, void, (WGPUComputePipeline))                                                        \
    X(BindGroupLayoutRelease, void, (WGPUBindGroupLayout))                                                        \
    X(BindGroupRelease, void, (WGPUBindGroup))                                                                    \
    X(CommandEncoderBeginComputePass, WGPUComputePassEncoder, (WGPUCommandEncoder, const WGPUComputePassDescriptor *)) \
    X(CommandEncoderCopyBufferToBuffer, void, (WGPUCommandEncoder, WGPUBuffer, uint64_t, WGPUBuffer, uint64_t, uint64_t)) \
    X(CommandEncoderClearBuffer, void, (WGPUCommandEncoder, WGPUBuffer, uint64_t, uint64_t))                      \
    X(CommandEncoderResolveQuerySet, void, (WGPUCommandEncoder, WGPUQuerySet, uint32_t, uint32_t, WGPUBuffer, uint64_t)) \
    X(CommandEncoderFinish, WGPUCommandBuffer, (WGPUCommandEncoder, const WGPUCommandBufferDescriptor *))         \
    X(CommandEncoderRelease, void, (WGPUCommandEncoder))                                                          \
    X(ComputePassEncoderSetPipeline, void, (WGPUComputePassEncoder, WGPUComputePipeline))                         \
    X(ComputePassEncoderSetBindGroup, void, (WGPUComputePassEncoder, uint32_t, WGPUBindGroup, size_t, const uint32_t *)) \
    X(ComputePassEncoderDispatchWorkgroups, void, (WGPUComputePassEncoder, uint32_t, uint32_t, uint32_t))         \
    X(ComputePassEncoderDispatchWorkgroupsIndirect, void, (WGPUComputePassEncoder, WGPUBuffer, uint64_t))         \
    X(ComputePassEncoderEnd, void, (WGPUComputePassEncoder))                                                      \
    X(ComputePassEncoderRelease, void, (WGPUComputePassEncoder))                                                  \
    X(CommandBufferRelease, void, (WGPUCommandBuffer))                                                            \
    X(QuerySetDestroy, void, (WGPUQuerySet))                                                                      \
    X(QuerySetRelease, void, (WGPUQuerySet))

/* Dawn extensions used only by fault-injection tests; InstanceWaitAny (a CPU adapter's
 * blocking wait, wgf__wait_future). */
#define WGF_WGPU_OPTIONAL_PROCS(X)                                                                                \
    X(InstanceWaitAny, WGPUWaitStatus, (WGPUInstance, size_t, WGPUFutureWaitInfo *, uint64_t))                    \
    X(DeviceForceLoss, void, (WGPUDevice, WGPUDeviceLostReason, WGPUStringView))                                  \
    X(DeviceInjectError, void, (WGPUDevice, WGPUErrorType, WGPUStringView))

struct wgf__procs {
#define WGF__PROC_FIELD(name, ret, args) ret(*name) args;
    WGF_WGPU_REQUIRED_PROCS(WGF__PROC_FIELD)
    WGF_WGPU_OPTIONAL_PROCS(WGF__PROC_FIELD)
#undef WGF__PROC_FIELD
};

#endif
