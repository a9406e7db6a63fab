#!/usr/bin/env python3
# llama.cpp (third_party/llamacpp, scripts/setup.sh) multiplies a Q8_0 matrix (64 x 256, N(0,1), ggml_quantize_chunk)
# by an N(0,1) vector through ggml_mul_mat on one CPU backend variant (argv[1]: haswell, x64, ...); the
# result is compared with the exact product of the decoded matrix and with two emulations of
# activation rounding per 32: the scale d in f32 (wgfuse --activations q8) and rounded to f16 (q8_0 blocks).
import ctypes, random, struct, math, sys
import os; D=os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../third_party/llamacpp')
base=ctypes.CDLL(D+'/libggml-base.so', mode=ctypes.RTLD_GLOBAL)
cpu=ctypes.CDLL(D+'/libggml-cpu-%s.so'%sys.argv[1], mode=ctypes.RTLD_GLOBAL)
class IP(ctypes.Structure): _fields_=[('mem',ctypes.c_size_t),('buf',ctypes.c_void_p),('noalloc',ctypes.c_bool)]
base.ggml_init.argtypes=[IP]; base.ggml_init.restype=ctypes.c_void_p
base.ggml_new_tensor_2d.argtypes=[ctypes.c_void_p,ctypes.c_int,ctypes.c_int64,ctypes.c_int64]; base.ggml_new_tensor_2d.restype=ctypes.c_void_p
base.ggml_mul_mat.argtypes=[ctypes.c_void_p]*3; base.ggml_mul_mat.restype=ctypes.c_void_p
base.ggml_new_graph.argtypes=[ctypes.c_void_p]; base.ggml_new_graph.restype=ctypes.c_void_p
base.ggml_build_forward_expand.argtypes=[ctypes.c_void_p]*2
base.ggml_get_data.argtypes=[ctypes.c_void_p]; base.ggml_get_data.restype=ctypes.c_void_p
cpu.ggml_graph_compute_with_ctx.argtypes=[ctypes.c_void_p,ctypes.c_void_p,ctypes.c_int]
cpu.ggml_cpu_init()
base.ggml_quantize_chunk.argtypes=[ctypes.c_int,ctypes.c_void_p,ctypes.c_void_p,ctypes.c_int64,ctypes.c_int64,ctypes.c_int64,ctypes.c_void_p]
base.dequantize_row_q8_0.argtypes=[ctypes.c_void_p,ctypes.c_void_p,ctypes.c_int64]
R,C=64,256
ctx=base.ggml_init(IP(64<<20,None,False))
random.seed(1)
wf=(ctypes.c_float*(R*C))(*[random.gauss(0,1) for _ in range(R*C)])
x=[random.gauss(0,1) for _ in range(C)]
W=base.ggml_new_tensor_2d(ctx,8,C,R); X=base.ggml_new_tensor_2d(ctx,0,C,1)
base.ggml_quantize_chunk(8,wf,base.ggml_get_data(W),0,R,C,None)
ctypes.memmove(base.ggml_get_data(X),(ctypes.c_float*C)(*x),4*C)
Y=base.ggml_mul_mat(ctx,W,X); g=base.ggml_new_graph(ctx); base.ggml_build_forward_expand(g,Y); cpu.ggml_graph_compute_with_ctx(ctx,g,1)
y=(ctypes.c_float*R).from_address(base.ggml_get_data(Y))
wd=(ctypes.c_float*(R*C))(); base.dequantize_row_q8_0(base.ggml_get_data(W),wd,R*C)
def f16(v): return struct.unpack('<e',struct.pack('<e',v))[0]
def q8(xs, f16d):
    out=[]
    for b in range(0,len(xs),32):
        blk=xs[b:b+32]; m=max(abs(v) for v in blk); d=m/127; idd=1/d if d else 0
        q=[max(-127,min(127,round(v*idd))) for v in blk]
        dd=f16(d) if f16d else d
        out+= [dd*v for v in q]
    return out
ex=[sum(wd[r*C+i]*x[i] for i in range(C)) for r in range(R)]
for name,xx in [('exact',x),('q8 f32 d',q8(x,False)),('q8 f16 d',q8(x,True))]:
    e=[sum(wd[r*C+i]*xx[i] for i in range(C)) for r in range(R)]
    print(name, 'max|y_llama - y| / max|y| = %.2e'%(max(abs(a-b) for a,b in zip(y,e))/max(abs(a) for a in y)))
