"""A client that goes away without COM_QUIT, holding a row lock.

`gone.py PORT exit`: locks row 1 of table `g` and exits without closing (no COM_QUIT, as a
Python process that ends without `close()`).
`gone.py PORT wait`: locks row 1, then waits for row 2's lock (held by the test) until the
test kills it with SIGKILL.
`gone.py PORT runaway`: locks row 1, then runs a SELECT that would take hours (a join of
table `big` with itself three times) until the test kills it with SIGKILL.
"""

import os
import sys

import pymysql

port, how = int(sys.argv[1]), sys.argv[2]
c = pymysql.connect(host="127.0.0.1", port=port, user="root", database="waterline")
k = c.cursor()
k.execute("UPDATE g SET v = v + 1 WHERE id = 1")
print("locked", flush=True)
if how == "exit":
    os._exit(0)
if how == "runaway":
    k.execute("SELECT COUNT(*) FROM big a, big b, big c WHERE a.id + b.id + c.id < 0")
    print("finished", flush=True)
    sys.exit(0)
k.execute("UPDATE g SET v = v + 1 WHERE id = 2")
print("not killed", flush=True)
