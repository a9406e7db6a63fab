/* wgfuse CLI — shared state and the subcommand entry points.
 *
 * The process-wide CLI state (the only global in wgfuse) holds the options every
 * subcommand understands: --webgpu-lib, --adapter, --robust-shaders, --backend-labels, --quiet (main.c takes them before or after
 * the command). --json is not one of them: the commands that write JSON take it as their own
 * flag (`wgfuse info --json` and `wgfuse --json info` are usage errors). Each command has one
 * cmd_<name>.c with `int wgf_cmd_<name>(int argc, char **argv)` that parses its own flags
 * (argv[0] is the subcommand) and returns the exit code: 0 ok, 1 failure, 2 usage error;
 * -h / --help at any flag position prints its usage on stdout and exits 0. Commands use
 * the public API only (include/wgfuse/); the build's structure check enforces it. */
#ifndef WGF_CLI_H
#define WGF_CLI_H
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "wgfuse/gpu.h"

struct wgf_cli_state {
    const char *webgpu_lib; /* --webgpu-lib PATH                                   */
    const char *adapter;    /* --adapter INDEX|NAME|TYPE                           */
    bool        quiet;      /* --quiet: no progress lines on stderr                */
    bool        robust_shaders; /* --robust-shaders: keep Dawn's bounds clamps (wgf_gpu_options) */
    bool        backend_labels; /* --backend-labels: Dawn names backend objects by label (wgf_gpu_options) */
    char        mapped_path[1024]; /* the memory-mapped input in use (for the SIGBUS message) */
    volatile sig_atomic_t interrupted; /* SIGINT/SIGTERM number once caught, else 0      */
};
extern struct wgf_cli_state wgf_cli;

/* GPU options from the CLI state (lib path, adapter, shader robustness). */
struct wgf_gpu_options wgf_cli_gpu_options(void);
/* Print "wgfuse: <msg>" to stderr (one line). */
void wgf_cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* Strict number parsing for flags: returns false (and prints a usage error) when `s` is not
 * a finite number in [lo, hi]. */
bool wgf_cli_parse_long(const char *flag, const char *s, long lo, long hi, long *out);
bool wgf_cli_parse_double(const char *flag, const char *s, double lo, double hi, double *out);
/* True for "-h" and "--help": every subcommand answers them with its usage on stdout, exit 0. */
bool wgf_cli_is_help(const char *arg);
/* The value of the flag at argv[*i] (argv[*i + 1], and *i advances); NULL after printing
 * "<flag> needs a value" when there is none. */
const char *wgf_cli_flag_value(int argc, char **argv, int *i);
/* "1,2,3" -> ids (malloc'd, caller frees). Ids must be integers in [0, 2^31), at most
 * WGF_CLI_MAX_IDS of them; false after printing the usage error. */
#define WGF_CLI_MAX_IDS (1L << 24)
bool wgf_cli_parse_ids(const char *flag, const char *s, int32_t **ids, size_t *n);
/* Split the value of `flag`, "a,b,c", into 1..cap items (pointers into *copy, which the
 * caller frees, also on failure). An empty list, an empty item ("a,,b", ",") or more than
 * cap items is a usage error: printed, -1. Every comma-separated flag goes through it, so
 * none drops an empty or a 17th item silently (`--pop ,` used to run nothing, exit 0). */
int wgf_cli_split_list(const char *flag, const char *s, char **copy, const char **items, int cap);
/* Record the path of a memory-mapped input the command is about to use. If the file is
 * truncated or becomes unreadable while mapped, the kernel raises SIGBUS on the next access;
 * main's handler then prints one line naming this path and exits 1 (RELIABILITY.md #30). */
void wgf_cli_note_mapped(const char *path);
/* Write an output file by util/file.h's rule: a regular file (or nothing) at `path` is
 * replaced atomically ("<path>.tmp.<pid>" then rename; temps of killed runs are removed
 * first), a character device or FIFO is written through, anything else is refused.
 * Returns 0, or 1 after printing "wgfuse: <who>: <reason naming the path>". */
int wgf_cli_write_file(const char *who, const char *path, const void *data, size_t n);
/* The same without printing: 0, or an errno value (EIO when the refusal has none). */
int wgf_cli_write_atomic(const char *path, const void *data, size_t n);

/* Interrupts (RELIABILITY.md #38). bench dispatch/fusion/matvec, sim train/bench, run and
 * llm bench call wgf_cli_catch_interrupts() once: the first SIGINT or SIGTERM then only sets
 * wgf_cli.interrupted, and the command stops at its next step and exits
 * wgf_cli_interrupt_code() (128 + the signal). The benchmarks and sim write what they have
 * marked incomplete ("complete": false in JSON, an "interrupted" line in text); run keeps the
 * text so far; llm bench prints nothing (a partial median is not a result). A second signal
 * terminates as usual (tests/reliability/test_interrupted_runs.c). `report`, info, tokenize
 * and the other commands never check: Ctrl-C ends them at once (the default action). */
