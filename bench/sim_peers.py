#!/usr/bin/env python3
"""Peers of `wgfuse sim bench`: the same workloads and the same generation, on the same GPU.

Definitions are docs/sim.md's, unchanged:
  generation  evaluate (reset every genome, run every episode to termination or L steps)
              + evolve (GA: elitism E = max(1, pop // 64), tournament 4, uniform crossover,
              gaussian mutation: rate 0.1, sigma 0.2 for classic control; Rastrigin 0.01 / 0.1;
              finsim 0.1 / 0.05) over the whole population, on the GPU
  gen/s       generations / wall seconds, twice: no readback (G generations back to back,
              one synchronize) and readback (the fitness vector copied to the host after
              every generation); eval/s: evaluation only
  policy      per-genome MLP n_in -> H (tanh, argument clamped to +-15) -> n_out, action =
              argmax of the first n_actions outputs; defaults as wgfuse's: CartPole 4-8-2
              (the issue's benchmark: --hidden 16), Acrobot 6-16-3, MountainCar 2-8-3
  workloads   CartPole-v1 (500), Acrobot-v1 (500, RK4, book), MountainCar-v0 (200),
              Rastrigin (pop x dim 2000), finsim (needs the path: --market FILE from
              `wgfuse sim market`)
Implementations:
  jax     lax.scan over the steps + vmap-style batching over genomes, the whole generation
          under one jax.jit (terminated genomes masked, all L steps run)
  torch   PyTorch step loop: one Python iteration per step of batched tensor ops (eager,
          masked, no per-step synchronize)
  cupy    fused CUDA C (cupy.RawKernel): one thread per genome runs its whole episode and
          stops at termination, exactly like wgfuse's fused kernel; evolve is one CUDA kernel
Every implementation's environment step is checked against a float64 Python transcription
of Gymnasium's step on random states before any time is taken
(f32 against f64 at random, often extreme states: tolerance 1e-3 relative, angles modulo
2 pi); its first evaluation must give finite returns inside the workload's possible range. A
failing implementation prints WRONG and no time.

usage: python3 bench/sim_peers.py [--workload cartpole,...] [--impl jax,torch,cupy]
          [--pop 4096] [--steps 0] [--hidden 0] [--gens 10] [--runs 3] [--dim 2000]
          [--market FILE] [--device cuda|cpu] [--json] [--out FILE]
       python3 bench/sim_peers.py --tables OUTDIR [--out FILE]
Prints JSON (--json) or a table; --out writes it to a file atomically. --tables renders the
JSON files bench/h200_sim.sh left in OUTDIR as the markdown tables of bench/RESULTS.md.
"""
import argparse
import json
import math
import os
import random
import statistics
import sys
import tempfile
import time

# ---- workload definitions (docs/sim.md) -----------------------------------------------------
WORK = {
    "cartpole": dict(n_state=4, n_obs=4, n_act=2, steps=500, hidden=8, rate=0.1, sigma=0.2, lo=1, hi=500),
    "acrobot": dict(n_state=4, n_obs=6, n_act=3, steps=500, hidden=16, rate=0.1, sigma=0.2, lo=-500, hi=0),
    "mountaincar": dict(n_state=2, n_obs=2, n_act=3, steps=200, hidden=8, rate=0.1, sigma=0.2, lo=-200, hi=0),
    "rastrigin": dict(rate=0.01, sigma=0.1),
    "finsim": dict(n_obs=6, n_act=4, n_fb=2, steps=1500, hidden=16, rate=0.1, sigma=0.05),
}
PI = math.pi


def n_params(n_in, h, n_out):
    return h * n_in + h + n_out * h + n_out


# ---- float64 Python references of Gymnasium's steps (for the step checks) -------------------
def ref_cartpole(s, a):
    x, xd, th, thd = s
    force = 10.0 if a == 1 else -10.0
    c, sn = math.cos(th), math.sin(th)
    temp = (force + 0.05 * thd * thd * sn) / 1.1
    thacc = (9.8 * sn - c * temp) / (0.5 * (4.0 / 3.0 - 0.1 * c * c / 1.1))
    xacc = temp - 0.05 * thacc * c / 1.1
    return [x + 0.02 * xd, xd + 0.02 * xacc, th + 0.02 * thd, thd + 0.02 * thacc]


def _ab_dsdt(y, a):
    t1, t2, d1_, d2_ = y
    d1 = 0.25 + (1 + 0.25 + 2 * 0.5 * math.cos(t2)) + 2
    d2 = (0.25 + 0.5 * math.cos(t2)) + 1
    phi2 = 0.5 * 9.8 * math.cos(t1 + t2 - PI / 2)
    phi1 = -0.5 * d2_ * d2_ * math.sin(t2) - 2 * 0.5 * d2_ * d1_ * math.sin(t2) + 1.5 * 9.8 * math.cos(t1 - PI / 2) + phi2
    dd2 = (a + d2 / d1 * phi1 - 0.5 * d1_ * d1_ * math.sin(t2) - phi2) / (0.25 + 1 - d2 * d2 / d1)
    dd1 = -(d2 * dd2 + phi1) / d1
    return [d1_, d2_, dd1, dd2]


def ref_acrobot(s, a):
    tq = a - 1.0
    k1 = _ab_dsdt(s, tq)
    k2 = _ab_dsdt([s[i] + 0.1 * k1[i] for i in range(4)], tq)
    k3 = _ab_dsdt([s[i] + 0.1 * k2[i] for i in range(4)], tq)
    k4 = _ab_dsdt([s[i] + 0.2 * k3[i] for i in range(4)], tq)
    y = [s[i] + 0.2 / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]) for i in range(4)]
    for i in (0, 1):
        while y[i] > PI:
            y[i] -= 2 * PI
        while y[i] < -PI:
            y[i] += 2 * PI
    y[2] = min(max(y[2], -4 * PI), 4 * PI)
    y[3] = min(max(y[3], -9 * PI), 9 * PI)
    return y


def ref_mountaincar(s, a):
    p, v = s[0], s[1]
    v = v + (a - 1) * 0.001 + math.cos(3 * p) * (-0.0025)
    v = min(max(v, -0.07), 0.07)
    p = min(max(p + v, -1.2), 0.6)
    if p == -1.2 and v < 0:
        v = 0.0
    return [p, v]


REF_STEP = {"cartpole": ref_cartpole, "acrobot": ref_acrobot, "mountaincar": ref_mountaincar}


def random_states(w, n, rng):
    out = []
    for _ in range(n):
        if w == "cartpole":
            out.append([rng.uniform(-2.3, 2.3), rng.uniform(-2, 2), rng.uniform(-0.2, 0.2), rng.uniform(-2, 2)])
        elif w == "acrobot":
            out.append([rng.uniform(-3.1, 3.1), rng.uniform(-3.1, 3.1), rng.uniform(-12, 12), rng.uniform(-28, 28)])
        else:
            out.append([rng.uniform(-1.2, 0.6), rng.uniform(-0.07, 0.07)])
    return out


