"""Rollback, autocommit and the server status flags, as three Python clients see them.

Run by tests/clients.rs against `waterline serve` on the port given as the first argument.
Each check is an assert; the last line printed is "ok".
"""

import sys

import mysql.connector
import pymysql
from sqlalchemy import Column, Integer, create_engine, text
from sqlalchemy.orm import Session, declarative_base

PORT = int(sys.argv[1])
SERVER_STATUS_IN_TRANS = 0x1
SERVER_STATUS_AUTOCOMMIT = 0x2


def pymysql_checks():
    c = pymysql.connect(host="127.0.0.1", port=PORT, user="root", database="waterline")
    k = c.cursor()
    # PyMySQL's default is autocommit off: it sends SET autocommit=0 only because the
    # greeting said autocommit was on.
    assert not c.get_autocommit(), c.server_status
    k.execute("CREATE TABLE py_r (id INT PRIMARY KEY)")
    k.execute("INSERT INTO py_r VALUES (1)")
    assert c.server_status & SERVER_STATUS_IN_TRANS, c.server_status
    c.rollback()
    assert not c.server_status & SERVER_STATUS_IN_TRANS, c.server_status
    k.execute("SELECT COUNT(*) FROM py_r")
    assert k.fetchone() == (0,), "rollback undid the insert"
    k.execute("INSERT INTO py_r VALUES (2)")
    c.commit()
    c.autocommit(True)
    assert c.server_status & SERVER_STATUS_AUTOCOMMIT, c.server_status
    k.execute("INSERT INTO py_r VALUES (3)")
    assert not c.server_status & SERVER_STATUS_IN_TRANS, c.server_status
    c.rollback()  # nothing open: the insert stays
    k.execute("SELECT id FROM py_r ORDER BY id")
    assert k.fetchall() == ((2,), (3,)), "autocommit kept each statement"
    k.execute("SELECT @@autocommit")
    assert k.fetchone() == (1,)
    # A fresh connection with autocommit asked for: the server's flag agrees at once.
    d = pymysql.connect(
        host="127.0.0.1", port=PORT, user="root", database="waterline", autocommit=True
    )
    assert d.server_status & SERVER_STATUS_AUTOCOMMIT, d.server_status
    d.close()
    c.close()


def connector_checks():
    c = mysql.connector.connect(
        host="127.0.0.1", port=PORT, user="root", database="waterline", use_pure=True
    )
    k = c.cursor()
    assert not c.autocommit
    k.execute("CREATE TABLE mc_r (id INT PRIMARY KEY, v INT)")
    k.execute("INSERT INTO mc_r VALUES (1, 1)")
    assert c.in_transaction
    c.rollback()
    assert not c.in_transaction
    k.execute("SELECT COUNT(*) FROM mc_r")
    assert k.fetchall() == [(0,)], "rollback undid the insert"
    c.autocommit = True
    k.execute("INSERT INTO mc_r VALUES (2, 1)")
    assert not c.in_transaction
    c.close()


def sqlalchemy_checks():
    engine = create_engine(f"mysql+pymysql://root@127.0.0.1:{PORT}/waterline")
    base = declarative_base()

    class Row(base):
        __tablename__ = "sa_r"
        id = Column(Integer, primary_key=True)
        v = Column(Integer)

    with engine.connect() as c:
        c.execute(text("CREATE TABLE sa_r (id INT PRIMARY KEY, v INT)"))
        c.execute(text("INSERT INTO sa_r VALUES (1, 10)"))
        c.commit()
        # Core: a rolled-back connection keeps nothing.
        c.execute(text("UPDATE sa_r SET v = 11 WHERE id = 1"))
        c.rollback()
        assert c.execute(text("SELECT v FROM sa_r")).scalar() == 10
    with Session(engine) as s:
        # ORM: a flushed change, rolled back.
        row = s.get(Row, 1)
        row.v = 99
        s.flush()
        s.rollback()
        assert s.get(Row, 1).v == 10, "Session.rollback() undid the flushed update"
        s.add(Row(id=2, v=20))
        s.commit()
    with Session(engine) as s:
        assert s.get(Row, 2).v == 20


pymysql_checks()
connector_checks()
sqlalchemy_checks()
print("ok")
