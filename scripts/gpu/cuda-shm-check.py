#!/usr/bin/env python3
"""Checks a running daemon's CUDA shared-memory extension on a real GPU, as
a local client of Triton's uses it: the client puts a model's input into
GPU memory it allocated itself (cudaMalloc), shares that memory with a CUDA
IPC handle (cudaIpcGetMemHandle), registers it, and has the daemon read the
input from it and write the output back into it. The output read back from
the GPU must equal the answer to the same input carried in the request.
Then the same request many times, in the region and carried in the body
(binary tensor extension), for their latency.

    cuda-shm-check.py [URL] [MODEL] [REQUESTS]   (http://127.0.0.1:8700 lenet5 300)

Only the standard library: the CUDA runtime through ctypes, found in
LD_LIBRARY_PATH's folders (libcudart.so.13). Prints one JSON line; exits 1
when a check fails.
"""
import base64
import ctypes
import json
import os
import random
import struct
import sys
import time
import urllib.error
import urllib.request

url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8700"
model = sys.argv[2] if len(sys.argv) > 2 else "lenet5"
requests = int(sys.argv[3]) if len(sys.argv) > 3 else 300


def cudart():
    for d in os.environ.get("LD_LIBRARY_PATH", "").split(":"):
        p = os.path.join(d, "libcudart.so.13")
        if d and os.path.exists(p):
            return ctypes.CDLL(p)
    return ctypes.CDLL("libcudart.so.13")


rt = cudart()


def check(rc, what):
    if rc != 0:
        rt.cudaGetErrorString.restype = ctypes.c_char_p
        raise SystemExit(f"{what}: CUDA error {rc} {rt.cudaGetErrorString(rc).decode()}")


def post(path, body, headers=None):
    req = urllib.request.Request(url + path, data=body, headers=headers or {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read(), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read(), dict(e.headers)


def get(path):
    with urllib.request.urlopen(url + path, timeout=30) as r:
        return json.loads(r.read())


meta = get(f"/v2/models/{model}")
inp, out = meta["inputs"][0], meta["outputs"][0]
shape = [1 if d < 0 else d for d in inp["shape"]]  # a batch of one
count = 1
for d in shape:
    count *= d
assert inp["datatype"] == "FP32", inp
rng = random.Random(7)
values = [round(rng.random(), 3) for _ in range(count)]
in_bytes = struct.pack(f"<{count}f", *values)
out_room = 1 << 16
out_at = (len(in_bytes) + 255) // 256 * 256
size = out_at + out_room

# The reference: the input carried in the request.
code, body, _ = post(f"/v2/models/{model}/infer", json.dumps(
    {"inputs": [{"name": inp["name"], "shape": shape, "datatype": "FP32", "data": values}]}).encode())
assert code == 200, body
ref = json.loads(body)["outputs"][0]["data"]

# The client's GPU memory and its IPC handle.
check(rt.cudaSetDevice(0), "cudaSetDevice")
ptr = ctypes.c_void_p()
check(rt.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(size)), "cudaMalloc")
check(rt.cudaMemset(ptr, 0, ctypes.c_size_t(size)), "cudaMemset")
check(rt.cudaMemcpy(ptr, in_bytes, ctypes.c_size_t(len(in_bytes)), 1), "cudaMemcpy to the GPU")
handle = (ctypes.c_char * 64)()
check(rt.cudaIpcGetMemHandle(ctypes.byref(handle), ptr), "cudaIpcGetMemHandle")

result = {"model": model, "input_bytes": len(in_bytes)}
failed = []
code, body, _ = post("/v2/cudasharedmemory/region/gpu-in-out/register", json.dumps(
    {"raw_handle": {"b64": base64.b64encode(bytes(handle)).decode()}, "device_id": 0, "byte_size": size}).encode())
result["register"] = code
if code != 200:
    failed.append(f"register: {code} {body[:300]!r}")
code, body, _ = post("/v2/cudasharedmemory/region/elsewhere/register", json.dumps(
    {"raw_handle": {"b64": base64.b64encode(bytes(handle)).decode()}, "device_id": 97, "byte_size": size}).encode())
result["register_bad_device"] = [code, json.loads(body).get("error", "")[:200]]
if code != 400:
    failed.append(f"a device that does not exist registered: {code}")
result["status"] = get("/v2/cudasharedmemory/status")

shm_request = json.dumps({
    "inputs": [{"name": inp["name"], "shape": shape, "datatype": "FP32",
                "parameters": {"shared_memory_region": "gpu-in-out", "shared_memory_byte_size": len(in_bytes)}}],
    "outputs": [{"name": out["name"], "parameters": {"shared_memory_region": "gpu-in-out",
                                                     "shared_memory_offset": out_at, "shared_memory_byte_size": out_room}}]}).encode()
code, body, _ = post(f"/v2/models/{model}/infer", shm_request)
if code != 200:
    failed.append(f"infer in CUDA shared memory: {code} {body[:300]!r}")
else:
    answer = json.loads(body)["outputs"][0]
    n = answer["parameters"]["shared_memory_byte_size"] // 4
    host = ctypes.create_string_buffer(n * 4)
    check(rt.cudaMemcpy(host, ctypes.c_void_p(ptr.value + out_at), ctypes.c_size_t(n * 4), 2), "cudaMemcpy from the GPU")
    got = struct.unpack(f"<{n}f", host.raw)
    diff = max(abs(a - b) for a, b in zip(got, ref)) if len(got) == len(ref) else None
    result["output"] = {"elements": n, "reference_elements": len(ref), "largest_difference": diff, "first": got[:3]}
    if diff is None or diff > 1e-4 * max(1.0, max(abs(x) for x in ref)):
        failed.append(f"the output read back from the GPU differs from the reference: {diff}")


def timed(body, headers):
    lat = []
    for _ in range(requests):
        t = time.perf_counter()
        code, b, _ = post(f"/v2/models/{model}/infer", body, headers)
        lat.append((time.perf_counter() - t) * 1e6)
        if code != 200:
            failed.append(f"timed request: {code} {b[:200]!r}")
            break
    lat.sort()
    return {"p50_us": round(lat[len(lat) // 2]), "p90_us": round(lat[len(lat) * 9 // 10]), "n": len(lat)}


header = json.dumps({"inputs": [{"name": inp["name"], "shape": shape, "datatype": "FP32", "parameters": {"binary_data_size": len(in_bytes)}}],
                     "outputs": [{"name": out["name"], "parameters": {"binary_data": True}}]}).encode()
result["latency_binary_body"] = timed(header + in_bytes, {"Content-Type": "application/octet-stream", "Inference-Header-Content-Length": str(len(header))})
result["latency_cuda_shm"] = timed(shm_request, {"Content-Type": "application/json"})
result["latency_binary_body_again"] = timed(header + in_bytes, {"Content-Type": "application/octet-stream", "Inference-Header-Content-Length": str(len(header))})

code, body, _ = post("/v2/cudasharedmemory/region/gpu-in-out/unregister", b"")
if code != 200:
    failed.append(f"unregister: {code} {body[:200]!r}")
if get("/v2/cudasharedmemory/status") != []:
    failed.append("a region is left registered")
check(rt.cudaFree(ptr), "cudaFree")
result["failed"] = failed
print(json.dumps(result))
sys.exit(1 if failed else 0)
