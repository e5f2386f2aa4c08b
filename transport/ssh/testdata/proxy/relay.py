#!/usr/bin/python3
"""A ProxyCommand for tests: relay stdin/stdout to HOST PORT, after
writing its arguments (the expanded tokens) to the file LOG."""
import os
import socket
import sys
import threading

host, port, log = sys.argv[1], int(sys.argv[2]), sys.argv[-1]
with open(log, "a") as f:
    f.write(" ".join(sys.argv[1:-1]) + "\n")
s = socket.create_connection((host, port))


def up():
    while True:
        b = os.read(0, 65536)
        if not b:
            s.shutdown(socket.SHUT_WR)
            return
        s.sendall(b)


threading.Thread(target=up, daemon=True).start()
while True:
    b = s.recv(65536)
    if not b:
        break
    os.write(1, b)
