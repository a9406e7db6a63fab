// lib_embed — fragment: one row of the token-embedding table into an activation row.
//   embed_row(tok, xo, li): x[xo .. xo + DIMP) (as vec4, xo in vec4) = tok_embd[tok] in f32,
//                           every invocation of the workgroup taking chunks li, li + WG, ...
// The table is the model's (vocab, DIM) matrix in the weight format (lib_wchunk), in up to
// five row chunks of EMB_ROWS rows (a table above the binding limit is split by rows).
// Quantized (QT != QT_F): rows of KCS chunks in QT's blocks, decoded 32 elements at a time.
// needs:      lib_wchunk, lib_qblock; const WG, WF16, KC (chunks per row = DIMP / EPC), KCS,
//             NU, EMB_ROWS; module-scope `x: array<vec4<f32>>` (read_write) and
//             `emb0..emb4: array<vec4<u32>>`
var<private> emb_part: u32; // the part wq4 reads

fn wq4(i: u32) -> vec4<u32> {
    if (emb_part == 0u) {
        return emb0[i];
    } else if (emb_part == 1u) {
        return emb1[i];
    } else if (emb_part == 2u) {
        return emb2[i];
    } else if (emb_part == 3u) {
        return emb3[i];
    }
    return emb4[i];
}

fn embed_row(tok: u32, xo: u32, li: u32) {
    let ch = tok / EMB_ROWS;
    if (QT != QT_F) {
        emb_part = ch;
        for (var u = li; u < NU; u += WG) {
            let v = qunit(4u * (tok % EMB_ROWS) * KCS, u);
            for (var k = 0u; k < 8u; k++) {
                x[xo + 8u * u + k] = v[k];
            }
        }
        return;
    }
    let r  = (tok % EMB_ROWS) * KC;
    for (var c = li; c < KC; c += WG) {
        var wc: vec4<u32>;
        if (ch == 0u) {
            wc = emb0[r + c];
        } else if (ch == 1u) {
            wc = emb1[r + c];
        } else if (ch == 2u) {
            wc = emb2[r + c];
        } else if (ch == 3u) {
            wc = emb3[r + c];
        } else {
            wc = emb4[r + c];
        }
        if (WF16) {
            x[xo + 2u * c]      = wunpack_lo(wc);
            x[xo + 2u * c + 1u] = wunpack_hi(wc);
        } else {
            x[xo + c] = wunpack_lo(wc);
        }
    }
}
