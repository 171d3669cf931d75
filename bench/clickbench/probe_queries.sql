-- ClickBench's count(DISTINCT) queries as the CPU engine's rewrite writes
-- them (executor/distinct_count_rewrite.hpp: a grouping of the keys and the
-- counted column, then a count per key), numbered 100 + the query's own
-- number. Appended to queries.sql, one run times both forms beside each
-- other: with a GPU the queries as written count their distinct values on
-- the device (SelectPlan::distinct_rows_form), the rewrite brings every
-- (key, value) group back to the host first.

-- ClickBench Q104
SELECT count(tally_value) FROM (SELECT UserID AS tally_value FROM hits GROUP BY UserID) tally_distinct;

-- ClickBench Q108
SELECT RegionID, count(tally_value) AS u FROM (SELECT RegionID, UserID AS tally_value FROM hits GROUP BY RegionID, UserID) tally_distinct GROUP BY RegionID ORDER BY u DESC, RegionID LIMIT 10;

-- ClickBench Q110
SELECT MobilePhoneModel, count(tally_value) AS u FROM (SELECT MobilePhoneModel, UserID AS tally_value FROM hits WHERE MobilePhoneModel <> '' GROUP BY MobilePhoneModel, UserID) tally_distinct GROUP BY MobilePhoneModel ORDER BY u DESC, MobilePhoneModel LIMIT 10;

-- ClickBench Q111
SELECT MobilePhone, MobilePhoneModel, count(tally_value) AS u FROM (SELECT MobilePhone, MobilePhoneModel, UserID AS tally_value FROM hits WHERE MobilePhoneModel <> '' GROUP BY MobilePhone, MobilePhoneModel, UserID) tally_distinct GROUP BY MobilePhone, MobilePhoneModel ORDER BY u DESC, MobilePhone, MobilePhoneModel LIMIT 10;

-- ClickBench Q113
SELECT SearchPhrase, count(tally_value) AS u FROM (SELECT SearchPhrase, UserID AS tally_value FROM hits WHERE SearchPhrase <> '' GROUP BY SearchPhrase, UserID) tally_distinct GROUP BY SearchPhrase ORDER BY u DESC, SearchPhrase LIMIT 10;
