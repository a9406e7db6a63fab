#!/usr/bin/env python3
"""`wgfuse serve` end to end (issue 15), on 127.0.0.1 only, every loop bounded.

Starts the real binary ($WGF_CLI) on generated test models with --port 0 (the OS picks; the
port is read from the "listening on" line) and drives it with curl, raw sockets and the
official OpenAI client for Node (tests/serve/test_serve_openai.mjs, openai pinned in
tests/serve/package-lock.json, installed by scripts/setup.sh):
  - chat (non-streaming and streaming, curl and the OpenAI client) and completions give the
    text and the token count of `wgfuse run` with the same seed, sampling and template;
  - a multi-turn conversation (system, user and assistant turns; "developer" as system) gives
    the tokens of `wgfuse run --messages` with the same seed; with --chat-template FILE, those
    of `wgfuse run --chat-template FILE --messages`; the template's raise_exception is a 400
    carrying its message; --no-template takes one user message (a conversation is a 400);
  - /v1/models, /health, tokenize/detokenize round trip;
  - every documented error: 400 (malformed JSON, wrong types, invalid UTF-8, nesting, 100k
    messages, max_tokens -1 / 1e12, n=2, presence_penalty), 401, 404, 405, 411, 413 (10 MB),
    422, 503 (queue full), a 1 MB header, a slowloris client closed within --read-timeout;
    after each the server still answers;
  - a client disconnecting mid-stream cancels its generation (the engine's log line shows
    fewer tokens than asked, "cancelled: client gone");
  - load: 32 concurrent streaming clients x 4 requests, each output equal to its reference
    (no interleaving), then 8 clients that disconnect mid-stream free their slots, RSS after
    within 5% of before;
  - SIGTERM with a request in flight: exit 0 within the grace + a bound.
Prints one line per check and "N passed, N failed, N skipped" (the RSS check is skipped,
loudly, in sanitizer builds, where ASan's quarantine holds freed memory)."""

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

CLI = os.environ.get("WGF_CLI", "wgfuse")
SRC = os.environ.get("WGF_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
TMP = os.path.join(os.environ.get("WGF_TEST_TMP", "/tmp"), "serve")
SLOW = os.environ.get("WGF_SANITIZE_BUILD") == "1"  # ASan/TSan: everything is several times slower
KEY = "sk-test-0123456789"
AUTH = {"Authorization": "Bearer " + KEY}

passed = failed = skipped = 0


def skip(name, reason):
    global skipped
    skipped += 1
    print(f"SKIP {name}: {reason}")


def check(ok, name, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"PASS {name}")
    else:
        failed += 1
        print(f"FAIL {name}: {str(detail)[:1500]}")
    sys.stdout.flush()
    return ok


# ---- the server process ------------------------------------------------------------------------

class Server:
    def __init__(self, model, *args, name="srv", env=None):
        self.log = os.path.join(TMP, name + ".log")
        self.errf = open(self.log, "w", encoding="utf-8")
        self.p = subprocess.Popen([CLI, "serve", "-m", model, "--port", "0", *args], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=self.errf, env=env)
        self.port = None
        t_end = time.time() + 120
        while time.time() < t_end and self.p.poll() is None:
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", self.text())
            if m:
                self.port = int(m.group(1))
                break
            time.sleep(0.05)
        if self.port is None:
            raise RuntimeError(f"server did not start: {self.text()[-2000:]}")

    def text(self):
        with open(self.log, encoding="utf-8", errors="replace") as f:
            return f.read()

    def rss_kb(self, field="VmRSS"):
        with open(f"/proc/{self.p.pid}/status", encoding="utf-8") as f:
            return int(re.search(field + r":\s+(\d+)", f.read()).group(1))

    def stop(self, sig=signal.SIGTERM, timeout=60):
        t0 = time.time()
        if self.p.poll() is None:
            self.p.send_signal(sig)
        try:
            rc = self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = self.p.wait()
            rc = f"killed after {timeout}s"
        self.errf.close()
        return rc, time.time() - t0


def request(port, method, path, body=None, headers=None, timeout=120):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    h = {"Content-Type": "application/json", **(headers or {})}
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    c.request(method, path, body=data, headers=h)
    r = c.getresponse()
    out = r.status, r.read()
    c.close()
    return out


def jbody(b):
    try:
        return json.loads(b)
    except ValueError:
        return {}


def curl(port, path, body, stream=False, key=KEY):
    args = ["curl", "-s", "-S", "--max-time", "300", "-w", "\n%{http_code}", f"http://127.0.0.1:{port}{path}",
            "-H", "Content-Type: application/json", "--data-binary", "@-"]
    if key:
        args += ["-H", f"Authorization: Bearer {key}"]
    if stream:
        args.insert(1, "-N")
    p = subprocess.run(args, input=json.dumps(body).encode(), capture_output=True, timeout=320)
    out, _, code = p.stdout.rpartition(b"\n")
    return int(code or 0), out


def sse_events(raw):
    """The data: payloads of an SSE body, in order, and whether it ended with [DONE]."""
    ev, done = [], False
    for block in raw.decode("utf-8").split("\n\n"):
        if not block.strip():
            continue
        assert block.startswith("data: "), block
        d = block[6:]
        if d == "[DONE]":
            done = True
        else:
            ev.append(json.loads(d))
    return ev, done


def stream_text(raw, chat=True):
    ev, done = sse_events(raw)
    parts = [e["choices"][0]["delta"].get("content", "") if chat else e["choices"][0]["text"]
             for e in ev if e.get("choices")]
    finish = [e["choices"][0]["finish_reason"] for e in ev if e.get("choices") and e["choices"][0]["finish_reason"]]
    usage = [e["usage"] for e in ev if e.get("usage")]
    return "".join(parts), finish, usage, done


def run_ref(model, user, system=None, n=24, temp=0.9, top_p=0.95, seed=11, no_template=False):
    """`wgfuse run` with the same sampling: (text, generated token count)."""
    args = [CLI, "run", "-m", model, "-p", user, "-n", str(n), "--temp", str(temp), "--top-p", str(top_p),
            "--top-k", "0", "--seed", str(seed)]
    if system:
        args += ["--system", system]
    if no_template:
        args += ["--no-template"]
    p = subprocess.run(args, capture_output=True, timeout=300)
    assert p.returncode == 0, p.stderr
    text = p.stdout.decode("utf-8")
    assert text.endswith("\n")
    m = re.search(r"generated (\d+) tokens", p.stderr.decode())
    return text[:-1], int(m.group(1))


CONVERSATION = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello world"},
                {"role": "assistant", "content": "Hi! What can I do?"}, {"role": "user", "content": "Tell me a story"},
                {"role": "assistant", "content": "Once there was a fox."}, {"role": "user", "content": "And then?"}]


