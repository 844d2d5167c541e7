// A JDBC driver against `waterline serve`: MySQL Connector/J (the 8.0.13 jar BenchmarkSQL
// ships; URL scheme `mysql`, the default) or MariaDB Connector/J (Debian's libmariadb-java;
// `mariadb`, the second argument), with BenchmarkSQL's URL options: connect, setAutoCommit(false), rollback undoes, commit keeps,
// server-side prepared statements, setTransactionIsolation, a batch with Timestamp
// parameters, setReadOnly. Run by tests/clients.rs; prints "ok" last.
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.sql.Timestamp;

public class ConnectorJ {
    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    static int count(Statement s, String table) throws Exception {
        try (ResultSet r = s.executeQuery("SELECT COUNT(*) FROM " + table)) {
            r.next();
            return r.getInt(1);
        }
    }

    public static void main(String[] args) throws Exception {
        String scheme = args.length > 1 ? args[1] : "mysql";
        String url = "jdbc:" + scheme + "://127.0.0.1:" + args[0] + "/waterline?useSSL=false"
            + "&useServerPrepStmts=true&rewriteBatchedStatements=true&cachePrepStmts=true";
        try (Connection c = DriverManager.getConnection(url, "root", "")) {
            Statement s = c.createStatement();
            s.execute("CREATE TABLE cj (id INT PRIMARY KEY, v INT)");
            c.setAutoCommit(false);
            s.execute("INSERT INTO cj VALUES (1, 1)");
            c.rollback();
            check(count(s, "cj") == 0, "rollback undoes the insert");
            try (PreparedStatement p = c.prepareStatement("INSERT INTO cj VALUES (?, ?)")) {
                for (int i = 1; i <= 3; i++) {
                    p.setInt(1, i);
                    p.setInt(2, i * 10);
                    p.executeUpdate();
                }
            }
            c.commit();
            c.setAutoCommit(true);
            check(count(s, "cj") == 3, "commit keeps the inserts");
            try (PreparedStatement p = c.prepareStatement("SELECT v FROM cj WHERE id = ?")) {
                p.setInt(1, 2);
                try (ResultSet r = p.executeQuery()) {
                    check(r.next() && r.getInt(1) == 20, "a prepared SELECT reads its row");
                }
            }
            // setTransactionIsolation sends SET SESSION TRANSACTION ISOLATION LEVEL.
            c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
            check(c.getTransactionIsolation() == Connection.TRANSACTION_READ_COMMITTED,
                "the driver reads the level back");
            try (ResultSet r = s.executeQuery("SELECT @@transaction_isolation")) {
                check(r.next() && r.getString(1).equals("READ-COMMITTED"), "the server has it");
            }
            // A batch, which rewriteBatchedStatements sends as one multi-row INSERT, with
            // Timestamp parameters (BenchmarkSQL's loader).
            s.execute("CREATE TABLE cj_ts (id INT PRIMARY KEY, at DATETIME(3))");
            Timestamp at = Timestamp.valueOf("2026-11-27 10:11:12.345");
            try (PreparedStatement p = c.prepareStatement("INSERT INTO cj_ts VALUES (?, ?)")) {
                for (int i = 1; i <= 100; i++) {
                    p.setInt(1, i);
                    p.setTimestamp(2, at);
                    p.addBatch();
                }
                p.executeBatch();
            }
            check(count(s, "cj_ts") == 100, "the batch inserted every row");
            try (PreparedStatement p = c.prepareStatement("SELECT at FROM cj_ts WHERE id = ?")) {
                p.setInt(1, 7);
                try (ResultSet r = p.executeQuery()) {
                    check(r.next() && r.getTimestamp(1).equals(at), "a Timestamp round-trips");
                }
            }
            // MySQL's driver sends SET SESSION TRANSACTION READ ONLY for setReadOnly (and then
            // refuses writes itself before they reach the server); MariaDB's sends nothing
            // unless it fails over to a replica.
            if (!scheme.equals("mysql")) {
                System.out.println("ok");
                return;
            }
            c.setReadOnly(true);
            try (ResultSet r = s.executeQuery("SELECT @@transaction_read_only")) {
                check(r.next() && r.getInt(1) == 1, "the server's session is read-only");
            }
            c.setReadOnly(false);
            try (ResultSet r = s.executeQuery("SELECT @@transaction_read_only")) {
                check(r.next() && r.getInt(1) == 0, "and read-write again");
            }
        }
        System.out.println("ok");
    }
}
