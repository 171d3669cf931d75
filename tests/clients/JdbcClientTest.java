// pgjdbc against tallyd (run with the Java 17 source launcher through
// tallyd_harness.py): password, SCRAM and MD5 users, with and without TLS
// (sslmode=verify-full with the test CA), in the default extended mode,
// preferQueryMode=simple, past prepareThreshold (named server statements),
// and binaryTransfer=true. Each runs SELECT 1, a parameterized statement and
// a failing statement whose SQLSTATE is checked.
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

public class JdbcClientTest {
  private static final List<String> failures = new ArrayList<>();

  private static void check(boolean ok, String what) {
    if (!ok) {
      failures.add(what);
      System.err.println("FAIL: " + what);
    }
  }

  private static Connection connect(String user, boolean tls, String mode) throws SQLException {
    String url = "jdbc:postgresql://localhost:" + System.getenv("TALLY_TEST_PORT") + "/"
        + System.getenv("TALLY_TEST_DB");
    Properties p = new Properties();
    p.setProperty("user", user);
    p.setProperty("password", System.getenv("TALLY_TEST_PASSWORD"));
    p.setProperty("connectTimeout", "10");
    if (tls) {
      p.setProperty("sslmode", "verify-full");
      p.setProperty("sslrootcert", System.getenv("TALLY_TEST_CA"));
    } else {
      p.setProperty("sslmode", "disable");
    }
    switch (mode) {
      case "simple": p.setProperty("preferQueryMode", "simple"); break;
      case "prepared": p.setProperty("prepareThreshold", "1"); break;
      case "binary":
        p.setProperty("binaryTransfer", "true");
        p.setProperty("prepareThreshold", "-1");  // binary from the first execution
        break;
      default: break;
    }
    return DriverManager.getConnection(url, p);
  }

  private static void exercise(String user, boolean tls, String mode) {
    String what = user + "/" + (tls ? "tls" : "plain") + "/" + mode;
    try (Connection c = connect(user, tls, mode)) {
      try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT 1")) {
        check(r.next() && r.getInt(1) == 1, what + ": SELECT 1");
      }
      // Five executions: past prepareThreshold the driver switches to a named statement.
      try (PreparedStatement ps = c.prepareStatement("SELECT ?::int4 + 1")) {
        for (int i = 0; i < 5; i++) {
          ps.setInt(1, 41 + i);
          try (ResultSet r = ps.executeQuery()) {
            check(r.next() && r.getInt(1) == 42 + i, what + ": parameterized #" + i);
          }
        }
      }
      try (PreparedStatement ps = c.prepareStatement("SELECT ?::text")) {
        ps.setString(1, "tally");
        try (ResultSet r = ps.executeQuery()) {
          check(r.next() && "tally".equals(r.getString(1)), what + ": text parameter");
        }
      }
      try (Statement s = c.createStatement()) {
        s.executeQuery("SELEC 1");
        check(false, what + ": failing statement succeeded");
      } catch (SQLException e) {
        check("42601".equals(e.getSQLState()), what + ": SQLSTATE " + e.getSQLState());
      }
      // Still usable, also inside a transaction block.
      c.setAutoCommit(false);
      try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT 2")) {
        check(r.next() && r.getInt(1) == 2, what + ": SELECT in a transaction");
      }
      c.commit();
    } catch (SQLException e) {
      check(false, what + ": " + e.getSQLState() + " " + e.getMessage());
    }
  }

  public static void main(String[] args) {
    String[] users = {System.getenv("TALLY_TEST_PASSWORD_USER"),
        System.getenv("TALLY_TEST_SCRAM_USER"), System.getenv("TALLY_TEST_MD5_USER")};
    String[] modes = {"default", "simple", "prepared", "binary"};
    for (String user : users) {
      for (boolean tls : new boolean[] {false, true}) {
        for (String mode : modes) exercise(user, tls, mode);
      }
    }
    try (Connection c = DriverManager.getConnection("jdbc:postgresql://localhost:"
            + System.getenv("TALLY_TEST_PORT") + "/" + System.getenv("TALLY_TEST_DB")
            + "?sslmode=disable&user=" + users[1] + "&password=wrong")) {
      check(false, "wrong password accepted");
    } catch (SQLException e) {
      check("28P01".equals(e.getSQLState()), "wrong password SQLSTATE " + e.getSQLState());
    }
    if (!failures.isEmpty()) {
      System.err.println("jdbc_test: " + failures.size() + " failure(s)");
      System.exit(1);
    }
    System.out.println("jdbc_test: all passed");
  }
}
