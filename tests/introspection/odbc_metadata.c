/* Prints what psqlODBC's catalog functions answer (SQLTables, SQLColumns,
 * SQLGetTypeInfo: every column of every row, '|'-separated), so that
 * psql_describe_test.py can compare tallyd's answers with PostgreSQL 15's.
 *   introspection_odbc_metadata "CONNECTION STRING"
 * Exits 1 when the connection or a catalog function fails. */
#include <sql.h>
#include <sqlext.h>
#include <stdio.h>

static int failed(SQLSMALLINT type, SQLHANDLE handle, const char* what) {
  char state[6] = "", message[512] = "";
  SQLINTEGER native = 0;
  SQLSMALLINT length = 0;
  SQLGetDiagRec(type, handle, 1, (SQLCHAR*)state, &native, (SQLCHAR*)message, sizeof message, &length);
  printf("ERROR in %s: %s %s\n", what, state, message);
  return 1;
}

static void dump(SQLHSTMT stmt, const char* what) {
  SQLSMALLINT columns = 0;
  SQLNumResultCols(stmt, &columns);
  printf("== %s (%d columns)\n", what, columns);
  while (SQL_SUCCEEDED(SQLFetch(stmt))) {
    for (SQLSMALLINT i = 1; i <= columns; i++) {
      char value[512];
      SQLLEN indicator = 0;
      SQLGetData(stmt, (SQLUSMALLINT)i, SQL_C_CHAR, value, sizeof value, &indicator);
      printf("%s%s", indicator == SQL_NULL_DATA ? "NULL" : value, i < columns ? "|" : "\n");
    }
  }
  SQLCloseCursor(stmt);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s CONNECTION_STRING\n", argv[0]);
    return 2;
  }
  SQLHENV env;
  SQLHDBC dbc;
  SQLHSTMT stmt;
  SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &env);
  SQLSetEnvAttr(env, SQL_ATTR_ODBC_VERSION, (void*)SQL_OV_ODBC3, 0);
  SQLAllocHandle(SQL_HANDLE_DBC, env, &dbc);
  if (!SQL_SUCCEEDED(SQLDriverConnect(dbc, NULL, (SQLCHAR*)argv[1], SQL_NTS, NULL, 0, NULL, SQL_DRIVER_NOPROMPT))) {
    return failed(SQL_HANDLE_DBC, dbc, "connect");
  }
  SQLAllocHandle(SQL_HANDLE_STMT, dbc, &stmt);
  if (!SQL_SUCCEEDED(SQLTables(stmt, NULL, 0, (SQLCHAR*)"public", SQL_NTS, (SQLCHAR*)"%", SQL_NTS, (SQLCHAR*)"TABLE",
                               SQL_NTS))) {
    return failed(SQL_HANDLE_STMT, stmt, "SQLTables");
  }
  dump(stmt, "SQLTables");
  const char* tables[] = {"t", "sales"};
  for (int t = 0; t < 2; t++) {
    if (!SQL_SUCCEEDED(SQLColumns(stmt, NULL, 0, (SQLCHAR*)"public", SQL_NTS, (SQLCHAR*)tables[t], SQL_NTS,
                                  (SQLCHAR*)"%", SQL_NTS))) {
      return failed(SQL_HANDLE_STMT, stmt, "SQLColumns");
    }
    dump(stmt, "SQLColumns");
  }
  if (!SQL_SUCCEEDED(SQLGetTypeInfo(stmt, SQL_ALL_TYPES))) return failed(SQL_HANDLE_STMT, stmt, "SQLGetTypeInfo");
  dump(stmt, "SQLGetTypeInfo");
  SQLFreeHandle(SQL_HANDLE_STMT, stmt);
  SQLDisconnect(dbc);
  SQLFreeHandle(SQL_HANDLE_DBC, dbc);
  SQLFreeHandle(SQL_HANDLE_ENV, env);
  return 0;
}
