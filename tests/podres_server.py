#!/usr/bin/env python3
"""A fake kubelet pod-resources socket for cli.podres.

  podres_server.py SOCKET MODE [SPEC...] [--filler N]

MODE:
  proto   v1.PodResourcesLister/List over real gRPC (grpcio), the response
          encoded by the protobuf library from a descriptor of the kubelet's
          api.proto (with the fields cudacap skips set too: cpu_ids, memory,
          topology, claim names)
  hand    the same over gRPC, encoded here by hand: fields out of order, a
          scalar repeated (the last counts), unknown fields of every wire
          type (varint, fixed64, fixed32, a group, a length-delimited one)
  truncated  gRPC; the hand-encoded message cut 3 bytes short (inside its last pod)
  error   gRPC; the call fails with PERMISSION_DENIED (trailers only)
  silent  a plain unix socket that accepts and never answers
  random  accepts, writes 4 KiB of random bytes, keeps the connection open
  close   accepts and closes at once
  huge    HTTP/2 by hand: SETTINGS, response HEADERS, then a DATA frame whose
          gRPC prefix declares a 4 GiB message; then silence
  chatty  HTTP/2 by hand, the proto response: first a PING, a frame of an
          unknown type and a WINDOW_UPDATE; it answers only once the client
          acknowledged its SETTINGS and PING and ended its stream; then
          HEADERS split over two CONTINUATIONs, DATA in padded 1000-byte
          frames, a GOAWAY (last stream 1), the trailers ending the stream

SPEC: NS/POD/CTR=ID[,ID...] (device plugin device ids) or NS/POD/CTR+CDI
(a DRA CDI device name). --filler N adds N pods with one device each first,
so the response passes 64 KiB (HTTP/2 flow control) with the SPECs last.
Touches SOCKET.ready once listening; prints the payload's size on stderr.
Exits after 120 s whatever happens (a test never leaves it behind).
"""
import os, random, signal, socket, sys, threading, time

signal.alarm(120)
path, mode, args = sys.argv[1], sys.argv[2], sys.argv[3:]
filler = 0
if "--filler" in args:
    i = args.index("--filler")
    filler = int(args[i + 1])
    del args[i:i + 2]

def parse(spec):
    """(ns, pod, ctr, device ids, cdi names)"""
    if "+" in spec:
        owner, cdi = spec.split("+", 1)
        ids, cdis = [], [cdi]
    else:
        owner, ids = spec.split("=", 1)
        ids, cdis = ids.split(","), []
    ns, pod, ctr = owner.split("/")
    return ns, pod, ctr, ids, cdis

pods = [("filler", f"pod-{i:05d}-with-a-long-enough-name", "main", [f"example.com/dev-{i:05d}-0123456789abcdef"], [])
        for i in range(filler)] + [parse(s) for s in args]

def by_protobuf():
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    F = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(name="podres_api.proto", package="v1", syntax="proto3")
    def msg(name, *fields):
        m = fdp.message_type.add(name=name)
        for fname, num, typ, rep in fields:
            f = m.field.add(name=fname, number=num, label=F.LABEL_REPEATED if rep else F.LABEL_OPTIONAL)
            if isinstance(typ, str): f.type, f.type_name = F.TYPE_MESSAGE, ".v1." + typ
            else: f.type = typ
    S, I64, U64 = F.TYPE_STRING, F.TYPE_INT64, F.TYPE_UINT64
    msg("NUMANode", ("ID", 1, I64, False))
    msg("TopologyInfo", ("nodes", 1, "NUMANode", True))
    msg("ContainerDevices", ("resource_name", 1, S, False), ("device_ids", 2, S, True), ("topology", 3, "TopologyInfo", False))
    msg("ContainerMemory", ("memory_type", 1, S, False), ("size", 2, U64, False), ("topology", 3, "TopologyInfo", False))
    msg("CDIDevice", ("name", 1, S, False))
    msg("ClaimResource", ("cdi_devices", 1, "CDIDevice", True), ("driver_name", 2, S, False), ("pool_name", 3, S, False),
        ("device_name", 4, S, False))
    msg("DynamicResource", ("claim_name", 2, S, False), ("claim_namespace", 3, S, False),
        ("claim_resources", 4, "ClaimResource", True))
    msg("ContainerResources", ("name", 1, S, False), ("devices", 2, "ContainerDevices", True), ("cpu_ids", 3, I64, True),
        ("memory", 4, "ContainerMemory", True), ("dynamic_resources", 5, "DynamicResource", True))
    msg("PodResources", ("name", 1, S, False), ("namespace", 2, S, False), ("containers", 3, "ContainerResources", True))
    msg("ListPodResourcesResponse", ("pod_resources", 1, "PodResources", True))
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    desc = pool.FindMessageTypeByName("v1.ListPodResourcesResponse")
    cls = (message_factory.GetMessageClass(desc) if hasattr(message_factory, "GetMessageClass")
           else message_factory.MessageFactory(pool).GetPrototype(desc))
    r = cls()
    for ns, pod, ctr, ids, cdis in pods:
        p = r.pod_resources.add(name=pod, namespace=ns)
        c = p.containers.add(name=ctr)
        c.cpu_ids.extend([2, 3])
        c.memory.add(memory_type="memory", size=1 << 30).topology.nodes.add(ID=0)
        if ids:
            d = c.devices.add(resource_name="cudacap.io/cap")
            d.device_ids.extend(ids)
            d.topology.nodes.add(ID=1)
        for cdi in cdis:
            dr = c.dynamic_resources.add(claim_name="claim-" + ctr, claim_namespace=ns)
            dr.claim_resources.add(driver_name="cap.cudacap.io", pool_name="node", device_name="d0").cdi_devices.add(name=cdi)
    return r.SerializeToString()