void wgf_cli_catch_interrupts(void);
static inline bool wgf_cli_interrupt_pending(void) { return wgf_cli.interrupted != 0; }
int         wgf_cli_interrupt_code(void);  /* 128 + signal number                     */
const char *wgf_cli_interrupt_name(void);  /* "SIGINT" / "SIGTERM"                    */

/* What the LLM commands share (cli_llm.c). */
struct wgf_llm_model;
struct wgf_llm_backend;
struct wgf_llm_backend_options;
/* CPU threads by default: the online cores, at most 16. */
uint32_t wgf_cli_default_threads(void);
/* The forward backend the LLM commands run on:
 *   --backend cpu-ref|gpu   --plan roles|unfused (gpu; default roles)
 *   --weights f16|f32 (gpu roles; default f16)   --no-subgroups (gpu roles) */
struct wgf_cli_backend {
    const char *name;  /* NULL: cpu-ref                                                   */
    const char *plan;  /* NULL: the backend's default                                      */
    bool        weights_f32, no_subgroups;
    const char *quant; /* --weights TYPE: a quantization recipe applied at load (NULL: none) */
    bool        autotune; /* --autotune: --plan auto confirms its top two by timing them     */
    bool        act_q8;   /* --activations q8: quantized rows take int8-rounded activations    */
    bool        act_i8x3; /* --activations i8x3: quantized decode rows take three int8 digits */
};
/* If argv[*i] is one of the flags above, consume it (and its value) and return 1; 0 when
 * it is not one of them; 2 on a usage error (printed). */
int  wgf_cli_backend_flag(struct wgf_cli_backend *b, int argc, char **argv, int *i);
/* The model in the weights --weights asks for. With a quantization type (b->quant): from
 * `path`, the file quantized at load into a temporary GGUF that the model maps (removed once
 * mapped); from the synthetic `shape` (path NULL), random blocks of the recipe's mixture.
 * Without one: `path` loaded as it is, or the shape with random f16 weights. Prints the
 * error; returns 0, 1 (failure) or 2 (usage). */
/* The context `run` builds a model for without --ctx: the model's, at most 4096 (advise too). */
struct wgf_llm_config;
uint32_t wgf_cli_default_ctx(const struct wgf_llm_config *c);
/* A note on stderr when a command runs m with a context of n_ctx positions past the one it
 * was trained for (config.json max_position_embeddings / GGUF <arch>.context_length),
 * naming `what` set it ("--ctx"). Accepted as llama.cpp accepts it; nothing when within. */
void wgf_cli_note_ctx(const struct wgf_llm_model *m, const char *what, uint64_t n_ctx);
/* A note on stderr when `positions` passes the config's sliding window, which no backend
 * applies (docs/llm.md, "Attention span"). */
void wgf_cli_note_window(const char *path, const struct wgf_llm_config *c, uint64_t positions);
int  wgf_cli_llm_model(const char *path, const char *shape, const struct wgf_cli_backend *b,
                       struct wgf_llm_model **m);
/* The usage lines of those flags. */
void wgf_cli_backend_usage(FILE *f);
/* Open the backend on m. For gpu a context is created from the global --adapter /
 * --webgpu-lib options into *ctx (the caller frees it after the backend). Prints the error
 * and returns false on failure. */
bool wgf_cli_backend_open(const struct wgf_cli_backend *b, const char *model, const struct wgf_llm_model *m,
                          struct wgf_llm_backend_options *bo, wgf_ctx **ctx, struct wgf_llm_backend *be);

/* The advisor (cmd_advise.c). The device description for ctx: `file` (else
 * $WGFUSE_CALIBRATION) when given, for any adapter; else the cache file of ctx's adapter,
 * measured and stored first when it is missing, unusable (one warning line) or recalibrate.
 * Prints errors; returns 0 or 1. */
struct wgf_calibration;
int         wgf_cli_calibration(wgf_ctx *ctx, const char *file, bool recalibrate, bool quick,
                                struct wgf_calibration *c);
/* --plan auto: the plan the cost model predicts fastest for m on ctx (one stderr line saying
 * which and why); NULL after printing the error. */
struct wgf_llm_model;
struct wgf_llm_backend_options;
struct wgf_llm_backend;
/* autotune: the top two predictions timed once each (GPU time of 4 decode steps), the faster
 * chosen, the line saying both. */
const struct wgf_llm_backend *wgf_cli_plan_auto(wgf_ctx *ctx, const struct wgf_llm_model *m,
                                                const struct wgf_llm_backend_options *bo, bool autotune);
