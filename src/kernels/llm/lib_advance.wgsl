// lib_advance — fragment: what an on-GPU sampler does with the token it picked, so that the
// next decode step needs nothing from the host.
//   advance(tok, pos, li): seq[pos + 1] = tok; x = tok_embd[tok] (the next step's input);
//                          st[ST_POS] = pos + 1; st[ST_ROPE_LONG] = (pos + 2 > ROPE_ORIG), the
//                          rule cpu-ref applies to a one-token forward (longrope's long factors
//                          once the sequence passes original_max_position_embeddings);
//                          tok = 0xffffffff (no finite logit) sets st[ST_ERR] = 1 instead of
//                          embedding: the host reads it back and stops with an error.
// `pos` must be read by every invocation before any barrier of the caller (invocation 0
// rewrites st[ST_POS] here).
// needs:      lib_embed; module-scope `st` and `seq` (read_write u32 arrays), const ROPE_ORIG
fn advance(tok: u32, pos: u32, li: u32) {
    if (tok != 0xffffffffu) {
        embed_row(tok, 0u, li);
    }
    if (li == 0u) {
        seq[pos + 1u] = tok;
        st[ST_POS] = pos + 1u;
        st[ST_ROPE_LONG] = select(0u, 1u, pos + 2u > ROPE_ORIG);
        if (tok == 0xffffffffu) {
            st[ST_ERR] = 1u;
        }
    }
}
