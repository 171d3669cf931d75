/* psqlODBC through unixODBC against tallyd (run through tallyd_harness.py):
 * a DSN-less connection string naming the driver library and nothing else of
 * the DSN's options, so the driver's defaults hold (UseServerSidePrepare=1:
 * parameters are bound on the server), for the password, SCRAM and MD5
 * users, with and without TLS; SELECT 1, a prepared statement with a bound
 * parameter, a failing statement whose SQLSTATE is checked, prepared INSERTs
 * as the default DSN sends them, and handles prepared once and executed many
 * times with new parameter values. */
#include <sql.h>
#include <sqlext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char* kDriver = "/usr/lib/x86_64-linux-gnu/odbc/psqlodbcw.so";
static int failures = 0;

static void fail(const char* what, const char* detail) {
  fprintf(stderr, "FAIL: %s: %s\n", what, detail);
  ++failures;
}

static void diag(SQLSMALLINT type, SQLHANDLE handle, char* state, char* message, size_t size) {
  SQLINTEGER native = 0;
  SQLSMALLINT length = 0;
  state[0] = '\0';
  message[0] = '\0';
  SQLGetDiagRec(type, handle, 1, (SQLCHAR*)state, &native, (SQLCHAR*)message, (SQLSMALLINT)size,
                &length);
}

static long fetch_long(SQLHSTMT stmt, const char* what) {
  SQLINTEGER value = -999;
  SQLLEN indicator = 0;
  if (!SQL_SUCCEEDED(SQLFetch(stmt))) {
    fail(what, "no row");
    return -999;
  }
  SQLGetData(stmt, 1, SQL_C_SLONG, &value, 0, &indicator);
  SQLCloseCursor(stmt);
  return value;
}

/* What psqlODBC's default DSN does with prepared statements (server-side
 * prepare, untyped parameters, a DEALLOCATE of the old plan when a handle is
 * prepared again): INSERTs with bound parameters, prepared again and again on
 * one handle as an executemany loop does, then their sum. */
static void prepared_inserts(SQLHDBC dbc, const char* what) {
  char state[6], message[512];
  SQLHSTMT stmt;
  SQLAllocHandle(SQL_HANDLE_STMT, dbc, &stmt);
  SQLExecDirect(stmt, (SQLCHAR*)"DROP TABLE IF EXISTS odbc_items", SQL_NTS);
  if (!SQL_SUCCEEDED(SQLExecDirect(stmt, (SQLCHAR*)"CREATE TABLE odbc_items (id int, name varchar(10))",
                                   SQL_NTS))) {
    diag(SQL_HANDLE_STMT, stmt, state, message, sizeof message);
    fail(what, message);
    SQLFreeHandle(SQL_HANDLE_STMT, stmt);
    return;
  }
  for (int i = 1; i <= 6; ++i) {
    SQLINTEGER id = i;
    SQLCHAR name[16];
    SQLLEN id_length = 0, name_length = SQL_NTS;
    snprintf((char*)name, sizeof name, "n%d", i);
    if (!SQL_SUCCEEDED(SQLPrepare(stmt, (SQLCHAR*)"INSERT INTO odbc_items VALUES (?, ?)", SQL_NTS)) ||
        !SQL_SUCCEEDED(SQLBindParameter(stmt, 1, SQL_PARAM_INPUT, SQL_C_SLONG, SQL_INTEGER, 0, 0, &id, 0,
                                        &id_length)) ||
        !SQL_SUCCEEDED(SQLBindParameter(stmt, 2, SQL_PARAM_INPUT, SQL_C_CHAR, SQL_VARCHAR, 10, 0, name,
                                        sizeof name, &name_length)) ||
        !SQL_SUCCEEDED(SQLExecute(stmt))) {
      diag(SQL_HANDLE_STMT, stmt, state, message, sizeof message);
      char detail[600];
      snprintf(detail, sizeof detail, "prepared INSERT %d: SQLSTATE %s (%s)", i, state, message);
      fail(what, detail);
      break;
    }
    SQLFreeStmt(stmt, SQL_RESET_PARAMS);
    SQLFreeStmt(stmt, SQL_CLOSE);
  }
  if (!SQL_SUCCEEDED(SQLPrepare(stmt, (SQLCHAR*)"SELECT sum(id) FROM odbc_items WHERE name <> ?", SQL_NTS))) {
    diag(SQL_HANDLE_STMT, stmt, state, message, sizeof message);
    fail(what, message);
  } else {
    SQLCHAR none[] = "none";
    SQLLEN none_length = SQL_NTS;
    SQLBindParameter(stmt, 1, SQL_PARAM_INPUT, SQL_C_CHAR, SQL_VARCHAR, 10, 0, none, sizeof none, &none_length);
    if (!SQL_SUCCEEDED(SQLExecute(stmt))) {
      diag(SQL_HANDLE_STMT, stmt, state, message, sizeof message);
      fail(what, message);
    } else if (fetch_long(stmt, what) != 21) {
      fail(what, "the prepared INSERTs did not add up to 21");
    }
  }
  SQLFreeStmt(stmt, SQL_RESET_PARAMS);
  SQLExecDirect(stmt, (SQLCHAR*)"DROP TABLE odbc_items", SQL_NTS);
  SQLFreeHandle(SQL_HANDLE_STMT, stmt);
}

