"""SQLAlchemy 2 over PyMySQL against `waterline serve`: MetaData.create_all and drop_all
with indexes and foreign keys, inspect() (table names, columns, primary and foreign keys,
indexes), and Core and ORM round trips through the related tables. Run by
tests/clients.rs with the server's port; prints "ok" last."""

import sys

from sqlalchemy import (
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    Numeric,
    String,
    Table,
    create_engine,
    inspect,
    select,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship

PORT = sys.argv[1]
engine = create_engine(f"mysql+pymysql://root@127.0.0.1:{PORT}/waterline")


def core():
    meta = MetaData()
    author = Table(
        "sa_author",
        meta,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("name", String(40), nullable=False, unique=True),
    )
    Table(
        "sa_book",
        meta,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("author_id", Integer, ForeignKey("sa_author.id", ondelete="CASCADE"), nullable=False),
        Column("title", String(80), nullable=False),
        Column("price", Numeric(6, 2)),
        Column("published", DateTime),
        Index("ix_book_title", "title"),
    )
    meta.create_all(engine)
    insp = inspect(engine)
    assert {"sa_author", "sa_book"} <= set(insp.get_table_names()), insp.get_table_names()
    columns = {c["name"]: c for c in insp.get_columns("sa_book")}
    assert list(columns) == ["id", "author_id", "title", "price", "published"], columns
    assert columns["title"]["nullable"] is False
    assert str(columns["price"]["type"]) == "DECIMAL(6, 2)", columns["price"]
    assert insp.get_pk_constraint("sa_book")["constrained_columns"] == ["id"]
    fks = insp.get_foreign_keys("sa_book")
    assert len(fks) == 1, fks
    assert fks[0]["referred_table"] == "sa_author"
    assert fks[0]["constrained_columns"] == ["author_id"]
    assert fks[0]["referred_columns"] == ["id"]
    assert fks[0]["options"].get("ondelete") == "CASCADE", fks[0]
    indexes = {i["name"]: i for i in insp.get_indexes("sa_book")}
    assert indexes["ix_book_title"]["column_names"] == ["title"], indexes
    uniques = insp.get_unique_constraints("sa_author")
    assert [u["column_names"] for u in uniques] == [["name"]], uniques
    with engine.begin() as c:
        c.execute(author.insert(), [{"name": "Le Guin"}, {"name": "Lem"}])
        ids = dict(c.execute(select(author.c.name, author.c.id)).all())
        c.execute(
            meta.tables["sa_book"].insert(),
            [{"author_id": ids["Lem"], "title": "Solaris", "price": 9.5}],
        )
    try:
        with engine.begin() as c:
            c.execute(meta.tables["sa_book"].insert(), [{"author_id": 999, "title": "None"}])
        raise AssertionError("a book of no author went in")
    except IntegrityError as e:
        assert e.orig.args[0] == 1452, e
    with engine.begin() as c:
        c.execute(author.delete().where(author.c.name == "Lem"))
        assert c.execute(select(meta.tables["sa_book"])).all() == [], "the cascade deleted the book"
    meta.drop_all(engine)
    assert "sa_book" not in inspect(engine).get_table_names()


class Base(DeclarativeBase):
    pass


class Shelf(Base):
    __tablename__ = "sa_shelf"
    id: Mapped[int] = mapped_column(primary_key=True)
    label: Mapped[str] = mapped_column(String(20))
    items: Mapped[list["Item"]] = relationship(back_populates="shelf", cascade="all, delete-orphan")


class Item(Base):
    __tablename__ = "sa_item"
    id: Mapped[int] = mapped_column(primary_key=True)
    shelf_id: Mapped[int] = mapped_column(ForeignKey("sa_shelf.id"))
    name: Mapped[str] = mapped_column(String(20))
    shelf: Mapped[Shelf] = relationship(back_populates="items")


def orm():
    Base.metadata.create_all(engine)
    with Session(engine) as s:
        s.add(Shelf(label="top", items=[Item(name="cup"), Item(name="jar")]))
        s.commit()
    with Session(engine) as s:
        shelf = s.scalars(select(Shelf).where(Shelf.label == "top")).one()
        assert sorted(i.name for i in shelf.items) == ["cup", "jar"]
        # Query.count() wraps the query in a derived table.
        assert s.query(Item).filter(Item.name.like("c%")).count() == 1
        s.delete(shelf)
        s.commit()
    with Session(engine) as s:
        assert s.query(Item).count() == 0
    Base.metadata.drop_all(engine)


core()
orm()
print("ok")
