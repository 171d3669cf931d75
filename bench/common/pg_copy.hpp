#pragma once
// Ends a `COPY ... FROM STDIN` a benchmark fed through libpq: sends CopyDone
// and drains the results. Returns false with libpq's message when the server
// rejected the data.
#include <libpq-fe.h>

#include <string>

namespace tally::bench {

inline bool finish_copy(PGconn* c, std::string* error) {
  PQputCopyEnd(c, nullptr);
  PGresult* r = PQgetResult(c);
  const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  if (!ok) *error = PQerrorMessage(c);
  PQclear(r);
  while ((r = PQgetResult(c)) != nullptr) PQclear(r);
  return ok;
}

}  // namespace tally::bench