/* One handle prepared once and executed again and again with new values in
 * its bound buffers (what an ODBC application's insert loop does): with the
 * default DSN the driver prepares it on the server once and binds each
 * execution; then a prepared query re-executed with other parameters, and a
 * timestamp parameter into a timestamptz column read back as text. */
static void reexecuted(SQLHDBC dbc, const char* what) {
  char state[6], message[512], detail[700];
  SQLHSTMT stmt;
  SQLAllocHandle(SQL_HANDLE_STMT, dbc, &stmt);
  SQLExecDirect(stmt, (SQLCHAR*)"DROP TABLE IF EXISTS odbc_again", SQL_NTS);
  if (!SQL_SUCCEEDED(SQLExecDirect(stmt, (SQLCHAR*)"CREATE TABLE odbc_again (id int, name varchar(10), at timestamptz)",
                                   SQL_NTS))) {
    diag(SQL_HANDLE_STMT, stmt, state, message, sizeof message);
    fail(what, message);
    SQLFreeHandle(SQL_HANDLE_STMT, stmt);
    return;
  }
  SQLINTEGER id = 0;
  SQLCHAR name[16];
  SQL_TIMESTAMP_STRUCT at = {2024, 1, 1, 10, 0, 0, 0};
  SQLLEN id_length = 0, name_length = SQL_NTS, at_length = 0;
  if (!SQL_SUCCEEDED(SQLPrepare(stmt, (SQLCHAR*)"INSERT INTO odbc_again VALUES (?, ?, ?)", SQL_NTS)) ||
      !SQL_SUCCEEDED(SQLBindParameter(stmt, 1, SQL_PARAM_INPUT, SQL_C_SLONG, SQL_INTEGER, 0, 0, &id, 0, &id_length)) ||
      !SQL_SUCCEEDED(SQLBindParameter(stmt, 2, SQL_PARAM_INPUT, SQL_C_CHAR, SQL_VARCHAR, 10, 0, name, sizeof name,
                                      &name_length)) ||
      !SQL_SUCCEEDED(SQLBindParameter(stmt, 3, SQL_PARAM_INPUT, SQL_C_TYPE_TIMESTAMP, SQL_TYPE_TIMESTAMP, 19, 0, &at,
                                      sizeof at, &at_length))) {
    diag(SQL_HANDLE_STMT, stmt, state, message, sizeof message);
    fail(what, message);
  } else {
    for (int i = 1; i <= 8; ++i) {
      id = i;
      snprintf((char*)name, sizeof name, "r%d", i % 3);
      at.day = (SQLUSMALLINT)i;
      if (!SQL_SUCCEEDED(SQLExecute(stmt))) {
        diag(SQL_HANDLE_STMT, stmt, state, message, sizeof message);
        snprintf(detail, sizeof detail, "re-executed INSERT %d: SQLSTATE %s (%s)", i, state, message);
        fail(what, detail);
        break;
      }
      SQLFreeStmt(stmt, SQL_CLOSE);
    }
  }
  SQLFreeStmt(stmt, SQL_RESET_PARAMS);
  /* A grouped query prepared once, executed with three thresholds. */
  SQLINTEGER threshold = 0;
  SQLLEN threshold_length = 0;
  if (!SQL_SUCCEEDED(SQLPrepare(stmt, (SQLCHAR*)"SELECT count(*), sum(id) FROM odbc_again WHERE id > ?", SQL_NTS)) ||
      !SQL_SUCCEEDED(SQLBindParameter(stmt, 1, SQL_PARAM_INPUT, SQL_C_SLONG, SQL_INTEGER, 0, 0, &threshold, 0,
                                      &threshold_length))) {
    diag(SQL_HANDLE_STMT, stmt, state, message, sizeof message);
    fail(what, message);
  } else {
    const SQLINTEGER thresholds[3] = {0, 5, 8};
    const long counts[3] = {8, 3, 0}, sums[3] = {36, 21, -1};
    for (int k = 0; k < 3; ++k) {
      threshold = thresholds[k];
      SQLINTEGER count = -1, sum = -1;
      SQLLEN count_ind = 0, sum_ind = 0;
      if (!SQL_SUCCEEDED(SQLExecute(stmt)) || !SQL_SUCCEEDED(SQLFetch(stmt))) {
        diag(SQL_HANDLE_STMT, stmt, state, message, sizeof message);
        snprintf(detail, sizeof detail, "re-executed SELECT %d: SQLSTATE %s (%s)", k, state, message);
        fail(what, detail);
        break;
      }
      SQLGetData(stmt, 1, SQL_C_SLONG, &count, 0, &count_ind);
      SQLGetData(stmt, 2, SQL_C_SLONG, &sum, 0, &sum_ind);
      if (sum_ind == SQL_NULL_DATA) sum = -1;
      if (count != counts[k] || sum != sums[k]) {
        snprintf(detail, sizeof detail, "threshold %d: count %d sum %d", (int)threshold, (int)count, (int)sum);
        fail(what, detail);
      }
      SQLCloseCursor(stmt);
    }
  }
  SQLFreeStmt(stmt, SQL_RESET_PARAMS);
  /* The grouping of the text column, and a stored timestamptz as PostgreSQL shows it (TimeZone UTC). */
  SQLCHAR text[64];
  SQLLEN text_ind = 0;
  if (!SQL_SUCCEEDED(SQLExecDirect(stmt, (SQLCHAR*)"SELECT name, count(*) FROM odbc_again GROUP BY name ORDER BY name",
                                   SQL_NTS))) {
    diag(SQL_HANDLE_STMT, stmt, state, message, sizeof message);
    fail(what, message);
  } else {
    char groups[128] = "";
    while (SQL_SUCCEEDED(SQLFetch(stmt))) {
      SQLINTEGER n = 0;
      SQLLEN n_ind = 0;
      SQLGetData(stmt, 1, SQL_C_CHAR, text, sizeof text, &text_ind);
      SQLGetData(stmt, 2, SQL_C_SLONG, &n, 0, &n_ind);
      snprintf(groups + strlen(groups), sizeof groups - strlen(groups), "%s%s:%d", groups[0] ? "," : "", (char*)text,
               (int)n);
    }
    if (strcmp(groups, "r0:2,r1:3,r2:3") != 0) fail(what, groups);
    SQLCloseCursor(stmt);
  }
  if (!SQL_SUCCEEDED(SQLExecDirect(stmt, (SQLCHAR*)"SET TIME ZONE 'UTC'", SQL_NTS)) ||
      !SQL_SUCCEEDED(SQLExecDirect(stmt, (SQLCHAR*)"SELECT at::text FROM odbc_again WHERE id = 3", SQL_NTS)) ||
      !SQL_SUCCEEDED(SQLFetch(stmt))) {
    diag(SQL_HANDLE_STMT, stmt, state, message, sizeof message);
    fail(what, message);
  } else {
    SQLGetData(stmt, 1, SQL_C_CHAR, text, sizeof text, &text_ind);
    if (strcmp((char*)text, "2024-01-03 10:00:00+00") != 0) fail(what, (char*)text);
    SQLCloseCursor(stmt);
  }
  SQLExecDirect(stmt, (SQLCHAR*)"DROP TABLE odbc_again", SQL_NTS);
  SQLFreeHandle(SQL_HANDLE_STMT, stmt);
}