def check_steps(w, step_fn, rng):
    """step_fn(list of states, list of actions) -> list of next states (implementation's)."""
    S = random_states(w, 256, rng)
    A = [rng.randrange(WORK[w]["n_act"]) for _ in S]
    got = step_fn(S, A)
    worst = 0.0
    for s, a, g in zip(S, A, got):
        r = REF_STEP[w]([float(x) for x in s], a)
        for i, (x, y) in enumerate(zip(g, r)):
            d = abs(float(x) - y)
            if w == "acrobot" and i < 2:  # angles: a value within f32 rounding of +-pi may wrap either way
                d = min(d, abs(d - 2 * PI))
            worst = max(worst, d / (1 + abs(y)))
    return worst


# ---- market path (finsim) -------------------------------------------------------------------
def load_market(path):
    """`wgfuse sim market` format: 8-byte magic WGFMKT1\\0, int32 L, assets, signals, then
    f32 returns (L, 16) and f32 signals (L, 36), little endian."""
    import numpy as np
    raw = open(path, "rb").read()
    if raw[:8] != b"WGFMKT1\0":
        raise SystemExit(f"{path}: not a wgfuse market file")
    L, A, S = np.frombuffer(raw[8:20], dtype="<i4")
    ret = np.frombuffer(raw[20:20 + L * A * 4], dtype="<f4").reshape(L, A)
    sig = np.frombuffer(raw[20 + L * A * 4:20 + L * A * 4 + L * S * 4], dtype="<f4").reshape(L, S)
    return ret.copy(), sig.copy()