def run_ref_messages(model, messages, *extra, n=24, seed=11):
    """`wgfuse run --messages FILE` with chat_body's sampling: (text, generated token count)."""
    path = os.path.join(TMP, f"messages-{seed}.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(messages, f)
    p = subprocess.run([CLI, "run", "-m", model, "--messages", path, "-n", str(n), "--temp", "0.9", "--top-p", "0.95",
                        "--top-k", "0", "--seed", str(seed), *extra], capture_output=True, timeout=300)
    assert p.returncode == 0, p.stderr
    text = p.stdout.decode("utf-8")
    m = re.search(r"generated (\d+) tokens", p.stderr.decode())
    return text[:-1], int(m.group(1))


def chat_content(port, messages, n=24, seed=11):
    code, out = curl(port, "/v1/chat/completions", {**chat_body("", n=n, seed=seed), "messages": messages})
    o = jbody(out)
    return code, o.get("choices", [{}])[0].get("message", {}).get("content"), o.get("usage", {}), out


def raw_exchange(port, data, read_timeout=10):
    """Send bytes on a fresh connection, return what comes back until close or timeout."""
    s = socket.create_connection(("127.0.0.1", port), timeout=read_timeout)
    try:
        s.sendall(data)
    except OSError:
        pass
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except OSError:
        pass
    s.close()
    return out


def status_of(raw):
    m = re.match(rb"HTTP/1\.[01] (\d+)", raw)
    return int(m.group(1)) if m else None


def chat_body(user, system=None, n=24, seed=11, stream=False, **kw):
    msgs = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": user}]
    return {"model": "test", "messages": msgs, "max_tokens": n, "temperature": 0.9, "top_p": 0.95, "top_k": 0,
            "seed": seed, "stream": stream, **kw}


# ---- the checks ------------------------------------------------------------------------------------

def test_equality_and_endpoints(small):
    srv = Server(small, "--api-key", KEY, "--read-timeout", "4", name="main")
    port = srv.port
    try:
        ref, ref_n = run_ref(small, "Hello world", system="Be brief.")
        check(len(set(ref)) > 3, "the reference text is varied (a test that can fail)", repr(ref))
        code, out = curl(port, "/v1/chat/completions", chat_body("Hello world", system="Be brief."))
        o = jbody(out)
        text = o.get("choices", [{}])[0].get("message", {}).get("content")
        check(code == 200 and text == ref, "curl chat == wgfuse run (same seed and template)", f"{code} {text!r} vs {ref!r}")
        check(o.get("usage", {}).get("completion_tokens") == ref_n and o["choices"][0]["finish_reason"] == "length",
              "chat usage.completion_tokens == run's generated count, finish_reason length", o.get("usage"))
        code, out = curl(port, "/v1/chat/completions",
                         chat_body("Hello world", system="Be brief.", stream=True, stream_options={"include_usage": True}),
                         stream=True)
        st, finish, usage, done = stream_text(out)
        check(code == 200 and st == ref and done and finish == ["length"],
              "curl streaming chat == wgfuse run, ends with finish_reason and [DONE]", f"{code} {st!r} {finish} {done}")
        check(usage and usage[0]["completion_tokens"] == ref_n, "streaming usage chunk counts the tokens", usage)
        cref, cref_n = run_ref(small, "Once upon a time", no_template=True, seed=5)
        code, out = curl(port, "/v1/completions", {"prompt": "Once upon a time", "max_tokens": 24, "temperature": 0.9,
                                                   "top_p": 0.95, "top_k": 0, "seed": 5})
        o = jbody(out)
        check(code == 200 and o["choices"][0]["text"] == cref and o["usage"]["completion_tokens"] == cref_n,
              "curl completions == wgfuse run --no-template", f"{code} {out[:300]!r}")
        code, out = curl(port, "/v1/completions", {"prompt": "Once upon a time", "max_tokens": 24, "temperature": 0.9,
                                                   "top_p": 0.95, "top_k": 0, "seed": 5, "stream": True}, stream=True)
        st, finish, _, done = stream_text(out, chat=False)
        check(code == 200 and st == cref and done, "streaming completions == wgfuse run --no-template", f"{st!r}")
        # stop strings: the text ends before the first occurrence, which is not included
        if len(ref) > 6:
            stop = ref[3:5]
            code, out = curl(port, "/v1/chat/completions", chat_body("Hello world", system="Be brief.", stop=[stop]))
            o = jbody(out)
            t = o.get("choices", [{}])[0].get("message", {}).get("content")
            check(code == 200 and t == ref[:ref.index(stop)] and o["choices"][0]["finish_reason"] == "stop",
                  "stop string: text up to it, without it, finish_reason stop", f"{t!r} stop {stop!r} ref {ref!r}")

        # a whole conversation (system, alternating user and assistant turns) == `wgfuse run --messages`
        mref, mref_n = run_ref_messages(small, CONVERSATION, seed=7)
        code, text, usage, out = chat_content(port, CONVERSATION, seed=7)
        check(code == 200 and text == mref and usage.get("completion_tokens") == mref_n,
              "multi-turn chat (system, user, assistant, user, assistant, user) == wgfuse run --messages",
              f"{code} {text!r} vs {mref!r} {out[:300]!r}")
        short_ref, _ = run_ref_messages(small, CONVERSATION[-1:], seed=7)
        check(mref != short_ref, "the earlier turns change the output (a test that can fail)", repr(mref))
        dev = [{"role": "developer", "content": "Be brief."}] + CONVERSATION[1:]
        code, text, _, out = chat_content(port, dev, seed=7)
        check(code == 200 and text == mref, "a developer message is the system message", f"{code} {text!r} vs {mref!r}")

        # the OpenAI client for Node
        env = dict(os.environ, WGF_BASE_URL=f"http://127.0.0.1:{port}/v1", WGF_API_KEY=KEY,
                   WGF_EXPECT=json.dumps({"chat": ref, "chat_tokens": ref_n}))
        p = subprocess.run(["node", os.path.join(SRC, "tests", "serve", "test_serve_openai.mjs")], capture_output=True,
                           timeout=300, env=env, cwd=os.path.join(SRC, "tests", "serve"))
        out = p.stdout.decode(errors="replace")
        print(out, end="")
        check(p.returncode == 0 and "0 failed" in out and "openai client:" in out,
              "the official openai npm client: chat, stream, models, errors", p.stderr.decode(errors="replace")[-1500:])

        # models, health, tokenize round trip
        code, out = request(port, "GET", "/v1/models", headers=AUTH)
        o = jbody(out)
        check(code == 200 and o.get("object") == "list" and o["data"][0]["id"] == os.path.basename(small),
              "/v1/models lists the model", out[:300])
        code, out = request(port, "GET", "/v1/models/" + os.path.basename(small), headers=AUTH)
        check(code == 200 and jbody(out).get("id") == os.path.basename(small), "/v1/models/ID", out[:200])
        code, out = request(port, "GET", "/health")
        check(code == 200 and jbody(out).get("status") == "ok", "/health ok without a key", out)
        text = "Hello world, the quick brown fox. Ünïcødé ✓"
        code, out = request(port, "POST", "/tokenize", {"content": text}, AUTH)
        toks = jbody(out).get("tokens")
        check(code == 200 and isinstance(toks, list) and len(toks) > 5, "/tokenize", out[:200])
        code, out = request(port, "POST", "/detokenize", {"tokens": toks}, AUTH)
        check(code == 200 and jbody(out).get("content") == text, "/tokenize -> /detokenize round trip", out[:200])
        code, out = request(port, "POST", "/tokenize", {"content": "Hello", "with_pieces": True}, AUTH)
        pieces = jbody(out).get("tokens", [])
        check(code == 200 and "".join(x["piece"] for x in pieces) == "Hello", "/tokenize with_pieces", out[:200])

        # every error status, each an OpenAI error object
        def err(name, want, method, path, body=None, headers=AUTH, param=None):
            code, out = request(port, method, path, body, headers)
            e = jbody(out).get("error", {})
            ok = code == want and isinstance(e.get("message"), str) and "type" in e
            if param:
                ok = ok and e.get("param") == param
            check(ok, f"{name} -> {want}", f"{code} {out[:300]!r}")

        ok_chat = chat_body("hi", n=4)
        err("malformed JSON", 400, "POST", "/v1/chat/completions", b'{"messages": [')
        err("trailing garbage", 400, "POST", "/v1/chat/completions", json.dumps(ok_chat).encode() + b"}")
        err("temperature a string", 400, "POST", "/v1/chat/completions", {**ok_chat, "temperature": "hot"},
            param="temperature")
        err("messages not an array", 400, "POST", "/v1/chat/completions", {"messages": "hi"}, param="messages")
        err("content a number", 400, "POST", "/v1/chat/completions", {"messages": [{"role": "user", "content": 5}]},
            param="messages[0].content")
        err("unknown role", 400, "POST", "/v1/chat/completions", {"messages": [{"role": "wizard", "content": "x"}]},
            param="messages[0].role")
        err("invalid UTF-8 in a message", 400, "POST", "/v1/chat/completions",
            b'{"messages":[{"role":"user","content":"a\xff\xfeb"}]}')
        err("a lone surrogate escape", 400, "POST", "/v1/chat/completions",
            b'{"messages":[{"role":"user","content":"\\ud800"}]}')
        err("100k nested arrays", 400, "POST", "/v1/chat/completions", b"[" * 100000)
        many = {"messages": [{"role": "user", "content": "a"}] * 100000}
        err("100k messages", 400, "POST", "/v1/chat/completions", many, param="messages")
        err("max_tokens -1", 400, "POST", "/v1/chat/completions", {**ok_chat, "max_tokens": -1}, param="max_tokens")
        err("max_tokens 1e12", 400, "POST", "/v1/chat/completions", {**ok_chat, "max_tokens": 1e12}, param="max_tokens")
        err("max_tokens 10^12", 400, "POST", "/v1/chat/completions", {**ok_chat, "max_tokens": 10**12}, param="max_tokens")
        err("n 2", 400, "POST", "/v1/chat/completions", {**ok_chat, "n": 2}, param="n")
        err("5 stop strings", 400, "POST", "/v1/chat/completions", {**ok_chat, "stop": ["a", "b", "c", "d", "e"]},
            param="stop")
        err("a 1025-byte stop string", 400, "POST", "/v1/chat/completions", {**ok_chat, "stop": ["a", "x" * 1025]},
            param="stop")
        err("presence_penalty", 400, "POST", "/v1/chat/completions", {**ok_chat, "presence_penalty": 0.5},
            param="presence_penalty")
        err("logprobs", 400, "POST", "/v1/completions", {"prompt": "x", "logprobs": 2}, param="logprobs")
        err("no API key", 401, "POST", "/v1/chat/completions", ok_chat, headers={})
        err("wrong API key", 401, "POST", "/v1/chat/completions", ok_chat, headers={"Authorization": "Bearer sk-wrong"})
        err("unknown path", 404, "GET", "/v2/nothing")
        err("unknown model id", 404, "GET", "/v1/models/other")
        err("GET on a POST endpoint", 405, "GET", "/v1/chat/completions")
        err("prompt longer than the context", 422, "POST", "/v1/completions", {"prompt": "a b " * 600})
        err("empty body", 400, "POST", "/v1/completions", b"")
        err("detokenize an id past the vocabulary", 400, "POST", "/detokenize", {"tokens": [1, 999999]}, param="tokens")
        big = b'{"prompt":"' + b"a" * (10 << 20) + b'"}'
        raw = raw_exchange(port, b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + KEY.encode() +
                           b"\r\nContent-Type: application/json\r\nContent-Length: " + str(len(big)).encode() +
                           b"\r\n\r\n" + big[:1 << 20])
        check(status_of(raw) == 413 and b"request_too_large" in raw, "10 MB body -> 413 (before it is read)", raw[:300])
        raw = raw_exchange(port, b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + KEY.encode() +
                           b"\r\nContent-Type: application/json\r\n\r\n{\"prompt\":\"x\"}")
        check(status_of(raw) == 411, "POST without Content-Length -> 411", raw[:300])
        raw = raw_exchange(port, b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n")
        check(status_of(raw) == 431, "1 MB header -> 431", raw[:200])
        code, _ = request(port, "GET", "/health")
        check(code == 200, "the server still answers after the hostile requests", code)

        # slowloris: one byte a second; closed within --read-timeout (4 s) + slack, others served meanwhile
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        t0, closed_after, msg = time.time(), None, b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100
        served = None
        for i, b in enumerate(msg):
            try:
                s.sendall(bytes([b]))
            except OSError:
                closed_after = time.time() - t0
                break
            if i == 1:
                served = request(port, "GET", "/health")[0]
            s.settimeout(1.0)
            try:
                if s.recv(1) == b"":
                    closed_after = time.time() - t0
                    break
            except socket.timeout:
                pass
            if time.time() - t0 > 20:
                break
        s.close()
        check(closed_after is not None and closed_after < 4 + 3,
              "slowloris client closed within --read-timeout (4 s) + 3 s", closed_after)
        check(served == 200, "another client is served while the slow one trickles", served)
        code, _ = request(port, "GET", "/health")
        check(code == 200, "the server keeps serving after the slowloris client", code)
    finally:
        rc, took = srv.stop()
        check(rc == 0, "main server: SIGTERM when idle -> exit 0", f"rc {rc}: {srv.text()[-800:]}")
    log = srv.text()
    check(re.search(r'serve: 127\.0\.0\.1 "POST /v1/chat/completions" 200 prompt=\d+ completion=24 \d+ms', log) is not None,
          "access log line: peer, method, path, status, tokens, ms", log[-600:])


def read_some_then_close(port, body, n_bytes=200):
    """A streaming client that reads the headers and a little of the stream, then disconnects."""
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    data = json.dumps(body).encode()
    s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
              str(len(data)).encode() + b"\r\n\r\n" + data)
    got = b""
    while len(got) < n_bytes:
        b = s.recv(4096)
        if not b:
            break
        got += b
    s.close()
    return got


def test_cancel_busy_and_sigterm(big):
    srv = Server(big, "--parallel", "2", "--shutdown-grace", "1", name="big")
    port = srv.port
    long_req = chat_body("Tell me everything.", n=3000, seed=1, stream=True, ignore_eos=True)
    try:
        got = read_some_then_close(port, long_req, n_bytes=600)
        check(status_of(got) == 200, "a long stream starts", got[:200])
        t_end = time.time() + 60
        m = None
        while time.time() < t_end and not m:
            m = re.search(r"generation: prompt \d+ tokens, generated (\d+), stop: callback, cancelled: client gone",
                          srv.text())
            time.sleep(0.1)
        check(m is not None and int(m.group(1)) < 3000, "disconnect mid-stream cancels the generation early",
              f"{m and m.group(1)} of 3000: {srv.text()[-600:]}")

        # 503 when the queue is full: one generating + one waiting (--parallel 2), the third turned away
        holders = []
        for i in range(2):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            c.request("POST", "/v1/chat/completions", body=json.dumps(long_req), headers={"Content-Type": "application/json"})
            r = c.getresponse()
            r.read(50)
            holders.append((c, r))
        code, out = request(port, "POST", "/v1/chat/completions", chat_body("hi", n=2))
        check(code == 503 and jbody(out).get("error", {}).get("type") == "server_error", "queue full -> 503", out[:300])
        for c, _ in holders:
            c.close()
        t_end, code = time.time() + 60, None
        while time.time() < t_end:
            code, out = request(port, "POST", "/v1/chat/completions", chat_body("hi", n=2))
            if code == 200:
                break
            time.sleep(0.2)
        check(code == 200, "after the holders disconnect their slots are free again", code)

        # SIGTERM with a request in flight: exit 0 within the grace (1 s) + a bound
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        c.request("POST", "/v1/chat/completions", body=json.dumps(long_req), headers={"Content-Type": "application/json"})
        r = c.getresponse()
        r.read(300)
        rc, took = srv.stop(signal.SIGTERM, timeout=60)
        rest = b""
        try:
            rest = r.read()
        except (http.client.HTTPException, OSError):
            pass
        c.close()
        bound = 1 + 2 + (20 if SLOW else 5)
        check(rc == 0 and took < bound, f"SIGTERM with a stream in flight: exit 0 within {bound} s", f"rc {rc} in {took:.1f}s")
        check(b"[DONE]" in rest and b'"finish_reason":"length"' in rest,
              "the in-flight stream is ended properly (finish_reason length, [DONE])", rest[-300:])
        check("cancelled: shutdown" in srv.text(), "the in-flight generation was cancelled by the shutdown", srv.text()[-500:])
    finally:
        if srv.p.poll() is None:
            srv.stop(signal.SIGKILL)


def test_load(small):
    n_clients, n_each = 32, 4
    srv = Server(small, "--parallel", str(n_clients + 8), name="load")
    port = srv.port
    prompts = [("Hello world", 3), ("Once upon a time", 7), ("The quick brown fox", 11), ("Tell me a story", 19)]
    try:
        refs = {}
        for p, seed in prompts:
            code, out = curl(port, "/v1/chat/completions", chat_body(p, n=32, seed=seed, stream=True), stream=True, key=None)
            refs[(p, seed)] = stream_text(out)[0]
        check(len(set(refs.values())) == len(prompts), "the 4 references differ from each other", refs)
        # warm-up round at the same concurrency, then RSS "before"
        results, lock = [], threading.Lock()

        def client(i, rounds):
            for k in range(rounds):
                p, seed = prompts[(i + k) % len(prompts)]
                try:
                    c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
                    c.request("POST", "/v1/chat/completions", body=json.dumps(chat_body(p, n=32, seed=seed, stream=True)),
                              headers={"Content-Type": "application/json"})
                    r = c.getresponse()
                    body = r.read()
                    c.close()
                    ok = r.status == 200 and stream_text(body)[0] == refs[(p, seed)] and stream_text(body)[3]
                except (OSError, http.client.HTTPException, ValueError) as e:
                    ok, body = False, repr(e).encode()
                with lock:
                    results.append((ok, body[:200]))

        def burst(rounds):
            ts = [threading.Thread(target=client, args=(i, rounds)) for i in range(n_clients)]
            for t in ts:
                t.start()
            for t in ts:
                t.join(timeout=600)

        # warm-up with the measured load's own shape: the allocator's per-thread arenas reach their
        # working set (the chat template's renders allocate on every connection thread), so the
        # RSS comparison below sees growth that continues, not the first fill (a leak still shows;
        # LSan checks leaks exactly in the sanitizer stages)
        burst(n_each)
        results.clear()
        rss0 = srv.rss_kb()
        t0 = time.time()
        burst(n_each)
        bad = [b for ok, b in results if not ok]
        check(len(results) == n_clients * n_each and not bad,
              f"{n_clients} concurrent streaming clients x {n_each}: every output equals its reference",
              f"{len(results)} results, {len(bad)} bad, first: {bad[:1]}")
        print(f"load: {len(results)} requests in {time.time() - t0:.1f} s")
        # 8 clients that disconnect mid-stream free their slots
        body = chat_body("Hello world", n=500, seed=3, stream=True, ignore_eos=True)
        ts = [threading.Thread(target=read_some_then_close, args=(port, body, 300)) for _ in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(timeout=120)
        results.clear()
        ts = [threading.Thread(target=client, args=(i, 1)) for i in range(n_clients)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(timeout=600)
        check(len(results) == n_clients and all(ok for ok, _ in results),
              "after 8 clients disconnected mid-stream, the next requests all succeed", results[:2])
        rss1 = srv.rss_kb()
        if SLOW:  # ASan keeps freed memory in quarantine (up to 256 MB): RSS says nothing about leaks there
            skip("RSS after the load within 5% of before", f"sanitizer build ({rss0} kB -> {rss1} kB); LSan checks leaks")
        else:
            check(abs(rss1 - rss0) <= 0.05 * rss0, "RSS after the load within 5% of before", f"{rss0} kB -> {rss1} kB")
        print(f"load: RSS {rss0} kB before, {rss1} kB after")
    finally:
        rc, _ = srv.stop()
        check(rc == 0, "load server: SIGTERM -> exit 0", rc)


def test_http_framing_and_tokenize_memory(small):
    """What a hostile client (or a proxy that delimits bodies otherwise) sends: two Content-Lengths,
    Content-Length with Transfer-Encoding, a coding other than chunked -> 400 / 501 at once and the
    connection closed (before: the first Content-Length was taken, the rest read as the next
    request; an unknown coding held the connection until --read-timeout); a 405 carries Allow and
    HEAD works on a GET endpoint (RFC 9110); an error message quoting a path that is not UTF-8 is
    whole (before: cut at the first bad byte); /tokenize with_pieces on a 3 MB body (1M tokens) holds
    memory of the order of its answer (before: a JSON object per token, gigabytes per 4 MiB body)."""
    env = dict(os.environ)
    if SLOW:  # ASan's quarantine (256 MB) would hide the growth this measures
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=1"
    srv = Server(small, name="http", env=env)
    port = srv.port
    try:
        body = json.dumps(chat_body("hi", n=2)).encode()
        chunked = b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
        head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        for name, req, want in (
                ("two Content-Length headers", head + b"Content-Length: 5\r\nContent-Length: %d\r\n\r\n" % len(body) + body,
                 400),
                ("Content-Length and Transfer-Encoding", head + b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n" +
                 chunked, 400),
                ("Transfer-Encoding gzip", head + b"Transfer-Encoding: gzip\r\n\r\n" + body, 501)):
            t0 = time.time()
            raw = raw_exchange(port, req, read_timeout=8)
            took = time.time() - t0
            check(status_of(raw) == want and b"\r\nconnection: close\r\n" in raw.lower() and took < 5,
                  f"{name} -> {want} at once, connection closed", f"{took:.1f}s {raw[:300]!r}")
        raw = raw_exchange(port, head + b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n" + chunked)
        check(status_of(raw) == 200, "a chunked body alone is served", raw[:300])
        raw = raw_exchange(port, b"GET /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        check(status_of(raw) == 405 and b"\r\nAllow: POST\r\n" in raw, "405 carries Allow: POST", raw[:300])
        raw = raw_exchange(port, b"HEAD /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        check(status_of(raw) == 200 and raw.endswith(b"\r\n\r\n"), "HEAD /health -> 200, no body", raw[:300])
        raw = raw_exchange(port, b"GET /v1/models/a%ffb HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        check(status_of(raw) == 404 and b"model 'a?b' does not exist" in raw,
              "an error message quoting bytes that are not UTF-8 keeps its rest ('?' for the bytes)", raw[:300])

        n_tok = 1000000  # "\u00e9" is two byte tokens with the test tokenizer
        rss0 = srv.rss_kb()
        code, out = request(port, "POST", "/tokenize", {"content": "\u00e9" * (n_tok // 2), "with_pieces": True},
                            timeout=600)
        grew_mb = (srv.rss_kb("VmHWM") - rss0) / 1024
        toks = jbody(out).get("tokens", [])
        check(code == 200 and len(toks) == n_tok and toks[:2] == [{"id": toks[0]["id"], "piece": [0xC3]},
                                                                    {"id": toks[1]["id"], "piece": [0xA9]}],
              "/tokenize with_pieces: 1M tokens, each piece its bytes", f"{code} {len(toks)} {out[:200]!r}")
        limit_mb = 100 * n_tok / 2**20 + 64  # the answer is 25 bytes a token
        check(grew_mb < limit_mb, f"/tokenize with_pieces of 1M tokens: peak RSS growth {grew_mb:.0f} MB < {limit_mb:.0f} MB",
              f"{grew_mb:.0f} MB")
        code, _ = request(port, "GET", "/health")
        check(code == 200, "still healthy after the framing probes", code)
    finally:
        rc, _ = srv.stop()
        check(rc == 0, "http server: SIGTERM -> exit 0", rc)


# ChatML that, as many models' templates do, refuses roles that do not alternate
RAISING_TEMPLATE = """{% for m in messages %}{% if m.role != 'system' and (m.role == 'user') != (loop.index0 % 2 == (1 if messages[0].role == 'system' else 0)) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}<|im_start|>{{ m.role }}
{{ m.content }}<|im_end|>
{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""


def test_chat_template_flag(small):
    """--chat-template FILE: the server renders with it (== run --chat-template FILE --messages);
    the template's raise_exception is a 400 carrying its message; --no-template takes one user message."""
    tpath = os.path.join(TMP, "raising.jinja")
    with open(tpath, "w", encoding="utf-8") as f:
        f.write(RAISING_TEMPLATE)
    srv = Server(small, "--chat-template", tpath, name="tmpl")
    try:
        check("the given chat template" in srv.text(), "the start line says the given template is used", srv.text()[-400:])
        ref, ref_n = run_ref_messages(small, CONVERSATION, "--chat-template", tpath, seed=9)
        code, text, usage, out = chat_content(srv.port, CONVERSATION, seed=9)
        check(code == 200 and text == ref and usage.get("completion_tokens") == ref_n,
              "--chat-template FILE: multi-turn chat == wgfuse run --chat-template FILE --messages", f"{code} {text!r} vs {ref!r}")
        bad = CONVERSATION[:2] + [{"role": "user", "content": "again"}]
        code, out = request(srv.port, "POST", "/v1/chat/completions", {**chat_body("", n=4), "messages": bad})
        e = jbody(out).get("error", {})
        check(code == 400 and e.get("type") == "invalid_request_error" and e.get("param") == "messages"
              and "Conversation roles must alternate" in e.get("message", ""),
              "the template's raise_exception -> 400 with its message", f"{code} {out[:400]!r}")
        code, out = request(srv.port, "GET", "/health")
        check(code == 200, "healthy after a template error", out)
    finally:
        rc, _ = srv.stop()
        check(rc == 0, "template server: SIGTERM -> exit 0", rc)
    p = subprocess.run([CLI, "serve", "-m", small, "--chat-template", os.path.join(TMP, "no-such.jinja"), "--port", "0"],
                       capture_output=True, timeout=120)
    err = p.stderr.decode(errors="replace")
    check(p.returncode == 1 and "no-such.jinja" in err and len(err.strip().splitlines()) == 1,
          "--chat-template with a missing file: one line naming it, exit 1", f"{p.returncode} {err!r}")
    srv = Server(small, "--no-template", name="notmpl")
    try:
        ref, ref_n = run_ref(small, "Hello world", no_template=True, seed=4)
        code, text, usage, out = chat_content(srv.port, [{"role": "user", "content": "Hello world"}], seed=4)
        check(code == 200 and text == ref, "--no-template: one user message == wgfuse run --no-template",
              f"{code} {text!r} vs {ref!r}")
        code, out = request(srv.port, "POST", "/v1/chat/completions", {**chat_body("", n=4), "messages": CONVERSATION})
        check(code == 400 and "no chat template" in jbody(out).get("error", {}).get("message", ""),
              "--no-template: a conversation -> 400 saying why", f"{code} {out[:300]!r}")
    finally:
        rc, _ = srv.stop()
        check(rc == 0, "no-template server: SIGTERM -> exit 0", rc)


def main():
    os.makedirs(TMP, exist_ok=True)
    small = os.path.join(TMP, "tiny")
    big = os.path.join(TMP, "slow")
    for path, dims in ((small, "ctx=512"), (big, "dim=256,hidden=768,layers=8,heads=8,kv_heads=4,vocab=512,ctx=4096")):
        p = subprocess.run([CLI, "llm", "make-test-model", "--arch", "llama", "--dims", dims, "-o", path],
                           capture_output=True, timeout=300)
        if not check(p.returncode == 0, f"make-test-model {os.path.basename(path)}", p.stderr):
            break
    else:
        for t in (test_equality_and_endpoints, test_http_framing_and_tokenize_memory, test_chat_template_flag,
                  test_cancel_busy_and_sigterm, test_load):
            try:
                t(small if t is not test_cancel_busy_and_sigterm else big)
            except Exception as e:  # a crash of the test itself is a failure, never a pass
                check(False, t.__name__, repr(e))
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