static void exercise(const char* user, const char* sslmode) {
  char what[128], conn_string[1024], state[6], message[512];
  snprintf(what, sizeof what, "%s/%s", user, sslmode);
  snprintf(conn_string, sizeof conn_string,
           "Driver=%s;Server=localhost;Port=%s;Database=%s;Uid=%s;Pwd=%s;SSLmode=%s;"
           "pqopt={sslrootcert=%s hostaddr=%s};",
           kDriver, getenv("TALLY_TEST_PORT"), getenv("TALLY_TEST_DB"), user,
           getenv("TALLY_TEST_PASSWORD"), sslmode, getenv("TALLY_TEST_CA"),
           getenv("TALLY_TEST_HOST"));
  SQLHENV env;
  SQLHDBC dbc;
  SQLHSTMT stmt;
  SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &env);
  SQLSetEnvAttr(env, SQL_ATTR_ODBC_VERSION, (void*)SQL_OV_ODBC3, 0);
  SQLAllocHandle(SQL_HANDLE_DBC, env, &dbc);
  SQLRETURN rc = SQLDriverConnect(dbc, NULL, (SQLCHAR*)conn_string, SQL_NTS, NULL, 0, NULL,
                                  SQL_DRIVER_NOPROMPT);
  if (!SQL_SUCCEEDED(rc)) {
    diag(SQL_HANDLE_DBC, dbc, state, message, sizeof message);
    fail(what, message);
    goto done_env;
  }
  SQLAllocHandle(SQL_HANDLE_STMT, dbc, &stmt);

  if (!SQL_SUCCEEDED(SQLExecDirect(stmt, (SQLCHAR*)"SELECT 1", SQL_NTS))) {
    diag(SQL_HANDLE_STMT, stmt, state, message, sizeof message);
    fail(what, message);
  } else if (fetch_long(stmt, what) != 1) {
    fail(what, "SELECT 1 gave another value");
  }

  SQLINTEGER parameter = 41;
  SQLLEN parameter_length = 0;
  if (!SQL_SUCCEEDED(SQLPrepare(stmt, (SQLCHAR*)"SELECT ?::int4 + 1", SQL_NTS)) ||
      !SQL_SUCCEEDED(SQLBindParameter(stmt, 1, SQL_PARAM_INPUT, SQL_C_SLONG, SQL_INTEGER, 0, 0,
                                      &parameter, 0, &parameter_length)) ||
      !SQL_SUCCEEDED(SQLExecute(stmt))) {
    diag(SQL_HANDLE_STMT, stmt, state, message, sizeof message);
    fail(what, message);
  } else if (fetch_long(stmt, what) != 42) {
    fail(what, "parameterized statement gave another value");
  }
  SQLFreeStmt(stmt, SQL_RESET_PARAMS);

  rc = SQLExecDirect(stmt, (SQLCHAR*)"SELEC 1", SQL_NTS);
  if (SQL_SUCCEEDED(rc)) {
    fail(what, "failing statement succeeded");
  } else {
    diag(SQL_HANDLE_STMT, stmt, state, message, sizeof message);
    if (strcmp(state, "42601") != 0) {
      char detail[600];
      snprintf(detail, sizeof detail, "SQLSTATE %s (%s)", state, message);
      fail(what, detail);
    }
  }
  SQLFreeHandle(SQL_HANDLE_STMT, stmt);
  prepared_inserts(dbc, what);
  reexecuted(dbc, what);
  SQLDisconnect(dbc);
done_env:
  SQLFreeHandle(SQL_HANDLE_DBC, dbc);
  SQLFreeHandle(SQL_HANDLE_ENV, env);
}

int main(void) {
  const char* users[] = {getenv("TALLY_TEST_PASSWORD_USER"), getenv("TALLY_TEST_SCRAM_USER"),
                         getenv("TALLY_TEST_MD5_USER")};
  const char* modes[] = {"disable", "verify-full"};
  for (int u = 0; u < 3; ++u) {
    for (int m = 0; m < 2; ++m) exercise(users[u], modes[m]);
  }
  if (failures) {
    fprintf(stderr, "odbc_test: %d failure(s)\n", failures);
    return 1;
  }
  printf("odbc_test: all passed\n");
  return 0;
}
