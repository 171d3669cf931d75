# tally_admin: the HTTP admin endpoint, metrics and lifecycle helpers (included
# from server/CMakeLists.txt; kept apart so the listener's owner and this
# target's owner never edit the same file).
add_library(tally_admin
  ${CMAKE_CURRENT_LIST_DIR}/admin_router.cpp
  ${CMAKE_CURRENT_LIST_DIR}/admin_server.cpp
  ${CMAKE_CURRENT_LIST_DIR}/admin_tuning_page.cpp
  ${CMAKE_CURRENT_LIST_DIR}/metrics.cpp
  ${CMAKE_CURRENT_LIST_DIR}/metrics_query_log.cpp
  ${CMAKE_CURRENT_LIST_DIR}/buffered_log_sink.cpp
  ${CMAKE_CURRENT_LIST_DIR}/lifecycle.cpp
  ${CMAKE_CURRENT_LIST_DIR}/lifecycle_runtime.cpp)
target_include_directories(tally_admin PUBLIC ${CMAKE_SOURCE_DIR})
target_link_libraries(tally_admin PUBLIC tally_common tally_config Boost::headers Threads::Threads
                      PRIVATE OpenSSL::Crypto)

# The tuning cache as the admin endpoint reads it (tallyd, tests/admin): kept
# out of tally_admin so the listener's tests need neither SQLite nor the tuner.
add_library(tally_admin_tuning ${CMAKE_CURRENT_LIST_DIR}/admin_tuning_source.cpp)
target_link_libraries(tally_admin_tuning PUBLIC tally_admin tally_tuning_store)
