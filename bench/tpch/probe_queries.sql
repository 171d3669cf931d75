-- Parts of slow TPC-H queries on their own, for EXPLAIN ANALYZE.

-- TPC-H Q301
select sum(ps_supplycost * ps_availqty) * 0.0001000000 as total
from partsupp, supplier, nation
where ps_suppkey = s_suppkey and s_nationkey = n_nationkey and n_name = 'GERMANY';

-- TPC-H Q302
select c_count, count(*) as n from (
select c_custkey, count(o_orderkey) as c_count
from customer left outer join orders on c_custkey = o_custkey and o_comment not like '%special%requests%'
group by c_custkey) c group by c_count order by c_count;

-- TPC-H Q303
select count(*) as n, sum(o_custkey) as s from orders where o_comment not like '%special%requests%';

-- TPC-H Q304
select o_custkey, count(*) as n from orders where o_comment not like '%special%requests%' group by o_custkey order by n desc, o_custkey limit 10;

-- TPC-H Q305
select count(*) as n, avg(c_acctbal) as a from customer where substring(c_phone from 1 for 2) in ('13', '31', '23', '29', '30', '18', '17');
