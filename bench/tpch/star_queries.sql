-- Star joins of lineitem with its smaller dimensions feeding an aggregate,
-- the shape the lookup form runs (executor/lookup_join.hpp): dimension
-- values in the WHERE, in the inputs and as group keys. Run with
-- tpch_bench --query-file; numbered past the 22 so both can be named.

-- TPC-H Q201
select n_name, p_brand, count(*) as lines, sum(l_quantity) as quantity, sum(l_extendedprice * (1 - l_discount)) as revenue
from lineitem, supplier, nation, part
where l_suppkey = s_suppkey and s_nationkey = n_nationkey and l_partkey = p_partkey and p_size < 10
group by n_name, p_brand
order by n_name, p_brand;

-- TPC-H Q202
select r_name, n_name, sum(l_extendedprice * (1 - l_discount)) as revenue
from lineitem, supplier, nation, region
where l_suppkey = s_suppkey and s_nationkey = n_nationkey and n_regionkey = r_regionkey
	and l_shipdate >= date '1995-01-01' and l_shipdate < date '1996-01-01'
group by r_name, n_name
order by revenue desc;

-- TPC-H Q203
select p_mfgr, p_container, count(*) as lines, avg(l_quantity) as avg_quantity
from lineitem, part
where l_partkey = p_partkey and p_type like '%BRASS'
group by p_mfgr, p_container
order by p_mfgr, p_container;

-- TPC-H Q204
select s_nationkey, sum(case when p_type like 'PROMO%' then l_extendedprice else 0 end) as promo, sum(l_extendedprice) as total
from lineitem, part, supplier
where l_partkey = p_partkey and l_suppkey = s_suppkey and l_returnflag = 'R'
group by s_nationkey
order by s_nationkey;
