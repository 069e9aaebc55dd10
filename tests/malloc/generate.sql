-- A generated database in memory: 200,000 rows through a recursive CTE, an index,
-- grouping and a join; the sqlite3 shell prints the results.
CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, name TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
INSERT INTO t SELECT i, (i * 7919) % 1000, printf('name-%08d', (i * 104729) % 1000003) FROM n;
CREATE INDEX t_k ON t(k);
SELECT k, count(*), min(name), max(name) FROM t GROUP BY k ORDER BY k LIMIT 20;
SELECT count(*), sum(length(a.name)) FROM t a JOIN t b ON a.k = b.k AND a.id < b.id AND b.id - a.id < 50;
DELETE FROM t WHERE k % 3 = 0;
VACUUM;
SELECT count(*), sum(k) FROM t;