/* --strategy auto of `sim`: cfg's strategy, chunk (and evolve, when cfg->evolve is AUTO) set
 * to what the cost model predicts fastest for cfg on ctx (autotune: the top two timed once
 * each); one stderr line saying what and why. Prints errors; returns 0 or 1. */
struct wgf_sim_config;
int wgf_cli_sim_auto(wgf_ctx *ctx, struct wgf_sim_config *cfg, bool autotune);
/* `advise --table` (cli_advise_table.c): the article's decision table measured and predicted
 * on ctx; quick: small sizes (also on CPU adapters). Prints; returns 0, or 1 when a row could
 * not be measured (the row says why). */
/* probe: time the simulation's kernels here (sim_advise.h), when cal describes this adapter. */
int wgf_cli_advise_table(wgf_ctx *ctx, const struct wgf_calibration *cal, bool quick, bool json, bool probe);
/* The calibration wgf_cli_calibration reads for `file` describes this adapter (it is the cache's,
 * not a --calibration FILE or $WGFUSE_CALIBRATION): what the simulation probe may add to. */
bool wgf_cli_calibration_local(const char *file);

/* A conversation from the command line (cli_llm.c): --messages FILE.json, or --system +
 * the prompt; --chat-template FILE / --chat-template-name N choose the template;
 * --no-template sends the prompt as it is (BOS as the tokenizer wants). A model without
 * any template and with no built-in that fits: the prompt goes raw, with a warning. */
struct wgf_cli_chat {
    const char *messages;           /* --messages path, or NULL                         */
    const char *system;             /* --system, or NULL                                */
    const char *user;               /* the prompt (user_len bytes, NULs allowed)        */
    size_t      user_len;
    const char *tmpl_file, *tmpl_name;
    bool        no_template, parse_special, gen_prompt;
};
struct wgf_tokenizer;
struct wgf_chat;
struct wgf_err;
/* Open the chat template once (run, tokenize, serve): --chat-template FILE's contents
 * (tmpl_file, may be NULL) or the model's own (tmpl_name, may be NULL); notes on stderr when
 * a built-in one is used. Errors go to *err, not printed: WGF_ERR_UNSUPPORTED when the model
 * ships none and no built-in fits, WGF_ERR_FORMAT (named by the file), WGF_ERR_ARG, ... */
enum wgf_status wgf_cli_chat_open(const char *model, const struct wgf_tokenizer *tok, const char *arch,
                                  const char *tmpl_file, const char *tmpl_name, bool parse_special,
                                  struct wgf_chat **chat, struct wgf_err *err);
/* Encode the conversation into *ids (malloc'd), or with `text` non-NULL render it into
 * *text (malloc'd, *text_len bytes) instead. Prints errors and notes; returns 0, or 1. */
int wgf_cli_chat_encode(const char *model, const struct wgf_tokenizer *tok, const char *arch,
                        const struct wgf_cli_chat *o, int32_t **ids, size_t *n_ids, char **text, size_t *text_len);

/* Subcommands. */
int wgf_cmd_info(int argc, char **argv);      /* cmd_info.c     */
int wgf_cmd_report(int argc, char **argv);    /* cmd_report.c   */
int wgf_cmd_advise(int argc, char **argv);    /* cmd_advise.c   */
int wgf_cmd_run(int argc, char **argv);       /* cmd_run.c      */
int wgf_cmd_serve(int argc, char **argv);     /* cmd_serve.c    */
int wgf_cmd_tokenize(int argc, char **argv);  /* cmd_tokenize.c */
int wgf_cmd_llm(int argc, char **argv);       /* cmd_llm.c      */
int wgf__cmd_llm_quantize(int argc, char **argv); /* cmd_quantize.c: `llm quantize` */
int wgf_cmd_sim(int argc, char **argv);       /* cmd_sim.c      */
int wgf_cmd_bench(int argc, char **argv);     /* cmd_bench.c    */
int wgf_cmd_version(int argc, char **argv);   /* cmd_version.c: `--version` and `version` */
int wgf__cmd_bench_matvec(int argc, char **argv); /* cmd_bench_matvec.c: `bench matvec` */

/* Sections of `wgfuse report`, each printing to `out` on the given context. Return 0 ok. */
int wgf_report_bench_section(FILE *out, wgf_ctx *ctx); /* cmd_bench.c */
int wgf_report_sim_section(FILE *out, wgf_ctx *ctx);   /* cmd_sim.c   */
int wgf_report_llm_dial_section(wgf_ctx *ctx);         /* cmd_llm_dial.c: stdout */

/* `llm bench --plan all` (cmd_llm_dial.c): measure the floors, run the dial, print the table
 * (or JSON) and write the SVG when svg_path. Returns the exit code (errors printed). */
struct wgf_dial_opts;
int wgf_cli_llm_dial(wgf_ctx *ctx, const char *name, const struct wgf_llm_model *m, struct wgf_dial_opts *o, bool json,
                     const char *svg_path);

#endif
