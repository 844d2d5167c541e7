"""What stops a statement or a connection, as PyMySQL sees it (`stopping.py PORT`):
mysql_kill() (COM_PROCESS_KILL) ends another connection; a client that says it is
interactive gets interactive_timeout as its wait_timeout (the server runs with
--interactive-timeout 3); a packet begun and never finished is given up after
net_read_timeout; an idle connection is closed after wait_timeout.
"""

import socket
import sys
import time

import pymysql
from pymysql.constants import CLIENT

port = int(sys.argv[1])


def connect(**kw):
    return pymysql.connect(host="127.0.0.1", port=port, user="root", database="waterline", **kw)


def closed_by_server(sock, within):
    """Whether the server closes `sock` within `within` seconds (reading what it sends)."""
    sock.settimeout(within)
    try:
        while sock.recv(4096):
            pass
        return True
    except socket.timeout:
        return False


# COM_PROCESS_KILL: the victim's next statement finds its connection gone.
victim, killer = connect(), connect()
victim_id = victim.thread_id()
killer.kill(victim_id)
try:
    victim.cursor().execute("SELECT 1")
    sys.exit("the killed connection still answers")
except pymysql.err.OperationalError as e:
    assert e.args[0] in (2006, 2013), e
try:
    killer.kill(999999)
    sys.exit("no such thread, yet killed")
except pymysql.err.OperationalError as e:
    assert e.args[0] == 1094, e

# interactive_timeout becomes wait_timeout for an interactive client only.
k = connect(client_flag=CLIENT.INTERACTIVE).cursor()
k.execute("SELECT @@wait_timeout, @@interactive_timeout")
assert k.fetchone() == (3, 3), "interactive"
k = connect().cursor()
k.execute("SELECT @@wait_timeout")
assert k.fetchone() == (28800,), "not interactive"

# net_read_timeout: a header that promises 100 bytes, then 10 of them and silence.
c = connect()
c.cursor().execute("SET SESSION net_read_timeout = 1")
sock = c._sock
sock.sendall(bytes([100, 0, 0, 0, 3]) + b"SELECT 1 ")
started = time.time()
assert closed_by_server(sock, 10), "the half-sent packet was waited for too long"
assert time.time() - started < 5, time.time() - started

# wait_timeout: idle past it, closed (after error 4031, which a waiting client may read).
c = connect()
c.cursor().execute("SET SESSION wait_timeout = 1")
started = time.time()
assert closed_by_server(c._sock, 10), "the idle connection stayed"
assert 0.9 < time.time() - started < 5, time.time() - started
print("ok")
