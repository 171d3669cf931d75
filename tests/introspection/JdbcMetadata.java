// Prints what pgjdbc's DatabaseMetaData answers (getTables, getColumns,
// getSchemas: every column of every row), so that psql_describe_test.py can
// compare tallyd's answers with PostgreSQL 15's for the same tables.
//   java -cp postgresql.jar JdbcMetadata.java JDBC_URL USER PASSWORD
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;

public class JdbcMetadata {
  static void print(String title, ResultSet rs) throws Exception {
    ResultSetMetaData md = rs.getMetaData();
    System.out.println("== " + title);
    while (rs.next()) {
      StringBuilder line = new StringBuilder();
      for (int i = 1; i <= md.getColumnCount(); i++) {
        line.append(md.getColumnLabel(i)).append('=').append(rs.getString(i)).append(i < md.getColumnCount() ? " | " : "");
      }
      System.out.println(line);
    }
    rs.close();
  }

  public static void main(String[] args) throws Exception {
    try (Connection c = DriverManager.getConnection(args[0], args[1], args[2])) {
      DatabaseMetaData m = c.getMetaData();
      print("getTables(public, %, TABLE)", m.getTables(null, "public", "%", new String[] {"TABLE"}));
      // pg_class lists user tables only: the system tables PostgreSQL would add for a
      // null schema pattern are not there (a known gap), so the schema is given.
      print("getTables(public, s%, null)", m.getTables(null, "public", "s%", null));
      print("getColumns(public, t, %)", m.getColumns(null, "public", "t", "%"));
      print("getColumns(null, sales, %)", m.getColumns(null, null, "sales", "%"));
      print("getSchemas()", m.getSchemas());
      // Catalog statements with parameters (extended protocol, typed and binary).
      try (java.sql.PreparedStatement ps =
               c.prepareStatement("SELECT t.oid, t.typname, t.typlen FROM pg_catalog.pg_type t WHERE t.typname = ? OR t.oid = ? ORDER BY 1")) {
        ps.setString(1, "int4");
        ps.setInt(2, 1043);
        print("pg_type by name or oid", ps.executeQuery());
        ps.setString(1, "numeric");
        ps.setInt(2, 16);
        print("pg_type again", ps.executeQuery());
      }
    }
  }
}
