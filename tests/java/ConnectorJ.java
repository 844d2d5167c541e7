// MySQL Connector/J (the 8.0.13 jar BenchmarkSQL ships) against `waterline serve`, with
// BenchmarkSQL's URL options: connect, setAutoCommit(false), rollback undoes, commit keeps,
// server-side prepared statements. Run by tests/clients.rs; prints "ok" last.
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;

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
        String url = "jdbc:mysql://127.0.0.1:" + args[0] + "/waterline?useSSL=false"
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
        }
        System.out.println("ok");
    }
}
