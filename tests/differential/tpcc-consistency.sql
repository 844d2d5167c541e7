-- TPC-C's consistency conditions (clause 3.3.2) as plain SQL, run on the same initial
-- database in waterline and MariaDB: each answer must be MariaDB's, and a column `ok` must
-- be 1 in every row. A difference `known-differences.md` lists (a computed column's type)
-- is allowed here as there. Conditions 8, 9 and 11 compare with the full-scale initial database
-- (W_YTD 300,000.00 is 30,000 customers' payments of 10.00); at a test's scale they are
-- compared with MariaDB only.

-- 3.3.2.1: W_YTD = sum(D_YTD), a derived table joined.
SELECT w_id, w_ytd, d.s, w_ytd = d.s AS ok FROM warehouse JOIN (SELECT d_w_id, SUM(d_ytd) AS s FROM district GROUP BY d_w_id) AS d ON d.d_w_id = w_id ORDER BY w_id;
-- 3.3.2.1 again, as a correlated scalar subquery: the warehouses that break it.
SELECT w_id FROM warehouse WHERE w_ytd <> (SELECT SUM(d_ytd) FROM district WHERE d_w_id = w_id);
-- 3.3.2.2: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID), two derived tables.
SELECT d_w_id, d_id, d_next_o_id - 1 AS last, o.m AS max_o, n.m AS max_no, d_next_o_id - 1 = o.m AND o.m = n.m AS ok FROM district JOIN (SELECT o_w_id, o_d_id, MAX(o_id) AS m FROM orders GROUP BY o_w_id, o_d_id) AS o ON o.o_w_id = d_w_id AND o.o_d_id = d_id JOIN (SELECT no_w_id, no_d_id, MAX(no_o_id) AS m FROM new_order GROUP BY no_w_id, no_d_id) AS n ON n.no_w_id = d_w_id AND n.no_d_id = d_id ORDER BY d_w_id, d_id;
-- 3.3.2.2 again, correlated: the districts that break it.
SELECT d_w_id, d_id FROM district WHERE d_next_o_id - 1 <> (SELECT MAX(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id) OR d_next_o_id - 1 <> (SELECT MAX(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id);
-- 3.3.2.3: max(NO_O_ID) - min(NO_O_ID) + 1 = count of NEW_ORDER rows, per district.
SELECT no_w_id, no_d_id, MAX(no_o_id) - MIN(no_o_id) + 1 AS span, COUNT(*) AS n, MAX(no_o_id) - MIN(no_o_id) + 1 = COUNT(*) AS ok FROM new_order GROUP BY no_w_id, no_d_id ORDER BY no_w_id, no_d_id;
-- 3.3.2.4: sum(O_OL_CNT) = count of ORDER_LINE rows, per district.
SELECT o.w, o.d, o.s, l.n, o.s = l.n AS ok FROM (SELECT o_w_id AS w, o_d_id AS d, SUM(o_ol_cnt) AS s FROM orders GROUP BY o_w_id, o_d_id) AS o JOIN (SELECT ol_w_id AS w, ol_d_id AS d, COUNT(*) AS n FROM order_line GROUP BY ol_w_id, ol_d_id) AS l ON l.w = o.w AND l.d = o.d ORDER BY o.w, o.d;
-- 3.3.2.5: O_CARRIER_ID is NULL exactly when the order has a NEW_ORDER row (an outer join).
SELECT COUNT(*) AS orders, COUNT(no_o_id) AS new_orders, SUM(o_carrier_id IS NULL) AS undelivered, SUM((o_carrier_id IS NULL) <> (no_o_id IS NOT NULL)) = 0 AS ok FROM orders LEFT JOIN new_order ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id;
-- 3.3.2.6: O_OL_CNT = the order's count of ORDER_LINE rows (a derived table, outer-joined).
SELECT COUNT(*) AS orders, SUM(l.n IS NULL OR l.n <> o_ol_cnt) = 0 AS ok FROM orders LEFT JOIN (SELECT ol_w_id, ol_d_id, ol_o_id, COUNT(*) AS n FROM order_line GROUP BY ol_w_id, ol_d_id, ol_o_id) AS l ON l.ol_w_id = o_w_id AND l.ol_d_id = o_d_id AND l.ol_o_id = o_id;
-- 3.3.2.6 again, correlated: the orders that break it.
SELECT o_w_id, o_d_id, o_id FROM orders WHERE o_ol_cnt <> (SELECT COUNT(*) FROM order_line WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id);
-- 3.3.2.7: OL_DELIVERY_D is NULL exactly when its order's O_CARRIER_ID is.
SELECT COUNT(*) AS n_lines, SUM(ol_delivery_d IS NULL) AS undelivered, SUM((o_carrier_id IS NULL) <> (ol_delivery_d IS NULL)) = 0 AS ok FROM orders JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id;
-- 3.3.2.8: W_YTD = sum(H_AMOUNT) of the warehouse's history.
SELECT w_id, w_ytd, h.s FROM warehouse JOIN (SELECT h_w_id, SUM(h_amount) AS s FROM history GROUP BY h_w_id) AS h ON h.h_w_id = w_id ORDER BY w_id;
-- 3.3.2.9: D_YTD = sum(H_AMOUNT) of the district's history.
SELECT d_w_id, d_id, d_ytd, h.s FROM district JOIN (SELECT h_w_id, h_d_id, SUM(h_amount) AS s FROM history GROUP BY h_w_id, h_d_id) AS h ON h.h_w_id = d_w_id AND h.h_d_id = d_id ORDER BY d_w_id, d_id;
-- 3.3.2.10: C_BALANCE = sum(OL_AMOUNT) of the customer's delivered lines - sum(H_AMOUNT).
SELECT COUNT(*) AS customers, SUM(c_balance <> COALESCE(d.s, 0) - COALESCE(h.s, 0)) = 0 AS ok FROM customer LEFT JOIN (SELECT o_w_id, o_d_id, o_c_id, SUM(ol_amount) AS s FROM orders JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id WHERE ol_delivery_d IS NOT NULL GROUP BY o_w_id, o_d_id, o_c_id) AS d ON d.o_w_id = c_w_id AND d.o_d_id = c_d_id AND d.o_c_id = c_id LEFT JOIN (SELECT h_c_w_id, h_c_d_id, h_c_id, SUM(h_amount) AS s FROM history GROUP BY h_c_w_id, h_c_d_id, h_c_id) AS h ON h.h_c_w_id = c_w_id AND h.h_c_d_id = c_d_id AND h.h_c_id = c_id;
-- 3.3.2.11: count(ORDER) - count(NEW_ORDER) per district (2,100 at full scale).
SELECT o.w, o.d, o.n - n.n AS delivered FROM (SELECT o_w_id AS w, o_d_id AS d, COUNT(*) AS n FROM orders GROUP BY o_w_id, o_d_id) AS o JOIN (SELECT no_w_id AS w, no_d_id AS d, COUNT(*) AS n FROM new_order GROUP BY no_w_id, no_d_id) AS n ON n.w = o.w AND n.d = o.d ORDER BY o.w, o.d;
-- 3.3.2.12: C_BALANCE + C_YTD_PAYMENT = sum(OL_AMOUNT) of the customer's delivered lines.
SELECT COUNT(*) AS customers, SUM(c_balance + c_ytd_payment <> COALESCE(d.s, 0)) = 0 AS ok FROM customer LEFT JOIN (SELECT o_w_id, o_d_id, o_c_id, SUM(ol_amount) AS s FROM orders JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id WHERE ol_delivery_d IS NOT NULL GROUP BY o_w_id, o_d_id, o_c_id) AS d ON d.o_w_id = c_w_id AND d.o_d_id = c_d_id AND d.o_c_id = c_id;
