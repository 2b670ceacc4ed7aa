#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""digest.py: one line that changes when anything of a Redis server's state that a
client can write changes: every key's DUMP (type, value and encoding, sorted by name),
the function library (FUNCTION DUMP) and the script cache size (INFO memory
number_of_cached_scripts).

Usage: digest.py PORT USER PASSWORD
Prints "<sha256> keys=N scripts=M". Raw RESP over a loopback socket (binary-safe).
"""
import hashlib
import socket
import sys


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(('127.0.0.1', int(port)), timeout=5)
        self.buf = b''

    def _line(self):
        while b'\r\n' not in self.buf:
            d = self.s.recv(65536)
            if not d:
                raise EOFError('connection closed')
            self.buf += d
        line, self.buf = self.buf.split(b'\r\n', 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            d = self.s.recv(65536)
            if not d:
                raise EOFError('connection closed')
            self.buf += d
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def _reply(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t in (b'+', b':'):
            return rest
        if t == b'-':
            raise RuntimeError(rest.decode(errors='replace'))
        if t == b'$':
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if t == b'*':
            n = int(rest)
            return None if n < 0 else [self._reply() for _ in range(n)]
        raise RuntimeError('unexpected reply %r' % line)

    def call(self, *args):
        out = b'*%d\r\n' % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b'$%d\r\n%s\r\n' % (len(a), a)
        self.s.sendall(out)
        return self._reply()


def main():
    port, user, password = sys.argv[1:4]
    c = Conn(port)
    c.call('AUTH', user, password)
    h = hashlib.sha256()
    keys = sorted(c.call('KEYS', '*'))
    for k in keys:
        d = c.call('DUMP', k)
        h.update(b'%d:%s%d:%s' % (len(k), k, len(d or b''), d or b''))
    h.update(b'functions:' + (c.call('FUNCTION', 'DUMP') or b''))
    scripts = 0
    for line in c.call('INFO', 'memory').split(b'\r\n'):
        if line.startswith(b'number_of_cached_scripts:'):
            scripts = int(line.split(b':')[1])
    h.update(b'scripts:%d' % scripts)
    print('%s keys=%d scripts=%d' % (h.hexdigest(), len(keys), scripts))


if __name__ == '__main__':
    main()
