/* `wgfuse run --backend gpu` through the CLI binary ($WGF_CLI), for real on the default
 * adapter: on a random test model (GGUF f16, GQA) the greedy ids printed with --backend gpu
 * equal those of --backend cpu-ref (--tokens, --temp 0, EOS ignored), with the shaders' bounds
 * clamps off (the default) and on (--robust-shaders); with --weights Q8_0 too, through both
 * ways the decode rows take the activations (i8x3, f32); the stats line names the backend; `llm
 * bench --json` records which (shader_clamps) and, with --profile on the roles plan, the GPU time
 * of the prefill's roles; an unknown backend is a usage error (exit 2).
 * (wgf_t_run appends 2>&1, so each command picks its stream inside a { ...; } group.) */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static char out_cpu[16384], out_gpu[16384], out[16384];

int main(void)
{
    struct wgf_t t   = {0};
    const char  *cli = wgf_t_cli();
    char         dir[512], model[700], cmd[4096];
    wgf_t_tmpdir("cli_llm_gpu", dir, sizeof dir);
    snprintf(model, sizeof model, "%s/l.gguf", dir);
    snprintf(cmd, sizeof cmd,
             "'%s' llm make-test-model --arch llama --format gguf --dtype f16 --no-tokenizer "
             "--dims dim=64,hidden=160,layers=2,heads=4,kv_heads=2,vocab=512,ctx=128 -o '%s'",
             cli, model);
    if (!wgf_t_check(&t, wgf_t_run(cmd, out, sizeof out) == 0, "make-test-model", "%s", out)) return wgf_t_finish(&t);

    const char *args = "--tokens 1,17,300,42,9 -n 24 --temp 0 --ignore-eos";
    snprintf(cmd, sizeof cmd, "{ '%s' run -m '%s' %s --backend cpu-ref 2>/dev/null; }", cli, model, args);
    int rc_cpu = wgf_t_run(cmd, out_cpu, sizeof out_cpu);
    /* the model is f32: the roles plan with f32 weights and the unfused plan give cpu-ref's
     * ids; with its default f16 weights, 24 ids (rounding may move a near tie) */
    const char *variants[] = {"--backend gpu --weights f32", "--backend gpu --plan unfused",
                              "--robust-shaders --backend gpu --weights f32", "--backend gpu"};
    for (int v = 0; v < 4; v++) {
        snprintf(cmd, sizeof cmd, "{ '%s' run -m '%s' %s %s 2>/dev/null; }", cli, model, args, variants[v]);
        int rc_gpu = wgf_t_run(cmd, out_gpu, sizeof out_gpu);
        int n_ids  = 0;
        for (const char *p = out_gpu; *p; p++) n_ids += *p == ' ';
        char what[160];
        snprintf(what, sizeof what, "run %s: %s", variants[v], v < 3 ? "same greedy ids as cpu-ref" : "24 ids");
        wgf_t_check(&t, rc_cpu == 0 && rc_gpu == 0 && n_ids == 24 && (v == 3 || strcmp(out_cpu, out_gpu) == 0), what,
                    "exit %d/%d, %d ids: cpu [%.200s] gpu [%.200s]", rc_cpu, rc_gpu, n_ids, out_cpu, out_gpu);
    }

    /* quantized at load (Q8_0): the decode rows decode the codes to floats by default (f32) and
     * take the activations as three int8 digits with --activations i8x3; both give cpu-ref's
     * greedy ids on the same Q8_0 weights, and the bench record names the mode */
    snprintf(cmd, sizeof cmd, "{ '%s' run -m '%s' %s --weights Q8_0 --backend cpu-ref 2>/dev/null; }", cli, model, args);
    rc_cpu = wgf_t_run(cmd, out_cpu, sizeof out_cpu);
    const char *acts[] = {"", "--activations f32", "--activations i8x3"};
    for (int v = 0; v < 3; v++) {
        snprintf(cmd, sizeof cmd, "{ '%s' run -m '%s' %s --weights Q8_0 --backend gpu %s 2>/dev/null; }", cli, model, args,
                 acts[v]);
        int  rc_gpu = wgf_t_run(cmd, out_gpu, sizeof out_gpu);
        char what[160];
        snprintf(what, sizeof what, "run --weights Q8_0 --backend gpu %s: same greedy ids as cpu-ref", acts[v]);
        wgf_t_check(&t, rc_cpu == 0 && rc_gpu == 0 && strchr(out_cpu, ' ') && strcmp(out_cpu, out_gpu) == 0, what,
                    "exit %d/%d: cpu [%.200s] gpu [%.200s]", rc_cpu, rc_gpu, out_cpu, out_gpu);
    }
    for (int v = 0; v < 3; v++) {
        snprintf(cmd, sizeof cmd,
                 "{ '%s' llm bench -m '%s' --backend gpu --weights Q8_0 %s -n 2 --runs 1 --prompt-tokens 2 --json 2>/dev/null; }",
                 cli, model, acts[v]);
        int         rc   = wgf_t_run(cmd, out, sizeof out);
        const char *want = v == 2 ? "\"activations\": \"i8x3\"" : "\"activations\": \"f32\"";
        char        what[160];
        snprintf(what, sizeof what, "llm bench --weights Q8_0 %s: records %s", acts[v], want);
        wgf_t_check(&t, rc == 0 && strstr(out, want), what, "exit %d: %.300s", rc, out);
    }

    snprintf(cmd, sizeof cmd, "{ '%s' run -m '%s' --tokens 1,2 -n 2 --temp 0 --backend gpu 2>&1 >/dev/null; }", cli, model);
    int rc = wgf_t_run(cmd, out, sizeof out);
    wgf_t_check(&t, rc == 0 && strstr(out, "[gpu-roles, "), "run --backend gpu: stats line names the backend (roles)",
                "exit %d: %s", rc, out);

    /* the bench record says whether the shaders kept their bounds clamps (off unless asked) */
    for (int robust = 0; robust < 2; robust++) {
        snprintf(cmd, sizeof cmd, "{ '%s' %s llm bench -m '%s' --backend gpu -n 2 --runs 1 --prompt-tokens 2 --json 2>/dev/null; }",
                 cli, robust ? "--robust-shaders" : "", model);
        rc = wgf_t_run(cmd, out, sizeof out);
        wgf_t_check(&t, rc == 0 && strstr(out, robust ? "\"shader_clamps\": true" : "\"shader_clamps\": false"),
                    robust ? "llm bench --robust-shaders: shader_clamps true" : "llm bench: shader_clamps false",
                    "exit %d: %.300s", rc, out);
    }

    /* --profile times the batched prefill's first chunk per role on the roles plan (its matmuls
     * among them); a plan that prefills token by token has no such record */
    for (int fused = 0; fused < 2; fused++) {
        snprintf(cmd, sizeof cmd,
                 "{ '%s' llm bench -m '%s' --backend gpu %s -n 2 --runs 1 --prompt-tokens 5 --profile --json 2>/dev/null; }",
                 cli, model, fused ? "--plan fused" : "");
        rc           = wgf_t_run(cmd, out, sizeof out);
        const char *pp = strstr(out, "\"prefill_profile_us\": {");
        bool        ok = rc == 0 && (fused ? !pp && strstr(out, "\"profile_us_per_token\"")
                                           : pp && strstr(pp, "\"matmul_attn_qkv_") && strstr(pp, "\"attn_split_rows_"));
        wgf_t_check(&t, ok,
                    fused ? "llm bench --plan fused --profile: no prefill profile (token-by-token prefill)"
                          : "llm bench --profile: prefill_profile_us times the chunk's matmul and attention roles",
                    "exit %d: %.400s", rc, out);
    }

    snprintf(cmd, sizeof cmd, "'%s' run -m '%s' --tokens 1 --backend tpu", cli, model);
    rc = wgf_t_run(cmd, out, sizeof out);
    wgf_t_check(&t, rc == 2 && strstr(out, "--backend") && strstr(out, "tpu"), "run --backend tpu: usage error",
                "exit %d: %s", rc, out);
    return wgf_t_finish(&t);
}