# ---- JAX ---------------------------------------------------------------------------------------
def make_jax(w, cfg):
    import jax
    import jax.numpy as jnp
    from jax import lax
    dev = jax.devices("gpu")[0] if cfg.device == "cuda" else jax.devices("cpu")[0]
    pop, L, H = cfg.pop, cfg.steps, cfg.hidden
    E, T = max(1, pop // 64), 4
    rate, sigma = WORK[w]["rate"], WORK[w]["sigma"]

    def env_fns():
        if w == "cartpole":
            def reset(key):
                return jax.random.uniform(key, (pop, 4), jnp.float32, -0.05, 0.05)

            def obs(s):
                return s

            def step(s, a):
                x, xd, th, thd = s[:, 0], s[:, 1], s[:, 2], s[:, 3]
                force = jnp.where(a == 1, 10.0, -10.0)
                c, sn = jnp.cos(th), jnp.sin(th)
                temp = (force + 0.05 * (thd * thd) * sn) / 1.1
                thacc = (9.8 * sn - c * temp) / (0.5 * (4.0 / 3.0 - 0.1 * (c * c) / 1.1))
                xacc = temp - 0.05 * thacc * c / 1.1
                x, xd, th, thd = x + 0.02 * xd, xd + 0.02 * xacc, th + 0.02 * thd, thd + 0.02 * thacc
                term = (x < -2.4) | (x > 2.4) | (th < -0.20943951) | (th > 0.20943951)
                return jnp.stack([x, xd, th, thd], 1), jnp.ones(pop, jnp.float32), term
        elif w == "acrobot":
            def reset(key):
                return jax.random.uniform(key, (pop, 4), jnp.float32, -0.1, 0.1)

            def obs(s):
                return jnp.stack([jnp.cos(s[:, 0]), jnp.sin(s[:, 0]), jnp.cos(s[:, 1]), jnp.sin(s[:, 1]), s[:, 2], s[:, 3]], 1)

            def dsdt(y, a):
                t1, t2, d1_, d2_ = y[:, 0], y[:, 1], y[:, 2], y[:, 3]
                d1 = 0.25 + (1.0 + 0.25 + 2.0 * 0.5 * jnp.cos(t2)) + 2.0
                d2 = (0.25 + 0.5 * jnp.cos(t2)) + 1.0
                phi2 = 0.5 * 9.8 * jnp.cos(t1 + t2 - PI / 2)
                phi1 = (-0.5 * (d2_ * d2_) * jnp.sin(t2) - 2.0 * 0.5 * d2_ * d1_ * jnp.sin(t2)
                        + 1.5 * 9.8 * jnp.cos(t1 - PI / 2) + phi2)
                dd2 = (a + d2 / d1 * phi1 - 0.5 * (d1_ * d1_) * jnp.sin(t2) - phi2) / (0.25 + 1.0 - (d2 * d2) / d1)
                dd1 = -(d2 * dd2 + phi1) / d1
                return jnp.stack([d1_, d2_, dd1, dd2], 1)

            def wrap(x):
                for _ in range(2):
                    x = jnp.where(x > PI, x - 2 * PI, x)
                    x = jnp.where(x < -PI, x + 2 * PI, x)
                return x

            def step(s, a):
                tq = (a - 1).astype(jnp.float32)
                k1 = dsdt(s, tq)
                k2 = dsdt(s + 0.1 * k1, tq)
                k3 = dsdt(s + 0.1 * k2, tq)
                k4 = dsdt(s + 0.2 * k3, tq)
                y = s + (0.2 / 6.0) * (k1 + 2 * k2 + 2 * k3 + k4)
                y = jnp.stack([wrap(y[:, 0]), wrap(y[:, 1]), jnp.clip(y[:, 2], -4 * PI, 4 * PI),
                               jnp.clip(y[:, 3], -9 * PI, 9 * PI)], 1)
                term = -jnp.cos(y[:, 0]) - jnp.cos(y[:, 1] + y[:, 0]) > 1.0
                return y, jnp.where(term, 0.0, -1.0), term
        else:
            def reset(key):
                p = jax.random.uniform(key, (pop,), jnp.float32, -0.6, -0.4)
                return jnp.stack([p, jnp.zeros_like(p)], 1)

            def obs(s):
                return s

            def step(s, a):
                p, v = s[:, 0], s[:, 1]
                v = v + (a - 1).astype(jnp.float32) * 0.001 + jnp.cos(3 * p) * (-0.0025)
                v = jnp.clip(v, -0.07, 0.07)
                p = jnp.clip(p + v, -1.2, 0.6)
                v = jnp.where((p == -1.2) & (v < 0), 0.0, v)
                term = (p >= 0.5) & (v >= 0)
                return jnp.stack([p, v], 1), -jnp.ones(pop, jnp.float32), term
        return reset, obs, step

    def evolve(params, fit, key):
        k1, k2, k3, k4, k5 = jax.random.split(key, 5)
        order = jnp.argsort(-fit)
        ca = jax.random.randint(k1, (pop, T), 0, pop)
        cb = jax.random.randint(k2, (pop, T), 0, pop)
        pa = ca[jnp.arange(pop), jnp.argmax(fit[ca], 1)]
        pb = cb[jnp.arange(pop), jnp.argmax(fit[cb], 1)]
        child = jnp.where(jax.random.bernoulli(k3, 0.5, params.shape), params[pa], params[pb])
        child = child + jax.random.bernoulli(k4, rate, params.shape) * (sigma * jax.random.normal(k5, params.shape))
        return child.at[:E].set(params[order[:E]])

    if w == "rastrigin":
        NP = cfg.dim

        def evaluate(params, key):
            return -(10.0 * NP + jnp.sum(params * params - 10.0 * jnp.cos(2 * PI * params), 1))

        def init(key):
            return jax.random.uniform(key, (pop, NP), jnp.float32, -5.12, 5.12)
        step_check = None
    elif w == "finsim":
        ret_np, sig_np = load_market(cfg.market)
        L = min(L, ret_np.shape[0])
        R = jax.device_put(jnp.asarray(ret_np[:L]), dev)
        SG = jax.device_put(jnp.asarray(sig_np[:L]), dev)
        n_in, n_out = 8, 6
        NP = n_params(n_in, H, n_out)

        def evaluate(params, key):
            W1 = params[:, :H * n_in].reshape(pop, H, n_in)
            b1 = params[:, H * n_in:H * n_in + H]
            o = H * n_in + H
            W2 = params[:, o:o + n_out * H].reshape(pop, n_out, H)
            b2 = params[:, o + n_out * H:]

            def step(carry, t):
                e, fb, logeq, done = carry
                sig = SG[t]
                own = sig[:32].reshape(16, 2)
                mkt = jnp.broadcast_to(sig[32:36], (16, 4))
                x = jnp.concatenate([jnp.broadcast_to(jnp.concatenate([own, mkt], 1), (pop, 16, 6)), fb], 2)
                h = jnp.tanh(jnp.clip(jnp.einsum("phi,pai->pah", W1, x) + b1[:, None, :], -15, 15))
                out = jnp.einsum("poh,pah->pao", W2, h) + b2[:, None, :]
                sgm = lambda z: 1.0 / (1.0 + jnp.exp(-jnp.clip(z, -30, 30)))
                ne = (1.0 + 2.0 * sgm(out[..., 1])) * jnp.tanh(jnp.clip(out[..., 0], -15, 15)) * sgm(out[..., 3]) / 16.0
                trade = out[..., 2] > 0
                turnover = jnp.sum(jnp.where(trade, jnp.abs(ne - e), 0.0), 1)
                e2 = jnp.where(trade, ne, e)
                fb2 = jnp.tanh(jnp.clip(out[..., 4:6], -15, 15))
                growth = 1.0 + jnp.sum(e2 * R[t], 1) - 0.001 * turnover
                ruin = growth <= 1e-6
                inc = jnp.where(ruin, jnp.log(1e-6), jnp.log(jnp.maximum(growth, 1e-6)))
                logeq = logeq + jnp.where(done, 0.0, inc)
                return (jnp.where(done[:, None], e, e2), jnp.where(done[:, None, None], fb, fb2), logeq, done | ruin), None

            init_c = (jnp.zeros((pop, 16)), jnp.zeros((pop, 16, 2)), jnp.zeros(pop), jnp.zeros(pop, bool))
            (e, fb, logeq, done), _ = lax.scan(step, init_c, jnp.arange(L))
            return logeq

        def init(key):
            return 0.5 * jax.random.normal(key, (pop, NP), jnp.float32)
        step_check = None
    else:
        wk = WORK[w]
        n_in, n_out, n_act = wk["n_obs"], wk["n_act"], wk["n_act"]
        NP = n_params(n_in, H, n_out)
        reset, obs, step = env_fns()

        def evaluate(params, key):
            W1 = params[:, :H * n_in].reshape(pop, H, n_in)
            b1 = params[:, H * n_in:H * n_in + H]
            o = H * n_in + H
            W2 = params[:, o:o + n_out * H].reshape(pop, n_out, H)
            b2 = params[:, o + n_out * H:]

            def body(carry, _):
                s, ret, done = carry
                h = jnp.tanh(jnp.clip(jnp.einsum("phi,pi->ph", W1, obs(s)) + b1, -15, 15))
                out = jnp.einsum("poh,ph->po", W2, h) + b2
                a = jnp.argmax(out[:, :n_act], 1)
                s2, r, term = step(s, a)
                ret = ret + jnp.where(done, 0.0, r)
                return (jnp.where(done[:, None], s, s2), ret, done | term), None

            init_c = (reset(key), jnp.zeros(pop, jnp.float32), jnp.zeros(pop, bool))
            (s, ret, done), _ = lax.scan(body, init_c, None, length=L)
            return ret

        def init(key):
            return jax.random.normal(key, (pop, NP), jnp.float32)

        def step_check(S, A):
            s = jnp.asarray(S, jnp.float32)
            if s.shape[0] != pop:
                s = jnp.concatenate([s, jnp.zeros((pop - s.shape[0], s.shape[1]), jnp.float32)]) if s.shape[0] < pop else s[:pop]
            a = jnp.asarray(A + [0] * (pop - len(A)), jnp.int32)[:pop]
            return [list(map(float, r)) for r in jax.device_get(jax.jit(step)(s, a)[0])[:len(S)]]

    @jax.jit
    def generation(params, key):
        k_eval, k_evo, key = jax.random.split(key, 3)
        fit = evaluate(params, k_eval)
        return evolve(params, fit, k_evo), fit, key

    eval_only = jax.jit(lambda params, key: evaluate(params, key))
    with jax.default_device(dev):
        key = jax.random.PRNGKey(cfg.seed)
        params0 = jax.device_put(init(key), dev)

    class Impl:
        name = "jax"

        def __init__(self):
            self.params, self.key = params0, key

        def restore(self):
            self.params, self.key = params0, jax.random.PRNGKey(cfg.seed + 1)

        def gen(self):
            self.params, self.fit, self.key = generation(self.params, self.key)
            return self.fit

        def evaluate(self):
            self.fit = eval_only(self.params, self.key)
            return self.fit

        def sync(self):
            jax.block_until_ready(self.params)
            jax.block_until_ready(self.fit)

        def host(self, x):
            import numpy as np
            return np.asarray(x)

    Impl.step_check = staticmethod(step_check) if step_check else None
    Impl.n_params = NP
    return Impl()


# ---- PyTorch step loop -----------------------------------------------------------------------
def make_torch(w, cfg):
    import torch
    dev = torch.device(cfg.device)
    pop, L, H = cfg.pop, cfg.steps, cfg.hidden
    E, T = max(1, pop // 64), 4
    rate, sigma = WORK[w]["rate"], WORK[w]["sigma"]
    g = torch.Generator(device=dev)
    g.manual_seed(cfg.seed)
    f32 = torch.float32

    def rand(*shape):
        return torch.rand(*shape, generator=g, device=dev, dtype=f32)

    if w in ("cartpole", "acrobot", "mountaincar"):
        wk = WORK[w]
        n_in, n_out, n_act = wk["n_obs"], wk["n_act"], wk["n_act"]

        def reset():
            if w == "cartpole":
                return rand(pop, 4) * 0.1 - 0.05
            if w == "acrobot":
                return rand(pop, 4) * 0.2 - 0.1
            p = rand(pop) * 0.2 - 0.6
            return torch.stack([p, torch.zeros_like(p)], 1)

        def obs(s):
            if w == "acrobot":
                return torch.stack([torch.cos(s[:, 0]), torch.sin(s[:, 0]), torch.cos(s[:, 1]), torch.sin(s[:, 1]), s[:, 2], s[:, 3]], 1)
            return s

        def dsdt(y, a):
            t1, t2, d1_, d2_ = y[:, 0], y[:, 1], y[:, 2], y[:, 3]
            d1 = 0.25 + (1.0 + 0.25 + 2.0 * 0.5 * torch.cos(t2)) + 2.0
            d2 = (0.25 + 0.5 * torch.cos(t2)) + 1.0
            phi2 = 0.5 * 9.8 * torch.cos(t1 + t2 - PI / 2)
            phi1 = (-0.5 * (d2_ * d2_) * torch.sin(t2) - 2.0 * 0.5 * d2_ * d1_ * torch.sin(t2)
                    + 1.5 * 9.8 * torch.cos(t1 - PI / 2) + phi2)
            dd2 = (a + d2 / d1 * phi1 - 0.5 * (d1_ * d1_) * torch.sin(t2) - phi2) / (0.25 + 1.0 - (d2 * d2) / d1)
            dd1 = -(d2 * dd2 + phi1) / d1
            return torch.stack([d1_, d2_, dd1, dd2], 1)

        def wrap(x):
            for _ in range(2):
                x = torch.where(x > PI, x - 2 * PI, x)
                x = torch.where(x < -PI, x + 2 * PI, x)
            return x

        def step(s, a):
            if w == "cartpole":
                x, xd, th, thd = s[:, 0], s[:, 1], s[:, 2], s[:, 3]
                force = torch.where(a == 1, 10.0, -10.0)
                c, sn = torch.cos(th), torch.sin(th)
                temp = (force + 0.05 * (thd * thd) * sn) / 1.1
                thacc = (9.8 * sn - c * temp) / (0.5 * (4.0 / 3.0 - 0.1 * (c * c) / 1.1))
                xacc = temp - 0.05 * thacc * c / 1.1
                x, xd, th, thd = x + 0.02 * xd, xd + 0.02 * xacc, th + 0.02 * thd, thd + 0.02 * thacc
                term = (x < -2.4) | (x > 2.4) | (th < -0.20943951) | (th > 0.20943951)
                return torch.stack([x, xd, th, thd], 1), torch.ones(s.shape[0], device=dev), term
            if w == "acrobot":
                tq = (a - 1).to(f32)
                k1 = dsdt(s, tq)
                k2 = dsdt(s + 0.1 * k1, tq)
                k3 = dsdt(s + 0.1 * k2, tq)
                k4 = dsdt(s + 0.2 * k3, tq)
                y = s + (0.2 / 6.0) * (k1 + 2 * k2 + 2 * k3 + k4)
                y = torch.stack([wrap(y[:, 0]), wrap(y[:, 1]), y[:, 2].clamp(-4 * PI, 4 * PI), y[:, 3].clamp(-9 * PI, 9 * PI)], 1)
                term = -torch.cos(y[:, 0]) - torch.cos(y[:, 1] + y[:, 0]) > 1.0
                return y, torch.where(term, 0.0, -1.0), term
            p, v = s[:, 0], s[:, 1]
            v = v + (a - 1).to(f32) * 0.001 + torch.cos(3 * p) * (-0.0025)
            v = v.clamp(-0.07, 0.07)
            p = (p + v).clamp(-1.2, 0.6)
            v = torch.where((p == -1.2) & (v < 0), torch.zeros_like(v), v)
            return torch.stack([p, v], 1), -torch.ones(s.shape[0], device=dev), (p >= 0.5) & (v >= 0)

        NP = n_params(n_in, H, n_out)

        def evaluate(params):
            W1 = params[:, :H * n_in].reshape(pop, H, n_in)
            b1 = params[:, H * n_in:H * n_in + H]
            o = H * n_in + H
            W2 = params[:, o:o + n_out * H].reshape(pop, n_out, H)
            b2 = params[:, o + n_out * H:]
            s, ret, done = reset(), torch.zeros(pop, device=dev), torch.zeros(pop, dtype=torch.bool, device=dev)
            for _ in range(L):  # the step loop: one Python iteration per time step
                h = torch.tanh(torch.clamp(torch.bmm(W1, obs(s).unsqueeze(2)).squeeze(2) + b1, -15, 15))
                out = torch.bmm(W2, h.unsqueeze(2)).squeeze(2) + b2
                a = torch.argmax(out[:, :n_act], 1)
                s2, r, term = step(s, a)
                ret = ret + torch.where(done, 0.0, r)
                s = torch.where(done.unsqueeze(1), s, s2)
                done = done | term
            return ret

        def init():
            return torch.randn(pop, NP, generator=g, device=dev)

        def step_check(S, A):
            s = torch.tensor(S, dtype=f32, device=dev)
            a = torch.tensor(A, device=dev)
            return step(s, a)[0].cpu().tolist()
    elif w == "rastrigin":
        NP = cfg.dim

        def evaluate(params):
            return -(10.0 * NP + torch.sum(params * params - 10.0 * torch.cos(2 * PI * params), 1))

        def init():
            return rand(pop, NP) * 10.24 - 5.12
        step_check = None
    else:
        ret_np, sig_np = load_market(cfg.market)
        L = min(L, ret_np.shape[0])
        R = torch.tensor(ret_np[:L], device=dev)
        SG = torch.tensor(sig_np[:L], device=dev)
        n_in, n_out = 8, 6
        NP = n_params(n_in, H, n_out)

        def evaluate(params):
            W1 = params[:, :H * n_in].reshape(pop, H, n_in)
            b1 = params[:, H * n_in:H * n_in + H]
            o = H * n_in + H
            W2 = params[:, o:o + n_out * H].reshape(pop, n_out, H)
            b2 = params[:, o + n_out * H:]
            e = torch.zeros(pop, 16, device=dev)
            fb = torch.zeros(pop, 16, 2, device=dev)
            logeq = torch.zeros(pop, device=dev)
            done = torch.zeros(pop, dtype=torch.bool, device=dev)
            sgm = lambda z: 1.0 / (1.0 + torch.exp(-z.clamp(-30, 30)))
            for t in range(L):
                sig = SG[t]
                feat = torch.cat([sig[:32].reshape(16, 2), sig[32:36].expand(16, 4)], 1)
                x = torch.cat([feat.expand(pop, 16, 6), fb], 2)
                h = torch.tanh((torch.einsum("phi,pai->pah", W1, x) + b1[:, None, :]).clamp(-15, 15))
                out = torch.einsum("poh,pah->pao", W2, h) + b2[:, None, :]
                ne = (1.0 + 2.0 * sgm(out[..., 1])) * torch.tanh(out[..., 0].clamp(-15, 15)) * sgm(out[..., 3]) / 16.0
                trade = out[..., 2] > 0
                turnover = torch.where(trade, (ne - e).abs(), torch.zeros_like(ne)).sum(1)
                e2 = torch.where(trade, ne, e)
                growth = 1.0 + (e2 * R[t]).sum(1) - 0.001 * turnover
                ruin = growth <= 1e-6
                logeq = logeq + torch.where(done, torch.zeros_like(growth), torch.log(growth.clamp(min=1e-6)))
                e = torch.where(done[:, None], e, e2)
                fb = torch.where(done[:, None, None], fb, torch.tanh(out[..., 4:6].clamp(-15, 15)))
                done = done | ruin
            return logeq

        def init():
            return 0.5 * torch.randn(pop, NP, generator=g, device=dev)
        step_check = None

    def evolve(params, fit):
        order = torch.argsort(fit, descending=True)
        ca = torch.randint(0, pop, (pop, T), generator=g, device=dev)
        cb = torch.randint(0, pop, (pop, T), generator=g, device=dev)
        ar = torch.arange(pop, device=dev)
        pa = ca[ar, torch.argmax(fit[ca], 1)]
        pb = cb[ar, torch.argmax(fit[cb], 1)]
        child = torch.where(rand(pop, NP) < 0.5, params[pa], params[pb])
        child = child + (rand(pop, NP) < rate).to(f32) * sigma * torch.randn(pop, NP, generator=g, device=dev)
        child[:E] = params[order[:E]]
        return child

    params0 = init()

    class Impl:
        name = "torch"

        def __init__(self):
            self.params = params0.clone()

        def restore(self):
            self.params = params0.clone()
            g.manual_seed(cfg.seed + 1)

        def gen(self):
            self.fit = evaluate(self.params)
            self.params = evolve(self.params, self.fit)
            return self.fit

        def evaluate(self):
            self.fit = evaluate(self.params)
            return self.fit

        def sync(self):
            if dev.type == "cuda":
                torch.cuda.synchronize()

        def host(self, x):
            return x.cpu().numpy()

    Impl.step_check = staticmethod(step_check) if step_check else None
    Impl.n_params = NP
    return Impl()


# ---- CuPy RawKernel: fused CUDA C ------------------------------------------------------------
CUDA_SRC = r"""
// One thread per genome runs its whole episode (stops at termination), weights in registers/
// local memory: the CUDA twin of wgfuse's fused sim_episode.wgsl. Hash RNG = wgfuse's.
__device__ unsigned sim_hash(unsigned x) {
    unsigned state = x * 747796405u + 2891336453u;
    unsigned word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}
__device__ unsigned sim_rand(unsigned seed, unsigned gen, unsigned i, unsigned j) {
    return sim_hash(sim_hash(sim_hash(sim_hash(seed) ^ gen) ^ i) ^ j);
}
__device__ float u01(unsigned h) { return (float)(h >> 8) * (1.0f / 16777216.0f); }
__device__ float nrm(unsigned seed, unsigned gen, unsigned i, unsigned tag, unsigned k) {
    float a = 1.0f - u01(sim_rand(seed, gen, i, (tag << 28) | (2u * k)));
    float b = u01(sim_rand(seed, gen, i, (tag << 28) | (2u * k + 1u)));
    return sqrtf(-2.0f * logf(a)) * cosf(6.28318530718f * b);
}
__device__ float ctanh(float x) { return tanhf(fminf(fmaxf(x, -15.f), 15.f)); }

#if ENV == 0   /* CartPole-v1 */
#define N_OBS 4
#define N_ACT 2
__device__ void env_reset(float *s, unsigned seed, unsigned gen, unsigned g) {
    for (unsigned i = 0; i < 4; i++) s[i] = -0.05f + 0.1f * u01(sim_rand(seed, gen, g, i));
}
__device__ void env_obs(const float *s, float *o) { for (int i = 0; i < 4; i++) o[i] = s[i]; }
__device__ float env_step(float *s, int a, bool *term) {
    float x = s[0], xd = s[1], th = s[2], thd = s[3];
    float force = a == 1 ? 10.0f : -10.0f, c = cosf(th), sn = sinf(th);
    float temp = (force + 0.05f * (thd * thd) * sn) / 1.1f;
    float thacc = (9.8f * sn - c * temp) / (0.5f * (4.0f / 3.0f - 0.1f * (c * c) / 1.1f));
    float xacc = temp - 0.05f * thacc * c / 1.1f;
    x = x + 0.02f * xd; xd = xd + 0.02f * xacc; th = th + 0.02f * thd; thd = thd + 0.02f * thacc;
    s[0] = x; s[1] = xd; s[2] = th; s[3] = thd;
    *term = x < -2.4f || x > 2.4f || th < -0.20943951f || th > 0.20943951f;
    return 1.0f;
}
#elif ENV == 1 /* Acrobot-v1 */
#define N_OBS 6
#define N_ACT 3
__device__ void env_reset(float *s, unsigned seed, unsigned gen, unsigned g) {
    for (unsigned i = 0; i < 4; i++) s[i] = -0.1f + 0.2f * u01(sim_rand(seed, gen, g, i));
}
__device__ void env_obs(const float *s, float *o) {
    o[0] = cosf(s[0]); o[1] = sinf(s[0]); o[2] = cosf(s[1]); o[3] = sinf(s[1]); o[4] = s[2]; o[5] = s[3];
}
__device__ void dsdt(const float *y, float a, float *d) {
    float t1 = y[0], t2 = y[1], d1_ = y[2], d2_ = y[3];
    float d1 = 0.25f + (1.0f + 0.25f + 2.0f * 0.5f * cosf(t2)) + 2.0f;
    float d2 = (0.25f + 0.5f * cosf(t2)) + 1.0f;
    float phi2 = 0.5f * 9.8f * cosf(t1 + t2 - 1.57079633f);
    float phi1 = -0.5f * (d2_ * d2_) * sinf(t2) - 2.0f * 0.5f * d2_ * d1_ * sinf(t2) + 1.5f * 9.8f * cosf(t1 - 1.57079633f) + phi2;
    float dd2 = (a + d2 / d1 * phi1 - 0.5f * (d1_ * d1_) * sinf(t2) - phi2) / (0.25f + 1.0f - (d2 * d2) / d1);
    d[0] = d1_; d[1] = d2_; d[2] = -(d2 * dd2 + phi1) / d1; d[3] = dd2;
}
__device__ float wrapf(float x) {
    while (x > 3.14159265f) x -= 6.2831853f;
    while (x < -3.14159265f) x += 6.2831853f;
    return x;
}
__device__ float env_step(float *s, int act, bool *term) {
    float a = (float)(act - 1), k1[4], k2[4], k3[4], k4[4], y[4];
    dsdt(s, a, k1); for (int i = 0; i < 4; i++) y[i] = s[i] + 0.1f * k1[i];
    dsdt(y, a, k2); for (int i = 0; i < 4; i++) y[i] = s[i] + 0.1f * k2[i];
    dsdt(y, a, k3); for (int i = 0; i < 4; i++) y[i] = s[i] + 0.2f * k3[i];
    dsdt(y, a, k4);
    for (int i = 0; i < 4; i++) y[i] = s[i] + (0.2f / 6.0f) * (k1[i] + 2.0f * k2[i] + 2.0f * k3[i] + k4[i]);
    s[0] = wrapf(y[0]); s[1] = wrapf(y[1]);
    s[2] = fminf(fmaxf(y[2], -12.5663706f), 12.5663706f); s[3] = fminf(fmaxf(y[3], -28.2743339f), 28.2743339f);
    *term = -cosf(s[0]) - cosf(s[1] + s[0]) > 1.0f;
    return *term ? 0.0f : -1.0f;
}
#else          /* MountainCar-v0 */
#define N_OBS 2
#define N_ACT 3
__device__ void env_reset(float *s, unsigned seed, unsigned gen, unsigned g) {
    s[0] = -0.6f + 0.2f * u01(sim_rand(seed, gen, g, 0)); s[1] = 0.0f;
}
__device__ void env_obs(const float *s, float *o) { o[0] = s[0]; o[1] = s[1]; }
__device__ float env_step(float *s, int a, bool *term) {
    float p = s[0], v = s[1];
    v = v + (float)(a - 1) * 0.001f + cosf(3.0f * p) * (-0.0025f);
    v = fminf(fmaxf(v, -0.07f), 0.07f);
    p = fminf(fmaxf(p + v, -1.2f), 0.6f);
    if (p == -1.2f && v < 0.0f) v = 0.0f;
    s[0] = p; s[1] = v;
    *term = p >= 0.5f && v >= 0.0f;
    return -1.0f;
}
#endif
#define N_IN N_OBS
#define N_OUT N_ACT
#define NP (H * N_IN + H + N_OUT * H + N_OUT)

extern "C" __global__ void episode(float *fitness, const float *params, unsigned seed, unsigned gen) {
    unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= POP) return;
    float w[NP];
    for (int k = 0; k < NP; k++) w[k] = params[(size_t)g * NP + k];
    float s[4] = {0, 0, 0, 0}, in[N_IN], hid[H], out[N_OUT], ret = 0.0f;
    env_reset(s, seed, gen, g);
    bool done = false;
    for (int t = 0; t < STEPS && !done; t++) {
        env_obs(s, in);
        for (int h = 0; h < H; h++) {
            float acc = w[H * N_IN + h];
            for (int i = 0; i < N_IN; i++) acc += w[h * N_IN + i] * in[i];
            hid[h] = ctanh(acc);
        }
        for (int o = 0; o < N_OUT; o++) {
            float acc = w[H * N_IN + H + N_OUT * H + o];
            for (int h = 0; h < H; h++) acc += w[H * N_IN + H + o * H + h] * hid[h];
            out[o] = acc;
        }
        int a = 0;
        for (int i = 1; i < N_ACT; i++) if (out[i] > out[a]) a = i;
        ret += env_step(s, a, &done);
    }
    fitness[g] = ret;
}

extern "C" __global__ void step_check(float *s, const int *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    bool term;
    env_step(s + 4 * i, a[i], &term);
}
"""

CUDA_EVOLVE = r"""
__device__ unsigned sim_hash(unsigned x) {
    unsigned state = x * 747796405u + 2891336453u;
    unsigned word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}
__device__ unsigned sim_rand(unsigned seed, unsigned gen, unsigned i, unsigned j) {
    return sim_hash(sim_hash(sim_hash(sim_hash(seed) ^ gen) ^ i) ^ j);
}
__device__ float u01(unsigned h) { return (float)(h >> 8) * (1.0f / 16777216.0f); }
__device__ float fitv(const float *f, unsigned i) { float x = f[i]; return isnan(x) ? -3.0e38f : x; }
__device__ bool better(unsigned a, float fa, unsigned b, float fb) { return fa > fb || (fa == fb && a < b); }
__device__ unsigned tourn(const float *f, unsigned seed, unsigned gen, unsigned c, unsigned first) {
    unsigned best = sim_rand(seed, gen, c, (1u << 28) | first) % POP; float fb = fitv(f, best);
    for (unsigned t = 1; t < TOURN; t++) {
        unsigned j = sim_rand(seed, gen, c, (1u << 28) | (first + t)) % POP; float fj = fitv(f, j);
        if (better(j, fj, best, fb)) { best = j; fb = fj; }
    }
    return best;
}
// GA: elitism (rank scan stopping at ELITES), tournament, uniform crossover, gaussian mutation.
extern "C" __global__ void evolve(float *out, const float *in, const float *f, unsigned seed, unsigned gen,
                                  float rate, float sigma) {
    unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= POP) return;
    float fg = fitv(f, g);
    unsigned rank = 0;
    for (unsigned j = 0; j < POP && rank < ELITES; j++) if (better(j, fitv(f, j), g, fg)) rank++;
    if (rank < ELITES) for (unsigned k = 0; k < NP; k++) out[(size_t)rank * NP + k] = in[(size_t)g * NP + k];
    if (g < ELITES) return;
    size_t pa = (size_t)tourn(f, seed, gen, g, 0) * NP, pb = (size_t)tourn(f, seed, gen, g, TOURN) * NP;
    for (unsigned k = 0; k < NP; k++) {
        float v = (sim_rand(seed, gen, g, (2u << 28) | k) & 1u) ? in[pb + k] : in[pa + k];
        if (u01(sim_rand(seed, gen, g, (3u << 28) | k)) < rate) {
            float a = 1.0f - u01(sim_rand(seed, gen, g, (4u << 28) | (2u * k)));
            float b = u01(sim_rand(seed, gen, g, (4u << 28) | (2u * k + 1u)));
            v += sigma * sqrtf(-2.0f * logf(a)) * cosf(6.28318530718f * b);
        }
        out[(size_t)g * NP + k] = v;
    }
}
"""

CUDA_RASTRIGIN = r"""
// One block of 64 threads per genome: strided partial sums, then a shared-memory tree.
extern "C" __global__ void rastrigin(float *fitness, const float *x) {
    __shared__ float part[64];
    unsigned g = blockIdx.x, l = threadIdx.x;
    float acc = 0.0f;
    for (unsigned i = l; i < NP; i += 64) { float v = x[(size_t)g * NP + i]; acc += v * v - 10.0f * cosf(6.28318531f * v); }
    part[l] = acc;
    __syncthreads();
    for (unsigned s = 32; s > 0; s >>= 1) { if (l < s) part[l] += part[l + s]; __syncthreads(); }
    if (l == 0) fitness[g] = -(10.0f * NP + part[0]);
}
"""

CUDA_FINSIM = r"""
__device__ float ctanh(float x) { return tanhf(fminf(fmaxf(x, -15.f), 15.f)); }
__device__ float sgm(float x) { return 1.0f / (1.0f + expf(-fminf(fmaxf(x, -30.f), 30.f))); }
#define NP (H * 8 + H + 6 * H + 6)
// One thread per genome: 1,500 steps x 16 assets of the 8-16-6 recurrent policy (docs/sim.md).
extern "C" __global__ void finsim(float *fitness, const float *params, const float *R, const float *SG) {
    unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= POP) return;
    float w[NP];
    for (int k = 0; k < NP; k++) w[k] = params[(size_t)g * NP + k];
    float e[16] = {0}, fb[32] = {0}, logeq = 0.0f, in[8], hid[H], out[6];
    for (int t = 0; t < STEPS; t++) {
        const float *sig = SG + t * 36;
        float pnl = 0.0f, turnover = 0.0f;
        in[2] = sig[32]; in[3] = sig[33]; in[4] = sig[34]; in[5] = sig[35];
        for (int a = 0; a < 16; a++) {
            in[0] = sig[2 * a]; in[1] = sig[2 * a + 1]; in[6] = fb[2 * a]; in[7] = fb[2 * a + 1];
            for (int h = 0; h < H; h++) {
                float acc = w[H * 8 + h];
                for (int i = 0; i < 8; i++) acc += w[h * 8 + i] * in[i];
                hid[h] = ctanh(acc);
            }
            for (int o = 0; o < 6; o++) {
                float acc = w[H * 8 + H + 6 * H + o];
                for (int h = 0; h < H; h++) acc += w[H * 8 + H + o * H + h] * hid[h];
                out[o] = acc;
            }
            if (out[2] > 0.0f) {
                float ne = (1.0f + 2.0f * sgm(out[1])) * ctanh(out[0]) * sgm(out[3]) / 16.0f;
                turnover += fabsf(ne - e[a]); e[a] = ne;
            }
            fb[2 * a] = ctanh(out[4]); fb[2 * a + 1] = ctanh(out[5]);
            pnl += e[a] * R[t * 16 + a];
        }
        float growth = 1.0f + pnl - 0.001f * turnover;
        if (growth <= 1e-6f) { logeq += logf(1e-6f); break; }
        logeq += logf(growth);
    }
    fitness[g] = logeq;
}
"""


def make_cupy(w, cfg):
    import cupy as cp
    pop, L, H = cfg.pop, cfg.steps, cfg.hidden
    E, T = max(1, pop // 64), 4
    rate, sigma = WORK[w]["rate"], WORK[w]["sigma"]
    if w == "rastrigin":
        NP = cfg.dim
    elif w == "finsim":
        NP = n_params(8, H, 6)
    else:
        NP = n_params(WORK[w]["n_obs"], H, WORK[w]["n_act"])
    defs = f"#define POP {pop}u\n#define H {H}\n#define STEPS {L}\n#define TOURN {T}u\n#define ELITES {E}u\n"
    evo = cp.RawModule(code=f"#define NP {NP}u\n" + defs + CUDA_EVOLVE).get_function("evolve")
    rng = cp.random.RandomState(cfg.seed)
    step_check = None
    if w == "rastrigin":
        k = cp.RawModule(code=f"#define NP {NP}u\n" + CUDA_RASTRIGIN).get_function("rastrigin")
        launch = lambda fit, p, gen: k((pop,), (64,), (fit, p))
        params0 = rng.uniform(-5.12, 5.12, (pop, NP)).astype(cp.float32)
    elif w == "finsim":
        ret_np, sig_np = load_market(cfg.market)
        L = min(L, ret_np.shape[0])
        R, SG = cp.asarray(ret_np[:L]), cp.asarray(sig_np[:L])
        k = cp.RawModule(code=defs.replace(f"STEPS {cfg.steps}", f"STEPS {L}") + CUDA_FINSIM).get_function("finsim")
        launch = lambda fit, p, gen: k(((pop + 63) // 64,), (64,), (fit, p, R, SG))
        params0 = (0.5 * rng.standard_normal((pop, NP))).astype(cp.float32)
    else:
        env = {"cartpole": 0, "acrobot": 1, "mountaincar": 2}[w]
        mod = cp.RawModule(code=f"#define ENV {env}\n" + defs + CUDA_SRC)
        k = mod.get_function("episode")
        sc = mod.get_function("step_check")
        launch = lambda fit, p, gen: k(((pop + 63) // 64,), (64,), (fit, p, cp.uint32(cfg.seed), cp.uint32(gen)))
        params0 = rng.standard_normal((pop, NP)).astype(cp.float32)

        def step_check(S, A):
            n = len(S)
            s = cp.zeros((n, 4), cp.float32)
            s[:, :len(S[0])] = cp.asarray(S, cp.float32)
            a = cp.asarray(A, cp.int32)
            sc(((n + 63) // 64,), (64,), (s, a, cp.int32(n)))
            return cp.asnumpy(s)[:, :len(S[0])].tolist()

    class Impl:
        name = "cupy"

        def __init__(self):
            self.restore()
            self.fit = cp.zeros(pop, cp.float32)
            self.tmp = cp.empty_like(params0)

        def restore(self):
            self.params, self.gen_i = params0.copy(), 0

        def gen(self):
            launch(self.fit, self.params, self.gen_i)
            evo(((pop + 63) // 64,), (64,), (self.tmp, self.params, self.fit, cp.uint32(cfg.seed), cp.uint32(self.gen_i),
                                              cp.float32(rate), cp.float32(sigma)))
            self.params, self.tmp = self.tmp, self.params
            self.gen_i += 1
            return self.fit

        def evaluate(self):
            launch(self.fit, self.params, self.gen_i)
            return self.fit

        def sync(self):
            cp.cuda.Stream.null.synchronize()

        def host(self, x):
            return cp.asnumpy(x)

    Impl.step_check = staticmethod(step_check) if step_check else None
    Impl.n_params = NP
    return Impl()


MAKERS = {"jax": make_jax, "torch": make_torch, "cupy": make_cupy}


# ---- the protocol ------------------------------------------------------------------------------
def bench_one(w, impl_name, cfg):
    row = dict(workload=w, impl=impl_name, pop=cfg.pop, steps=cfg.steps if w != "rastrigin" else 0, gens=cfg.gens,
               runs=cfg.runs)
    try:
        impl = MAKERS[impl_name](w, cfg)
    except Exception as e:  # missing framework, no GPU, no market file
        row["error"] = f"{type(e).__name__}: {e}"
        return row
    row["params"] = impl.n_params
    rng = random.Random(1234)
    if impl.step_check:
        worst = check_steps(w, impl.step_check, rng)
        row["step_max_rel_err"] = worst
        if not worst <= 1e-3:
            row["error"] = f"WRONG: step differs from Gymnasium's by {worst:.2e} (tolerance 1e-3)"
            return row
    impl.restore()
    impl.gen()  # warm-up + compile
    impl.sync()
    impl.restore()
    f = impl.host(impl.evaluate())
    import numpy as np
    f = np.asarray(f, dtype=np.float64)
    wk = WORK[w]
    if not np.all(np.isfinite(f)) or ("lo" in wk and (f.min() < wk["lo"] or f.max() > wk["hi"])):
        row["error"] = f"WRONG: first evaluation out of range ({f.min()} .. {f.max()})"
        return row
    row["checksum"] = float(f.sum())
    row["mean_return_gen0"] = float(f.mean())
    times = {"noreadback": [], "readback": [], "eval": []}
    for _ in range(cfg.runs):
        impl.restore()
        impl.sync()
        t0 = time.perf_counter()
        for _ in range(cfg.gens):
            impl.gen()
        impl.sync()
        times["noreadback"].append(time.perf_counter() - t0)
        impl.restore()
        impl.sync()
        t0 = time.perf_counter()
        for _ in range(cfg.gens):
            impl.host(impl.gen())
        times["readback"].append(time.perf_counter() - t0)
        impl.restore()
        impl.sync()
        t0 = time.perf_counter()
        for _ in range(cfg.gens):
            impl.evaluate()
        impl.sync()
        times["eval"].append(time.perf_counter() - t0)
    row["gen_per_s_noreadback"] = cfg.gens / statistics.median(times["noreadback"])
    row["gen_per_s_readback"] = cfg.gens / statistics.median(times["readback"])
    row["eval_per_s"] = cfg.gens / statistics.median(times["eval"])
    return row


# ---- markdown tables from an h200_sim.sh output directory ------------------------------------
PREPRINT = ("Preprint (Gunaydin 2026, before its erratum): 1,500-step financial simulation, fused WebGPU = "
            "159x PyTorch MPS, 94x PyTorch CUDA, 7.2x JAX; Rastrigin: JAX 1,164 vs WebGPU 170 gen/s. Measured on "
            "this H200 before (CartPole 4,096 x 500, 4-16-2, evaluation only): JAX 182, PyTorch step loop 4.2, "
            "fused CUDA C 233 gen/s.")


def render_tables(outdir):
    def load(name):
        path = os.path.join(outdir, name + ".json")
        try:
            return json.load(open(path))
        except Exception as e:
            return {"results": [], "error": f"{path}: {e}"}

    def fmt(x):
        return "-" if x is None else (f"{x:,.1f}" if x >= 10 else f"{x:.3g}")

    lines = []
    sims = {n: load(n) for n in ("sim_cartpole", "sim_classic", "sim_rastrigin", "sim_finsim", "sim_lengths")}
    peers = {n: load(n) for n in ("peers_cartpole", "peers_classic", "peers_rastrigin", "peers_finsim")}
    dev = next((d.get("device") for d in sims.values() if d.get("device")), "?")
    lines.append(f"Device: {dev}; {next((d.get('driver') for d in sims.values() if d.get('driver')), '')}; "
                 f"{next((d.get('date') for d in sims.values() if d.get('date')), '')}. "
                 "gen/s = generations (evaluate + evolve, whole population) per second (docs/sim.md).")
    lines.append("")
    lines.append("| workload | pop | steps | implementation | gen/s (no readback) | gen/s (readback) | eval/s | GPU ms episode / evolve |")
    lines.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for sname, pname in (("sim_cartpole", "peers_cartpole"), ("sim_classic", "peers_classic"),
                         ("sim_rastrigin", "peers_rastrigin"), ("sim_finsim", "peers_finsim")):
        rows = [("wgfuse " + (r["strategy"] if r["strategy"] != "n/a" else "fused"), r) for r in sims[sname].get("results", [])]
        rows += [({"jax": "JAX lax.scan", "torch": "PyTorch step loop", "cupy": "fused CUDA C (CuPy)"}.get(r["impl"], r["impl"]), r)
                 for r in peers[pname].get("results", [])]
        for label, r in rows:
            if "error" in r:
                lines.append(f"| {r['workload']} | {r.get('pop', '')} | {r.get('steps', '')} | {label} | {r['error']} | | | |")
                continue
            gpu = (f"{r['gpu_ms_episode']:.3f} / {r['gpu_ms_evolve']:.3f}"
                   if r.get("gpu_ms_episode", -1) >= 0 else "")
            lines.append(f"| {r['workload']} | {r['pop']} | {r['steps']} | {label} | {fmt(r['gen_per_s_noreadback'])} | "
                         f"{fmt(r['gen_per_s_readback'])} | {fmt(r['eval_per_s'])} | {gpu} |")
    # acceptance: CartPole fused vs the peers
    cp = {r["strategy"]: r for r in sims["sim_cartpole"].get("results", []) if "error" not in r}
    pp = {r["impl"]: r for r in peers["peers_cartpole"].get("results", []) if "error" not in r}
    if "fused" in cp:
        f = cp["fused"]["gen_per_s_noreadback"]
        lines.append("")
        checks = []
        if "jax" in pp:
            checks.append(f"fused / JAX = {f / pp['jax']['gen_per_s_noreadback']:.2f}x (want >= 1)")
        if "torch" in pp:
            checks.append(f"fused / PyTorch loop = {f / pp['torch']['gen_per_s_noreadback']:.1f}x (want >= 50)")
        if "cupy" in pp:
            checks.append(f"fused / CUDA C = {f / pp['cupy']['gen_per_s_noreadback']:.2f}x (target >= 1)")
        if "per-step" in cp:
            checks.append(f"fused / per-step = {f / cp['per-step']['gen_per_s_noreadback']:.1f}x")
        lines.append("CartPole acceptance (gen/s without readback): " + "; ".join(checks) + ".")
    lens = {}
    for r in sims["sim_lengths"].get("results", []):
        if "error" not in r:
            lens.setdefault(r["steps"], {})[r["strategy"]] = r["gen_per_s_noreadback"]
    if lens:
        lines.append("")
        lines.append("| CartPole steps | fused gen/s | per-step gen/s | fused / per-step |")
        lines.append("| --- | --- | --- | --- |")
        for L in sorted(lens):
            f, p = lens[L].get("fused"), lens[L].get("per-step")
            ratio = f"{f / p:.1f}x" if f and p else "-"
            lines.append(f"| {L} | {fmt(f)} | {fmt(p)} | {ratio} |")
    lines.append("")
    lines.append(PREPRINT)
    errs = [d["error"] for d in list(sims.values()) + list(peers.values()) if "error" in d]
    if errs:
        lines.append("")
        lines.append("Missing: " + "; ".join(errs))
    return "\n".join(lines) + "\n"


def write_out(path, text):
    if not path:
        sys.stdout.write(text)
        return
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".sim_peers.")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", default=None, help="render markdown from an h200_sim.sh output directory")
    ap.add_argument("--workload", default="cartpole")
    ap.add_argument("--impl", default="jax,torch,cupy")
    ap.add_argument("--pop", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=0, help="episode length (0: the workload's)")
    ap.add_argument("--hidden", type=int, default=0, help="hidden width (0: the workload's)")
    ap.add_argument("--dim", type=int, default=2000)
    ap.add_argument("--gens", type=int, default=10)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--market", default=None, help="finsim path from `wgfuse sim market`")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    if a.tables:
        write_out(a.out, render_tables(a.tables))
        return
    rows = []
    for w in a.workload.split(","):
        if w not in WORK:
            raise SystemExit(f"unknown workload {w}")
        for impl in a.impl.split(","):
            cfg = argparse.Namespace(**vars(a))
            cfg.steps = a.steps or WORK[w].get("steps", 0)
            cfg.hidden = a.hidden or WORK[w].get("hidden", 0)
            if w == "finsim" and not a.market:
                rows.append(dict(workload=w, impl=impl, error="needs --market FILE (wgfuse sim market)"))
                continue
            print(f"[sim_peers] {w} {impl} pop {a.pop} steps {cfg.steps}", file=sys.stderr)
            rows.append(bench_one(w, impl, cfg))
    env = dict(date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), python=sys.version.split()[0])
    try:
        import torch
        env["torch"] = torch.__version__
        if torch.cuda.is_available():
            env["gpu"] = torch.cuda.get_device_name(0)
    except Exception:
        pass
    for mod in ("jax", "cupy"):
        try:
            env[mod] = __import__(mod).__version__
        except Exception:
            pass
    if a.json:
        text = json.dumps(dict(tool="bench/sim_peers.py", env=env, metric=(
            "generation = evaluate + evolve over the whole population (docs/sim.md); gen_per_s_noreadback: "
            "generations back to back, one synchronize; gen_per_s_readback: fitness to host every generation; "
            "eval_per_s: evaluation only"), results=rows), indent=1) + "\n"
    else:
        lines = [f"# bench/sim_peers.py {env}",
                 f"{'workload':<12} {'impl':<6} {'pop':>7} {'steps':>6} {'gen/s(noRB)':>12} {'gen/s(RB)':>12} {'eval/s':>12}"]
        for r in rows:
            if "error" in r:
                lines.append(f"{r['workload']:<12} {r['impl']:<6} {r.get('pop', 0):>7} {r.get('steps', 0):>6} {r['error']}")
            else:
                lines.append(f"{r['workload']:<12} {r['impl']:<6} {r['pop']:>7} {r['steps']:>6} "
                             f"{r['gen_per_s_noreadback']:>12.2f} {r['gen_per_s_readback']:>12.2f} {r['eval_per_s']:>12.2f}")
        text = "\n".join(lines) + "\n"
    write_out(a.out, text)


if __name__ == "__main__":
    main()
