// pgjdbc against tallyd (run with the Java 17 source launcher through
// tallyd_harness.py): password, SCRAM and MD5 users, with and without TLS
// (sslmode=verify-full with the test CA), in the default extended mode,
// preferQueryMode=simple, past prepareThreshold (named server statements),
// and binaryTransfer=true. Each runs SELECT 1, a parameterized statement and
// a failing statement whose SQLSTATE is checked. Then, in the default and the
// binary mode, the DatabaseMetaData calls tools make (getTables, getColumns,
// getPrimaryKeys, getIndexInfo, getTypeInfo, getSchemas, getCatalogs), a
// PreparedStatement round trip through every common setter and its getter,
// and timestamptz values under two JVM (so session) time zones. The expected
// values are what the same calls return against PostgreSQL 15 (checked by
// hand: statistics such as getIndexInfo's CARDINALITY are left out, Tally's
// indexes have none). Not covered, as Tally stores neither type: setTime
// (time) and setBytes (bytea).
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Time;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Calendar;
import java.util.List;
import java.util.Properties;
import java.util.TimeZone;

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

  private static void checkEquals(Object expected, Object actual, String what) {
    check(expected == null ? actual == null : expected.equals(actual),
        what + ": expected <" + expected + "> got <" + actual + ">");
  }

  private static Connection connectTrusted(String extra) throws SQLException {
    return DriverManager.getConnection("jdbc:postgresql://localhost:" + System.getenv("TALLY_TEST_PORT") + "/"
        + System.getenv("TALLY_TEST_DB") + "?sslmode=disable&user=" + System.getenv("TALLY_TEST_TRUST_USER")
        + extra);
  }

  // A result set's rows, the named columns of each joined with '|'.
  private static List<String> rows(ResultSet r, String... columns) throws SQLException {
    List<String> out = new ArrayList<>();
    while (r.next()) {
      StringBuilder b = new StringBuilder();
      for (String c : columns) b.append(b.length() == 0 ? "" : "|").append(r.getString(c));
      out.add(b.toString());
    }
    r.close();
    return out;
  }

  private static void metadata(Connection c, String what) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS jdbc_meta");
      s.execute("CREATE TABLE jdbc_meta (id int PRIMARY KEY, code varchar(12) NOT NULL UNIQUE, qty smallint,"
          + " big bigint, price numeric(10,2), ratio double precision, f real, ok boolean, d date,"
          + " ts timestamp, tstz timestamptz, note text, ch char(3))");
      s.execute("CREATE INDEX jdbc_meta_qty ON jdbc_meta (qty)");
      s.execute("CREATE INDEX jdbc_meta_big_d ON jdbc_meta (big, d)");
    }
    DatabaseMetaData md = c.getMetaData();
    checkEquals(List.of("null|public|jdbc_meta|TABLE"),
        rows(md.getTables(null, "public", "jdbc_%", new String[] {"TABLE"}), "TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME",
            "TABLE_TYPE"), what + ": getTables");
    checkEquals(List.of(
        "id|4|int4|10|0|0|NO|1", "code|12|varchar|12|0|0|NO|2", "qty|5|int2|5|0|1|YES|3",
        "big|-5|int8|19|0|1|YES|4", "price|2|numeric|10|2|1|YES|5", "ratio|8|float8|17|17|1|YES|6",
        "f|7|float4|8|8|1|YES|7", "ok|-7|bool|1|0|1|YES|8", "d|91|date|13|0|1|YES|9",
        "ts|93|timestamp|29|6|1|YES|10", "tstz|93|timestamptz|35|6|1|YES|11",
        "note|12|text|2147483647|0|1|YES|12", "ch|1|bpchar|3|0|1|YES|13"),
        rows(md.getColumns(null, "public", "jdbc_meta", "%"), "COLUMN_NAME", "DATA_TYPE", "TYPE_NAME", "COLUMN_SIZE",
            "DECIMAL_DIGITS", "NULLABLE", "IS_NULLABLE", "ORDINAL_POSITION"), what + ": getColumns");
    checkEquals(List.of("public|jdbc_meta|id|1|jdbc_meta_pkey"),
        rows(md.getPrimaryKeys(null, "public", "jdbc_meta"), "TABLE_SCHEM", "TABLE_NAME", "COLUMN_NAME", "KEY_SEQ",
            "PK_NAME"), what + ": getPrimaryKeys");
    final String[] indexColumns = {"NON_UNIQUE", "INDEX_NAME", "TYPE", "ORDINAL_POSITION", "COLUMN_NAME", "ASC_OR_DESC",
        "FILTER_CONDITION"};
    checkEquals(List.of("f|jdbc_meta_code_key|3|1|code|A|null", "f|jdbc_meta_pkey|3|1|id|A|null",
        "t|jdbc_meta_big_d|3|1|big|A|null", "t|jdbc_meta_big_d|3|2|d|A|null", "t|jdbc_meta_qty|3|1|qty|A|null"),
        rows(md.getIndexInfo(null, "public", "jdbc_meta", false, false), indexColumns), what + ": getIndexInfo");
    checkEquals(List.of("f|jdbc_meta_code_key|3|1|code|A|null", "f|jdbc_meta_pkey|3|1|id|A|null"),
        rows(md.getIndexInfo(null, "public", "jdbc_meta", true, false), indexColumns),
        what + ": getIndexInfo unique");
    List<String> types = rows(md.getTypeInfo(), "TYPE_NAME", "DATA_TYPE", "PRECISION", "LITERAL_PREFIX",
        "CASE_SENSITIVE", "UNSIGNED_ATTRIBUTE", "MAXIMUM_SCALE", "AUTO_INCREMENT");
    for (String expected : List.of("bool|-7|0|'|f|t|0|f", "int8|-5|0|null|f|f|0|f", "int4|4|0|null|f|f|0|f",
             "int2|5|0|null|f|f|0|f", "numeric|2|1000|null|f|f|1000|f", "float8|8|0|null|f|f|0|f",
             "varchar|12|10485760|'|t|t|0|f", "text|12|0|'|t|t|0|f", "bpchar|1|10485760|'|t|t|0|f",
             "date|91|0|'|f|t|0|f", "timestamp|93|6|'|f|t|0|f", "timestamptz|93|6|'|f|t|0|f")) {
      check(types.contains(expected), what + ": getTypeInfo lacks " + expected + " in " + types);
    }
    checkEquals(List.of("information_schema|null", "pg_catalog|null", "public|null"),
        rows(md.getSchemas(), "TABLE_SCHEM", "TABLE_CATALOG"), what + ": getSchemas");
    checkEquals(List.of(System.getenv("TALLY_TEST_DB")), rows(md.getCatalogs(), "TABLE_CAT"), what + ": getCatalogs");
    try (Statement s = c.createStatement()) {
      s.execute("DROP TABLE jdbc_meta");
    }
  }

  // Every common setter into a column of its type, read back with its getter.
  private static void setters(Connection c, String what) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS jdbc_values");
      s.execute("CREATE TABLE jdbc_values (id int, sm smallint, bg bigint, nu numeric(12,3), db double precision,"
          + " fl real, bo boolean, d date, ts timestamp, tstz timestamptz, tx varchar(20), tm time, by bytea)");
    }
    final Timestamp local = Timestamp.valueOf("2023-06-01 12:34:56.789");
    final Calendar utc = Calendar.getInstance(TimeZone.getTimeZone("UTC"));
    final OffsetDateTime offset = OffsetDateTime.of(2024, 7, 1, 12, 0, 0, 123456000, ZoneOffset.ofHoursMinutes(-5, -30));
    final byte[] bytes = {0, 1, (byte) 0xff, (byte) 0x80, 'a', '\\'};
    final byte[] moreBytes = new byte[300];
    for (int i = 0; i < moreBytes.length; ++i) moreBytes[i] = (byte) (i * 7);
    try (PreparedStatement p = c.prepareStatement(
        "INSERT INTO jdbc_values VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
      p.setInt(1, 1);
      p.setShort(2, (short) -7);
      p.setLong(3, 9000000000L);
      p.setBigDecimal(4, new BigDecimal("12345.678"));
      p.setDouble(5, 2.5e10);
      p.setFloat(6, 1.25f);
      p.setBoolean(7, true);
      p.setDate(8, java.sql.Date.valueOf("2023-06-01"));
      p.setTimestamp(9, local);
      p.setTimestamp(10, local, utc);
      p.setString(11, "plain");
      p.setTime(12, Time.valueOf("12:34:56"));
      p.setBytes(13, bytes);
      p.executeUpdate();
      // Typed NULLs of several kinds, then the java.time objects.
      p.setInt(1, 2);
      p.setNull(2, Types.SMALLINT);
      p.setNull(3, Types.BIGINT);
      p.setNull(4, Types.NUMERIC);
      p.setNull(5, Types.DOUBLE);
      p.setNull(6, Types.REAL);
      p.setNull(7, Types.BOOLEAN);
      p.setNull(8, Types.DATE);
      p.setNull(9, Types.TIMESTAMP);
      p.setNull(10, Types.TIMESTAMP_WITH_TIMEZONE);
      p.setNull(11, Types.VARCHAR);
      p.setNull(12, Types.TIME);
      p.setNull(13, Types.BINARY);
      p.executeUpdate();
      p.setInt(1, 3);
      p.setObject(8, LocalDate.of(2024, 2, 29));
      p.setObject(9, LocalDateTime.of(2024, 2, 29, 23, 59, 1, 123456000));
      p.setObject(10, offset);
      p.setObject(11, "objects");
      p.setObject(12, LocalTime.of(23, 59, 1, 123456000));
      p.setBytes(13, moreBytes);
      p.executeUpdate();
    }
    try (Statement s = c.createStatement();
         ResultSet r = s.executeQuery("SELECT * FROM jdbc_values ORDER BY id")) {
      check(r.next(), what + ": setter row 1");
      checkEquals((short) -7, r.getShort("sm"), what + ": setShort");
      checkEquals(9000000000L, r.getLong("bg"), what + ": setLong");
      checkEquals(new BigDecimal("12345.678"), r.getBigDecimal("nu"), what + ": setBigDecimal");
      checkEquals(2.5e10, r.getDouble("db"), what + ": setDouble");
      checkEquals(1.25f, r.getFloat("fl"), what + ": setFloat");
      checkEquals(true, r.getBoolean("bo"), what + ": setBoolean");
      checkEquals("2023-06-01", r.getDate("d").toString(), what + ": setDate");
      checkEquals(local, r.getTimestamp("ts"), what + ": setTimestamp");
      checkEquals(local.getTime(), r.getTimestamp("tstz", utc).getTime(), what + ": setTimestamp with a Calendar");
      checkEquals("plain", r.getString("tx"), what + ": setString");
      checkEquals("12:34:56", r.getTime("tm").toString(), what + ": setTime");
      checkEquals("12:34:56", r.getString("tm"), what + ": setTime as text");
      check(Arrays.equals(bytes, r.getBytes("by")), what + ": setBytes " + Arrays.toString(r.getBytes("by")));
      // pgjdbc's getString of a bytea read in binary is the byte[]'s toString (against PostgreSQL too).
      if (!what.endsWith("/binary")) checkEquals("\\x0001ff80615c", r.getString("by"), what + ": setBytes as text");
      check(r.next(), what + ": setter row 2");
      for (String column : List.of("sm", "bg", "nu", "db", "fl", "bo", "d", "ts", "tstz", "tx", "tm", "by")) {
        checkEquals(null, r.getObject(column), what + ": setNull " + column);
      }
      r.getShort("sm");
      check(r.wasNull(), what + ": wasNull after a NULL smallint");
      check(r.next(), what + ": setter row 3");
      checkEquals(LocalDate.of(2024, 2, 29), r.getObject("d", LocalDate.class), what + ": setObject(LocalDate)");
      checkEquals(LocalDateTime.of(2024, 2, 29, 23, 59, 1, 123456000), r.getObject("ts", LocalDateTime.class),
          what + ": setObject(LocalDateTime)");
      check(offset.isEqual(r.getObject("tstz", OffsetDateTime.class)), what + ": setObject(OffsetDateTime)");
      checkEquals("objects", r.getString("tx"), what + ": setObject(String)");
      checkEquals(LocalTime.of(23, 59, 1, 123456000), r.getObject("tm", LocalTime.class), what + ": setObject(LocalTime)");
      check(Arrays.equals(moreBytes, r.getBytes("by")), what + ": setBytes of 300 bytes");
      check(!r.next(), what + ": three setter rows");
    }
    try (Statement s = c.createStatement()) {
      s.execute("DROP TABLE jdbc_values");
    }
  }

  // timestamptz under the JVM's zone, which pgjdbc sends as TimeZone at start-up:
  // parameters, text as PostgreSQL shows it in that zone, comparison and grouping.
  private static void timestamptz(String zone, List<String> expected, String mode) {
    TimeZone saved = TimeZone.getDefault();
    TimeZone.setDefault(TimeZone.getTimeZone(zone));
    String what = "timestamptz/" + zone + "/" + mode;
    try (Connection c = connectTrusted(mode)) {
      try (Statement s = c.createStatement()) {
        s.execute("DROP TABLE IF EXISTS jdbc_tz");
        s.execute("CREATE TABLE jdbc_tz (id int, at timestamptz)");
      }
      try (PreparedStatement p = c.prepareStatement("INSERT INTO jdbc_tz VALUES (?, ?)")) {
        p.setInt(1, 1);
        p.setTimestamp(2, Timestamp.valueOf("2024-01-01 10:00:00"));
        p.executeUpdate();
        p.setInt(1, 2);
        p.setObject(2, OffsetDateTime.of(2024, 1, 1, 12, 0, 0, 0, ZoneOffset.ofHours(2)));
        p.executeUpdate();
        p.setInt(1, 3);
        p.setObject(2, OffsetDateTime.of(2024, 7, 1, 12, 0, 0, 123456000, ZoneOffset.ofHoursMinutes(-5, -30)));
        p.executeUpdate();
      }
      try (Statement s = c.createStatement()) {
        s.execute("INSERT INTO jdbc_tz VALUES (4, '2024-01-01 10:00:00Z'), (5, NULL)");
        List<String> got = rows(s.executeQuery("SELECT id, at, at::text AS t FROM jdbc_tz ORDER BY id"), "id", "at", "t");
        got.addAll(rows(s.executeQuery("SELECT at, count(*) AS n FROM jdbc_tz GROUP BY at ORDER BY at"), "at", "n"));
        got.addAll(rows(s.executeQuery("SELECT count(*) AS n FROM jdbc_tz WHERE at < '2024-01-01 06:00:00'"), "n"));
        checkEquals(expected, got, what);
        s.execute("DROP TABLE jdbc_tz");
      }
    } catch (SQLException e) {
      check(false, what + ": " + e.getSQLState() + " " + e.getMessage());
    } finally {
      TimeZone.setDefault(saved);
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
    for (String mode : new String[] {"", "&binaryTransfer=true&prepareThreshold=-1"}) {
      String what = mode.isEmpty() ? "default" : "binary";
      try (Connection c = connectTrusted(mode)) {
        metadata(c, "metadata/" + what);
        setters(c, "setters/" + what);
      } catch (SQLException e) {
        check(false, what + " workflows: " + e.getSQLState() + " " + e.getMessage());
      }
      // As PostgreSQL 15 shows them (the same calls against it gave these rows).
      timestamptz("UTC", List.of("1|2024-01-01 10:00:00+00|2024-01-01 10:00:00+00",
          "2|2024-01-01 10:00:00+00|2024-01-01 10:00:00+00",
          "3|2024-07-01 17:30:00.123456+00|2024-07-01 17:30:00.123456+00",
          "4|2024-01-01 10:00:00+00|2024-01-01 10:00:00+00", "5|null|null", "2024-01-01 10:00:00+00|3",
          "2024-07-01 17:30:00.123456+00|1", "null|1", "0"), mode);
      timestamptz("America/New_York", List.of("1|2024-01-01 10:00:00-05|2024-01-01 10:00:00-05",
          "2|2024-01-01 05:00:00-05|2024-01-01 05:00:00-05",
          "3|2024-07-01 13:30:00.123456-04|2024-07-01 13:30:00.123456-04",
          "4|2024-01-01 05:00:00-05|2024-01-01 05:00:00-05", "5|null|null", "2024-01-01 05:00:00-05|2",
          "2024-01-01 10:00:00-05|1", "2024-07-01 13:30:00.123456-04|1", "null|1", "2"), mode);
    }
    if (!failures.isEmpty()) {
      System.err.println("jdbc_test: " + failures.size() + " failure(s)");
      System.exit(1);
    }
    System.out.println("jdbc_test: all passed");
  }
}