def varint(v):
    b = bytearray()
    while v >= 0x80: b.append(v & 0x7F | 0x80); v >>= 7
    b.append(v)
    return bytes(b)
def key(num, wt): return varint(num << 3 | wt)
def ld(num, data):
    data = data.encode() if isinstance(data, str) else data
    return key(num, 2) + varint(len(data)) + data
# Unknown fields of every wire type, numbered past what the API defines.
UNKNOWN = (key(90, 0) + varint(1 << 62) + key(91, 1) + b"\x01" * 8 + key(92, 5) + b"\x02" * 4
           + key(93, 3) + key(1, 2) + varint(3) + b"abc" + key(2, 0) + varint(7) + key(93, 4) + ld(94, b"\x00\xff"))

def by_hand(trailer=True):
    out = b""
    for ns, pod, ctr, ids, cdis in pods:
        devs = ld(1, "cudacap.io/cap") + UNKNOWN + b"".join(ld(2, i) for i in ids)
        dyn = ld(4, ld(2, "cap.cudacap.io") + b"".join(ld(1, ld(1, c)) for c in cdis))
        c = UNKNOWN + ld(2, devs) + ld(3, varint(2)) + (ld(5, ld(2, "claim") + dyn) if cdis else b"") + ld(1, ctr)
        out += ld(1, ld(3, c) + ld(1, "not-this-one") + UNKNOWN + ld(2, ns) + ld(1, pod))
    return out + (UNKNOWN if trailer else b"")

def ready():
    open(path + ".ready", "w").close()

def serve_grpc(payload, status=None):
    print(f"payload {len(payload)} bytes", file=sys.stderr, flush=True)
    from concurrent import futures
    import grpc
    def List(request, context):
        if status is not None: context.abort(status, "fake kubelet says no")
        return payload
    handler = grpc.method_handlers_generic_handler(
        "v1.PodResourcesLister", {"List": grpc.unary_unary_rpc_method_handler(List)})  # raw bytes both ways
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((handler,))
    server.add_insecure_port("unix:" + path)
    server.start()
    ready()
    server.wait_for_termination()

def serve_raw(on_conn):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(16)
    ready()
    held = []
    while True:
        c, _ = s.accept()
        held.append(c)  # kept open: only "close" closes
        print(f"accepted {len(held)}", file=sys.stderr, flush=True)  # the tests count the client's tries
        threading.Thread(target=on_conn, args=(c,), daemon=True).start()

def frame(t, flags, sid, payload):
    return len(payload).to_bytes(3, "big") + bytes([t, flags]) + sid.to_bytes(4, "big") + payload
def lit(name, value):  # HPACK literal without indexing, no Huffman
    return b"\x00" + bytes([len(name)]) + name.encode() + bytes([len(value)]) + value.encode()

def h2_chatty(c):
    c.settimeout(2)
    def recvn(n):
        b = b""
        while len(b) < n:
            k = c.recv(n - len(b))
            if not k: raise EOFError
            b += k
        return b
    c.sendall(frame(4, 0, 0, (3).to_bytes(2, "big") + (100).to_bytes(4, "big"))  # MAX_CONCURRENT_STREAMS
              + frame(6, 0, 0, b"pingpong") + frame(0xFA, 0, 0, b"unknown") + frame(8, 0, 0, (1000).to_bytes(4, "big")))
    if recvn(24) != b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n": return
    ping = sack = end = False
    while not (ping and sack and end):
        h = recvn(9)
        n, t, fl, sid = int.from_bytes(h[:3], "big"), h[3], h[4], int.from_bytes(h[5:], "big")
        p = recvn(n)
        ping |= t == 6 and fl & 1 and p == b"pingpong"
        sack |= t == 4 and fl & 1
        end |= t == 0 and fl & 1 and sid == 1
    msg = by_protobuf()
    g = b"\x00" + len(msg).to_bytes(4, "big") + msg
    hdr = b"\x88" + lit("content-type", "application/grpc")  # :status 200 (indexed)
    out = frame(1, 0, 1, hdr[:3]) + frame(9, 0, 1, hdr[3:10]) + frame(9, 4, 1, hdr[10:])
    for i in range(0, len(g), 1000):
        out += frame(0, 8, 1, bytes([7]) + g[i:i + 1000] + b"\0" * 7)
    out += frame(7, 0, 0, (1).to_bytes(4, "big") + (0).to_bytes(4, "big"))
    c.sendall(out + frame(1, 5, 1, lit("grpc-status", "0")))

def h2_huge(c):
    c.sendall(frame(4, 0, 0, b""))
    time.sleep(0.1)  # the client's request in
    hdrs = b"\x88" + b"\x00" + bytes([12]) + b"content-type" + bytes([16]) + b"application/grpc"  # :status 200 (indexed)
    c.sendall(frame(1, 4, 1, hdrs) + frame(0, 0, 1, b"\x00\xff\xff\xff\xf0" + b"\x0a" * 100))

for p in (path, path + ".ready"):
    try: os.unlink(p)
    except FileNotFoundError: pass
if mode == "proto": serve_grpc(by_protobuf())
elif mode == "hand": serve_grpc(by_hand())
elif mode == "truncated": serve_grpc(by_hand(False)[:-3])  # inside the last pod
elif mode == "error":
    import grpc
    serve_grpc(b"", grpc.StatusCode.PERMISSION_DENIED)
elif mode == "silent": serve_raw(lambda c: None)
elif mode == "random": serve_raw(lambda c: c.sendall(random.Random(12).randbytes(4096)))
elif mode == "close": serve_raw(lambda c: c.close())
elif mode == "huge": serve_raw(h2_huge)
elif mode == "chatty": serve_raw(h2_chatty)
else: sys.exit(f"unknown mode {mode}")
